"""Verdict semantics users hit (issue 21): a start-up mistake is an error with its stderr, a
crash fails the gate, a broken shared resource is charged where it broke, a fault that could
not act judges nothing, a profile tests every one of its faults, and vacuity says what to do
and means the same alone or combined.

Each test plants the case and drives the real CLI against real agent processes over loopback
(tests/agents/session_agent.py, tests/agents/broken_start.py); the pure rules are checked on
their own as well."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from conftest import AGENTS, load_report, planted_agent_block, write_config
from httpkit import JsonHandler, serve

PY = json.dumps(sys.executable)
LLM_SIM = "llm:\n  - {name: openai, provider: openai, upstream: sim}\n"


def _run(run_cli, tmp_path, body: str) -> tuple[int, dict]:
    config = write_config(tmp_path, body)
    code = run_cli("run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet")
    return code, load_report(tmp_path / "out")


def _surfaces(tmp_path) -> tuple[str, str, str]:
    out = tmp_path / "out"
    return ((out / "summary.md").read_text(), (out / "report.html").read_text(), (out / "junit.xml").read_text())


def _session_agent(extra: str = "", timeout: float = 5) -> str:
    return f"""
agent:
  start:
    command: [{PY}, {json.dumps(str(AGENTS / 'session_agent.py'))}]
    ready: {{url: "{{{{url}}}}/health", timeout: 10}}
  invoke:
    http: {{url: "{{{{url}}}}/chat", body: {{input: "{{{{input}}}}"}}, output: $.reply}}
  timeout: {timeout}
{extra}mutation: {{enabled: false}}
"""


# -- 1. a command agent that dies on start ---------------------------------------------------

def _broken_command(env: str = "") -> str:
    return f"""
agent:
  invoke:
    command: {{command: [{PY}, {json.dumps(str(AGENTS / 'broken_start.py'))}]{env}}}
  timeout: 5
inputs: [{{id: a, text: hello}}, {{id: b, text: bye}}]
mutation: {{enabled: true, count: 1}}
"""


def test_a_command_agent_that_dies_on_start_is_an_error_with_its_stderr(run_cli, tmp_path):
    code, report = _run(run_cli, tmp_path, _broken_command())
    verdict = report["verdict"]
    assert code == 2 and verdict["verdict"] == "error" and verdict["error_reason"] == "agent_start"
    assert verdict["score"] is None  # nothing was judged: no score of 0
    assert verdict["reasons"][0].startswith("chaos-gate.yaml:3: agent.invoke.command: the agent failed before")
    assert "No module named 'chaos_gate_no_such_module'" in verdict["reasons"][0]
    assert {(c["status"], c["reason"]) for c in verdict["cells"]} == {("error", "agent_start")}
    assert len(verdict["cells"]) == 4 and all(c["invariants"] == [] for c in verdict["cells"])
    for cell in verdict["cells"]:
        assert "ModuleNotFoundError: No module named 'chaos_gate_no_such_module'" in cell["log_tail"]
    summary, page, junit = _surfaces(tmp_path)
    assert summary.startswith("## ⚠️ chaos-gate: **ERROR** (agent\\_start)")
    assert "The agent did not start:" in summary and "The agent's log (stderr) ends:" in summary
    assert "ModuleNotFoundError: No module named 'chaos_gate_no_such_module'" in summary
    assert "more cells where the agent did not start the same way" in summary  # shown once, not four times
    assert "ModuleNotFoundError: No module named &#x27;chaos_gate_no_such_module&#x27;" in page
    assert junit.count("<error") == 4 and "<failure" not in junit


def test_a_command_agent_that_did_something_before_dying_fails_with_its_stderr(run_cli, tmp_path):
    """The same exit after an LLM call is the agent's failure, never a start-up error."""
    code, report = _run(run_cli, tmp_path, _broken_command(", env: {ASK_FIRST: '1'}") + LLM_SIM)
    verdict = report["verdict"]
    assert code == 1 and verdict["verdict"] == "fail" and verdict["error_reason"] is None
    cell = next(c for c in verdict["cells"] if c["id"] == "contract/a/baseline")
    assert cell["status"] == "fail" and cell["reason"] == "exit_nonzero"
    assert cell["runs"][0]["trace"] and cell["runs"][0]["detail"].startswith("exit status 1")
    assert "ModuleNotFoundError" in cell["log_tail"]
    summary, page, _ = _surfaces(tmp_path)
    assert "ModuleNotFoundError" in summary and "ModuleNotFoundError" in page


