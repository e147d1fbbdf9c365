"""What run_gate does beyond running the plan once, in one place: `--faults` (exactly these
firings), the cost budget, shrinking failures on the live pool, and the base report to compare with.

gate_run.py calls these few functions; each concern lives in its own module (shrink.py,
budget.py). What they add to the verdict (usage, pass^k, floors, the comparison) is
gate/verdict/assemble.py's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gate.errors import ConfigError
from gate.report.model import Report
from gate.runner.budget import Budget
from gate.runner.shrink import shrink_failures


def parse_firings(spec: str) -> frozenset:
    """'2:openai:1,5:orders:1' (or 'none') -> {(2, 'openai', 1), (5, 'orders', 1)}."""
    if spec.strip() == "none":
        return frozenset()
    out = set()
    for part in spec.split(","):
        bits = part.strip().rsplit(":", 1)
        head = bits[0].split(":", 1) if len(bits) == 2 else []
        if len(head) != 2 or not head[0].isdigit() or not bits[1].isdigit():
            raise ConfigError(f"--faults {spec}: each firing is INDEX:UPSTREAM:CALL (e.g. 2:openai:1), got {part!r}")
        out.add((int(head[0]), head[1], int(bits[1])))
    return frozenset(out)


def with_firings(cells: list, firings: frozenset | None, only) -> list:
    if firings is None:
        return cells
    if not only:
        raise ConfigError("--faults replays a set of firings in one cell: name it with --only CELL_ID")
    return [replace(c, firings=firings) for c in cells]


def budget_for(config) -> Budget | None:
    return Budget(config.gate.max_cost_usd) if config.gate.max_cost_usd is not None else None


def shrink_followup(config, cells, invariants, baselines, budget, jobs: dict, firings, on_plan=None,
                    on_progress=None):
    """The pool's followup that shrinks failing cells, or None when shrinking is off (or --faults given);
    it reports its progress through the run's own callbacks (`on_plan(total, phase=...)`, `on_progress()`)."""
    if not config.shrink.enabled or firings is not None:
        return None

    async def followup(workers, pool):
        jobs.update(await shrink_failures(workers, pool, cells, invariants, baselines, config.shrink.max_runs,
                                          budget, on_plan, on_progress))
    return followup


def read_baseline(path: Path | None) -> Report | None:
    """The base report, or None; an unreadable one is an error, never a silent 'no baseline'."""
    from gate.report import read_report

    return None if path is None else read_report(path, "--baseline")


__all__ = ["budget_for", "parse_firings", "read_baseline", "shrink_followup", "with_firings"]
