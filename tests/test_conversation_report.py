"""A conversation cell in the reports (issue 51, item 5): its transcript, the turn a fault fired in and the
call it fired on, and the first turn from there on that went wrong.

The end-to-end test runs the tests' memory agent (tests/agents/session_memory.py) over real loopback HTTP,
its model the gate's sim, and reads what the gate wrote: report.json, summary.md, report.html, and the PR
comment as the Action renders it. The others build reports by hand, for what one run cannot show cheaply
(a fault early, the damage later; a long conversation; the comment's budget).
"""

from __future__ import annotations

import json
import re
import sys


from conftest import AGENTS, load_report, write_config
from gate.report import html, markdown, read_report, transcript
from gate.report.escape import MARKER, text
from gate.report.model import (CellResult, Counts, InvariantOutcome, Report, RunInfo, RunResult, Timings,
                               TraceStep, TurnRecord, VerdictPart)

PY = json.dumps(sys.executable)
HOSTILE = "Hi <b>bold</b> @alice | ``` fence <!-- agent-chaos-gate:sticky-comment --> #12"


def _config(tmp_path) -> str:
    record = json.dumps(str(tmp_path / "record.jsonl"))
    return f"""
version: 1
agent:
  start:
    command: [{PY}, {json.dumps(str(AGENTS / "session_memory.py"))}]
    env: {{RECORD: {record}}}
  invoke:
    http: {{url: "{{{{url}}}}/chat", body: {{session: "{{{{session}}}}", message: "{{{{input}}}}"}}, output: $.reply}}
  timeout: 5
llm:
  - {{name: openai, provider: openai, upstream: sim}}
inputs:
  - {{id: ada, turns: [My name is Ada, "What is my name?"]}}
  - {{id: broken, turns: [{json.dumps(HOSTILE)}, FAIL here, bye]}}
mutation: {{enabled: false}}
contract:
  invariants:
    - {{id: model-answered, type: excludes, values: [did not answer]}}
chaos: {{explore: {{budget: 4, kinds: [server_error], persistent: false, baseline_runs: 1}}}}
gate: {{fail_on: never}}
"""


def test_a_faulted_conversation_reads_as_its_transcript_in_every_report(run_cli, tmp_path):
    """The fault on turn 2's model call: report.json keeps both turns (and the baseline's), summary.md and
    report.html show them with turn 2 marked faulted, its call named, and marked as the first to go wrong (its
    answer is not the baseline's); a turn that broke (no fault) is marked, the turn after it not sent; the
    agent's text stays inert; the PR comment holds the transcript of its top finding only."""
    out = tmp_path / "out"
    run_cli("run", "-c", str(write_config(tmp_path, _config(tmp_path))), "-o", str(out), "--quiet")
    cells = {c["id"]: c for c in load_report(out)["verdict"]["cells"]}
    faulted = cells["chaos/ada/explore/t2-llm-openai-1/server_error"]
    assert faulted["status"] == "fail", {k: c["status"] for k, c in cells.items()}
    assert faulted["runs"][0]["turns"] == [
        {"turn": 1, "text": "My name is Ada", "answer": "Nice to meet you, Ada.", "reason": "ok"},
        {"turn": 2, "text": "What is my name?", "answer": "Your name is Ada. (the model did not answer)",
         "reason": "ok"}]
    assert [s["turn"] for s in faulted["runs"][0]["trace"] if s["fault_status"] == "fired"] == [2]
    baseline = cells["contract/ada/baseline"]
    assert baseline["status"] == "pass" and baseline["runs"][0]["turns"][1]["answer"] == "Your name is Ada."
    assert "turns" not in cells["chaos/ada/explore/t1-llm-openai-1/server_error"]["runs"][0]  # passing: compact

    summary = (out / "summary.md").read_text()
    rows = _table_rows(summary, "chaos/ada/explore/t2-llm-openai-1/server_error")
    assert rows[0] == f"| 1 | My name is Ada | {text('Nice to meet you, Ada.')} | `ok` |"
    assert rows[1].startswith(f"| 2 ⚡ ❌ | {text('What is my name?')} | "
                              f"{text('Your name is Ada. (the model did not answer)')} | `ok` — **first to go wrong**: "
                              f"{text('answered otherwise than the fault-free baseline')} "
                              f"(baseline: {text('Your name is Ada.')})")
    assert "- ⚡ turn 2: " + text("server_error on openai's LLM call 1 of turn 2 (POST /chat/completions, gpt-test)",
                                 200) in summary

    broken = _table_rows(summary, "contract/broken/baseline")
    assert broken[0] == f"| 1 | {text(HOSTILE, 400)} | {text('You said: ' + HOSTILE, 400)} | `ok` |"
    assert broken[1] == (f"| 2 ❌ | FAIL here | _(no answer)_ | `http_5xx` — **first to go wrong**: "
                         f"{text('did not answer: http_5xx')} |")
    assert broken[2] == "| 3 | _not sent: the run ended at turn 2_ | | |"
    prose = _outside_code(summary)
    assert "<b>" not in prose and "@alice" not in prose and "#12" not in prose and MARKER not in summary
    assert "\\<b\\>bold\\<\\/b\\> \\@\u200dalice \\| \\`\\`\\` fence" in broken[0]  # shown, never live

    page = (out / "report.html").read_text()
    assert page.count('<table class="transcript">') == 2
    ada = page[page.index('id="cell-chaos/ada/explore/t2-llm-openai-1/server_error"'):]
    ada = ada[:ada.index("</article>")]
    assert re.search(r'<tr class="fault wrong"><td>2 <span class="tag f"[^>]*>⚡ fault</span></td>'
                     r"<td><pre>What is my name\?</pre></td>", ada)
    assert "⚡ server_error on openai&#x27;s LLM call 1 of turn 2 (POST /chat/completions" in ada
    assert "first to go wrong: answered otherwise than the fault-free baseline" in ada
    assert "<b>bold</b>" not in page and "Hi &lt;b&gt;bold&lt;/b&gt;" in page

    report = read_report(out / "report.json")  # as a merge reads it: the baseline's turns are still there
    comment = markdown.render(report, limit=markdown.COMMENT_LIMIT - len(MARKER) - 1, marker=MARKER)
    assert len(comment) < markdown.COMMENT_LIMIT
    assert comment.count("| turn | user | agent | outcome |") == 1  # the top finding's transcript only
    assert f"(baseline: {text('Your name is Ada.')})" in comment
    assert f"Conversation of run 0: {text('2 of 3 turns sent; turn 2 went wrong first (did not answer: http_5xx)')} " \
           "_(its transcript is in the full report)_" in comment


