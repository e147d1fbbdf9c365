"""Exploration's words for every rendering: what was explored, then the causes of its findings, first in line.

The terminal, the PR comment and the step summary all lead with the causes (a cause is what a team
acts on: one bug, however many fault kinds showed it), most severe first, each as one line — where,
what the agent did, under which faults, in how many cells — then its first cell's evidence,
reproduce command and the YAML that pins it. The per-cell findings stay in report.json.

The Markdown comes in levels of detail (`markdown`'s arguments), so the PR comment can shed detail
to fit GitHub's limit in a planned order (gate/report/markdown.py) and always keep every cause's line.
The agent's words inside a cause (an answer quoted as evidence, its log) go through the renderers'
own escaping, never raw.
"""

from __future__ import annotations

from gate.report.escape import code, code_block, text
from gate.report.model import Cause, ExploreSummary, Report

CELLS_SHOWN = 10  # a cause's cell ids listed under it; the rest are counted


def explored_line(summary: ExploreSummary) -> str:
    """`Explored 5 call sites: 31 fault points planned, 27 run, 4 pruned (over the budget: 4).`"""
    pruned = sum(summary.pruned.values())
    why = ", ".join(f"{reason}: {n}" for reason, n in sorted(summary.pruned.items()))
    line = (f"Explored {summary.sites} call site(s): {summary.planned} fault point(s) planned, {summary.run} run, "
            f"{pruned} pruned" + (f" ({why})" if why else "") + ".")
    if summary.unfaultable:
        line += f" Not faulted: {'; '.join(summary.unfaultable[:5])}."
    if summary.failed_baselines:
        line += (f" Not explored (the fault-free baseline did not answer): "
                 f"{', '.join(summary.failed_baselines)}.")
    return line


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def headline(cause: Cause) -> str:
    """`POST orders /refunds — crashed (KeyError) under error, timeout, reset (3 cells)`."""
    if not cause.where:  # a finding from a report made before causes: its own line
        return cause.line
    under = f" under {', '.join(cause.kinds)}" if cause.kinds else ""
    return f"{cause.where} — {cause.behaviour}{under} ({_plural(cause.count, 'cell')})"


def counted(summary: ExploreSummary) -> str:
    """`findings: 7 causes in 37 failing cells, most severe first`."""
    return (f"findings: {_plural(len(summary.causes), 'cause')} in {_plural(len(summary.findings), 'failing cell')}, "
            "most severe first")


def plain_lines(report: Report, limit: int = 10) -> list[str]:
    """For the terminal: the explored line, then each cause, its first cell's line and reproduce command."""
    summary = report.verdict.explore
    if summary is None:
        return []
    lines = [explored_line(summary)]
    causes = summary.causes
    if causes:
        lines.append(counted(summary) + ":")
    for c in causes[:limit]:
        lines.append(f"  [{c.severity}] {c.invariant}: {headline(c)}")
        if c.where:  # the first cell, told in full (a legacy finding's headline already is)
            lines.append(f"    first: {c.line}")
        lines.append(f"    reproduce: {c.reproduce}")
    if len(causes) > limit:
        lines.append(f"  ...and {len(causes) - limit} more causes in report.json")
    if causes:
        lines.append("  pin them as regressions: chaos-gate explore --write (or paste each finding's YAML "
                     "from report.json)")
    return lines


def markdown(report: Report, full: int | None = None, logs: bool = True, pins: int | None = None,
             shown: int | None = None) -> str:
    """The explored line and every cause's line. The first `full` causes (all: None) also get their first cell,
    reproduce command, cells and — with `logs` — a crash's log tail; the first `pins` their pin. Only the first
    `shown` causes are listed at all (the last resort of a comment over GitHub's limit), the rest counted."""
    summary = report.verdict.explore
    if summary is None:
        return ""
    causes = summary.causes
    out = ["### Findings" if causes else "### Exploration", "", text(explored_line(summary), 2000)]
    if causes:
        out += ["", f"**{text(counted(summary), 200)}:**"]
    for n, c in enumerate(causes[:shown]):
        out.append("")
        out += _cause(c, detailed=full is None or n < full, log=logs, pin=pins is None or n < pins)
    if shown is not None and len(causes) > shown:
        out += ["", f"_…and {len(causes) - shown} more causes in the full report._"]
    return "\n".join(out)


def _cause(c: Cause, detailed: bool, log: bool, pin: bool) -> list[str]:
    out = [f"- **{text(c.severity)}** {code(c.invariant, 60)} — {text(headline(c), 400)}"]
    if detailed:
        if c.where:
            out.append(f"  - first: {text(c.line, 400)}")
        out.append(f"  - reproduce: {code(c.reproduce, 300)}")
        if c.count > 1:
            more = f" …and {c.count - CELLS_SHOWN} more" if c.count > CELLS_SHOWN else ""
            out.append(f"  - cells: {', '.join(code(i, 100) for i in c.cells[:CELLS_SHOWN])}{more}")
    if detailed and log and c.log_tail:  # a crash: the end of the agent's own log says where
        out += ["  <details><summary>the agent's log</summary>", "", code_block(c.log_tail[-1500:], 1600), "",
                "  </details>"]
    if pin and c.pin:
        out += ["  <details><summary>pin it as a regression</summary>", "", code_block(c.pin, 2000, "yaml"), "",
                "  </details>"]
    return out
