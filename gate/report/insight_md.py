"""Markdown for what goes beyond pass/fail: the comparison with main that leads the PR
comment, tokens and cost per scenario with chaos amplification, pass^k floors, and per
failing cell its repeat statistics and minimal fault set. Rendered from the Report only;
every value that came from the agent or the config goes through escape.py.
"""

from __future__ import annotations

from tabulate import tabulate

from gate.report.escape import code, code_block, text
from gate.report.model import CellResult, Report


def _table(rows, headers) -> str:
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def comparison_lead(report: Report) -> list[str]:
    """'**2 new failures, 1 fixed** vs main (score 91.2 → 88.0)' and what needs a second look."""
    cmp = report.comparison
    if cmp is None:
        return []
    n = cmp.counts
    lead = (f"**{_plural(n['new_failure'], 'new failure')}, {n['fixed']} fixed** vs main "
            f"(score {_score(cmp.score_base)} → {_score(cmp.score_head)})")
    extra = [f"{n[k]} {label}" for k, label in (("still_failing", "still failing"), ("new_cell", "new cells"),
                                               ("removed_cell", "removed cells"), ("inconclusive", "inconclusive"))
             if n.get(k)]
    lines = [lead + (" · " + ", ".join(extra) if extra else "")]
    lines += [f"> {text(note, 300)}" for note in cmp.notes]
    return lines + [""]


def comparison_table(report: Report, limit: int = 15) -> str:
    """The cells whose status changed, and pass-rate drops with their test."""
    cmp = report.comparison
    if cmp is None:
        return ""
    icon = {"new_failure": "❌ new failure", "fixed": "✅ fixed", "still_failing": "still failing",
            "still_passing": "still passing"}
    shown = [c for c in cmp.cells if c.change in ("new_failure", "fixed") or c.trend is not None]
    rows = []
    for c in shown[:limit]:
        trend = {"regression": "regression", "inconclusive": "inconclusive", None: ""}[c.trend]
        if c.p_value is not None:
            trend += f" (p = {c.p_value:.3g})"
        rows.append([code(c.id, 70, table=True), icon.get(c.change, c.change), text(c.base_passes or "—"),
                     _interval(c.base_interval), text(c.head_passes or "—"), _interval(c.head_interval), trend])
    if not rows:
        return ""
    more = f"\n\n_…and {len(shown) - limit} more in report.json_" if len(shown) > limit else ""
    return ("### Against main\n\n" + _table(rows, ["cell", "change", "main passes", "main 95 % CI", "PR passes",
                                                   "PR 95 % CI", "pass-rate test"]) + more)


def _interval(pair) -> str:
    return "—" if pair is None else f"{pair[0]:.2f}–{pair[1]:.2f}"


def cost_section(report: Report) -> str:
    """Tokens and cost per scenario, with each fault scenario's amplification over the baseline."""
    usage = report.verdict.usage
    if usage is None or usage.total.calls == 0:
        return ""
    amp = {(a.stage, a.scenario): a.factor for a in usage.amplification}
    rows = [[code(f"{s.stage}/{s.scenario}", 60, table=True), s.runs, s.usage.calls,
             f"{s.usage.input_tokens:,}", f"{s.usage.output_tokens:,}", _cost(s.usage.cost_usd),
             "—" if amp.get((s.stage, s.scenario)) is None else f"{amp[(s.stage, s.scenario)]:.1f}×"]
            for s in usage.scenarios]
    t = usage.total
    lines = [f"### Tokens and cost\n\n{t.calls} LLM calls, {t.input_tokens:,} input + {t.output_tokens:,} output "
             f"tokens, {_cost(t.cost_usd)}" + (" (partly estimated: some answers reported no usage)"
                                               if t.estimated else ""), ""]
    if t.unpriced:
        lines += [f"> no pricing entry for {text(', '.join(t.unpriced), 200)}: cost unknown", ""]
    return "\n".join(lines) + "\n" + _table(rows, ["scenario", "runs", "calls", "input", "output", "cost",
                                            "amplification"])


def _cost(value: float | None) -> str:
    return "cost n/a" if value is None else f"${value:.4f}"


def pass_k_table(report: Report) -> str:
    floors = report.verdict.pass_k
    if not floors:
        return ""
    k = report.verdict.runs_per_cell
    rows = [[text(f.severity), f"{f.all_passed}/{f.pairs}", f"{f.pass_k:.2f}", f"{f.floor:g}",
             "✅" if f.pass_k >= f.floor else "❌"] for f in floors]
    return f"### pass^{k}\n\n" + _table(rows, ["severity", "all runs passed", f"pass^{k}", "floor", ""])


def cell_lines(cell: CellResult) -> list[str]:
    """Under a failing cell: its repeat statistics and its minimal fault set with the replay command."""
    out = []
    s = cell.stats
    if s is not None and s.runs > 1:
        out.append(f"- passed {s.passes}/{s.runs} runs (pass^{s.runs}: {'yes' if s.pass_k else 'no'}), "
                   f"95 % interval {s.wilson_low:.2f}–{s.wilson_high:.2f}")
    shrink = cell.shrink
    if shrink is None:
        return out
    if cell.minimal_faults:
        found = "; ".join(f.describe() for f in cell.minimal_faults)
        partial = " (not proven minimal: " + text(shrink.note, 120) + ")" if shrink.status == "partial" else ""
        out.append(f"- **breaks with only:** {text(found, 300)} — {len(cell.minimal_faults)} of "
                   f"{len(shrink.fired)} firings, {shrink.reruns} re-runs{partial}")
    elif shrink.note and shrink.status != "minimal":  # an explored point of one fault: nothing to say
        out.append(f"- shrinking: {text(shrink.note, 200)}")
    if shrink.command:
        out += ["", "Replay exactly that set:", "", code_block(shrink.command, 400, "sh")]
    return out
