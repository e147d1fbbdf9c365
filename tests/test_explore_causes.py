"""Findings grouped by cause (gate/explore/causes.py), the PR comment held under GitHub's limit with every
cause kept (gate/report/markdown.py), and shrinking only what has more than one fault (gate/runner/shrink.py).

Pure: the points come from a recorded baseline's plan, the cells are built as the verdict folds them, and
shrinking runs against a stand-in pool whose worker counts the re-runs it is asked for."""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace

import pytest
from markdown_it import MarkdownIt

from gate.config.explore import ExploreConfig
from gate.config.models import Config
from gate.explore.cells import cells_for
from gate.explore.findings import findings_for
from gate.explore.planner import plan_points
from gate.plan import build_plan, invariants_of
from gate.report import explore_text, markdown
from gate.report.escape import MARKER, text
from gate.report.model import (CellResult, CheckResult, ExploreSummary, Finding, InvariantOutcome, RunResult,
                               TraceStep)
from gate.runner.pool import WorkItem
from gate.runner.shrink import SHRINKING, plan_shrinks, shrink_failures
from test_explore import AGENT, baseline
from test_markdown import outside_code, report_with

REFUNDS = "http:orders POST ^/refunds(?:[?#]|$)"
CONFIG = Config.model_validate({"agent": AGENT, "inputs": [{"id": "refund", "text": "x"}],
                                "tools": [{"name": "orders", "env": "ORDERS_URL", "upstream": "http://x"}],
                                "llm": [{"name": "openai"}]})


def plan():
    return plan_points([baseline()], ExploreConfig(budget=200), seed=0, deadline=12)


def point(points, group: str, kind: str, persistent: bool = False):
    return next(p for p in points if p.sites[0].group == group and p.faults[0]["kind"] == kind
                and p.persistent == persistent and len(p.sites) == 1)


def crashed(point_id: str, exc: str = "KeyError: 'order_id'", oracle: str = "survives", reason: str = "agent_crash",
            status: int | None = None, output: str | None = None, tail: str = "", evidence: str = "") -> CellResult:
    """A failing explored cell as fold_cell leaves it: its breach, its failing run, the agent's log tail."""
    message = evidence or f"the agent did not survive the fault: {reason}"
    log = f"Traceback (most recent call last):\n  File \"agent.py\", line 12, in refund\n{tail}{exc}"
    run = RunResult(run=0, reason=reason, status=status, output=output, detail=f"exit 1\n{log}",
                    checks=[CheckResult(invariant=oracle, severity="critical", passed=False, message=message)],
                    trace=[TraceStep(seq=n, target="orders", kind="tool", call=n, method="POST", path="/refunds",
                                     status=500, fault="error" if n == 1 else None) for n in range(1, 9)])
    return CellResult(id=point_id, stage="chaos", input_id="refund", scenario="explore", seed=1, input="refund 1234",
                      status="fail", reason=reason, pass_rate=0.0, runs=[run], log_tail=log,
                      invariants=[InvariantOutcome(id=oracle, severity="critical", passed_runs=0, total_runs=1,
                                                   pass_rate=0.0, breached=True, message=message)],
                      reproduce=f"chaos-gate run -c explore.yaml --only {point_id}")


def causes_of(points, cells):
    found = findings_for({p.id: p for p in points}, cells, {"survives", "writes_once", "honest_failure"})
    return ExploreSummary(sites=5, planned=len(points), run=len(points), findings=[Finding(**f) for f in found]).causes


def test_three_kinds_at_one_site_with_one_behaviour_are_one_cause():
    points = plan().points
    three = [point(points, REFUNDS, k) for k in ("error", "timeout", "reset")]
    # the ids and the call numbers in what the agent logged differ: the behaviour does not
    cells = [crashed(p.id, exc=f"KeyError: 'order_{n}'", tail=f"  call {n} of 7f3a{n}\n") for n, p in enumerate(three)]
    causes = causes_of(points, cells)
    assert len(causes) == 1
    cause = causes[0]
    assert cause.kinds == ["error", "timeout", "reset"] and cause.count == 3 and cause.site == REFUNDS
    assert cause.behaviour == "crashed (KeyError)" and cause.where == "POST orders /refunds"
    assert cause.cells == [p.id for p in sorted(three, key=points.index)]  # plan order
    assert cause.reproduce.endswith(cause.cells[0]) and "explore-orders-POST-refunds" in cause.pin
    assert explore_text.headline(cause) == ("POST orders /refunds — crashed (KeyError) under error, timeout, reset "
                                            "(3 cells)")


