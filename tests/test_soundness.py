"""A PASS means something was tested: vacuous runs, crashes attributed once, config
mistakes only the run reveals, and calls of an agent that outlived its cell.

Each test plants the mistake the check exists to catch and drives the real CLI
against real agent processes over loopback HTTP."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, planted_agent_block, write_config
from httpkit import JsonHandler, serve
from gate.report.model import CellResult, RunResult, TraceStep
from gate.verdict.coverage import fault_coverage, vacuous_scenarios
from gate.plan import Cell
from gate.faults import FAULTS

LLM_SIM = "llm:\n  - {name: openai, provider: openai, upstream: sim}\n"


def _run(run_cli, tmp_path, body: str) -> tuple[int, dict]:
    config = write_config(tmp_path, body)
    code = run_cli("run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet")
    return code, load_report(tmp_path / "out")


# -- coverage, pure ------------------------------------------------------------------

def _cell(cell_id: str, faults) -> Cell:
    return Cell(id=cell_id, index=0, stage="chaos", input_id="a", text="t", original_text="t", seed=1,
                scenario="s", faults=tuple(faults))


def _result(cell_id: str, steps: list[TraceStep]) -> CellResult:
    return CellResult(id=cell_id, stage="chaos", input_id="a", scenario="s", seed=1, input="t", status="pass",
                      reason="ok", pass_rate=1.0, reproduce="", runs=[RunResult(run=0, reason="ok", trace=steps)])


def _step(index: int | None, status: str | None, note: str = "") -> TraceStep:
    return TraceStep(seq=1, target="openai", kind="llm", call=1, method="POST", path="/chat/completions",
                     fault="server_error", fault_index=index, fault_status=status, note=note)


def test_coverage_counts_only_honest_firings_and_names_why_nothing_fired():
    fault = FAULTS["server_error"](kind="server_error", target="llm")
    cells = [_cell("c1", [fault]), _cell("c2", [fault])]
    results = {"c1": _result("c1", []), "c2": _result("c2", [_step(0, "not_applicable", "changed nothing")])}
    stats = {"c1": [{0: {"matched": 0, "fired": 0, "not_applicable": 0}}],
             "c2": [{0: {"matched": 1, "fired": 0, "not_applicable": 1}}]}
    [scenario] = fault_coverage(cells, results, stats)
    assert scenario.cells == 2
    assert (scenario.faults[0].status, scenario.faults[0].reason) == ("not_applicable", "changed nothing")
    [problem] = vacuous_scenarios([scenario])
    assert "vacuous" in problem and "could not alter any answer (changed nothing)" in problem
    stats["c1"] = [{0: {"matched": 1, "fired": 1, "not_applicable": 0}}]
    assert vacuous_scenarios(fault_coverage(cells, results, stats)) == []


# -- vacuous runs, end to end --------------------------------------------------------

NEVER_FIRES = planted_agent_block("echo") + LLM_SIM + """
inputs: [{id: a, text: hello}]
mutation: {enabled: false}
contract:
  invariants: [{id: answers, type: contains, value: echo, severity: critical}]
  scenarios:
    - name: outage
      faults: [{kind: server_error, target: llm}]
"""


def test_a_fault_that_never_fires_makes_the_run_an_error_not_a_pass(run_cli, tmp_path):
    code, report = _run(run_cli, tmp_path, NEVER_FIRES)
    verdict = report["verdict"]
    assert code == 2 and verdict["verdict"] == "error" and verdict["error_reason"] == "vacuous"
    assert any("scenario 'outage'" in r and "never matched a request" in r for r in verdict["reasons"])
    [coverage] = verdict["coverage"]
    assert coverage["faults"][0]["status"] == "never_matched"
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert summary.startswith("## ⚠️ chaos-gate: **ERROR** (vacuous)")
    coverage = summary.split("### Fault coverage", 1)[1]
    assert "server" in coverage and "never matched" in coverage


def test_allow_vacuous_turns_it_into_a_warning_shown_first(run_cli, tmp_path):
    code, report = _run(run_cli, tmp_path, NEVER_FIRES + "gate: {allow_vacuous: true}\n")
    verdict = report["verdict"]
    assert code == 0 and verdict["verdict"] == "pass"
    assert verdict["warnings"] and "vacuous" in verdict["warnings"][0]
    lines = (tmp_path / "out" / "summary.md").read_text().splitlines()
    assert lines[2].startswith("> ⚠️ vacuous")  # right under the verdict line, before anything else


def test_a_trigger_that_never_fires_is_never_fired_not_never_matched(run_cli, tmp_path, orders_tool):
    body = _tool_agent(orders_tool, "[{id: a, text: call ONCE}]") + """
contract:
  scenarios:
    - name: broken_tool
      faults: [{kind: error, target: orders, on_calls: [99]}]
