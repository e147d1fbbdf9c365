"""Every Markdown surface, rendered by a CommonMark + GFM-tables renderer (markdown-it-py).

The comment, the step summary (full, failures only, trimmed), the early-failure
summary and the notice line must show names, inputs and outputs exactly as they
were — backticks, pipes, `<script>`, `@org/team`, `*`, `_`, the sticky marker, code
fences and newlines included — while letting through no HTML of the agent's, no
mention that pings, no `#123` that links and no second sticky marker. Zero-width
joiners are invisible, so "exactly" is compared with them removed.
"""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from gate.report import markdown
from gate.report.escape import MARKER, ZWJ, plain, text
from gate.report.model import (CellResult, CheckResult, CellTiming, Counts, InvariantOutcome, InvariantSummary, Report, RunInfo,
                               RunResult, StageScore, Timings, TraceStep, VerdictPart)

NAMES = ["rate_limited", "a|b", "`tick` ``two``", "<script>x</script>", "@org/team #12", "*b* _i_ ~s~",
         MARKER, "```", "back\\slash", "two\nlines"]
INVARIANTS = ["no_html", "pipe|id", "@alice-check", "`code`"]
OUTPUT = ("line one <script>alert(1)</script>\n```\nstill inside? @org/team #42 | * _ ~\n`````\n" + MARKER +
          "\n    indented\n\ttab\nend ```")
INPUT = "Ignore previous instructions ``` \n<img src=x onerror=alert(1)>\n| a | b |\n@here #1"
ALLOWED_TAGS = {"details", "/details", "summary", "/summary", "code", "/code"}
RENDERER = MarkdownIt("commonmark").enable("table")


def _cell(n: int, scenario: str, inv: str) -> CellResult:
    outcome = InvariantOutcome(id=inv, severity="critical", passed_runs=0, total_runs=1, pass_rate=0.0, breached=True,
                               message=f"found {scenario!r} in the answer")
    check = CheckResult(invariant=inv, severity="critical", passed=False, message=outcome.message)
    trace = [TraceStep(seq=1, target=scenario, kind="tool", call=1, method="POST", path="/x|`y`<b>", tool=inv,
                       status=500, fault="error", note=f"note {scenario}")]
    return CellResult(id=f"contract/in{n}/{scenario}", stage="contract", input_id=f"in{n}", scenario=scenario,
                      seed=n, input=INPUT, status="fail", reason=f"contract:{inv}", pass_rate=0.0,
                      invariants=[outcome], reproduce=f"chaos-gate run --only 'contract/in{n}/{scenario}'",
                      runs=[RunResult(run=0, reason="ok", status=200, output=OUTPUT, trace=trace, checks=[check])])


def hostile_report() -> Report:
    cells = [_cell(n, sc, INVARIANTS[n % len(INVARIANTS)]) for n, sc in enumerate(NAMES)]
    n = len(cells)
    part = VerdictPart(
        verdict="fail", exit_code=1, score=0.0, min_score=80, reasons=[f"critical invariant breached: {INVARIANTS[1]}"],
        seed=1, config="dir/<b>`c`.yaml", config_digest="d", runs_per_cell=1,
        counts=Counts(cells=n, passed=0, failed=n, errors=0, flaky=0),
        stages=[StageScore(stage="contract", score=0.0, weight=1, cells=n, passed=0, failed=n, errors=0, flaky=0)],
        invariants=[InvariantSummary(id=i, severity="critical", checked=n, breached=1) for i in INVARIANTS],
        outcome_tally={f"contract:{i}": 1 for i in INVARIANTS}, cells=cells)
    timings = Timings(started_at="", finished_at="", wall_seconds=0, agent_startup_seconds=[],
                      cells=[CellTiming(id=c.id, latency_ms=[1], wall_ms=1, trace_ms=[[(0.0, 5.0, 10)]]) for c in cells])
    return Report(verdict=part, timings=timings, run=RunInfo(tool_version="t", concurrency=1))


def visible(value: str) -> str:
    return value.replace(ZWJ, "")


def one_line(value: str) -> str:
    return value.replace("\n", " ")


def _inline_text(token) -> str:
    """What a reader sees of an inline token: text and code spans, HTML tags dropped."""
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return visible("".join(parts))


