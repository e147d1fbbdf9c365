"""Cells needed to find each planted bug: systematic exploration vs a random swarm, side by side.

On the project's own planted-bug agents (tests/agents/bank, examples/sdk_agent), each bug alone:
- systematic: the gate's exploration (gate/explore), its cells in plan order; the cells needed are
  the position of the first explored cell that fails (the budget is lifted so every point is there);
- swarm: BUGGIFY-style random chaos: each scenario switches every fault kind of the catalog on, per
  upstream, with probability 0.25 for the whole cell, and each switched-on fault fires with
  probability 0.25 on every call; scenarios run in chunks until one fails (or the cap is reached),
  judged by the same universal oracles against the same baselines.
The figure is the ratio of their totals; the goal is systematic <= 1/5 of the swarm. Then the wall
time of the sound example's exploration at 1x and at agent.time_scale 10 (when libfaketime is here).

    python bench/bench_explore.py [--cap 60] [--only bank]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gate.contracts.universal import UNIVERSAL  # noqa: E402
from gate.explore.kinds import CATALOG  # noqa: E402

AGENTS = {
    "bank": (ROOT / "tests/agents/bank/chaos-gate.yaml", "BUGS",
             ["fresh_key_retry", "fresh_key_second", "crash_on_tool_error", "claims_success", "no_timeout",
              "retry_storm", "accept_cut", "poisoned"]),
    "sdk": (ROOT / "examples/sdk_agent/explore.yaml", "AGENT_BUGS",
            ["double_write", "no_retry", "retry_storm", "crash_on_bad_args", "accept_truncated", "obey_injection",
             "no_tool_timeout", "trust_tool_json", "slow_model"]),
}
CHUNK = 10  # swarm scenarios per run


def _run(config: Path, env_name: str, bug: str, out: Path, *extra: str) -> tuple[dict, float]:
    env = {**os.environ, env_name: bug}
    began = time.monotonic()
    subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(config), "-o", str(out), "--quiet", *extra],
                   env=env, check=False, capture_output=True)
    return json.loads((out / "report.json").read_text()), time.monotonic() - began


def _beside(config: Path, doc: dict, name: str) -> Path:
    path = config.with_name(f".bench-{name}-{os.getpid()}.yaml")  # beside it: its relative paths still resolve
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def systematic(config: Path, env_name: str, bug: str, tmp: Path) -> int | None:
    """The position of the first failing explored cell in plan order: within the default budget
    first, then with the budget lifted (so a bug it puts last is still counted, not missed)."""
    for budget in (None, 5000):
        doc = yaml.safe_load(config.read_text())
        if budget is not None:
            doc.setdefault("chaos", {})["explore"] = {"budget": budget}
        path = _beside(config, doc, "all")
        try:
            report, _ = _run(path, env_name, bug, tmp / f"sys-{bug}-{budget}")
        finally:
            path.unlink()
        status = {c["id"]: c["status"] for c in report["verdict"]["cells"]}
        explored = [cid for cid in report["run"]["plan"] if "/explore/" in cid]
        hit = next((n for n, cid in enumerate(explored, 1) if status.get(cid) == "fail"), None)
        if hit is not None:
            return hit
    return None


def _swarm_faults(doc: dict, seed: str, deadline: float) -> list[dict]:
    rng = random.Random(seed)
    targets = [("llm", "llm")] + [("tool", t["name"]) for t in doc.get("tools", [])]
    out = []
    for on, target in targets:
        for kind in CATALOG:
            if kind.on == on and rng.random() < 0.25:
                out.append({**kind.fault(deadline), "target": target, "probability": 0.25})
    return out


def swarm(config: Path, env_name: str, bug: str, tmp: Path, cap: int) -> int | None:
    doc = yaml.safe_load(config.read_text())
    inputs = len(doc["inputs"])
    deadline = float(doc["agent"].get("timeout", 30))
    for first in range(0, cap, CHUNK):
        chunk = dict(doc)
        names = [f"swarm-{n}" for n in range(first, min(first + CHUNK, cap))]
        scenarios = [{"name": n, "faults": _swarm_faults(doc, f"swarm:{bug}:{n}", deadline) or
                      [{"kind": "latency", "target": "llm", "ms": 1, "probability": 0.25}]} for n in names]
        chunk["chaos"] = {"scenarios": scenarios}
        chunk["contract"] = {"invariants": [{"id": o, "type": o, "when": {"scenario": "swarm-*"}} for o in UNIVERSAL]}
        chunk.setdefault("gate", {})["allow_vacuous"] = True
        path = _beside(config, chunk, "swarm")
        try:
            report, _ = _run(path, env_name, bug, tmp / f"swarm-{bug}-{first}")
        finally:
            path.unlink()
        cells = [c for c in report["verdict"]["cells"] if c["scenario"].startswith("swarm-")]
        order = {cid: n for n, cid in enumerate(report["run"]["plan"])}
        cells.sort(key=lambda c: (int(c["scenario"].split("-")[1]), order.get(c["id"], 0)))
        hit = next((n for n, c in enumerate(cells, 1) if c["status"] == "fail"), None)
        if hit is not None:
            return first * inputs + hit
    return None


def wall_times(tmp: Path) -> tuple[float, float | None]:
    config, env_name, _ = AGENTS["sdk"]
    _, one = _run(config, env_name, "", tmp / "wall-1x")
    faketime = any(Path(p).exists() for p in ("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                                               "/usr/lib/faketime/libfaketime.so.1", "/usr/local/lib/faketime"))
    if not faketime:
        return one, None
    _, ten = _run(config, env_name, "", tmp / "wall-10x", "--time-scale", "10")
    return one, ten


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cap", type=int, default=60, help="swarm scenarios at most, per bug")
    parser.add_argument("--only", choices=sorted(AGENTS))
    args = parser.parse_args()
    rows, total_sys, total_swarm = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (config, env_name, bugs) in AGENTS.items():
            if args.only and name != args.only:
                continue
            inputs = len(yaml.safe_load(config.read_text())["inputs"])
            for bug in bugs:
                found = systematic(config, env_name, bug, Path(tmp))
                random_found = swarm(config, env_name, bug, Path(tmp), args.cap)
                worst = args.cap * inputs  # a bug the swarm never found costs it its whole cap
                total_sys += found if found is not None else worst
                total_swarm += random_found if random_found is not None else worst
                rows.append((f"{name}:{bug}", found, random_found))
                print(f"{name}:{bug:22} systematic {found or '-':>4}  swarm {random_found or f'>{worst}':>5}",
                      flush=True)
        one, ten = wall_times(Path(tmp))
    print(f"\ntotal cells to find every bug: systematic {total_sys}, swarm {total_swarm} "
          f"(ratio {total_sys / max(total_swarm, 1):.2f}; goal <= 0.20)")
    print(f"sound SDK example explored: {one:.1f} s at 1x" +
          (f", {ten:.1f} s at time_scale 10 ({ten / one:.2f}x)" if ten is not None else
           " (time_scale 10: libfaketime not installed here; .ci/faketime-up.sh installs it)"))


if __name__ == "__main__":
    main()