def test_another_site_or_another_exception_is_another_cause():
    points = plan().points
    same = [crashed(point(points, REFUNDS, k).id) for k in ("error", "timeout")]
    other_site = crashed(point(points, "mcp:notes:add_note", "error").id)
    other_exception = crashed(point(points, REFUNDS, "reset").id, exc="TypeError: 'NoneType' object is not iterable")
    other_oracle = crashed(point(points, REFUNDS, "empty").id, oracle="honest_failure", reason="ok",
                           output="Your refund was issued.", evidence="the write failed; the answer says it worked")
    causes = causes_of(points, same + [other_site, other_exception, other_oracle])
    by = {(c.where, c.invariant, c.behaviour): c.count for c in causes}
    assert by == {("POST orders /refunds", "survives", "crashed (KeyError)"): 2,
                  ("add_note (mcp notes)", "survives", "crashed (KeyError)"): 1,
                  ("POST orders /refunds", "survives", "crashed (TypeError)"): 1,
                  ("POST orders /refunds", "honest_failure", "answered"): 1}


def test_an_http_error_answer_is_told_by_its_status_and_the_llm_calls_are_one_site():
    points = plan().points
    llm = [p for p in points if p.sites[0].kind == "llm" and p.faults[0]["kind"] == "server_error"
           and not p.persistent][:2]
    assert len({p.sites[0].occurrence for p in llm}) == 2  # two calls of one site
    cells = [crashed(p.id, reason="http_5xx", status=500, exc="") for p in llm]
    causes = causes_of(points, cells)
    assert len(causes) == 1 and causes[0].behaviour == "answered HTTP 500" and causes[0].where == "openai LLM calls"


def explored_report(n_points: int, tail: int):
    """A failing explored run: `n_points` failing cells over a few causes, with long evidence and log tails."""
    points = [p for p in plan().points if len(p.sites) == 1][:n_points]
    exceptions = ("KeyError: 'id'", "TypeError: bad operand")
    cells = [crashed(p.id, exc=exceptions[n % 2] if p.sites[0].kind == "tool" else "",
                     reason="agent_crash" if p.sites[0].kind == "tool" else "http_5xx",
                     status=None if p.sites[0].kind == "tool" else 503,
                     evidence="the agent did not survive: " + "why " * 150, tail="  frame\n" * tail)
             for n, p in enumerate(points)]
    found = findings_for({p.id: p for p in points}, cells, {"survives"})
    report = report_with([])
    report.verdict.cells = cells
    report.verdict.explore = ExploreSummary(sites=5, planned=len(points), run=len(points),
                                            findings=[Finding(**f) for f in found])
    return report


def test_dozens_of_failing_points_fit_the_comment_with_every_cause_and_a_link():
    report = explored_report(60, tail=300)
    causes = report.verdict.explore.causes
    assert len(report.verdict.explore.findings) == 60 and 6 <= len(causes) <= 10
    assert len(markdown.render(report, limit=10 ** 9, max_failures=60)) > 65_536  # it would not fit whole
    url = "https://github.com/o/r/actions/runs/42"
    body = markdown.render(report, limit=markdown.COMMENT_LIMIT - len(MARKER) - 1, marker=MARKER, max_failures=60,
                           full_report=url)
    assert len(body) < 65_536 and len(body) <= markdown.COMMENT_LIMIT
    for cause in causes:  # every cause's line, as the renderer escapes it
        assert text(explore_text.headline(cause), 400) in body
    assert f"[the workflow run]({url})" in body and "trimmed to fit" in body
    assert body.index("### Findings") < body.index("trimmed to fit")
    whole(body)


def whole(md: str) -> None:
    """No code block, <details> or table is left cut: fences close, details close, every table row is whole."""
    outside_code(md)
    assert md.count("<details>") == md.count("</details>")
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    assert all(t.type != "fence" or t.content.endswith("\n") for t in tokens)
    tables, rows = [], []
    for line in md.splitlines() + [""]:  # consecutive `|` lines: one table
        if line.startswith("|"):
            rows.append(len(re.findall(r"(?<!\\)\|", line)))
        elif rows:
            tables, rows = tables + [rows], []
    assert all(len(set(t)) == 1 and len(t) >= 2 for t in tables), tables


