"""Fold the runs of one cell into its CellResult: checks, pass rates, flakiness, reason. Pure.

A cell whose faults all met answers they could not alter (every firing `not_applicable`,
none fired: `truncate_stream` on a turn the framework did not stream) tested nothing its
scenario names: it is `skipped`, not judged, with a note saying why, and counts in no score.
"""

from __future__ import annotations

import functools
import shlex

from gate.report.log_tail import CRASH_REASONS, LOG_TAIL_CHARS, log_tail_of
from gate.contracts import InvariantBase, Observation
from gate.contracts.base import SEVERITY_RANK
from gate.plan import Cell
from gate.report.model import CellResult, CheckResult, InvariantOutcome, RunResult

OUTPUT_EXCERPT = 2000


# Results that recur cell after cell (every passing check of one invariant reads the same) are
# built once per run and shared: they are never mutated, save by the in-place redaction, which
# gives the same text however often it runs. Cleared at the start of each run (`forget_shared`),
# so no run sees another's results, and bounded, so a run of all-distinct messages cannot grow it.
_SHARED: dict[tuple, CheckResult | InvariantOutcome] = {}
SHARED_MAX = 20_000


def forget_shared() -> None:
    _SHARED.clear()


def _shared(key: tuple, build):
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= SHARED_MAX:
            _SHARED.clear()
        found = _SHARED[key] = build()
    return found


def check_run(invariants: list[InvariantBase], obs: Observation) -> list[CheckResult]:
    out = []
    for inv in invariants:
        v = inv.evaluate(obs)
        key = ("check", inv.id, inv.severity, v.passed, v.message, v.judged)
        found = _SHARED.get(key)  # _shared, inlined: this runs for every check of every cell
        if found is None:
            found = _shared(key, lambda inv=inv, v=v: CheckResult(
                invariant=inv.id, severity=inv.severity, passed=v.passed, message=v.message, judged=v.judged))
        out.append(found)
    return out


def _checks_by_invariant(runs: list[RunResult]) -> dict[str, list[CheckResult]]:
    """The checks of the runs that finished, grouped by invariant (one pass over the runs)."""
    grouped: dict[str, list[CheckResult]] = {}
    for run in runs:
        if run.error is None:
            for check in run.checks:
                grouped.setdefault(check.invariant, []).append(check)
    return grouped


def _fold_invariant(inv: InvariantBase, checks: list[CheckResult]) -> InvariantOutcome:
    """Pass rate over the runs that gave this invariant something to judge."""
    if len(checks) == 1:  # one run (the usual case): the outcome follows from its check alone, shared
        c = checks[0]
        key = ("single", inv.id, inv.severity, inv.min_pass_rate, c.passed, c.message, c.judged)
        found = _SHARED.get(key)
        return found if found is not None else _shared(key, lambda: _fold_runs(inv, checks))
    return _fold_runs(inv, checks)


def _fold_runs(inv: InvariantBase, checks: list[CheckResult]) -> InvariantOutcome:
    results = [c for c in checks if c.judged]
    passed = sum(1 for c in results if c.passed)
    rate = passed / len(results) if results else 1.0
    failing = next((c.message for c in results if not c.passed), None)
    fallback = results[0].message if results else (checks[0].message if checks else "not checked")
    return InvariantOutcome(
        id=inv.id, severity=inv.severity, passed_runs=passed, total_runs=len(results),
        pass_rate=round(rate, 4), breached=bool(results) and rate < inv.min_pass_rate,
        message=failing or fallback, not_judged_runs=len(checks) - len(results))


def reproduce_command(config_path: str, cell: Cell, seed: int | None = None, env: dict[str, str] | None = None,
                      digest: str | None = None) -> str:
    """The command that reruns exactly this cell: the environment the config expanded (non-secret
    values only), and the config's digest so a changed config is warned about, not silently run."""
    head, tail = _reproduce_frame(config_path, tuple(sorted((env or {}).items())), digest)
    parts = ["--only", cell.id]
    if getattr(cell, "firings", None) is not None:  # exactly these fault firings (a shrunk set)
        parts += ["--faults", format_firings(cell.firings)]
    if seed is not None:
        parts += ["--seed", str(seed)]
    return head + shlex.join(parts) + tail


@functools.lru_cache(maxsize=8)
def _reproduce_frame(config_path: str, env: tuple[tuple[str, str], ...], digest: str | None) -> tuple[str, str]:
    """What every cell's command shares, quoted once per run instead of once per cell."""
    prefix = " ".join(f"{name}={shlex.quote(value)}" for name, value in env)
    head = (prefix + " " if prefix else "") + shlex.join(["chaos-gate", "run", "-c", config_path]) + " "
    return head, (" " + shlex.join(["--expect-digest", digest])) if digest else ""


