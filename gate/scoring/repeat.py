"""pass^k for repeated runs: per cell (passes of k, all k passed, Wilson 95 %) and per severity
against the `gate.min_pass_k` floors. Pure.

pass^k is τ-bench's reliability measure: not "did it pass once" but "did it pass every
time", the only rate that matters for an agent a customer meets more than once.
"""

from __future__ import annotations

import functools

from gate.report.insight_model import PassKFloor, RepeatStats
from gate.report.model import CellResult
from gate.scoring.stats import wilson_interval


def clean_runs(cell: CellResult) -> tuple[int, int]:
    """(runs that passed every check, runs judged): harness errors count in neither."""
    good = [r for r in cell.runs if r.error is None]
    return sum(all(c.passed for c in r.checks) for r in good), len(good)


def repeat_stats(cell: CellResult) -> RepeatStats | None:
    if cell.status == "skipped":  # not judged: no pass rate to state
        return None
    passes, runs = clean_runs(cell)
    return None if runs == 0 else _stats(passes, runs)


@functools.lru_cache(maxsize=1024)
def _stats(passes: int, runs: int) -> RepeatStats:
    """One RepeatStats per (passes, runs), shared by the cells that have it (none is mutated)."""
    low, high = wilson_interval(passes, runs)
    return RepeatStats(passes=passes, runs=runs, pass_k=passes == runs, wilson_low=round(low, 4),
                       wilson_high=round(high, 4))


def pass_k_floors(floors: dict[str, float], cells: list[CellResult]) -> list[PassKFloor]:
    """For each severity with a floor: the share of judged (cell, invariant) pairs whose runs all passed."""
    out = []
    for severity, floor in floors.items():
        pairs = [o for c in cells if c.status != "error" for o in c.invariants
                 if o.severity == severity and o.total_runs > 0]
        passed = sum(o.passed_runs == o.total_runs for o in pairs)
        out.append(PassKFloor(severity=severity, pairs=len(pairs), all_passed=passed,
                              pass_k=round(passed / len(pairs), 4) if pairs else 1.0, floor=floor))
    return out


def floor_reasons(floors: list[PassKFloor], k: int) -> list[str]:
    return [f"pass^{k} of {f.severity} invariants is {f.pass_k:.2f} ({f.all_passed}/{f.pairs}), "
            f"under its floor {f.floor:g}" for f in floors if f.pass_k < f.floor]