# -- 2. an agent process that dies mid-run -----------------------------------------------------

def test_an_agent_process_that_dies_mid_run_fails_the_gate_on_stays_up(run_cli, tmp_path):
    body = _session_agent("inputs: [{id: a, text: hello}, {id: b, text: please CRASH}, {id: c, text: bye}]\n")
    code, report = _run(run_cli, tmp_path, body)
    verdict = report["verdict"]
    assert code == 1 and verdict["verdict"] == "fail"  # one crash in three cells: was a PASS at 89
    assert verdict["reasons"][0] == "critical invariant breached: stays_up (agent_crash)"
    cells = {c["id"]: c for c in verdict["cells"]}
    crashed = cells["contract/b/baseline"]
    stays = next(o for o in crashed["invariants"] if o["id"] == "stays_up")
    assert crashed["reason"] == "agent_crash" and stays["breached"] and stays["severity"] == "critical"
    assert cells["contract/a/baseline"]["status"] == cells["contract/c/baseline"]["status"] == "pass"
    assert "fatal error in the tool loop (planted crash)" in crashed["log_tail"]
    assert report["run"]["reruns"] == []  # no fault fired before it: charged as it ran
    summary, page, _ = _surfaces(tmp_path)
    assert "The agent's log (stderr) ends:" in summary and "planted crash" in summary
    assert "planted crash" in page.split("The agent's log (stderr) ends:")[1]


def test_stays_up_is_implicit_only_for_a_process_the_gate_starts(tmp_path):
    from gate.plan import load_config
    from gate.plan import invariants_of

    started = load_config(write_config(tmp_path, _session_agent("inputs: [{id: a, text: hi}]\n")))
    assert {(i.id, i.severity) for i in invariants_of(started.config)} >= {("stays_up", "critical")}
    command = load_config(write_config(tmp_path, _broken_command(), "command.yaml"))
    assert "stays_up" not in {i.id for i in invariants_of(command.config)}


def test_a_process_found_dead_when_its_cell_ends_breaches_stays_up():
    """The process answered, then died: the Ledger hook sees it at the end of the cell."""
    from gate.contracts import Observation
    from gate.contracts.outcome_checks import StaysUp
    from gate.runner.recover import Ledger

    class Process:
        def __init__(self, alive):
            self.alive = alive

        async def is_alive(self):
            return self.alive

    class Instance:
        restarts = 0
        process = Process(True)
        spec = type("Spec", (), {"start": type("Start", (), {"command": ["agent"]})})

    async def one_cell(instance):
        ledger = Ledger(0, instance)
        obs = Observation(output="answered", reason="ok", status=200)
        await ledger.begin(object(), 0)
        await ledger.end(object(), 0, obs)
        return StaysUp(id="stays_up").evaluate(obs)

    assert asyncio.run(one_cell(Instance())).passed
    dead = Instance()
    dead.process = Process(False)
    verdict = asyncio.run(one_cell(dead))
    assert not verdict.passed and "not running when the cell ended" in verdict.message


# -- 3. a shared resource one cell's fault broke ---------------------------------------------------

class _Refunds(JsonHandler):
    def do_POST(self):
        self.json_body()
        self.reply(200, {"refund": "r1"})


@pytest.fixture
def refunds_tool():
    server, url = serve(_Refunds)
    yield url
    server.shutdown()


