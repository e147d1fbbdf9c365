"""The Markdown report: the PR comment and the step summary, from the Report alone.

Verdict and score (with, when it is so, that no fault was injected) and the reasons come
first, then what failed: the worst failures, each with its fault, a trace excerpt that keeps
the faulted calls and their repeats, and its reproduce command in <details>, and the flaky
cells that passed on `min_pass_rate` with their failing runs; then stages, the invariant
table, the scenario × invariant matrix, fault coverage and cost. Exploration's findings lead as
their causes (gate/report/explore_text.py). The renderer degrades to fit a size budget, measured on
the body it returns: full, then failures only, then shortened in a planned order — the per-cell
failures, then the causes' log tails, then their pins, then their detail — always keeping every
cause's line and a note that says where the full report is. Whole sections only: never over the
limit, and never a table or a code block cut in the middle.
A crash or a start-up failure shows the end of the agent's log (its stderr); cells not judged
and cells re-run on a restarted agent are listed with why. A conversation cell shows its transcript
(gate/report/transcript.py) in place of its input and output: in the PR comment for its top findings
only, each turn cut shorter; its other failures say in one line which turn was faulted and which went wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

from tabulate import tabulate

from gate.report.log_tail import LOG_MARK  # a crash's detail (and a start-up error): summary, LOG_MARK, log tail
from gate.contracts.base import SEVERITY_RANK
from gate.report.escape import code, code_block, html_text, text
from gate.report.excerpt import gaps, shown_steps
from gate.report.injected import no_fault_note
from gate.report.insight_md import comparison_lead, comparison_table, cell_lines, cost_section, pass_k_table
from gate.report.model import CellResult, Report

ICON = {"pass": "✅", "fail": "❌", "error": "⚠️", "skipped": "➖"}
MATRIX_LEGEND = "_✅ held · ❌ breached · ➖ nothing to judge (no output) · · not checked_"
GITHUB_COMMENT_LIMIT = 65_536  # GitHub refuses a comment body longer than this (gate/github/comment.py)
COMMENT_LIMIT = 60_000  # what the PR comment is held to: a margin under GitHub's limit for what is added to it
SUMMARY_LIMIT = 1 << 20


def _table(rows, headers) -> str:
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


from gate.report import explore_text, transcript  # noqa: E402
from gate.report.reach_text import reach_lines  # noqa: E402


def _fmt_score(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.1f}"


def header(report: Report) -> str:
    v = report.verdict
    c = v.counts
    why = f" ({text(v.error_reason)})" if v.verdict == "error" and v.error_reason else ""
    unattacked = no_fault_note(report)  # on the first line: a pass that injected no fault must not read as survived
    lines = [f"## {ICON[v.verdict]} chaos-gate: **{v.verdict.upper()}**{why} — score {_fmt_score(v.score)} / 100 "
             f"(min {v.min_score:g}){f' — {unattacked}' if unattacked else ''}", ""] + comparison_lead(report)
    if v.warnings:  # shown before anything else: a warning is what a reader must not miss
        lines += [f"> ⚠️ {text(w, 300)}" for w in v.warnings[:10]]
        if len(v.warnings) > 10:
            lines.append(f"> …and {len(v.warnings) - 10} more warnings in report.json")
        lines.append("")
    skipped = f", {c.skipped} not judged" if c.skipped else ""
    lines.append(f"{c.cells} cells × {v.runs_per_cell} run(s): {c.passed} passed, {c.failed} failed, "
                 f"{c.errors} errors{skipped}, {c.flaky} flaky · seed `{v.seed}` · config {code(v.config, 80)}")
    if v.reasons:
        lines += [""] + [f"- {text(r, 300)}" for r in v.reasons]
    reached = reach_lines(v.reach)
    if reached:
        lines += [""] + [f"- _{text(line, 500)}_" for line in reached]
    return "\n".join(lines)


def stages_table(report: Report) -> str:
    rows = [[s.stage, _fmt_score(s.score), f"{s.weight:g}", s.cells, s.passed, s.failed, s.errors, s.flaky,
             "—" if s.minimum is None else f"{s.minimum:g}"] for s in report.verdict.stages]
    return "### Stages\n\n" + _table(rows, ["stage", "score", "weight", "cells", "pass", "fail", "error", "flaky", "min"])


def invariants_table(report: Report) -> str:
    rows = [[code(i.id, 60, table=True), text(i.severity), i.checked, i.breached, "✅" if i.breached == 0 else "❌"]
            for i in report.verdict.invariants]
    return "### Invariants\n\n" + _table(rows, ["invariant", "severity", "cells", "breached", ""])


COVERAGE_ICON = {"fired": "✅ fired", "not_applicable": "➖ not applicable", "never_fired": "⚠️ never fired",
                 "never_matched": "⚠️ never matched"}


def coverage_table(report: Report) -> str:
    """Scenario → fault → what happened to it: the proof that each fault was really injected."""
    rows = [[code(f"{sc.stage}/{sc.scenario}", 60, table=True), code(f.fault, 40, table=True),
             text(f.target, 40), f.cells or sc.cells, f.matched, f.fired, f.not_applicable, COVERAGE_ICON[f.status]]
            for sc in report.verdict.coverage for f in sc.faults]
    if not rows:
        return ""
    hints = [f"- {code(f'{sc.stage}/{sc.scenario}', 60)} {code(f.fault, 40)}: {text(f.hint, 300)}"
             for sc in report.verdict.coverage for f in sc.faults if f.hint][:20]
    return "### Fault coverage\n\n" + _table(rows, ["scenario", "fault", "target", "cells", "matched", "fired",
                                                     "not applicable", ""]) + \
        ("\n\nTo make them fire:\n\n" + "\n".join(hints) if hints else "")


def time_scale_note(report: Report) -> str:
    """How the dilated run's clock was verified (docs/time-dilation.md)."""
    scale, rates = report.run.time_scale, report.run.agent_clock_rates
    if scale <= 1:
        return ""
    checked = (f"measured inside {len(rates)} agent process(es) at {min(rates):g}x to {max(rates):g}x" if rates else
               "not measured inside the agent (no process with the gate's Python or Node bootstrap): a probe "
               "process under the agent's environment was the check")
    return (f"### Time dilation\n\nThe agent's clock ran {scale:g}x fast; every duration and timing here is agent "
            f"time. Its own clock was {checked}.")


