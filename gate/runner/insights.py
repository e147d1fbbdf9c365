"""What run_gate adds to each cell and to the verdict beyond pass/fail, in one place:
usage and pass^k per cell, minimal fault sets (shrinking on the live pool), the cost
budget, pass^k floors, and the comparison with a base report.

gate_run.py calls these few functions; each concern lives in its own module
(usage.py, shrink.py, budget.py, gate/scoring/repeat.py, gate/report/compare.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gate.errors import ConfigError
from gate.report.compare import compare
from gate.report.model import CellResult, Report
from gate.runner.budget import Budget
from gate.runner.evaluate import reproduce_command
from gate.runner.shrink import shrink_failures
from gate.runner.usage import cell_usage, usage_summary
from gate.scoring.repeat import floor_reasons, pass_k_floors, repeat_stats


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


def shrink_followup(config, cells, invariants, baselines, budget, jobs: dict, firings):
    """The pool's followup that shrinks failing cells, or None when shrinking is off (or --faults given)."""
    if not config.shrink.enabled or firings is not None:
        return None

    async def followup(workers, pool):
        jobs.update(await shrink_failures(workers, pool, cells, invariants, baselines, config.shrink.max_runs,
                                          budget))
    return followup


def finish_cell(result: CellResult, cell, job, label: str, env, digest) -> CellResult:
    """Usage and pass^k of one folded cell, and its minimal fault set if it was shrunk."""
    result.usage, result.stats = cell_usage(result), repeat_stats(result)
    if job is None or job.result is None:
        return result
    result.shrink = job.result
    if job.minimal is not None:
        result.minimal_faults = job.minimal
        result.shrink.command = reproduce_command(label, replace(cell, firings=frozenset(
            (f.index, f.target, f.call) for f in job.minimal)), env=env, digest=digest)
        if not job.minimal:
            result.shrink.note = result.shrink.note or "it fails with no fault firing: the faults are not the cause"
    return result


def verdict_extras(config, results, stages, score, digest, baseline: Report | None):
    """(comparison, pass^k floors, reasons from the floors, usage summary) for assemble()."""
    comparison = None
    if baseline is not None:
        comparison = compare(baseline.verdict, results, stages, score, digest, config.gate.alpha)
    floors = pass_k_floors(config.gate.min_pass_k, results)
    return comparison, floors, floor_reasons(floors, config.runs), usage_summary(results)


def regression_warning(config, baseline) -> list[str]:
    if config.gate.fail_on == "regression" and baseline is None:
        return ["gate.fail_on is regression but no baseline report was given (--baseline / baseline-report): "
                "gating on critical breaches and the score instead"]
    return []


def read_baseline(path: Path | None) -> Report | None:
    """The base report, or None; an unreadable one is an error, never a silent 'no baseline'."""
    from gate.report import read_report

    return None if path is None else read_report(path, "--baseline")


__all__ = ["budget_for", "finish_cell", "parse_firings", "read_baseline", "regression_warning",
           "shrink_followup", "verdict_extras", "with_firings"]