def test_cells_failing_on_an_agent_a_fault_broke_are_rerun_on_a_restarted_agent(run_cli, tmp_path, refunds_tool):
    body = _session_agent(f"""tools:
  - {{name: orders, env: TOOL_URL, upstream: "{refunds_tool}"}}
inputs: [{{id: a, text: REFUND order 1}}, {{id: b, text: REFUND order 2}}, {{id: c, text: FAIL this REFUND}}]
contract:
  scenarios:
    - name: double_write
      faults: [{{kind: timeout_after_write, target: orders, method: POST, on_calls: [1], seconds: 3}}]
chaos:
  scenarios:
    - name: slow_tool
      faults: [{{kind: latency, target: orders, ms: 20}}]
""")
    code, report = _run(run_cli, tmp_path, body)
    cells = {c["id"]: c for c in report["verdict"]["cells"]}
    reruns = {r["cell"]: r for r in report["run"]["reruns"]}
    # the fault fired in a/double_write: the agent answered politely, but its session was gone for good
    assert cells["contract/a/double_write"]["status"] == "pass"
    for victim in ("contract/b/double_write", "chaos/a/slow_tool", "chaos/b/slow_tool"):
        assert cells[victim]["status"] == "pass", victim  # passed on a restarted agent: not charged
        assert reruns[victim]["outcome"] == "passed" and reruns[victim]["first_reason"] == "http_5xx"
        assert reruns[victim]["left_broken_by"] == "contract/a/double_write"
    # input c always fails: before any fault it is charged as it ran; after the damage, it fails again
    assert cells["contract/c/baseline"]["status"] == "fail" and "contract/c/baseline" not in reruns
    assert reruns["chaos/c/slow_tool"]["outcome"] == "failed_again"
    assert cells["chaos/c/slow_tool"]["status"] == "fail"
    warning = next(w for w in report["verdict"]["warnings"] if w.startswith("the agent was left broken by"))
    assert "contract/a/double_write" in warning and "3 later cell(s)" in warning
    slow = next(sc for sc in report["verdict"]["coverage"] if sc["scenario"] == "slow_tool")
    assert slow["faults"][0]["status"] == "fired"  # the re-runs' counters, not the broken runs'
    summary, page, _ = _surfaces(tmp_path)
    assert "### Re-run on a restarted agent" in summary and "passed: not charged" in summary
    assert "failed again: charged" in summary and "Re-run on a restarted agent" in page


def test_the_cell_where_the_damage_began_is_found_behind_the_streak_of_failures():
    from gate.runner.recover import Entry, left_broken_by

    class C:
        def __init__(self, cid):
            self.id = cid

    fired = {"y", "z"}
    entries = [Entry(C(cid), 0, epoch, cid in fired) for cid, epoch in
               [("x", 0), ("y", 0), ("a", 0), ("z", 0), ("b", 0), ("fresh", 1), ("d", 1)]]
    failing = {"a", "z", "b", "d"}
    failed = lambda e: e.cell.id in failing  # noqa: E731
    assert left_broken_by(entries, 4, failed) == "y"  # back over b, z, a to y, whose faults fired
    assert left_broken_by(entries, 2, failed) == "y"
    assert left_broken_by(entries, 6, failed) is None  # a restart in between: nothing fired since


# -- 4 and 5. faults that could not act, and profiles that test every fault ---------------------------

@pytest.fixture(scope="module")
def llm_run(tmp_path_factory):
    from gate.cli import main

    tmp = tmp_path_factory.mktemp("llm")
    body = _session_agent("""inputs: [{id: a, text: ASK the model}, {id: s, text: STREAM the answer}]
""" + LLM_SIM + """contract:
  invariants:
    - {id: not-plain, type: excludes, values: ["Answer:"], severity: high, when: {scenario: truncated}}
  scenarios:
    - name: truncated
      faults: [{kind: truncate_stream, target: llm, on_calls: [1], after_events: 1}]
chaos:
  profiles: [malformed_llm]
""")
    config = write_config(tmp, body)
    code = main(["run", "-c", str(config), "-o", str(tmp / "out"), "--quiet"])
    return code, load_report(tmp / "out"), tmp