def not_judged(report: Report) -> str:
    """Cells that ran but were not judged, and cells re-run on a restarted agent: each with why."""
    parts = []
    skipped = [c for c in report.verdict.cells if c.status == "skipped"]
    if skipped:
        parts.append("### Not judged\n\n" + "\n".join(f"- {code(c.id, 80)}: {text(c.note or c.reason, 300)}"
                                                       for c in skipped[:20]))
        if len(skipped) > 20:
            parts[-1] += f"\n- …and {len(skipped) - 20} more in report.json"
    if report.run.reruns:
        shown = {"passed": "passed: not charged", "failed_again": "failed again: charged", "error": "error"}
        rows = [[code(r.cell, 70, table=True), text(r.first_reason, 40), code(r.left_broken_by, 70, table=True),
                 shown[r.outcome]] for r in report.run.reruns[:20]]
        parts.append("### Re-run on a restarted agent\n\nThese cells failed with none of their own faults firing, "
                     "on an agent instance an earlier cell's faults had fired on; each was re-run on a restarted "
                     "agent and judged on that run alone.\n\n"
                     + _table(rows, ["cell", "first failed", "agent left broken by", "on a restarted agent"]))
    return "\n\n".join(parts)


def outcome_tally(report: Report) -> str:
    tally = report.verdict.outcome_tally
    return "**Outcomes:** " + ", ".join(f"{code(k, 60)} × {n}" for k, n in tally.items())