def format_firings(firings) -> str:
    """{(index, upstream, call)} -> '2:openai:1,5:orders:1' (or 'none'), the --faults syntax."""
    return ",".join(f"{i}:{t}:{c}" for i, t, c in sorted(firings)) or "none"


def inapplicable(cell: Cell, runs: list[RunResult], stats: list | None = None) -> str | None:
    """Why the cell's faults changed nothing, when every firing of them in every run was not
    applicable and none fired; else None. `stats`: the proxy's counters per run (else the trace)."""
    if not cell.faults or not runs:
        return None
    fired = missed = 0
    if stats and any(s is not None for s in stats):
        for per_run in stats:
            for got in (per_run or {}).values():
                fired += int(got.get("fired", 0))
                missed += int(got.get("not_applicable", 0))
    else:
        for run in runs:
            fired += sum(step.fault_status == "fired" for step in run.trace)
            missed += sum(step.fault_status == "not_applicable" for step in run.trace)
    if fired or not missed:
        return None
    return next((f"{step.fault}: {step.note.removeprefix('not applicable: ')}" for run in runs for step in run.trace
                 if step.fault_status == "not_applicable" and step.note), "not applicable")


def _skipped_note(why: str, runs: list[RunResult]) -> str:
    ended = sorted({r.reason for r in runs if r.reason != "ok"})
    note = (f"not judged: every firing of its faults met an answer it could not alter ({why}), so it "
            "tested nothing its scenario names")
    return note + (f"; its run(s) ended {', '.join(ended)}, which the fault-free cells judge" if ended else "")


def _log_tail(runs: list[RunResult]) -> str | None:
    """The agent's log tail of the first crash or non-zero exit among the runs, else what the log gained
    during the first run that failed a check (an agent that logged its traceback and answered 200)."""
    crashed = next((tail for r in runs if r.reason in CRASH_REASONS and (tail := log_tail_of(r.detail))), None)
    return crashed or next((r.log[-LOG_TAIL_CHARS:] for r in runs if r.log.strip()), None)


FORGED = "the agent tried to forge the gate's trace (refused, and this run is not judged)"
BYPASSED = "the agent sent requests straight to a service, around the gate's proxy (this run is not judged)"
BYPASS_FIX = "hand the agent the tool's proxied URL, not the service's own (`{{services.NAME.url}}`)"
ERROR_REASONS = ((FORGED, "forged_trace"), (BYPASSED, "bypassed_proxy"))


def fold_cell(cell: Cell, invariants: list[InvariantBase], runs: list[RunResult], reproduce: str,
              redact, fault_stats: list | None = None) -> CellResult:
    """`fault_stats`: the proxy's fault counters per run, to tell a cell its faults could not reach."""
    errors = [r.error for r in runs if r.error is not None]
    grouped = _checks_by_invariant(runs)
    outcomes = [_fold_invariant(inv, grouped.get(inv.id, [])) for inv in invariants]
    good = [r for r in runs if r.error is None]
    clean = [all(c.passed for c in r.checks) for r in good]
    flaky = len(set(clean)) > 1 or any(0 < o.pass_rate < 1 for o in outcomes)
    breaches = sorted((o for o in outcomes if o.breached), key=lambda o: SEVERITY_RANK[o.severity])
    note, why = None, None if errors else inapplicable(cell, runs, fault_stats)
    if errors:  # the gate's own part failed, or the agent tried to forge the trace: judged neither way
        status, reason = "error", next((r for prefix, r in ERROR_REASONS if any(e.startswith(prefix) for e in errors)),
                                       "harness_error")
    elif why is not None:
        status, reason, note, outcomes, flaky = "skipped", "not_applicable", _skipped_note(why, good), [], False
    elif breaches:
        status = "fail"
        first_bad = next(r for r in good if not all(c.passed for c in r.checks))
        reason = first_bad.reason if first_bad.reason != "ok" else f"contract:{breaches[0].id}"
    else:
        status, reason = "pass", "ok"
    return CellResult(
        id=cell.id, stage=cell.stage, input_id=cell.input_id, mutation=cell.mutation, scenario=cell.scenario,
        seed=cell.seed, input=redact(cell.text), status=status, reason=reason, flaky=flaky,
        pass_rate=round(sum(clean) / len(clean), 4) if clean else 0.0, invariants=outcomes,
        runs=[_redacted(r, redact) for r in runs], error=redact(errors[0]) if errors else None,
        note=None if note is None else redact(note),
        log_tail=None if (tail := _log_tail(runs)) is None else redact(tail),
        reproduce=reproduce)


def _redacted(run: RunResult, redact) -> RunResult:
    output = None if run.output is None else redact(run.output[:OUTPUT_EXCERPT])
    detail, error = redact(run.detail), None if run.error is None else redact(run.error)
    if output is run.output and detail is run.detail and error is run.error:
        return run  # nothing to cut or hide (the usual case): no copy
    return run.model_copy(update={"output": output, "detail": detail, "error": error})
