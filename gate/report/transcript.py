"""A conversation run told as its transcript, for the Markdown report and report.html. Pure.

Each turn's user text and the agent's answer, in order; the turns where a fault fired marked, each
faulted call named (from the trace steps' `turn` and `fault_status: fired`); and the first turn, from
the first faulted one on (from turn 1 when none fired), that went wrong: it did not answer (its
reason is not `ok`), the provider refused its model call (a 4xx no fault injected: a history the agent
left broken), or it answered otherwise than the fault-free baseline did at that turn. The
baseline is the input's `contract/<input>/baseline` cell, and a turn is compared only where every
baseline run that reached it answered it, the same way, to the same user text (a nondeterministic
agent's turn is not compared, nor a replayed session's turns against a config input of its name).

Long conversations show the turns that matter (the first, the faulted ones and the one before each,
the one that went wrong, the last) and elide the rest; every text is cut at a per-turn limit. Agent
text goes through gate.report.escape like every other rendering of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gate.report.escape import code, html_attr, html_block, text
from gate.report.model import Report, RunResult

OF_TOTAL = re.compile(r"^turn (\d+) of (\d+)\b")
FAULT, WRONG = "⚡", "❌"


@dataclass
class Row:
    turn: int
    text: str
    answer: str | None
    reason: str
    faults: list[str] = field(default_factory=list)  # the calls of this turn a fault fired on, named
    wrong: str | None = None  # set on the first turn that went wrong: why


@dataclass
class Transcript:
    rows: list[Row]
    total: int  # the conversation's turns (more than the rows when the run ended early)
    fault_turn: int | None = None
    wrong_turn: int | None = None
    untagged: list[str] = field(default_factory=list)  # faulted calls the trace keys to no turn
    reference: dict[int, tuple[str, str | None]] | None = None  # the baseline's turns it was compared with

    def summary(self) -> str:
        """`2 of 3 turns sent; a fault fired in turn 2; turn 2 went wrong first (http_5xx)`."""
        sent = len(self.rows)
        parts = [f"{sent} of {self.total} turns sent" if sent < self.total else f"{sent} turns"]
        faulted = [r.turn for r in self.rows if r.faults]
        if faulted:
            parts.append(f"a fault fired in turn {', '.join(map(str, faulted))}")
        elif self.untagged:
            parts.append("a fault fired outside any turn")
        if self.wrong_turn is not None:
            why = next(r.wrong for r in self.rows if r.turn == self.wrong_turn)
            parts.append(f"turn {self.wrong_turn} went wrong first ({why})")
        return "; ".join(parts)


def references(report: Report) -> dict[str, dict[int, tuple[str, str | None]]]:
    """Per conversation input, the fault-free baseline's (user text, answer) of each turn every baseline run
    that reached it answered alike; a turn the runs answered differently (or not at all) is left out."""
    out: dict[str, dict[int, tuple[str, str | None]]] = {}
    for cell in report.verdict.cells:
        if cell.stage != "contract" or cell.scenario != "baseline":
            continue
        seen: dict[int, set] = {}
        for run in cell.runs:
            for t in run.turns or []:
                seen.setdefault(t.turn, set()).add((t.text, t.answer) if t.reason == "ok" else None)
        agreed = {n: next(iter(v)) for n, v in seen.items() if len(v) == 1 and None not in v}
        if agreed:
            out[cell.input_id] = agreed
    return out


def call_name(step, k: int) -> str:
    """`server_error on openai's LLM call 1 of turn 2 (POST /v1/chat/completions, gpt-4o)`."""
    kind = {"llm": "LLM call", "tool": "tool call"}.get(step.kind, f"{step.kind} call")
    what = step.tool or step.model or step.rpc_method
    where = f"{step.method} {step.path}".strip() + (f", {what}" if what else "")
    turn = f" of turn {step.turn}" if step.turn else ""
    return f"{step.fault or 'fault'} on {step.target}'s {kind} {k}{turn}" + (f" ({where})" if where else "")


def of_run(run: RunResult, reference: dict[int, tuple[str, str | None]] | None = None) -> Transcript | None:
    """The run's transcript with its marks; None when the run is no conversation's."""
    if not run.turns:
        return None
    rows = [Row(t.turn, t.text, t.answer, t.reason) for t in run.turns]
    by_turn = {r.turn: r for r in rows}
    counted: dict[tuple, int] = {}
    untagged = []
    for step in run.trace:
        key = (step.turn, step.target, step.kind)
        counted[key] = counted.get(key, 0) + 1
        if step.fault_status != "fired":
            continue
        name = call_name(step, counted[key])
        if step.turn in by_turn:
            by_turn[step.turn].faults.append(name)
        else:
            untagged.append(name)
    if reference and any(r.turn in reference and reference[r.turn][0] != r.text for r in rows):
        reference = None  # another conversation's baseline (a replayed session named as a config input)
    m = OF_TOTAL.match(run.detail or "")
    total = max(len(rows), int(m.group(2)) if m else 0, max(reference or {0: None}))
    fault_turn = next((r.turn for r in rows if r.faults), None)
    wrong = None
    for row in rows:
        if row.turn < (fault_turn or 1):
            continue
        refused = next((st for st in run.trace if st.turn == row.turn and st.kind == "llm" and st.status is not None
                        and 400 <= st.status < 500 and st.status != 429 and st.fault_status != "fired"), None)
        if row.reason != "ok":
            row.wrong = f"did not answer: {row.reason}"
        elif refused is not None:  # the provider would not take the history the agent kept
            row.wrong = f"its model call was refused ({refused.status})"
        else:
            said = (reference or {}).get(row.turn)
            if said is not None and said[1] != row.answer:
                row.wrong = "answered otherwise than the fault-free baseline"
        if row.wrong:
            wrong = row.turn
            break
    return Transcript(rows, total, fault_turn, wrong, untagged, reference)


def shown(t: Transcript, limit: int) -> list[int]:
    """Positions of the rows to show (at most `limit`): the first, the faulted ones and the one before each,
    the one that went wrong, the last; then the nearest others."""
    n = len(t.rows)
    if n <= limit:
        return list(range(n))
    must = {0, n - 1}
    for pos, row in enumerate(t.rows):
        if row.faults or row.wrong:
            must.update({pos, max(pos - 1, 0)})
    ranked = sorted(range(n), key=lambda p: (p not in must, min(abs(p - q) for q in must), p))
    return sorted(ranked[:limit])


def laid_out(t: Transcript, limit: int):
    """(turns not shown before it, row) for each row shown, in order, then (turns not shown after the last,
    None): the walk both renderings share."""
    last = -1
    for pos in shown(t, limit):
        yield pos - last - 1, t.rows[pos]
        last = pos
    yield len(t.rows) - 1 - last, None


def _unsent(t: Transcript) -> str:
    first = len(t.rows) + 1
    return str(first) if first == t.total else f"{first}–{t.total}"


# --- Markdown ------------------------------------------------------------------------------------

def markdown(t: Transcript, run: int, per_turn: int, max_rows: int) -> list[str]:
    """The transcript as lines of Markdown: a line saying what happened, a table of the turns, and each
    faulted call named. Every cell is `text()`-escaped and cut at `per_turn` characters."""
    lines = [f"Conversation of run {run} — {text(t.summary(), 600)}:", "",
             "| turn | user | agent | outcome |", "|---|---|---|---|"]
    for skipped, row in laid_out(t, max_rows):
        if skipped:
            lines.append(f"| … | _{skipped} turn(s) not shown_ | | |")
        if row is None:
            break
        mark = (f" {FAULT}" if row.faults else "") + (f" {WRONG}" if row.wrong else "")
        outcome = code(row.reason, 40, table=True)
        if row.wrong:
            outcome += f" — **first to go wrong**: {text(row.wrong, 120)}"
            said = (t.reference or {}).get(row.turn)
            if said is not None and row.reason == "ok":
                outcome += f" (baseline: {text(said[1], per_turn)})"
        answer = text(row.answer, per_turn) if row.answer is not None else "_(no answer)_"
        lines.append(f"| {row.turn}{mark} | {text(row.text, per_turn)} | {answer} | {outcome} |")
    if len(t.rows) < t.total:
        lines.append(f"| {_unsent(t)} | _not sent: the run ended at turn {len(t.rows)}_ | | |")
    named = [f"- {FAULT} turn {r.turn}: {', '.join(text(f, 200) for f in r.faults[:3])}"
             + (f" and {len(r.faults) - 3} more" if len(r.faults) > 3 else "") for r in t.rows if r.faults]
    if t.untagged:
        named.append(f"- {FAULT} outside any turn: {', '.join(text(f, 200) for f in t.untagged[:3])}")
    return lines + ([""] + named[:6] if named else [])


# --- report.html ---------------------------------------------------------------------------------

def html(t: Transcript, per_turn: int = 2000, max_rows: int = 50) -> str:
    """The transcript as a table in report.html: each text escaped in its own <pre>."""
    out = [f"<p class=\"transcript-head\"><b>Conversation</b> — {html_attr(t.summary(), 600)}</p>",
           "<table class=\"transcript\"><thead><tr><th>turn</th><th>user</th><th>agent</th><th>outcome</th>"
           "</tr></thead><tbody>"]
    for skipped, row in laid_out(t, max_rows):
        if skipped:
            out.append(f"<tr class=\"gap\"><td>…</td><td colspan=\"3\">{skipped} turn(s) not shown</td></tr>")
        if row is None:
            break
        classes = " ".join(c for c, on in (("fault", row.faults), ("wrong", row.wrong)) if on)
        marks = (f" <span class=\"tag f\" title=\"a fault fired in this turn\">{FAULT} fault</span>"
                 if row.faults else "")
        outcome = f"<code>{html_attr(row.reason, 60)}</code>"
        if row.faults:
            outcome += "".join(f"<div class=\"muted\">{FAULT} {html_attr(f, 300)}</div>" for f in row.faults[:5])
        if row.wrong:
            outcome += f"<div class=\"wrong\">{WRONG} first to go wrong: {html_attr(row.wrong, 200)}</div>"
            said = (t.reference or {}).get(row.turn)
            if said is not None and row.reason == "ok":
                outcome += f"<div class=\"muted\">baseline answered:</div><pre>{html_block(said[1], per_turn)}</pre>"
        answer = f"<pre>{html_block(row.answer, per_turn)}</pre>" if row.answer is not None else "<i>(no answer)</i>"
        tr = f"<tr class=\"{classes}\">" if classes else "<tr>"
        out.append(f"{tr}<td>{row.turn}{marks}</td><td><pre>{html_block(row.text, per_turn)}"
                   f"</pre></td><td>{answer}</td><td>{outcome}</td></tr>")
    if len(t.rows) < t.total:
        out.append(f"<tr class=\"gap\"><td>{_unsent(t)}</td><td colspan=\"3\">not sent: the run "
                   f"ended at turn {len(t.rows)}</td></tr>")
    if t.untagged:
        out.append(f"<tr class=\"gap\"><td>{FAULT}</td><td colspan=\"3\">outside any turn: "
                   f"{html_attr('; '.join(t.untagged[:5]), 600)}</td></tr>")
    return "".join(out) + "</tbody></table>"