def pins(report: Report) -> str:
    """Pinned regressions: cells that failed before, run first on every run."""
    if not report.verdict.pins:
        return ""
    icon = {"pass": "✅ fixed", "fail": "❌ still failing", "error": "⚠️ error", "missing": "❓ cell no longer exists",
            "config_changed": "❓ config changed shape since pinned"}
    rows = [[code(p.id, 70, table=True), p.seed, icon.get(p.status, p.status)] for p in report.verdict.pins]
    return "### Pinned regressions\n\n" + _table(rows, ["cell", "seed", "now"])


def matrix(report: Report) -> str:
    """Scenarios (rows) × invariants (columns): ✅ all cells hold, ❌ some breach, · not checked."""
    cells = [c for c in report.verdict.cells if c.stage in ("contract", "chaos")]
    if not cells:
        return ""
    scenarios = list(dict.fromkeys(c.scenario for c in cells))
    invs = [i.id for i in report.verdict.invariants]
    rows = []
    for sc in scenarios:
        row = [code(sc, 40, table=True)]
        for inv in invs:
            row.append(_matrix_cell([o for c in cells if c.scenario == sc for o in c.invariants if o.id == inv]))
        rows.append(row)
    table = _table(rows, ["scenario"] + [code(i, 30, table=True) for i in invs])
    return "### Scenario × invariant\n\n" + table + "\n\n" + MATRIX_LEGEND


def _matrix_cell(outcomes) -> str:
    """❌ only for a judged breach: a run with nothing to judge is never shown as a failure."""
    if not outcomes:
        return "·"
    if any(o.breached for o in outcomes):
        return "❌"
    return "✅" if any(o.total_runs for o in outcomes) else "➖"


def worst(report: Report) -> list[CellResult]:
    bad = [c for c in report.verdict.cells if c.status in ("fail", "error")]

    def rank(c: CellResult):
        sev = min((SEVERITY_RANK[b.severity] for b in c.breaches), default=4 if c.status == "error" else 5)
        return (sev, c.pass_rate, c.id)

    return sorted(bad, key=rank)


def timeline(run, times: list | None, limit: int = 12) -> str:
    """The run's exchanges as a short table: what was called, which fault, what came back. A long trace
    keeps every faulted call and the calls that repeated it (gate/report/excerpt.py); gaps say how many
    calls are left out, where."""
    shown = shown_steps(run.trace, limit)
    left_out = dict(gaps(shown, len(run.trace)))
    rows = []
    for pos, n in enumerate(shown):
        if pos in left_out:
            rows.append(["…", f"_{left_out[pos]} call(s) not shown_", "", "", "", "", ""])
        rows.append(_step_row(run.trace[n], times[n] if times and n < len(times) else None))
    if len(shown) in left_out:
        rows.append(["…", f"_{left_out[len(shown)]} call(s) not shown_", "", "", "", "", ""])
    more = (f"\n\n_{len(shown)} of {len(run.trace)} calls shown: every faulted call and each call that repeated "
            "one, then the first others; all of them in report.json_") if len(shown) < len(run.trace) else ""
    return _table(rows, TRACE_HEADERS) + more


TRACE_HEADERS = ["#", "call", "model/tool", "status", "fault", "note", "time"]


def _step_row(step, times) -> list:
    start, end, _ = times or (None, None, 0)
    when = "" if start is None else f"{start:.0f}–{'…' if end is None else f'{end:.0f}'} ms"
    what = step.tool or step.model or ""
    return [step.seq, f"{code(step.target, 30, table=True)} {text(step.method, 10)} {text(step.path, 40)}",
            text(what, 30), step.status if step.status is not None else "—",
            f"**{text(step.fault, 40)}**" if step.fault else "",
            text(f"handoff {step.handoff}" + (f"; {step.note}" if step.note else "") if step.handoff else step.note, 60),
            when]