def check_safe(md: str, markers: int) -> list:
    """No foreign HTML, no pings, no links, one marker at most; returns the tokens."""
    assert md.count(MARKER) == markers
    tokens = RENDERER.parse(md)
    for tok in [t for t in tokens if t.type == "html_block"] + \
               [c for t in tokens if t.type == "inline" for c in t.children or [] if c.type == "html_inline"]:
        if tok.content == MARKER + "\n":
            continue  # our own, on the first line
        tags = {m.group(1).lower() for m in re.finditer(r"<\s*(/?[A-Za-z!][^\s>]*)", tok.content)}
        assert tags <= ALLOWED_TAGS, f"foreign HTML in {tok.content!r}"
    for tok in tokens:
        for child in tok.children or []:
            if child.type == "text":
                assert not re.search(r"[@#][A-Za-z0-9]", child.content), f"ping or link in {child.content!r}"
            assert child.type != "link_open", "agent text became a link"
    return tokens


def fences(tokens) -> list[str]:
    return [visible(t.content) for t in tokens if t.type == "fence"]


def code_spans(tokens) -> list[str]:
    return [visible(c.content) for t in tokens if t.type == "inline" for c in t.children or []
            if c.type == "code_inline"]


SURFACES = {
    "comment": dict(limit=markdown.COMMENT_LIMIT - len(MARKER) - 1, marker=MARKER),
    "summary": dict(limit=markdown.SUMMARY_LIMIT - 2048),
}


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_full_report_shows_everything_exactly(surface):
    kwargs = SURFACES[surface]
    md = markdown.render(hostile_report(), **kwargs)
    tokens = check_safe(md, 1 if kwargs.get("marker") else 0)
    spans = code_spans(tokens)
    for name in NAMES + INVARIANTS:
        assert one_line(name) in spans, f"{name!r} not shown exactly; spans: {spans}"
    shown = fences(tokens)
    assert shown.count(OUTPUT + "\n") == len(NAMES) and shown.count(INPUT + "\n") == len(NAMES)
    prose = [_inline_text(t) for t in tokens if t.type == "inline"]
    for name in NAMES:
        assert any(f"found {one_line(repr(name))} in the answer" in p for p in prose)
    titles = [visible(html.unescape(re.sub(r"<[^>]+>", "", m))) for t in tokens if t.type == "html_block"
              for m in re.findall(r"<summary>(.*?)</summary>", t.content)]
    for n, name in enumerate(NAMES):
        assert any(t.startswith(f"❌ contract/in{n}/{one_line(name)} — ") for t in titles), titles
    assert any("/x|`y`<b>" in p for p in prose)  # a trace path from the agent, in a table cell


def test_matrix_cells_have_no_visible_backslash():
    md = markdown.matrix(hostile_report())
    rows = [t for t in RENDERER.parse(md) if t.type == "inline"]
    assert any(_inline_text(r) == "rate_limited" for r in rows)
    assert "\\" not in "".join(_inline_text(r) for r in rows).replace("back\\slash", "")


def test_failures_only_and_trimmed_surfaces_stay_exact_and_safe():
    report = hostile_report()
    for limit in (15_000, 4_000):
        md = markdown.render(report, limit=limit, marker=MARKER)
        tokens = check_safe(md, 1)
        assert all(f in (OUTPUT + "\n", INPUT + "\n") or f.startswith("chaos-gate run") for f in fences(tokens))


def test_early_failure_summary_keeps_the_log_tail_in_its_fence():
    log = "agent log tail:\n```\n@org/team <script>x</script>\n" + MARKER + "\n````\nafter the fence"
    md = markdown.error_summary(f"agent exited during start-up\n{log}")
    tokens = check_safe(md, 0)
    assert fences(tokens) == [f"agent exited during start-up\n{log}\n"]


def test_notice_line_and_annotations_use_the_same_escaper():
    notice = "GitHub answered HTTP 422: <b>@org/team</b> #12 " + MARKER
    md = f"\n> **Note:** {text(notice, 600)}\n"
    tokens = check_safe(md, 0)
    assert visible(_inline_text(next(t for t in tokens if t.type == "inline"))) == "Note: " + notice
    annotated = plain("red \x1b[31m " + MARKER)
    assert "\x1b" not in annotated and MARKER not in annotated and visible(annotated) == "red \\u001b[31m " + MARKER
