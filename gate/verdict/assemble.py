"""Fold the cells' results into the verdict part and the Report: scores, the decision, the invariant
summaries, soundness, usage, pass^k floors and the comparison with a base report. Pure.

The same function closes an unsharded run (gate/runner/gate_run.py) and a merge of shard reports
(gate/verdict/merge.py), so the two cannot judge alike cells differently: whatever a verdict needs
from the run must reach it through the cells, the coverage and the reach, never from the pool.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, UTC

from gate.version import __version__
from gate.config import LoadedConfig
from gate.plan import invariants_of
from gate.scoring.compare import compare
from gate.report.model import (CellResult, Counts, InvariantSummary, PinStatus, Report, RunInfo, Timings,
                               VerdictPart)
from gate.scoring import decide, overall_score, score_stages
from gate.scoring.repeat import floor_reasons, pass_k_floors, repeat_stats
from gate.verdict import soundness
from gate.verdict.coverage import unmatched_tool_globs
from gate.verdict.evaluate import reproduce_command
from gate.verdict.reach import tools_called, with_notes
from gate.verdict.usage import cell_usage, usage_summary


def assemble(loaded: LoadedConfig, results, label, started, wall, startup, timings, *, concurrency, only,
             coverage=(), stray=(), whole_plan: bool = False, baseline: Report | None = None, reruns=(),
             reach=None, pins=(), explored=None) -> Report:
    """`reach`: what the gate reached, without its notes (written here, from the coverage); `pins`:
    the pinned regressions' statuses (gate/replay/pins.py)."""
    config = loaded.config
    not_started = soundness.startup_failure(loaded, results)
    if not_started is not None:  # a command agent that never started: errors, in no score
        not_started = loaded.redactor.redact(not_started)
        soundness.charge_to_start(results, not_started)
    called = tools_called(results)
    unmatched = unmatched_tool_globs(config, results, called)
    void_unseen(results, unmatched)
    stages = score_stages(config, results)
    score = overall_score(stages)
    comparison, floors, floor_reasons, usage = verdict_extras(config, results, stages, score,
                                                              loaded.digest, baseline)
    verdict, code, reasons = decide(config, results, stages, score, comparison, floor_reasons)
    tally: dict[str, int] = {}
    for cell in results:
        tally[cell.reason] = tally.get(cell.reason, 0) + 1
    summaries = _invariant_summaries(loaded, results)
    part = VerdictPart(
        verdict=verdict, exit_code=code, score=score, min_score=config.gate.min_score, reasons=reasons,
        seed=config.seed, config=label, config_digest=loaded.digest, runs_per_cell=config.runs,
        counts=Counts(cells=len(results), passed=sum(c.status == "pass" for c in results),
                      failed=sum(c.status == "fail" for c in results),
                      errors=sum(c.status == "error" for c in results), flaky=sum(c.flaky for c in results),
                      skipped=sum(c.status == "skipped" for c in results)),
        stages=stages, invariants=summaries, outcome_tally=dict(sorted(tally.items())), cells=results,
        coverage=list(coverage), usage=usage, pass_k=floors)
    part.reach = with_notes(config, reach, part.coverage, [glob for _, glob in unmatched], called)
    soundness.apply(part, soundness.assess(loaded, results, summaries, part.coverage, verdict,
                                           whole_plan=whole_plan, stray_count=sum(1 for s in stray if not s.late_write),
                                           late=sorted({s.after_cell or "" for s in stray if s.late_write}),
                                           startup=not_started, reruns=reruns, explored=explored))
    part.explore = explored
    part.warnings += regression_warning(config, baseline)
    _apply_pins(part, list(pins))
    finished = datetime.now(UTC)
    return Report(verdict=part, timings=Timings(
        started_at=started.isoformat(timespec="seconds"), finished_at=finished.isoformat(timespec="seconds"),
        wall_seconds=round(wall, 3), agent_startup_seconds=startup, cells=timings),
        run=RunInfo(tool_version=__version__, concurrency=concurrency, selected=only, stray=list(stray),
                    reruns=list(reruns)),
        comparison=comparison)


def void_unseen(cells: list[CellResult], unmatched: list[tuple[str, str]]) -> None:
    """An invariant whose `tool:` glob met no call in any cell judged a tool the gate never saw (a
    misspelt name, a tool out of reach): it is vacuous (soundness.py says so), so its breaches are not
    judged — one invariant is never both breached and vacuous — and a cell it alone failed passes."""
    glob_of: dict[str, str] = {}  # invariant id -> the first of its globs that met no call
    for inv_id, glob in unmatched:
        glob_of.setdefault(inv_id, glob)
    for cell in cells:
        voided = False
        for outcome in cell.invariants:
            if outcome.id in glob_of and outcome.breached:
                outcome.breached, outcome.not_judged_runs = False, outcome.total_runs
                outcome.message = (f"not judged: it names tool '{glob_of[outcome.id]}', which no cell was seen "
                                   f"calling (vacuous); it found: {outcome.message}")
                voided = True
        if voided and cell.status == "fail" and not any(o.breached for o in cell.invariants) \
                and cell.reason.startswith("contract:"):
            cell.status, cell.reason = "pass", "ok"


def _invariant_summaries(loaded: LoadedConfig, results) -> list[InvariantSummary]:
    checked: dict[str, int] = {}  # invariant id -> cells that checked it, and cells that breached it
    breached: dict[str, int] = {}
    for cell in results:  # one pass (a pass per invariant was cells x invariants squared)
        for outcome in cell.invariants:
            checked[outcome.id] = checked.get(outcome.id, 0) + 1
            breached[outcome.id] = breached.get(outcome.id, 0) + outcome.breached
    config, summaries = loaded.config, []
    for inv in invariants_of(config):
        index = next((n for n, i in enumerate(config.contract.invariants) if i.id == inv.id), None)
        line = loaded.line_of("contract", "invariants", index) if index is not None else None
        summaries.append(InvariantSummary(id=inv.id, severity=inv.severity, checked=checked.get(inv.id, 0),
                                          breached=breached.get(inv.id, 0), line=line))
    return summaries


def _apply_pins(part: VerdictPart, pins: list[PinStatus]) -> None:
    """Pinned regressions (run first, by shard 1 alone when sharded): a failing one is a reason of its own."""
    part.pins = pins
    if part.verdict != "pass" and any(p.status == "fail" for p in pins):
        part.reasons.append("a pinned regression fails again: " + ", ".join(p.id for p in pins if p.status == "fail"))


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