def claim_evidence(cell: CellResult, outcome, timing=None) -> list[str]:
    """A breached `claims_backed`: the sentence that made the claim, then the trace rows that
    contradict it (the rows its message names, from the run whose check gave that message)."""
    from gate.contracts.claims import evidence

    found = evidence(outcome.message)
    if found is None:
        return []
    lines = ["", f"> {text(found['sentence'], 240)}", ""]
    run = next((r for r in cell.runs if any(c.invariant == outcome.id and c.message == outcome.message
                                            for c in r.checks)), None)
    picked = [(n, s) for n, s in enumerate(run.trace if run else []) if s.seq in found["rows"]]
    if not picked:
        return lines + [f"_{text(found['what'], 240)}_", ""]
    times = timing.trace_ms[run.run] if timing and run.run < len(timing.trace_ms) else None
    rows = [_step_row(s, times[n] if times and n < len(times) else None) for n, s in picked]
    return lines + [f"Contradicted by run {run.run}'s trace:", "", _table(rows, TRACE_HEADERS), ""]


@dataclass(frozen=True)
class Turns:
    """How a conversation cell's transcript is shown: each text cut at `per_turn`, at most `rows` turns;
    `full=False` only says what happened in which turn (the comment's failures past its top findings)."""

    per_turn: int = 400
    rows: int = 20
    full: bool = True


SUMMARY_TURNS = Turns()
COMMENT_TURNS = Turns(per_turn=120, rows=6)
COMMENT_TRANSCRIPTS = 2  # the PR comment's top findings shown with their transcript; the rest in a line


def failure_detail(cell: CellResult, timing=None, turns: Turns = SUMMARY_TURNS, reference: dict | None = None) -> str:
    title = f"{ICON[cell.status]} <code>{html_text(cell.id)}</code> — {html_text(cell.reason)}"
    if cell.status == "pass":  # flaky, tolerated by min_pass_rate: still, some runs broke something
        title = (f"⚠️ <code>{html_text(cell.id)}</code> — flaky: passed on <code>min_pass_rate</code> "
                 f"(pass rate {cell.pass_rate:.0%})")
    elif cell.flaky:
        title += f" (flaky, pass rate {cell.pass_rate:.0%})"
    parts = [f"<details><summary>{title}</summary>", ""]
    for b in cell.breaches if cell.status != "pass" else [o for o in cell.invariants if o.passed_runs < o.total_runs]:
        failing = [r.run for r in cell.runs if any(c.invariant == b.id and c.judged and not c.passed for c in r.checks)]
        runs = f"; failing run(s): {', '.join(map(str, failing))}" if failing else ""
        parts.append(f"- **{text(b.severity)}** {code(b.id, 60)}: {text(b.message, 240)} "
                     f"({b.passed_runs}/{b.total_runs} runs passed{runs})")
        parts += claim_evidence(cell, b, timing)
    parts += cell_lines(cell)  # repeat statistics, minimal fault set and its replay command
    if cell.error:
        label = "The agent did not start:" if cell.reason == "agent_start" else "Harness error:"
        parts += ["", label, "", code_block(cell.error.split(LOG_MARK, 1)[0], 1200)]
    if cell.log_tail:
        parts += ["", "The agent's log (stderr) ends:", "", code_block(_tail(cell.log_tail), 1500)]
    run = next((r for r in cell.runs if r.error is None and not all(c.passed or not c.judged for c in r.checks)), None)
    told = transcript.of_run(run, reference) if run is not None else None  # a conversation: its turns
    if told is None or not turns.full or len(told.rows) < told.total:  # the turns never sent are in the input
        parts += ["", f"Input ({text(cell.mutation or cell.scenario, 60)}):", "", code_block(cell.input, 600)]
    if run is not None:
        detail = run.detail.split(LOG_MARK, 1)[0] if cell.log_tail else run.detail  # the tail is shown above
        shown = run.output if run.output is not None else f"(no output: {run.reason}) {detail}"
        if told is not None and turns.full:
            parts += [""] + transcript.markdown(told, run.run, turns.per_turn, turns.rows)
            if run.output is None:  # how the last turn sent failed, in the agent's words
                parts += ["", f"Output of run {run.run}:", "", code_block(shown, 800)]
        else:
            parts += ["", f"Output of run {run.run}:", "", code_block(shown, 800)]
            if told is not None:
                parts += ["", f"Conversation of run {run.run}: {text(told.summary(), 600)} _(its transcript is "
                              f"in the full report)_"]
        if run.trace:
            times = timing.trace_ms[run.run] if timing and run.run < len(timing.trace_ms) else None
            parts += ["", f"Trace of run {run.run}:", "", timeline(run, times)]
        if run.state:
            import json

            parts += ["", "Final world state:", "", code_block(json.dumps(run.state, indent=1, sort_keys=True), 1500,
                                                                "json")]
    parts += ["", "Reproduce:", "", code_block(cell.reproduce, 400, "sh"), "", "</details>"]
    return "\n".join(parts)