def test_a_cell_whose_faults_were_all_not_applicable_is_not_judged(llm_run):
    code, report, tmp = llm_run
    verdict = report["verdict"]
    cells = {c["id"]: c for c in verdict["cells"]}
    plain = cells["contract/a/truncated"]  # a JSON answer: truncate_stream had no stream to cut
    assert plain["status"] == "skipped" and plain["reason"] == "not_applicable" and plain["invariants"] == []
    assert "truncate_stream" in plain["note"] and "not a stream" in plain["note"]
    assert cells["contract/s/truncated"]["status"] == "pass"  # streamed: the fault fired and was judged
    assert code == 0 and verdict["verdict"] == "pass" and verdict["score"] == 100.0  # not judged, not counted
    assert verdict["counts"]["skipped"] == 3 and verdict["counts"]["failed"] == 0
    summary, _, junit = _surfaces(tmp)
    assert "### Not judged" in summary and "contract/a/truncated" in summary.split("### Not judged")[1]
    assert '<skipped message="not judged' in junit


def test_a_profile_runs_one_cell_per_fault_and_every_fault_is_exercised(llm_run):
    _, report, _ = llm_run
    ids = [c["id"] for c in report["verdict"]["cells"] if c["stage"] == "chaos"]
    kinds = ["malformed_json", "wrong_shape", "bad_tool_args", "cut_content", "drift"]
    assert ids == [f"chaos/{i}/malformed_llm/{k}" for k in kinds for i in ("a", "s")]
    [coverage] = [sc for sc in report["verdict"]["coverage"] if sc["scenario"] == "malformed_llm"]
    rows = {f["fault"]: f for f in coverage["faults"]}
    assert list(rows) == kinds and all(f["cells"] == 2 and f["matched"] == 2 for f in rows.values())
    for kind in ("malformed_json", "wrong_shape", "cut_content", "drift"):  # faults 2-5 ran: not stopped at 1
        assert rows[kind]["status"] == "fired" and rows[kind]["fired"] == 2, kind
    assert rows["bad_tool_args"]["status"] == "not_applicable" and rows["bad_tool_args"]["hint"]
    assert any("bad_tool_args could not alter any answer" in w and "use a fault kind" in w
               for w in report["verdict"]["warnings"])


def test_a_split_profile_moves_each_fault_to_the_first_call_it_reaches_alone(tmp_path):
    from gate.plan import load_config
    from gate.plan import build_plan

    body = planted_agent_block("echo") + LLM_SIM + """inputs: [{id: a, text: hi}]
mutation: {enabled: false}
chaos: {profiles: [stream_chaos, indirect_injection]}
tools:
  - {name: orders, env: TOOL_URL, upstream: "http://127.0.0.1:9"}
"""
    loaded = load_config(write_config(tmp_path, body))
    chaos = [c for c in build_plan(loaded.config, base_dir=loaded.base_dir) if c.stage == "chaos"]
    assert [c.id for c in chaos] == [f"chaos/a/stream_chaos/{k}" for k in (
        "truncate_stream", "malformed_sse", "stream_error", "duplicate_tool_fragment", "reorder_tool_fragments",
        "stall")] + ["chaos/a/indirect_injection"]  # a one-fault profile keeps its plain id
    for n, cell in enumerate(chaos[:6]):
        assert cell.scenario == "stream_chaos" and len(cell.faults) == 1 and cell.fault_offset == n
        assert cell.faults[0].on_calls == [1] and len(cell.scenario_faults) == 6


# -- 6. vacuity: the way forward, and the same rule alone or combined ------------------------------

VACUOUS = planted_agent_block("echo") + LLM_SIM + """inputs: [{id: a, text: hello}]
mutation: {enabled: false}
contract:
  invariants:%s
  scenarios:
    - name: outage
      faults: [{kind: server_error, target: llm}]
"""
FAILING_BASELINE = "\n    - {id: says-nope, type: contains, value: nope, severity: critical, when: {scenario: baseline}}"


