"""Reports for runs that could not be judged: the agent did not start, the gate failed,
or a signal cut the run short.

Every run must end in a report, so each of these becomes an ordinary Report with
verdict `error` (exit 2) and an `error_reason` (agent_start, harness, interrupted).
The cause is also one synthetic `error` cell in stage `gate`: every renderer that
lists cells (JUnit as an <error> testcase, the Markdown, the terminal) then shows
it, with the agent's log tail, without a special case. Messages are redacted here,
before any renderer sees them.
"""

from __future__ import annotations

from datetime import datetime, UTC

from gate.version import __version__
from gate.errors import EXIT_ERROR
from gate.report.model import CellResult, Counts, Report, RunInfo, Timings, VerdictPart

STAGE = "gate"


def _error_cell(loaded, label: str, error_reason: str, message: str) -> CellResult:
    return CellResult(id=f"{STAGE}/{error_reason}", stage=STAGE, input_id=error_reason, scenario="-",
                      seed=loaded.config.seed, input="", status="error", reason=error_reason, pass_rate=0.0,
                      error=message, reproduce=f"chaos-gate run -c {label}")


def failure_report(loaded, error_reason: str, message: str, label: str | None = None,
                   started: datetime | None = None, wall: float = 0.0) -> Report:
    """A report with no judged cell: the run failed before (or outside) any cell."""
    redact = loaded.redactor.redact
    label = label or str(loaded.path)
    message = redact(message)
    now = datetime.now(UTC)
    started = started or now
    part = VerdictPart(
        verdict="error", exit_code=EXIT_ERROR, score=None, min_score=loaded.config.gate.min_score,
        reasons=[message.splitlines()[0] if message else error_reason], error_reason=error_reason,
        seed=loaded.config.seed, config=label, config_digest=loaded.digest, runs_per_cell=loaded.config.runs,
        counts=Counts(cells=1, passed=0, failed=0, errors=1, flaky=0), stages=[], invariants=[],
        outcome_tally={error_reason: 1}, cells=[_error_cell(loaded, label, error_reason, message)])
    timings = Timings(started_at=started.isoformat(timespec="seconds"), finished_at=now.isoformat(timespec="seconds"),
                      wall_seconds=round(wall, 3), agent_startup_seconds=[], cells=[])
    return Report(verdict=part, timings=timings, run=RunInfo(tool_version=__version__, concurrency=0))


def mark_error(report: Report, loaded, error_reason: str, message: str) -> Report:
    """Turn a (partial) report into an error one: its finished cells stay, one error cell is added."""
    message = loaded.redactor.redact(message)
    v = report.verdict
    v.verdict, v.exit_code, v.error_reason = "error", EXIT_ERROR, error_reason
    v.reasons.insert(0, message.splitlines()[0] if message else error_reason)
    v.cells.append(_error_cell(loaded, v.config, error_reason, message))
    v.counts.cells += 1
    v.counts.errors += 1
    v.outcome_tally[error_reason] = v.outcome_tally.get(error_reason, 0) + 1
    return report


def redacted(report: Report, redactor) -> Report:
    """The report with every string redacted, in place, for renderers that print it (terminal,
    annotations). In place rather than through a JSON round trip: a 10,000-cell report would
    otherwise exist three times over (model, JSON text, re-parsed model)."""
    if redactor.values:
        _redact_strings(report, redactor.redact)
    return report


def _redact_strings(node, redact):
    """Every str reachable from `node` (models, lists, dicts), replaced by its redacted form."""
    from pydantic import BaseModel

    if isinstance(node, BaseModel):
        for name in type(node).model_fields:
            value = getattr(node, name)
            if isinstance(value, str):
                setattr(node, name, redact(value))
            else:
                _redact_strings(value, redact)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            if isinstance(value, str):
                node[i] = redact(value)
            else:
                _redact_strings(value, redact)
    elif isinstance(node, dict):
        for key, value in list(node.items()):
            node[key] = redact(value) if isinstance(value, str) else value
            if not isinstance(value, str):
                _redact_strings(value, redact)