"""
    code, report = _run(run_cli, tmp_path, body)
    assert code == 2 and report["verdict"]["error_reason"] == "vacuous"
    [coverage] = report["verdict"]["coverage"]
    assert coverage["faults"][0]["status"] == "never_fired" and coverage["faults"][0]["matched"] == 1
    assert "its trigger never fired" in report["verdict"]["reasons"][0]


# -- a crash is attributed once -------------------------------------------------------

def test_a_timeout_is_blamed_on_the_outcome_never_on_an_output_invariant(run_cli, tmp_path):
    body = planted_agent_block("hang", timeout=0.5) + """
inputs: [{id: a, text: hello}]
mutation: {enabled: false}
contract:
  invariants:
    - {id: completes, type: completes, severity: critical}
    - {id: no-secret, type: excludes, values: [sk-], severity: critical}
    - {id: polite, type: regex, pattern: '[.!?]$', severity: high}
"""
    code, report = _run(run_cli, tmp_path, body)
    verdict = report["verdict"]
    assert code == 1
    [cell] = verdict["cells"]
    assert cell["reason"] == "agent_timeout"
    outcomes = {o["id"]: o for o in cell["invariants"]}
    assert outcomes["completes"]["breached"]
    for inv in ("no-secret", "polite"):
        assert not outcomes[inv]["breached"] and outcomes[inv]["not_judged_runs"] == 1
        assert outcomes[inv]["total_runs"] == 0
    assert verdict["reasons"][0] == "critical invariant breached: completes (agent_timeout)"
    assert not any("no-secret" in r for r in verdict["reasons"])
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert "no-secret" not in junit.split("<failure", 1)[1].split("</failure>")[0]


# -- config mistakes only the run can reveal --------------------------------------------

def test_an_agent_url_nothing_listens_on_is_a_config_error(run_cli, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    body = f"""
agent:
  url: http://127.0.0.1:{port}
  invoke:
    http: {{url: "{{{{url}}}}/chat", body: {{input: "{{{{input}}}}"}}, output: $.reply}}
inputs: [{{id: a, text: hello}}, {{id: b, text: bye}}]
mutation: {{enabled: false}}
"""
    code, report = _run(run_cli, tmp_path, body)
    verdict = report["verdict"]
    assert code == 2 and verdict["error_reason"] == "config"
    assert verdict["reasons"][0].startswith("chaos-gate.yaml:2: agent.url: every call to the agent failed")


def test_an_output_path_no_response_has_is_a_config_error(run_cli, tmp_path):
    body = planted_agent_block("echo").replace("output: $.reply", "output: $.answer") + """
inputs: [{id: a, text: hello}]
mutation: {enabled: false}
"""
    code, report = _run(run_cli, tmp_path, body)
    verdict = report["verdict"]
    assert code == 2 and verdict["error_reason"] == "config"
    assert "agent.invoke.http.output: the path $.answer matched no response" in verdict["reasons"][0]
    line = int(verdict["reasons"][0].split(":")[1])
    assert "output: $.answer" in (tmp_path / "chaos-gate.yaml").read_text().splitlines()[line - 1]


# -- exact attribution across cells ----------------------------------------------------

class _Orders(JsonHandler):
    def do_GET(self):
        self.reply(200, {"id": self.path.rsplit("/", 1)[-1], "status": "shipped"})


@pytest.fixture
def orders_tool():
    server, url = serve(_Orders)
    yield url
    server.shutdown()


def _tool_agent(tool_url: str, inputs: str, timeout: float = 5) -> str:
    return f"""
agent:
  start:
    command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENTS / 'runaway.py'))}]
    ready: {{url: "{{{{url}}}}/health", timeout: 10}}
  invoke:
    http: {{url: "{{{{url}}}}/chat", body: {{input: "{{{{input}}}}"}}, output: $.reply}}
  timeout: {timeout}
tools:
  - {{name: orders, env: TOOL_URL, upstream: "{tool_url}"}}
inputs: {inputs}
mutation: {{enabled: false}}
"""


def test_calls_after_a_cells_deadline_are_stray_never_the_next_cells(run_cli, tmp_path, orders_tool):
    body = _tool_agent(orders_tool, "[{id: runaway, text: RUNAWAY please}, {id: calm, text: hello}]", 0.5) + """
contract:
  invariants:
    - {id: no-tool-when-calm, type: tool_calls_max, tool: orders, max: 0, severity: critical, when: {input: calm}}
"""
    code, report = _run(run_cli, tmp_path, body)
    cells = {c["id"]: c for c in report["verdict"]["cells"]}
    calm = cells["contract/calm/baseline"]
    assert cells["contract/runaway/baseline"]["reason"] == "agent_timeout"
    assert calm["status"] == "pass" and calm["runs"][0]["trace"] == []
    stray = report["run"]["stray"]
    assert stray and {s["target"] for s in stray} == {"orders"}
    assert {s["after_cell"] for s in stray} == {"contract/runaway/baseline"}
    assert any("stray" in w for w in report["verdict"]["warnings"])
    reasons = " ".join(report["verdict"]["reasons"])
    assert "no-tool-when-calm" not in reasons  # the runaway's calls never breach the calm cell's invariant
    assert "baseline_answers (agent_timeout)" in reasons  # the runaway's own hung baseline is its critical finding