def _tail(log: str, limit: int = 1500) -> str:
    """The end of a log: its last `limit` characters (a code block keeps the start)."""
    return log if len(log) <= limit else "…" + log[-limit:]


def flaky_passed(report: Report) -> list[CellResult]:
    """Cells that passed only because `min_pass_rate` tolerated their failing runs."""
    return [c for c in report.verdict.cells if c.status == "pass" and c.flaky]


def render(report: Report, limit: int = COMMENT_LIMIT, max_failures: int = 20, marker: str = "",
           full_report: str | None = None) -> str:
    """What failed and why first (the header's reasons, the causes of the findings, then the failures and the
    flaky cells that passed on min_pass_rate), then the tables. The full report if it fits, else failures
    only, else shortened (`shortened`). `full_report`: where the whole report is (the workflow run's page)."""
    failures = worst(report)
    lead = [header(report), explore_text.markdown(report), comparison_table(report), pins(report)]
    tables = [stages_table(report), invariants_table(report), pass_k_table(report), outcome_tally(report),
              matrix(report), coverage_table(report), not_judged(report), time_scale_note(report),
              cost_section(report)]
    timing = {t.id: t for t in report.timings.cells}
    same_start = {c.id for c in failures if c.reason == "agent_start"}  # one start-up failure is shown once
    same_start.discard(next((c.id for c in failures if c.reason == "agent_start"), None))
    failures = [c for c in failures if c.id not in same_start]
    refs = transcript.references(report)
    comment = limit <= COMMENT_LIMIT  # the PR comment: transcripts for its top findings only, cut shorter
    top = _top_cells(report, failures, COMMENT_TRANSCRIPTS) if comment else None

    def shown(c: CellResult) -> Turns:
        if not comment:
            return SUMMARY_TURNS
        return COMMENT_TURNS if c.id in top else Turns(full=False)

    details = [failure_detail(c, timing.get(c.id), shown(c), refs.get(c.input_id)) for c in failures[:max_failures]]
    counted = []
    if same_start:
        counted.append(f"_…and {len(same_start)} more cells where the agent did not start the same way._")
    if len(failures) > max_failures:
        counted.append(f"_…and {len(failures) - max_failures} more failing cells in report.json._")
    flaky = [failure_detail(c, timing.get(c.id), shown(c), refs.get(c.input_id))
             for c in flaky_passed(report)[:max_failures]]
    full = _join(marker, lead, details + counted, flaky, tables)
    if len(full) <= limit:
        return full
    compact = _join(marker, [header(report), explore_text.markdown(report), pins(report)], details + counted, flaky,
                    [stages_table(report)])
    if len(compact) <= limit:
        return compact
    return shortened(report, limit, marker, details, full_report, max(0, len(failures) - max_failures))


def _top_cells(report: Report, failures: list[CellResult], n: int) -> set[str]:
    """The comment's top findings: the first cells of the first `n` causes exploration found, else the
    `n` worst failing cells."""
    causes = report.verdict.explore.causes if report.verdict.explore else []
    if causes:
        return {c.cells[0] for c in causes[:n] if c.cells}
    return {c.id for c in failures[:n]}


