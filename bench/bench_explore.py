"""Cells needed to find each planted bug: systematic exploration vs a random swarm, side by side.

On the project's own planted-bug agents (tests/agents/bank, examples/sdk_agent), each bug alone:
- systematic: the gate's exploration (gate/explore), its cells in plan order; the cells needed are
  the position of the first explored cell that fails (the budget is lifted so every point is there);
- hindsight optimum: the fewest cells any order of the same single-fault cells could need, knowing
  which cell breaches which bug (min-sum set cover, exact): the floor under every order;
- swarm: BUGGIFY-style random chaos: each scenario switches every fault kind of the catalog on, per
  upstream, with probability 0.25 for the whole cell, and each switched-on fault fires with
  probability 0.25 on every call; scenarios run in chunks until one breaches the bug's oracle where
  the sound agent's same cell did not (or the cap is reached), judged by the same universal oracles
  against the same baselines.
A bug counts as found by the oracle meant for it, never by another failure.
The figure is the ratio of their totals; the goal is systematic <= 1/5 of the swarm. Then the wall
time of the sound example's exploration at 1x and at agent.time_scale 10 (when libfaketime is here).

    python bench/bench_explore.py [--cap 40] [--only bank|sdk] [--no-swarm] [--no-wall] [--smoke]

`--smoke` takes every step once at the smallest size (tests/test_benches.py runs it so the script cannot
rot): each agent's first bug only, its exploration cut to SMOKE_BUDGET cells, one swarm scenario, no
wall time. Its figures mean nothing.
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
LIFTED = 5000  # the explore budget of a measuring run: every point is there
SMOKE_BUDGET = 3  # --smoke: the baselines and a few explored cells


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


def systematic(config: Path, env_name: str, bug: str, oracle: str, tmp: Path,
               budget: int = LIFTED) -> tuple[int | None, set[str]]:
    """The position of the first failing explored cell in plan order, with the budget lifted (a bug it
    puts past the default budget is still counted, not missed; the budget only cuts the plan's tail),
    and every explored cell whose oracle breached: the bug's breach set, for the hindsight optimum."""
    doc = yaml.safe_load(config.read_text())
    doc.setdefault("chaos", {})["explore"] = {"budget": budget}
    path = _beside(config, doc, "all")
    try:
        report, _ = _run(path, env_name, bug, tmp / f"sys-{bug}")
    finally:
        path.unlink()
    cells = [c for c in report["verdict"]["cells"] if "/explore/" in c["id"]]
    breached = {c["id"] for c in cells if oracle in _breaches(c)}  # a cell id names the same point in every run
    ran = {c["id"] for c in cells if c["status"] != "skipped"}  # dropped points cost nothing
    explored = [cid for cid in report["run"]["plan"] if cid in ran]
    hit = next((n for n, cid in enumerate(explored, 1) if cid in breached), None)
    return hit, breached


def hindsight_optimum(breach_sets: dict[str, set[str]]) -> int | None:
    """The fewest cells, summed over the bugs, that any one order of single-fault cells needs to find
    every bug: min-sum set cover, exactly, by dynamic programming over the subsets of bugs found so
    far. It knows in advance which cell breaches which bug, which no planner does: a lower bound
    on every order of these cells, not a strategy. None when some bug no cell breaches."""
    bugs = sorted(breach_sets)
    if any(not breach_sets[b] for b in bugs):
        return None
    covers = {}
    for n, bug in enumerate(bugs):
        for point in breach_sets[bug]:
            covers[point] = covers.get(point, 0) | 1 << n
    masks = set(covers.values())
    full = (1 << len(bugs)) - 1
    best = {full: 0}
    for found in sorted(range(full), key=lambda m: -m.bit_count()):  # supersets first
        left = len(bugs) - found.bit_count()  # every bug still hidden waits one more cell
        best[found] = left + min(best[found | m] for m in masks if m & ~found)
    return best[0]


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
    from gate.agent import dilation

    if not dilation.candidates():  # where the gate itself looks (CHAOS_GATE_LIBFAKETIME, the system, PyPI)
        return one, None
    _, ten = _run(config, env_name, "", tmp / "wall-10x", "--time-scale", "10")
    return one, ten


def bench_agent(name: str, args: argparse.Namespace, tmp: Path) -> tuple[int, int | None, int | None]:
    """One agent's bugs, each alone: (systematic cells, hindsight optimum, swarm cells; None when the
    swarm did not run, so no ratio is printed against it), printed per bug."""
    config, env_name, bugs = AGENTS[name]
    inputs = len(yaml.safe_load(config.read_text())["inputs"])
    worst = args.cap * inputs  # a bug a search never found costs it the swarm's whole cap
    total_sys, total_swarm, breach_sets = 0, 0, {}
    for bug, oracle in list(bugs.items())[:1 if args.smoke else None]:
        found, breach_sets[bug] = systematic(config, env_name, bug, oracle, tmp,
                                             SMOKE_BUDGET if args.smoke else LIFTED)
        random_found = None if args.no_swarm else swarm(config, env_name, bug, oracle, tmp, args.cap)
        total_sys += found if found is not None else worst
        total_swarm += random_found if random_found is not None else worst
        shown = "skipped" if args.no_swarm else random_found or f">{worst}"
        print(f"{name}:{bug:22} {oracle:24} systematic {found or '-':>4}  breaching cells "
              f"{len(breach_sets[bug]):>3}  swarm {shown:>7}", flush=True)
    return total_sys, hindsight_optimum(breach_sets), None if args.no_swarm else total_swarm


def _ratio(part: int | None, whole: int | None) -> str:
    return "-" if part is None or not whole else f"{part / whole:.2f}"


def _shown(figure: int | None) -> str:
    return "-" if figure is None else str(figure)


def _sum(figures: tuple[int | None, ...]) -> int | None:
    return None if None in figures else sum(figures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cap", type=int, default=40, help="swarm scenarios at most, per bug")
    parser.add_argument("--only", choices=sorted(AGENTS))
    parser.add_argument("--no-swarm", action="store_true", help="the plan and its hindsight optimum only")
    parser.add_argument("--no-wall", action="store_true", help="skip the wall time of the sound example")
    parser.add_argument("--smoke", action="store_true", help="every step once, at the smallest size (CI)")
    args = parser.parse_args()
    if args.smoke:
        args.cap, args.no_wall = 1, True
    totals = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in AGENTS:
            if not args.only or name == args.only:
                totals[name] = bench_agent(name, args, Path(tmp))
        wall = None if args.no_wall else wall_times(Path(tmp))
    rows = [*totals.items()]
    if len(rows) > 1:
        sys_cells, optima, swarm_cells = zip(*totals.values(), strict=True)
        rows.append(("all", (sum(sys_cells), _sum(optima), _sum(swarm_cells))))
    print("\ncells to find every bug (each bug alone, summed):")
    print(f"{'agent':6} {'systematic':>10} {'hindsight':>10} {'swarm':>6}  sys/swarm  hindsight/swarm  (goal <= 0.20)")
    for name, (sys_cells, optimum, swarm_cells) in rows:
        print(f"{name:6} {sys_cells:>10} {_shown(optimum):>10} {_shown(swarm_cells):>6}  "
              f"{_ratio(sys_cells, swarm_cells):>9}  {_ratio(optimum, swarm_cells):>15}")
    if wall is not None:
        one, ten = wall
        print(f"sound SDK example explored: {one:.1f} s at 1x" +
              (f", {ten:.1f} s at time_scale 10 ({ten / one:.2f}x)" if ten is not None else
               " (time_scale 10: libfaketime not installed here; .ci/faketime-up.sh installs it)"))


if __name__ == "__main__":
    main()
