"""The Markdown renderer on hostile agent output, and its size budget."""

import re

from gate.report import markdown
from gate.report.escape import code_block, text
from gate.report.model import (CellResult, Counts, InvariantOutcome, InvariantSummary, Report, RunInfo,
                               RunResult, StageScore, Timings, VerdictPart)

HOSTILE = "<img src=x onerror=alert(1)> hi @org/team and @alice ``` closing fence\n```` more | pipe"


def report_with(outputs: list[str]) -> Report:
    cells = []
    for n, out in enumerate(outputs):
        inv = InvariantOutcome(id="no-html", severity="critical", passed_runs=0, total_runs=1, pass_rate=0.0,
                               breached=True, message=f"output contains forbidden {out[:40]!r}")
        cells.append(CellResult(
            id=f"mutation/in/typo-{n}", stage="mutation", input_id="in", mutation="typo", scenario="baseline",
            seed=n, input=out[:200], status="fail", reason="contract:no-html", pass_rate=0.0, invariants=[inv],
            runs=[RunResult(run=0, reason="ok", status=200, output=out,
                            checks=[])], reproduce=f"chaos-gate run -c c.yaml --only mutation/in/typo-{n}"))
    part = VerdictPart(
        verdict="fail", exit_code=1, score=0.0, min_score=80, reasons=["critical invariant breached: no-html"],
        seed=1, config="c.yaml", config_digest="d", runs_per_cell=1,
        counts=Counts(cells=len(cells), passed=0, failed=len(cells), errors=0, flaky=0),
        stages=[StageScore(stage="mutation", score=0.0, weight=0.2, cells=len(cells), passed=0, failed=len(cells),
                           errors=0, flaky=0)],
        invariants=[InvariantSummary(id="no-html", severity="critical", checked=len(cells), breached=len(cells))],
        outcome_tally={"contract:no-html": len(cells)}, cells=cells)
    return Report(verdict=part, timings=Timings(started_at="", finished_at="", wall_seconds=0,
                                                agent_startup_seconds=[], cells=[]),
                  run=RunInfo(tool_version="t", concurrency=1))


def outside_code(md: str) -> str:
    """The Markdown with fenced blocks removed (fences of any length, matched exactly)."""
    out, fence = [], None
    for line in md.splitlines():
        m = re.match(r"^(`{3,})", line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        out.append(line)
    assert fence is None, "a code fence was left open"
    return "\n".join(out)


def test_hostile_output_is_escaped():
    md = markdown.render(report_with([HOSTILE]))
    prose = outside_code(md)
    assert "<img" not in prose.replace("\\<img", "")  # only as an escaped, literal "<"
    assert "@org/team" not in prose and "@\u200dorg" in prose
    assert "<details>" in md and "</details>" in md  # our own HTML survives


def test_code_block_fence_outlasts_content():
    block = code_block("a ```` b ````` c")
    first = block.splitlines()[0]
    assert first == "``````" and block.endswith("\n``````")


def test_inline_flattens_and_escapes_table_breakers():
    assert text("a|b\nc `d` <e>") == "a\\|b c \\`d\\` \\<e\\>"


def test_one_megabyte_output_fits_the_comment_limit():
    big = ("A" * 999 + "\n") * 1024
    md = markdown.render(report_with([big] * 3 + [HOSTILE]), limit=markdown.COMMENT_LIMIT)
    assert len(md) <= markdown.COMMENT_LIMIT
    outside_code(md)


def test_many_failures_degrade_then_trim_with_a_note():
    outs = [f"failure {n} " + "x" * 3000 for n in range(60)]
    full = markdown.render(report_with(outs), limit=10 ** 9, max_failures=60)
    assert "### Invariants" in full
    small = markdown.render(report_with(outs), limit=20_000, max_failures=60)
    assert len(small) <= 20_000
    assert "trimmed to fit" in small and small.startswith("## ❌ chaos-gate: **FAIL**")
    outside_code(small)