def _table_rows(md: str, cell: str) -> list[str]:
    """The transcript table's rows in the detail of `cell` (as the summary spells its id)."""
    detail = md[md.index(f"<code>{cell}</code>"):]
    detail = detail[:detail.index("</details>")]
    head = detail.index("| turn | user | agent | outcome |")
    lines = detail[head:].splitlines()[2:]
    return [line for line in lines[:next((i for i, x in enumerate(lines) if not x.startswith("|")), len(lines))]]


def _outside_code(md: str) -> str:
    out, fence = [], None
    for line in md.splitlines():
        m = re.match(r"^(`{3,})", line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            out.append(line)
    return "\n".join(out)


# --- by hand: what one cheap run does not show -------------------------------------------------

def _step(seq: int, turn: int, fault: str | None = None, target: str = "openai", kind: str = "llm") -> TraceStep:
    return TraceStep(seq=seq, target=target, kind=kind, call=seq, method="POST", path="/v1/chat/completions",
                     model="gpt-4o", turn=turn, fault=fault, fault_status="fired" if fault else None,
                     status=503 if fault else 200)


def _cell(cid: str, scenario: str, turns: list[tuple[str, str | None, str]], trace=(), status="fail",
          detail: str = "") -> CellResult:
    breach = InvariantOutcome(id="survives", severity="critical", passed_runs=0, total_runs=1, pass_rate=0.0,
                              breached=True, message="the conversation broke")
    run = RunResult(run=0, reason=turns[-1][2], output=turns[-1][1], detail=detail, trace=list(trace),
                    turns=[TurnRecord(turn=n, text=t, answer=a, reason=r) for n, (t, a, r) in enumerate(turns, 1)],
                    checks=[] if status == "pass" else [{"invariant": "survives", "severity": "critical",
                                                         "passed": False, "message": "broke"}])
    return CellResult(id=cid, stage="contract" if scenario == "baseline" else "chaos", input_id="talk",
                      scenario=scenario, seed=1, input="\n".join(t for t, _, _ in turns), status=status,
                      reason="ok" if status == "pass" else "contract:survives", pass_rate=1.0 if status == "pass"
                      else 0.0, invariants=[] if status == "pass" else [breach], runs=[run],
                      reproduce=f"chaos-gate run --only {cid}")


def _report(cells: list[CellResult]) -> Report:
    part = VerdictPart(verdict="fail", exit_code=1, score=0.0, min_score=80, reasons=[], seed=1, config="c.yaml",
                       config_digest="d", runs_per_cell=1, counts=Counts(cells=len(cells), passed=0, failed=1,
                                                                         errors=0, flaky=0),
                       stages=[], invariants=[], outcome_tally={}, cells=cells)
    return Report(verdict=part, timings=Timings(started_at="", finished_at="", wall_seconds=0,
                                                agent_startup_seconds=[], cells=[]),
                  run=RunInfo(tool_version="t", concurrency=1))


BASE = [(f"step {n}", f"done {n}", "ok") for n in range(1, 31)]


def test_a_fault_early_whose_damage_shows_later_marks_both_turns_and_a_long_talk_is_cut():
    """The fault fires in turn 3 and turn 3 answers as the baseline did; turn 17 is the first to differ. Of 30
    turns the summary shows 20 (the first, the faulted one and the one before it, the one that went wrong, the
    last, the nearest others) and says how many it left out; the comment shows 6, each cut at 120 characters."""
    long = "x" * 500
    faulted = [*BASE[:16], ("step 17", "I lost track " + long, "ok"), *BASE[17:]]
    trace = [_step(1, 1), _step(2, 2), _step(3, 3, "server_error"), _step(4, 3), _step(5, 17)]
    report = _report([_cell("chaos/talk/outage/server_error", "outage", faulted, trace),
                      _cell("contract/talk/baseline", "baseline", BASE, status="pass")])
    told = transcript.of_run(report.verdict.cells[0].runs[0], transcript.references(report)["talk"])
    assert (told.fault_turn, told.wrong_turn) == (3, 17)
    assert told.rows[2].faults == ["server_error on openai's LLM call 1 of turn 3 (POST /v1/chat/completions, gpt-4o)"]

    summary = markdown.render(report, limit=markdown.SUMMARY_LIMIT)
    turns = [r.split(" |")[0][2:] for r in _table_rows(summary, "chaos/talk/outage/server_error")]
    assert len([t for t in turns if t != "…"]) == 20
    assert turns[:4] == ["1", "2", "3 ⚡", "4"] and "17 ❌" in turns and turns[-1] == "30"
    assert "| … | _4 turn(s) not shown_ | | |" in summary  # 8-11: the farthest from what matters
    assert "I lost track " + "x" * 386 + "…" in summary and "x" * 387 not in summary  # cut at 400
    assert text("30 turns; a fault fired in turn 3; turn 17 went wrong first (answered otherwise", 600) in summary

    comment = markdown.render(report)
    shown = [r.split(" |")[0][2:] for r in _table_rows(comment, "chaos/talk/outage/server_error")]
    assert [t for t in shown if t != "…"] == ["1", "2", "3 ⚡", "16", "17 ❌", "30"]
    assert "I lost track " + "x" * 106 + "…" in comment and "x" * 107 not in comment  # cut at 120


def test_a_turn_the_baseline_runs_answered_differently_is_not_compared():
    """A nondeterministic baseline (its two runs answered turn 2 otherwise) gives no reference for turn 2:
    the faulted run's different answer there is not called wrong; turn 3, which every baseline run answered
    alike, is."""
    base = _cell("contract/talk/baseline", "baseline", BASE[:3], status="pass")
    other = base.runs[0].model_copy(update={"run": 1, "turns": [t.model_copy(update={"answer": "hm"}) if t.turn == 2
                                                                 else t for t in base.runs[0].turns]})
    base.runs.append(other)
    run = [("step 1", "done 1", "ok"), ("step 2", "something else", "ok"), ("step 3", "lost", "ok")]
    report = _report([_cell("chaos/talk/x/y", "x", run, [_step(1, 1, "timeout")]), base])
    told = transcript.of_run(report.verdict.cells[0].runs[0], transcript.references(report).get("talk"))
    assert (told.fault_turn, told.wrong_turn) == (1, 3)


def test_the_html_transcript_escapes_every_turn():
    evil = "</pre></td><script>alert(1)</script>\u202e"
    report = _report([_cell("chaos/talk/x/y", "x", [(evil, evil, "ok")], [_step(1, 1, "error")])])
    page = html.render(report)
    table = page[page.index('<table class="transcript">'):]
    table = table[:table.index("</table>") + len("</table>")]
    assert "<script>alert" not in page and table.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 2  # user, agent
    assert table.count("<pre>") == table.count("</pre>") == 2 and table.count("<td") == 4  # no cell closed early
    assert "\u202e" not in page and "\\u202e" in table
    assert "⚡ error on openai&#x27;s LLM call 1 of turn 1" in table
