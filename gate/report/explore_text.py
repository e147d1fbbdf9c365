"""Exploration's words for every rendering: what was explored, then the findings, first in line.

The terminal, the PR comment and the step summary all lead with the findings (a finding is
what a team acts on), each as one line with its reproduce command and the YAML that pins it.
The agent's words inside a finding (an answer quoted as evidence) go through the renderers'
own escaping, never raw.
"""

from __future__ import annotations

from gate.report.escape import code, code_block, text
from gate.report.model import ExploreSummary, Report


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


def plain_lines(report: Report, limit: int = 10) -> list[str]:
    """For the terminal: the explored line, then each finding and its reproduce command."""
    summary = report.verdict.explore
    if summary is None:
        return []
    lines = [explored_line(summary)]
    if summary.findings:
        lines.append(f"findings ({len(summary.findings)}):")
    for f in summary.findings[:limit]:
        lines += [f"  [{f.severity}] {f.invariant}: {f.line}", f"    reproduce: {f.reproduce}"]
    if len(summary.findings) > limit:
        lines.append(f"  ...and {len(summary.findings) - limit} more in report.json")
    if summary.findings:
        lines.append("  pin them as regressions: chaos-gate explore --write (or paste each finding's YAML "
                     "from report.json)")
    return lines


def markdown(report: Report, limit: int = 10) -> str:
    summary = report.verdict.explore
    if summary is None:
        return ""
    out = ["### Findings" if summary.findings else "### Exploration", "", text(explored_line(summary), 2000)]
    for f in summary.findings[:limit]:
        out += ["", f"- **{text(f.severity)}** `{f.invariant}` — {text(f.line, 400)}",
                f"  - reproduce: {code(f.reproduce, 300)}"]
        if f.log_tail:  # a crash: the end of the agent's own log says where
            out += ["  <details><summary>the agent's log</summary>", "", code_block(f.log_tail[-1500:], 1600), "",
                    "  </details>"]
        out += ["  <details><summary>pin it as a regression</summary>", "", code_block(f.pin, 2000, "yaml"), "",
                "  </details>"]
    if len(summary.findings) > limit:
        out += ["", f"_…and {len(summary.findings) - limit} more findings in report.json._"]
    return "\n".join(out)
