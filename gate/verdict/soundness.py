"""Could this run judge anything? The last word on a verdict before it is published. Pure.

Scoring decides pass or fail from the cells; this module asks whether that decision
means something. A config mistake that only shows at run time (an agent URL nothing
listens on, an output path no response has) is the config's error, not a score of 0;
a run that tested nothing (coverage.py) is `vacuous`, not a pass. Both turn the
verdict into `error` (exit 2) with a reason that names the config line to fix.

Vacuity is judged per scenario (and per invariant) from its own cells only, so a combined
run and the scenario alone agree, whatever else fails: it is an error, unless its own
cells failed on their outcome (a crash, a timeout, a 5xx: the agent broke before the
fault could act, or left the invariant no output to judge; that failure is charged, and
the vacuity is a warning shown first).
`gate.allow_vacuous` makes every vacuity a warning.

A command agent that fails before doing anything, the same way in every run of every
cell (the unperturbed inputs among them), did not start: `agent_start`, with its stderr.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gate.report.log_tail import CRASH_REASONS, LOG_MARK, log_tail_of
from gate.errors import EXIT_ERROR
from gate.report.model import CellResult, Rerun
from gate.contracts.universal import UNIVERSAL
from gate.verdict.coverage import idle_faults, vacuous_invariant_items, vacuous_scenario_items
from gate.verdict.sim_fallbacks import fallback_warnings


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


def startup_failure(loaded, cells: list[CellResult]) -> str | None:
    """The message when a command agent did not start, else None.

    The rule: `agent.invoke.command`; every run of every cell exited non-zero (or was killed)
    without a single LLM or tool call, all with the same output and stderr; and an unperturbed
    input, or two different inputs, among them (so a mutation the agent rightly rejects, run
    alone with --only, is never taken for it)."""
    agent = loaded.config.agent
    runs = [r for c in cells for r in c.runs]
    varied = any(c.mutation is None for c in cells) or len({c.input for c in cells}) > 1
    if agent.invoke.command is None or not runs or not varied:
        return None
    if any(r.error is not None or r.reason not in CRASH_REASONS or r.trace for r in runs):
        return None
    if len({(r.reason, r.status, r.detail) for r in runs}) != 1:
        return None
    first = runs[0]
    summary = (first.detail.split(LOG_MARK, 1)[0].splitlines() or [f"status {first.status}"])[0]
    where = f"{loaded.path.name}:{loaded.line_of('agent', 'invoke', 'command')}"
    tail = log_tail_of(first.detail)
    return (f"{where}: agent.invoke.command: the agent failed before doing anything ({first.reason}, {summary}), "
            f"the same way in all {len(runs)} run(s) of {len(cells)} cell(s), without one LLM or tool call: it did "
            "not start, so nothing was tested"
            + (LOG_MARK + tail if tail else "; it wrote nothing to stderr"))


def charge_to_start(cells: list[CellResult], message: str) -> None:
    """Every cell becomes an error of the start-up, judged on nothing (so it is in no score)."""
    for cell in cells:
        cell.status, cell.reason, cell.error, cell.invariants, cell.flaky = "error", "agent_start", message, [], False
        cell.log_tail = cell.log_tail or next((log_tail_of(r.detail) for r in cell.runs if log_tail_of(r.detail)),
                                              None)


def judged_counts(cells: list[CellResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for cell in cells:
        for outcome in cell.invariants:
            counts[outcome.id] = counts.get(outcome.id, 0) + outcome.total_runs
    return counts


def assess(loaded, cells: list[CellResult], summaries, coverage, verdict: str, *, whole_plan: bool,
           stray_count: int = 0, startup: str | None = None, reruns=(), late: list[str] = (),
           explored=None) -> Soundness:
    """`startup`: the start-up failure message (startup_failure); `reruns`: cells re-run on a restarted
    agent (gate/runner/recover.py), whose warnings name the cell that left the agent broken."""
    out = Soundness(warnings=list(getattr(loaded, "warnings", [])))
    if startup is not None:
        return Soundness("agent_start", [startup], out.warnings)
    config_errors = runtime_config_errors(loaded, cells)
    if config_errors:
        return Soundness("config", config_errors, out.warnings)
    out.warnings += rerun_warnings(list(reruns))
    vacuous, excused = vacuity(cells, summaries, coverage, whole_plan)
    if whole_plan:
        from gate.verdict.coverage import unmatched_tool_filters

        vacuous += unmatched_tool_filters(loaded.config, cells)
    out.warnings += idle_faults(coverage)
    quiet_vacuous, quiet_warnings = nothing_reached(loaded.config, cells)
    vacuous += quiet_vacuous
    if whole_plan and not quiet_vacuous:
        empty, note = empty_exploration(explored, cells)
        vacuous, out.warnings = vacuous + empty, out.warnings + note
    out.warnings += quiet_warnings + stateful_warning(loaded.config, cells) + fallback_warnings(loaded.config, cells)
    if stray_count:
        out.warnings.append(f"{stray_count} call(s) reached the proxy while no cell was running (an agent "
                            "outliving its cell); they are listed as stray and charged to no cell")
    if late:
        out.warnings.append(f"{len(late)} write(s) arrived after their cell had answered ({', '.join(late[:5])}"
                            f"{' …' if len(late) > 5 else ''}): each is listed as a stray of the cell that made it, "
                            "not charged to the cell that was running; an agent that writes after answering may "
                            "lose that write when its process ends")
    if loaded.config.gate.allow_vacuous:
        out.warnings = vacuous + excused + out.warnings  # allowed: shown first
        return out
    out.warnings = excused + out.warnings
    if vacuous:  # alone or beside other failures alike: those stay listed after it
        out.error_reason, out.reasons = "vacuous", vacuous
    return out


def vacuity(cells: list[CellResult], summaries, coverage, whole_plan: bool) -> tuple[list[str], list[str]]:
    """(vacuous, excused): each vacuous scenario or invariant, excused when its own cells failed on their
    outcome (no answer), not merely on an output invariant."""
    failed = [c for c in cells if c.status == "fail" and not c.reason.startswith("contract:")]
    failed_rows = {(c.stage, c.scenario) for c in failed}
    failed_invariants = {o.id for c in failed for o in c.invariants}
    errors, excused, idle = [], [], []
    for sc, message in vacuous_scenario_items(coverage):
        (excused if (sc.stage, sc.scenario) in failed_rows else errors).append(message)
    if whole_plan:
        for inv_id, applied, message in vacuous_invariant_items(summaries, judged_counts(cells)):
            if inv_id in UNIVERSAL:  # the gate's own oracle, not the team's: a note that nothing it judges happened
                idle.append(f"oracle '{inv_id}' met no explored fault it judges (docs/explore.md)")
                continue
            (excused if applied and inv_id in failed_invariants else errors).append(message)
    because = "vacuous, but its own cells failed first, with no answer (that failure is charged instead):"
    return errors, [m.replace("vacuous:", because, 1) for m in excused] + idle


def apply(part, sound: Soundness) -> None:
    """Fold the assessment into a VerdictPart in place."""
    part.warnings = sound.warnings
    if sound.error_reason is None:
        if part.verdict == "error" and part.error_reason is None:
            part.error_reason = "harness"
        return
    part.verdict, part.exit_code, part.error_reason = "error", EXIT_ERROR, sound.error_reason
    part.reasons = sound.reasons + part.reasons


def rerun_warnings(reruns: list[Rerun]) -> list[str]:
    """What the verdict says about the cells re-run on a restarted agent (gate/runner/recover.py); the
    details are in report.run.reruns."""
    out = []
    passed = [r for r in reruns if r.outcome == "passed"]
    for origin in dict.fromkeys(r.left_broken_by for r in passed):
        victims = [r.cell for r in passed if r.left_broken_by == origin]
        shown = ", ".join(victims[:3]) + (f" and {len(victims) - 3} more" if len(victims) > 3 else "")
        out.append(f"the agent was left broken by {origin}: {len(victims)} later cell(s) on that agent instance "
                   f"failed with none of their own faults firing ({shown}) and passed when re-run on a restarted "
                   "agent, so they are not charged; the agent does not recover from what that cell's faults did")
    again = [r.cell for r in reruns if r.outcome != "passed"]
    if again:
        out.append(f"{len(again)} cell(s) failed on an agent instance an earlier cell's faults had fired on, and "
                   f"failed again on a restarted agent: charged to themselves ({', '.join(again[:3])})")
    return out


WAY_TO_REACH = ("check that the agent's clients read the base URLs the gate sets (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, "
                "the tools' env vars) and that it does not answer from a cache (DSPy's disk cache, an HTTP cache) or "
                "from state kept since an earlier cell")


def nothing_reached(config, cells: list[CellResult]) -> tuple[list[str], list[str]]:
    """(vacuous, warnings) about cells whose runs made no call the gate saw. Every watched cell quiet: the
    run tested the agent's answers and nothing of its calls, which is vacuous unless `agent.offline` says
    so on purpose (or the cells failed on their outcome first: then it is a warning). Some cells quiet:
    a warning naming them. Cells the gate did not watch (no proxy: `reached` is None) are not counted."""
    watched = [c for c in cells if c.reached is not None and c.status not in ("error", "skipped")]  # skipped: never run
    quiet = [c for c in watched if c.reached.calls == 0]
    if not quiet or config.agent.offline:
        return [], []
    shown = ", ".join(c.id for c in quiet[:3]) + (f" and {len(quiet) - 3} more" if len(quiet) > 3 else "")
    if len(quiet) < len(watched):
        return [], [f"{len(quiet)} of {len(watched)} cell(s) reached nothing ({shown}): none of their runs made an "
                    f"LLM or tool call the gate saw, so no fault acted on them; {WAY_TO_REACH}"]
    message = (f"vacuous: no cell reached anything: the agent made no LLM or tool call the gate saw in any run of its "
               f"{len(quiet)} cell(s), so no fault acted and no call was judged — {WAY_TO_REACH}; or set "
               "`agent.offline: true` if it calls nothing on purpose")
    if any(c.status == "fail" and not c.reason.startswith("contract:") for c in quiet):
        return [], [message.replace("vacuous:", "vacuous, but its cells failed first, with no answer:", 1)]
    return [message], []


def empty_exploration(explored, cells: list[CellResult]) -> tuple[list[str], list[str]]:
    """(vacuous, warnings) for an exploration that ran no fault point. Vacuous when nothing but the
    baselines ran (nothing was attacked); a warning when written cells tested something else."""
    if explored is None or explored.run:
        return [], []
    if explored.failed_baselines and not explored.sites:
        why = f"no input's fault-free baseline answered ({', '.join(explored.failed_baselines[:3])})"
    elif not explored.sites:
        why = "the baselines made no call the gate can fault" + (
            f" ({'; '.join(explored.unfaultable[:2])})" if explored.unfaultable else "")
    else:
        reasons = ", ".join(f"{n} {why}" for why, n in explored.pruned.items())
        why = f"all {explored.planned or sum(explored.pruned.values())} fault point(s) of {explored.sites} call " \
              f"site(s) were pruned ({reasons})"
    message = (f"vacuous: exploration ran no fault point: {why}; nothing was attacked — widen `chaos.explore` "
               "(kinds, skip, budget) or write a scenario (docs/explore.md)")
    others = [c for c in cells if not (c.stage == "contract" and c.scenario == "baseline")]
    if others:
        return [], [message.replace("vacuous: ", "", 1)]
    return [message], []


def stateful_warning(config, cells: list[CellResult]) -> list[str]:
    """Under `sim` (a model that answers the same conversation the same way), an agent that answers one
    input differently in two cells where no fault acted keeps something between cells. Only a warning:
    an answer may carry a timestamp or an id of its own."""
    if not config.llm or any(llm.upstream != "sim" for llm in config.llm):
        return []
    if config.agent.reset is not None or config.agent.restart == "always":
        return []
    answers: dict[str, dict[str, str]] = {}  # input -> answer digest -> first cell with it
    for cell in cells:
        r = cell.reached
        if r is None or r.faulted or r.answer is None or cell.status == "error" or cell.stage == "replay":
            continue
        answers.setdefault(cell.input, {}).setdefault(r.answer, cell.id)
    split = [ids for ids in answers.values() if len(ids) > 1]
    if not split:
        return []
    first = list(split[0].values())
    return [f"the agent may keep state between cells: under sim, with no fault acting, it answered the same input "
            f"differently in {first[0]} and {first[1]}" + (f" (and {len(split) - 1} more input(s))" if len(split) > 1
                                                            else "")
            + "; configure `agent.reset` (a request that clears it before each cell) or `agent.restart: always`, "
              "or turn off the cache it answers from"]