def test_a_vacuous_scenario_is_an_error_alone_and_beside_other_failures(run_cli, tmp_path):
    for name in ("alone", "combined"):
        (tmp_path / name).mkdir()
    code, alone = _run(run_cli, tmp_path / "alone", VACUOUS % " []")
    code2, combined = _run(run_cli, tmp_path / "combined", VACUOUS % FAILING_BASELINE)
    assert (code, alone["verdict"]["error_reason"]) == (code2, combined["verdict"]["error_reason"]) == (2, "vacuous")
    reason = alone["verdict"]["reasons"][0]
    assert reason == combined["verdict"]["reasons"][0] and "scenario 'outage'" in reason
    assert "set `target`" in reason  # what to do, not only what is wrong
    assert "critical invariant breached: says-nope" in combined["verdict"]["reasons"]  # the failure stays listed


def test_a_vacuous_scenario_whose_own_cells_failed_with_no_answer_is_a_warning(run_cli, tmp_path):
    body = planted_agent_block("hang", timeout=0.5) + LLM_SIM + """inputs: [{id: a, text: hello}]
mutation: {enabled: false}
contract:
  scenarios:
    - name: outage
      faults: [{kind: server_error, target: llm}]
"""
    code, report = _run(run_cli, tmp_path, body)
    verdict = report["verdict"]
    assert code == 1 and verdict["verdict"] == "fail"  # the hang is charged; nothing could fire before it
    assert verdict["warnings"][0].startswith("vacuous, but its own cells failed first, with no answer")


def test_a_fault_that_did_not_fire_says_what_to_change():
    from gate.faults import FAULTS
    from gate.plan import Cell
    from gate.report.model import CellResult, Reach, RunResult
    from gate.verdict.coverage import fault_coverage

    faults = (FAULTS["server_error"](kind="server_error", target="llm", probability=0.01),
              FAULTS["server_error"](kind="server_error", target="llm", on_calls=[5]),
              FAULTS["error"](kind="error", target="orders"))
    cell = Cell(id="c", index=0, stage="chaos", input_id="a", text="t", original_text="t", seed=1, scenario="s",
                faults=faults)
    result = CellResult(id="c", stage="chaos", input_id="a", scenario="s", seed=1, input="t", status="pass",
                        reason="ok", pass_rate=1.0, reproduce="", runs=[RunResult(run=0, reason="ok")])
    stats = {"c": [{0: {"matched": 2, "fired": 0}, 1: {"matched": 2, "fired": 0}, 2: {"matched": 0}}]}
    [scenario] = fault_coverage([cell], {"c": result}, stats, Reach(wire=["llm:openai"]))
    hints = [f.hint for f in scenario.faults]
    assert "another `--seed`, more `runs`" in hints[0]
    assert "`on_calls: [5]` but no run made more than 2 matching call(s): use call numbers from 1 to 2" in hints[1]
    assert "set `target`" in hints[2] and "its calls went to: llm:openai" in hints[2]


def test_a_cascade_profile_stays_one_cell_while_others_split_per_fault():
    from gate.config.models import Config
    from gate.plan import build_plan

    config = Config.model_validate({
        "agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}"}}},
        "inputs": [{"id": "a", "text": "x"}], "mutation": {"enabled": False}, "llm": [{"name": "openai"}],
        "tools": [{"name": "t", "env": "T", "upstream": "http://127.0.0.1:9"}],
        "chaos": {"profiles": ["cascading_failure", "flaky_llm"]}})
    cells = {c.id: c for c in build_plan(config)}
    assert len(cells["chaos/a/cascading_failure"].faults) == 3  # the story told in one cell
    assert [k for k in cells if k.startswith("chaos/a/flaky_llm/")] == [
        "chaos/a/flaky_llm/server_error-1", "chaos/a/flaky_llm/server_error-2", "chaos/a/flaky_llm/reset"]
