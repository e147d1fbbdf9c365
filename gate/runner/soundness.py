"""Could this run judge anything? The last word on a verdict before it is published. Pure.

Scoring decides pass or fail from the cells; this module asks whether that decision
means something. A config mistake that only shows at run time (an agent URL nothing
listens on, an output path no response has) is the config's error, not a score of 0;
a run that tested nothing (coverage.py) is `vacuous`, not a pass. Both turn the
verdict into `error` (exit 2) with a reason that names the config line to fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gate.errors import EXIT_ERROR
from gate.report.model import CellResult
from gate.runner.coverage import idle_faults, vacuous_invariants, vacuous_scenarios


@dataclass
class Soundness:
    """What to change in the verdict: an error reason and its messages, plus warnings."""

    error_reason: str | None = None
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _first_runs(cells: list[CellResult]):
    return [c.runs[0] for c in cells if c.runs and c.runs[0].error is None]


def runtime_config_errors(loaded, cells: list[CellResult]) -> list[str]:
    """Mistakes in the config that only the run could reveal, each naming its line."""
    agent = loaded.config.agent
    http = agent.invoke.http
    firsts = _first_runs(cells)
    if http is None or not firsts:
        return []
    where = loaded.path.name
    problems = []
    if all(r.reason == "connection_error" for r in firsts):
        key = ("agent", "url") if agent.url else ("agent", "invoke", "http", "url")
        problems.append(
            f"{where}:{loaded.line_of(*key)}: {'.'.join(key)}: every call to the agent failed to connect "
            f"({firsts[0].detail or 'connection refused'}); is the agent listening at that URL?")
    answered = [r for c in cells for r in c.runs if r.error is None and r.status is not None and r.status < 400]
    if http.output != "$" and answered and all(r.reason == "bad_output_shape" for r in answered):
        problems.append(
            f"{where}:{loaded.line_of('agent', 'invoke', 'http', 'output')}: agent.invoke.http.output: "
            f"the path {http.output} matched no response of any cell ({answered[0].detail}); "
            "fix the path to where the agent puts its answer")
    return problems


def judged_counts(cells: list[CellResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for cell in cells:
        for outcome in cell.invariants:
            counts[outcome.id] = counts.get(outcome.id, 0) + outcome.total_runs
    return counts


def assess(loaded, cells: list[CellResult], summaries, coverage, verdict: str, *, whole_plan: bool,
           stray_count: int = 0) -> Soundness:
    out = Soundness(warnings=list(getattr(loaded, "warnings", [])))
    config_errors = runtime_config_errors(loaded, cells)
    if config_errors:
        return Soundness("config", config_errors, out.warnings)
    vacuous = vacuous_scenarios(coverage)
    if whole_plan:
        vacuous += vacuous_invariants(summaries, judged_counts(cells))
    out.warnings += idle_faults(coverage)
    if stray_count:
        out.warnings.append(f"{stray_count} call(s) reached the proxy while no cell was running (an agent "
                            "outliving its cell); they are listed as stray and charged to no cell")
    if vacuous and (loaded.config.gate.allow_vacuous or verdict != "pass"):
        out.warnings = vacuous + out.warnings  # a failure stands; vacuity is still shown first
    elif vacuous:
        out.error_reason, out.reasons = "vacuous", vacuous
    return out


def apply(part, sound: Soundness) -> None:
    """Fold the assessment into a VerdictPart in place."""
    part.warnings = sound.warnings
    if sound.error_reason is None:
        if part.verdict == "error" and part.error_reason is None:
            part.error_reason = "harness"
        return
    part.verdict, part.exit_code, part.error_reason = "error", EXIT_ERROR, sound.error_reason
    part.reasons = sound.reasons + part.reasons
