"""The PR comment as its readers render it: markdown-it-py (CommonMark + GFM tables) and GitHub's
own cmark-gfm (`cmarkgfm`, with the tagfilter and table extensions github.com uses). It leads with
what failed and why (Failures before the stage, coverage and token tables); a flaky cell that
passed only on `min_pass_rate` is named with its failing runs (a real run of a planted agent that
alternates its answers); and a failing cell's trace excerpt keeps the faulted call and the calls
that repeated it, however late they come."""

from __future__ import annotations

import re

import cmarkgfm
from cmarkgfm.cmark import Options
from markdown_it import MarkdownIt

from conftest import planted_agent_block, write_config
from gate.plan import load_config
from gate.report import markdown
from gate.report.escape import MARKER
from gate.report.model import (CellTiming, FaultCoverage, RunResult, ScenarioCoverage, TraceStep)
from gate.runner import run_gate
from test_markdown_surfaces import hostile_report

MD = MarkdownIt("commonmark").enable("table")


def github_html(md: str) -> str:
    """cmark-gfm as github.com runs it: GFM tables, autolinks, strikethrough, tagfilter."""
    return cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)


def headings(md: str) -> list[str]:
    tokens = MD.parse(md)
    return [tokens[n + 1].content for n, t in enumerate(tokens) if t.type == "heading_open"]


def with_tables(report):
    report.verdict.coverage = [ScenarioCoverage(stage="contract", scenario="rate_limited", cells=1, faults=[
        FaultCoverage(index=0, fault="rate_limit", target="llm", matched=1, fired=1, status="fired")])]
    return report


def test_failures_lead_before_the_tables():
    md = markdown.render(with_tables(hostile_report()), marker=MARKER)
    order = headings(md)
    assert order.index("Failures") < order.index("Stages") < order.index("Fault coverage"), order
    html = github_html(md)
    assert html.index("<h3>Failures</h3>") < html.index("<h3>Stages</h3>") < html.index("<h3>Fault coverage</h3>")
    assert html.count("<details>") == len(hostile_report().verdict.cells)  # one per failing cell, all rendered
    assert "<script>" not in html  # agent HTML stays text (escaped before any renderer's tagfilter)


def long_trace() -> list[TraceStep]:
    """17 calls: the refund POST at call 3 times out after the write; call 15 repeats it."""
    steps = []
    for seq in range(1, 18):
        refund = seq in (3, 15)
        steps.append(TraceStep(seq=seq, target="orders" if refund else "openai", kind="tool" if refund else "llm",
                               call=seq, method="POST", path="/refunds" if refund else "/chat/completions",
                               tool="orders" if refund else None, model=None if refund else "gpt-4o-mini",
                               status=None if seq == 3 else 200, fault="timeout_after_write" if seq == 3 else None,
                               note="upstream answered 201; answer withheld" if seq == 3 else ""))
    return steps


def table_rows(md: str) -> list[list[str]]:
    tokens = MD.parse(md)
    rows, row = [], None
    for tok in tokens:
        if tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and row is not None:
            row.append(tok.content)
        elif tok.type == "tr_close":
            rows.append(row)
            row = None
    return rows


def test_trace_excerpt_keeps_the_faulted_call_and_its_repeat():
    run = RunResult(run=0, reason="contract:refund-once", output="done", trace=long_trace())
    md = markdown.timeline(run, [(n * 10.0, n * 10.0 + 5, 0) for n in range(17)])
    seqs = [r[0] for r in table_rows(md)[1:]]
    assert "3" in seqs and "15" in seqs, seqs  # the fault and the call that repeated it
    assert len([s for s in seqs if s.isdigit()]) == 12 and "…" in seqs  # the budget kept, gaps marked
    assert "12 of 17 calls shown" in md
    shown = github_html(md)
    assert "<td>15</td>" in shown and "not shown" in shown


def test_flaky_cell_that_passed_on_min_pass_rate_is_named_with_its_failing_runs(tmp_path):
    """A real run: the planted agent alternates a good and a bad answer; min_pass_rate 0.5 tolerates it."""
    config = write_config(tmp_path, planted_agent_block("flaky") + """
inputs:
  - {id: hello, text: hello}
mutation: {enabled: false}
runs: 4
gate: {min_score: 40}
contract:
  invariants:
    - {id: echoes, type: contains, value: echo, severity: critical, min_pass_rate: 0.5}
""")
    report = run_gate(load_config(config), output_dir=tmp_path / "out")
    (cell,) = [c for c in report.verdict.cells if c.flaky]
    assert cell.status == "pass" and report.verdict.verdict == "pass"
    failing = [r.run for r in cell.runs if any(not c.passed for c in r.checks)]
    assert failing and len(failing) < 4
    md = markdown.render(report, marker=MARKER)
    assert "Flaky: passed on `min_pass_rate`" in headings(md)
    html = github_html(md)
    summary = re.search(r"<summary>(.*?)</summary>", html).group(1)
    assert cell.id in summary and "min_pass_rate" in summary
    assert f"failing run(s): {', '.join(map(str, failing))}" in html
    assert "Output of run" in html and "I don" in html  # the failing run's own answer is shown


def test_trimmed_comment_still_leads_with_failures():
    report = with_tables(hostile_report())
    for limit in (20_000, 6_000):
        md = markdown.render(report, limit=limit, marker=MARKER)
        assert len(md) <= limit and headings(md)[1] == "Failures"
        github_html(md)  # renders without error


def test_timing_rows_follow_the_trace_steps():
    """Times come from the step's own index, so a kept late call shows its own time."""
    run = RunResult(run=0, reason="x", trace=long_trace())
    timing = CellTiming(id="c", latency_ms=[1], wall_ms=1, trace_ms=[[(n * 100.0, n * 100.0 + 1, 0) for n in range(17)]])
    md = markdown.timeline(run, timing.trace_ms[0])
    row = next(r for r in table_rows(md) if r and r[0] == "15")
    assert row[-1] == "1400–1401 ms"
