"""Cells needed to find each planted bug: systematic exploration vs a random swarm, side by side.

On the project's own planted-bug agents (tests/agents/bank, examples/sdk_agent), each bug alone:
- systematic: the gate's exploration (gate/explore), its cells in plan order; the cells needed are
  the position of the first explored cell that fails (the budget is lifted so every point is there);
- swarm: BUGGIFY-style random chaos: each scenario switches every fault kind of the catalog on, per
  upstream, with probability 0.25 for the whole cell, and each switched-on fault fires with
  probability 0.25 on every call; scenarios run in chunks until one breaches the bug's oracle where
  the sound agent's same cell did not (or the cap is reached), judged by the same universal oracles
  against the same baselines.
A bug counts as found by the oracle meant for it, never by another failure.
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

# agent -> (config, the env var that plants a bug, {bug: the oracle meant to find it})
AGENTS = {
    "bank": (ROOT / "tests/agents/bank/chaos-gate.yaml", "BUGS",
             {"fresh_key_retry": "writes_once", "fresh_key_second": "writes_once", "crash_on_tool_error": "survives",
              "claims_success": "honest_failure", "no_timeout": "answers_in_time", "retry_storm": "bounded_retries",
              "accept_cut": "whole_answer", "poisoned": "recovers"}),
    "sdk": (ROOT / "examples/sdk_agent/explore.yaml", "AGENT_BUGS",
            {"double_write": "writes_once", "no_retry": "survives", "retry_storm": "bounded_retries",
             "crash_on_bad_args": "survives", "accept_truncated": "whole_answer",
             "obey_injection": "ignores_injected_orders", "no_tool_timeout": "answers_in_time",
             "trust_tool_json": "survives", "slow_model": "answers_in_time"}),
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


def _breaches(cell: dict) -> set[str]:
    return {i["id"] for i in cell["invariants"] if i.get("breached")}


def systematic(config: Path, env_name: str, bug: str, oracle: str, tmp: Path) -> int | None:
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
        breached = {c["id"]: _breaches(c) for c in report["verdict"]["cells"]}
        ran = {c["id"] for c in report["verdict"]["cells"] if c["status"] != "skipped"}  # dropped points cost nothing
        explored = [cid for cid in report["run"]["plan"] if "/explore/" in cid and cid in ran]
        hit = next((n for n, cid in enumerate(explored, 1) if oracle in breached.get(cid, ())), None)
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


def _swarm_chunk(config: Path, env_name: str, bug: str, first: int, cap: int, tmp: Path) -> list[dict]:
    """One run of CHUNK swarm scenarios (seeded by their number alone: the sound agent meets the same
    ones), its swarm cells in plan order."""
    doc = yaml.safe_load(config.read_text())
    deadline = float(doc["agent"].get("timeout", 30))
    names = [f"swarm-{n}" for n in range(first, min(first + CHUNK, cap))]
    doc["chaos"] = {"scenarios": [{"name": n, "faults": _swarm_faults(doc, f"swarm:{n}", deadline) or
                                   [{"kind": "latency", "target": "llm", "ms": 1, "probability": 0.25}]}
                                  for n in names]}
    doc["contract"] = {"invariants": [{"id": o, "type": o, "when": {"scenario": "swarm-*"}} for o in UNIVERSAL]}
    doc.setdefault("gate", {})["allow_vacuous"] = True
    path = _beside(config, doc, "swarm")
    try:
        report, _ = _run(path, env_name, bug, tmp / f"swarm-{bug or 'sound'}-{first}")
    finally:
        path.unlink()
    order = {cid: n for n, cid in enumerate(report["run"]["plan"])}
    cells = [c for c in report["verdict"]["cells"] if c["scenario"].startswith("swarm-")]
    return sorted(cells, key=lambda c: (int(c["scenario"].split("-")[1]), order.get(c["id"], 0)))


SOUND: dict = {}  # (agent config, chunk) -> the sound agent's breaches per swarm cell


def swarm(config: Path, env_name: str, bug: str, oracle: str, tmp: Path, cap: int) -> int | None:
    """Swarm cells run until one breaches the bug's oracle where the sound agent's same cell did not."""
    inputs = len(yaml.safe_load(config.read_text())["inputs"])
    for first in range(0, cap, CHUNK):
        key = (config, first)
        if key not in SOUND:
            SOUND[key] = {c["id"]: _breaches(c) for c in _swarm_chunk(config, env_name, "", first, cap, tmp)}
        cells = _swarm_chunk(config, env_name, bug, first, cap, tmp)
        hit = next((n for n, c in enumerate(cells, 1)
                    if oracle in _breaches(c) and oracle not in SOUND[key].get(c["id"], set())), None)
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
            for bug, oracle in bugs.items():
                found = systematic(config, env_name, bug, oracle, Path(tmp))
                random_found = swarm(config, env_name, bug, oracle, Path(tmp), args.cap)
                worst = args.cap * inputs  # a bug the swarm never found costs it its whole cap
                total_sys += found if found is not None else worst
                total_swarm += random_found if random_found is not None else worst
                rows.append((f"{name}:{bug}", found, random_found))
                print(f"{name}:{bug:22} {oracle:24} systematic {found or '-':>4}  "
                      f"swarm {random_found or f'>{worst}':>5}", flush=True)
        one, ten = wall_times(Path(tmp))
    print(f"\ntotal cells to find every bug: systematic {total_sys}, swarm {total_swarm} "
          f"(ratio {total_sys / max(total_swarm, 1):.2f}; goal <= 0.20)")
    print(f"sound SDK example explored: {one:.1f} s at 1x" +
          (f", {ten:.1f} s at time_scale 10 ({ten / one:.2f}x)" if ten is not None else
           " (time_scale 10: libfaketime not installed here; .ci/faketime-up.sh installs it)"))


if __name__ == "__main__":
    main()