# What a comment over the limit sheds, in order, after the per-cell failures: the causes' log tails, their
# pins past the first few, every pin, the detail past the first few causes, all of it. Every cause's line stays.
SHED = (dict(), dict(logs=False), dict(logs=False, pins=3), dict(logs=False, pins=0),
        dict(logs=False, pins=0, full=3), dict(logs=False, pins=0, full=0))


def shortened(report: Report, limit: int, marker: str, details: list[str], full_report: str | None,
              untold: int = 0) -> str:
    """The header, the causes at the most detail that fits, as many failures as fit after them (`untold`: the
    failing cells with no detail at all), and a line saying where the full report is. Whole sections only: no
    table or code block is ever cut."""
    note = trimmed_note(report, full_report)
    for level in SHED:
        lead = [header(report), explore_text.markdown(report, **level), note]
        base = _join(marker, lead, [])
        if len(base) <= limit:
            return _join(marker, lead, _fitting(details, limit - len(base), untold))
    shown = _most_causes(report, limit, marker, note)
    if shown is not None:
        return _join(marker, [header(report), explore_text.markdown(report, logs=False, pins=0, full=0,
                                                                    shown=shown), note], [])
    return _whole_lines(_join(marker, [header(report), note], []), limit)


def trimmed_note(report: Report, full_report: str | None) -> str:
    """Where the rest is: the workflow run (its step summary; report.json among its artifacts)."""
    where = (f"[the workflow run]({full_report}): its step summary, and report.json among its artifacts"
             if full_report else "report.json and the workflow run's step summary")
    kept = "every cause of the findings is listed above; " if report.verdict.explore and \
        report.verdict.explore.findings else ""
    return (f"_Report trimmed to fit GitHub's size limit: {kept}each failing cell's trace, log and pin are in "
            f"the full report — {where}._")


def _fitting(details: list[str], room: int, untold: int) -> list[str]:
    """The first failures that fit in `room` (each whole), and a line counting the rest."""
    kept: list[str] = []
    used = len("\n\n### Failures\n\n") + 80  # the heading, and room for the line counting the rest
    for d in details:
        if used + len(d) + 2 > room:
            break
        kept.append(d)
        used += len(d) + 2
    left = len(details) - len(kept) + untold
    return kept + [f"_…and {left} more failing cells in the full report._"] if left and kept else kept


def _most_causes(report: Report, limit: int, marker: str, note: str) -> int | None:
    """The most cause lines that fit (binary search: each try renders once), or None when not one does."""
    low, high, best = 1, len(report.verdict.explore.causes) if report.verdict.explore else 0, None
    while low <= high:
        mid = (low + high) // 2
        body = _join(marker, [header(report), explore_text.markdown(report, logs=False, pins=0, full=0, shown=mid),
                              note], [])
        if len(body) <= limit:
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def _whole_lines(body: str, limit: int) -> str:
    """The last resort (a header over the limit): its first lines that fit. The header holds no table or
    code block, so whole lines cut none."""
    out, used = [], 0
    for line in body.splitlines(keepends=True):
        if used + len(line) > limit:
            break
        out.append(line)
        used += len(line)
    return "".join(out)


def error_summary(message: str, limit: int = 60_000) -> str:
    """The step summary when the gate could not run at all: the message in a fence it cannot close."""
    return "## ⚠️ chaos-gate: **ERROR** — the gate could not run\n\n" + code_block(message, limit) + "\n"


def _join(marker: str, lead: list[str], details: list[str], flaky: list[str] = (), tables: list[str] = ()) -> str:
    body = "\n\n".join(s for s in lead if s)
    if details:
        body += "\n\n### Failures\n\n" + "\n\n".join(details)
    if flaky:
        body += ("\n\n### Flaky: passed on `min_pass_rate`\n\nSome runs of these cells broke an invariant that "
                 "`min_pass_rate` tolerates:\n\n" + "\n\n".join(flaky))
    rest = "\n\n".join(s for s in tables if s)
    if rest:
        body += "\n\n" + rest
    return (marker + "\n" if marker else "") + body + "\n"