def test_a_small_run_renders_in_full_with_no_link_out():
    report = explored_report(4, tail=3)
    body = markdown.render(report, marker=MARKER, full_report="https://github.com/o/r/actions/runs/1")
    assert "trimmed to fit" not in body and "actions/runs/1" not in body
    assert "pin it as a regression" in body and "the agent's log" in body and "### Invariants" in body
    assert body.count("### Findings") == 1 and "### Failures" in body


@pytest.mark.parametrize("limit", [20_000, 6_000])
def test_a_tighter_budget_sheds_detail_but_keeps_every_cause(limit):
    report = explored_report(60, tail=300)
    body = markdown.render(report, limit=limit, marker=MARKER)
    assert len(body) <= limit
    for cause in report.verdict.explore.causes:
        assert text(explore_text.headline(cause), 400) in body
    whole(body)


def test_the_terminal_leads_with_the_causes():
    report = explored_report(60, tail=3)
    lines = explore_text.plain_lines(report)
    causes = report.verdict.explore.causes
    assert lines[1] == f"findings: {len(causes)} causes in 60 failing cells, most severe first:"
    assert lines[2] == f"  [critical] survives: {explore_text.headline(causes[0])}"


def failing(cell, fired: list[tuple[int, str, int]]) -> RunResult:
    """A run that breaks the cell's first oracle (an explored cell's `survives`, a written one's `completes`)."""
    invariant = "survives" if cell.scenario == "explore" else "completes"
    return RunResult(run=0, reason="ok", output="done",
                     checks=[CheckResult(invariant=invariant, severity="critical", passed=False, message="broke")],
                     trace=[TraceStep(seq=n, target=t, kind="tool", call=c, method="POST", path="/refunds",
                                      fault="error", fault_status="fired", fault_index=i)
                            for n, (i, t, c) in enumerate(fired, 1)])


def shrink_cells():
    points = plan().points
    outage = point(points, REFUNDS, "error", persistent=True)
    single = cells_for([outage], CONFIG, {"refund": "x"}, 0)[0]
    written = Config.model_validate({**CONFIG.model_dump(exclude_none=True, by_alias=True), "chaos": {"scenarios": [
        {"name": "two", "faults": [{"kind": "error", "target": "orders"}, {"kind": "latency", "target": "orders",
                                                                          "ms": 5}]}]}})
    pair = next(c for c in build_plan(written) if c.scenario == "two")
    # the outage fired on three calls of its one site; the written scenario's two faults fired once each
    runs = {single.id: [failing(single, [(0, "orders", 1), (0, "orders", 2), (0, "orders", 3)])],
            pair.id: [failing(pair, [(0, "orders", 1), (1, "orders", 2)])]}
    invariants = {i.id: i for config in (CONFIG, written) for i in invariants_of(config)}
    return single, pair, runs, invariants


def test_an_explored_point_of_one_fault_is_not_shrunk_and_two_faults_are():
    single, pair, runs, invariants = shrink_cells()
    assert "survives" in single.invariants and "completes" in pair.invariants
    jobs = {j.cell.id: j for j in plan_shrinks([single, pair], runs, invariants)}
    assert jobs[single.id].result.status == "minimal" and jobs[single.id].result.reruns == 0
    assert jobs[pair.id].result is None  # left to ddmin

    executed, progress = [], []

    class Worker:
        async def execute(self, item, applicable, reference):
            executed.append(item.cell.id)
            return failing(item.cell, [(0, "orders", 1)]), None

    items = {WorkItem(c, 0): runs[c.id][0] for c in (single, pair)}
    pool = SimpleNamespace(runs=items)
    done = asyncio.run(shrink_failures([Worker()], pool, [single, pair], invariants, {}, 32,
                                       on_plan=lambda n, phase=None: progress.append((n, phase)),
                                       on_progress=lambda run=None: progress.append("one")))
    assert single.id not in executed and executed.count(pair.id) >= 2  # zero re-runs for the point
    assert done[single.id].result.status == "minimal" and done[pair.id].result.status == "shrunk"
    assert progress == [(1, SHRINKING), "one"]


def test_a_written_cell_with_one_firing_is_minimal_without_a_rerun():
    _, pair, runs, invariants = shrink_cells()
    runs[pair.id] = [failing(pair, [(0, "orders", 1)])]
    job = plan_shrinks([pair], runs, invariants)[0]
    assert job.result.status == "minimal" and [f.spec for f in job.minimal] == ["0:orders:1"]
