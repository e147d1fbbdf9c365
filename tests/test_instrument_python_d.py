"""In-process tool seams on the two text-protocol frameworks: DSPy's ReAct and smolagents (both agents).

Each agent under tests/agents/inprocess_d/ is written the way its framework's quick-start
writes one, with one tool `issue_refund(order_id)` that appends to a ledger file (the write
is counted there, outside the gate), a planted bug (VARIANT=bug) and its sound twin
(VARIANT=sound). Both frameworks talk to the model in text rather than native tool
calls (DSPy's `[[ ## field ## ]]` adapter format, smolagents' results as user messages,
its CodeAgent's Python), so these runs also prove the sim speaks them under the *usual*
rule: call the tool, then answer (gate/sim/protocols/; its pure unit tests are
tests/test_sim_text_protocols.py).

The frameworks live in a cached virtualenv of their own (tests/framework_envs.py: they
would move this environment's pins), so the agent's command runs that interpreter. The
gate runs each variant once through the real CLI with one scenario whose fault can only
reach the tool in-process: the bug must breach the one invariant it plants, the twin
must pass the same scenario, the trace must show the call on the in-process transport
with the fault fired, and the report the seam. The schema test runs each agent twice on a
proxy, instrumented and not, and compares the model's first request byte for byte (for
DSPy the tool is described in the prompt text, for smolagents in `tools`).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

import test_instrument_python_a as part_a
from conftest import AGENTS, load_report, write_config
from framework_envs import python_for
from gate.cli import main
from test_instrument_python_a import ERROR, INPUT, TIMEOUT_AFTER_WRITE, Case, agent_env, refunds, sim

HERE = AGENTS / "inprocess_d"
ANSWER = "Your refund for order 1234 has been issued."

# part A's cases (agent, needs, fault, on_error, breach, seam, target, ledger lines after bug / sound),
# each agent run on its framework's interpreter (FRAMEWORK: its group in tests/framework_envs.py)
CASES = {
    # ReAct makes a failed tool an observation text; the bug reads a receipt out of it and crashes
    "dspy-react": Case("dspy_refund.py", (), ERROR, "apologize", "completes", "dspy.Tool.__call__", "functions",
                       (0, 0)),
    # smolagents tells the model "Now let's retry"; the model retries a refund that was written
    "smolagents-toolcalling": Case("smolagents_refund.py", (), TIMEOUT_AFTER_WRITE, "retry", "refund-once",
                                   "smolagents.Tool.__call__", "functions", (2, 1)),
    # the same as a CodeAgent: the model's code calls the tool, the executor's error is the model's to retry
    "smolagents-code": Case("smolagents_refund.py", (), TIMEOUT_AFTER_WRITE, "retry", "refund-once",
                            "smolagents.Tool.__call__", "functions", (2, 1)),
}
FRAMEWORK = {"dspy-react": "dspy", "smolagents-toolcalling": "smolagents", "smolagents-code": "smolagents"}
EXTRA_ENV = {"smolagents-code": {"AGENT": "code"}}


def config(tmp: Path, name: str, variant: str, ledger: Path) -> Path:
    """Part A's config for the case, its command on the framework's interpreter."""
    case = CASES[name]
    doc = json.loads(part_a.config(tmp, replace(case, agent=str(HERE / case.agent)), variant, ledger).read_text())
    doc["agent"]["invoke"]["command"]["command"][0] = python_for(FRAMEWORK[name])
    doc["agent"]["invoke"]["command"]["env"].update(EXTRA_ENV.get(name, {}))
    doc["agent"]["timeout"] = 90
    return write_config(tmp, json.dumps(doc, indent=1))


@pytest.mark.parametrize("variant", ["bug", "sound"])
@pytest.mark.parametrize("name", list(CASES))
def test_in_process_fault_catches_the_bug_and_passes_the_twin(name, variant, tmp_path):
    case, ledger, out = CASES[name], tmp_path / "ledger.txt", tmp_path / "out"
    code = main(["run", "-c", str(config(tmp_path, name, variant, ledger)), "-o", str(out), "--quiet",
                 "--full-report"])
    report = load_report(out)
    ((run,),) = [cell["runs"] for cell in report["verdict"]["cells"]]
    calls = [e for e in run["trace"] if e["kind"] == "tool"]
    seen = {  # what the run did, against what the case says it must
        "exit": code, "breached": {c["invariant"] for c in run["checks"] if not c["passed"]},
        "refunds": refunds(ledger),
        # the first refund call is the one faulted, in-process, on the framework's own path
        "first call": {k: calls[0][k] for k in ("target", "tool", "method", "transport", "fault", "fault_status")},
        "seam reached": case.seam in report["verdict"]["reach"]["in_process"],
        "seams failed": report["verdict"]["reach"]["failed"],
        # the usual rule, spoken in the framework's own protocol: a few model calls, never a loop
        "few llm calls": len([e for e in run["trace"] if e["kind"] == "llm"]) <= 5,
    }
    sound = variant == "sound"
    assert seen == {
        "exit": 0 if sound else 1, "breached": set() if sound else {case.breach},
        "refunds": case.refunds[sound],
        "first call": {"target": "functions", "tool": "issue_refund", "method": "CALL", "transport": "function",
                       "fault": case.fault["kind"], "fault_status": "fired"},
        "seam reached": True, "seams failed": [], "few llm calls": True,
    }, (run["reason"], run.get("output"), [p.read_text()[-3000:] for p in out.glob("logs/*")])


# -- the model sees the same tools with and without instrumentation ------------------------------
def run_on_proxy(name: str, tmp: Path, instrument: bool):
    """One run of the agent against a proxy with the sim: (process, trace)."""
    from gate.instrument.environment import instrumented, plain
    from proxy_harness import sim_proxy

    case = CASES[name]
    with sim_proxy(sim=sim(case.on_error)) as p:
        p.begin()
        env = {**os.environ, **p.env, **agent_env(tmp / f"ledger-{instrument}.txt", "bug"), **EXTRA_ENV.get(name, {})}
        env = instrumented(env) if instrument else plain(env)
        done = subprocess.run([python_for(FRAMEWORK[name]), str(HERE / case.agent)], input=INPUT, env=env,
                              capture_output=True, text=True, timeout=120)
        trace = p.end()
    return done, trace


@pytest.mark.parametrize("name", list(CASES))
def test_tool_schema_the_model_sees_is_unchanged(name, tmp_path):
    runs = {}
    for instrument in (False, True):
        done, trace = run_on_proxy(name, tmp_path, instrument)
        assert done.returncode == 0 and done.stdout.strip().startswith(ANSWER), done.stderr[-3000:]
        runs[instrument] = ([e.body for e in trace if e.kind == "llm"][0], [e for e in trace if e.kind == "tool"])
    (plain_body, plain_calls), (body, calls) = runs[False], runs[True]
    # the seam was live (the call was traced in-process) and the model's first request, with the
    # tool's name, description and argument schema, is the same bytes
    assert plain_calls == [] and [(c.target, c.tool) for c in calls] == [("functions", "issue_refund")]
    request = json.loads(body)
    system = json.dumps(request["messages"][0]["content"])
    if "tools" in request:  # smolagents' ToolCallingAgent: native tools (and its own final_answer)
        assert [t["function"]["name"] for t in request["tools"]] == ["issue_refund", "final_answer"]
    elif name.startswith("dspy"):  # DSPy: the tools are described in the prompt
        assert "(1) issue_refund, whose description is" in system
    else:  # smolagents' CodeAgent: as Python signatures in the prompt
        assert "def issue_refund(order_id: string) -> object:" in system
    assert body == plain_body


# -- a tool the model called in text, that no seam saw, is "called, not reached" -------------------
@pytest.mark.parametrize("name", ["dspy-react", "smolagents-toolcalling", "smolagents-code"])
def test_a_text_protocol_call_no_seam_saw_is_called_not_reached(name, tmp_path):
    """With the instrumentation off, the tool runs outside every seam; its calls travel as text (DSPy's
    trajectory, smolagents' "Calling tools:" or code), and the reach line must still name it (promise 4)."""
    doc = json.loads(config(tmp_path, name, "sound", tmp_path / "ledger.txt").read_text())
    doc["agent"]["instrument"] = "off"
    doc["contract"] = {"invariants": [{"id": "answered", "type": "not_empty", "severity": "high"}]}
    doc["chaos"] = {"explore": False}  # the reach line of one fault-free run is what is tested
    out = tmp_path / "out"
    code = main(["run", "-c", str(write_config(tmp_path, json.dumps(doc, indent=1))), "-o", str(out), "--quiet"])
    reach = load_report(out)["verdict"]["reach"]
    assert (code, reach["called"], reach["in_process"]) == (0, ["issue_refund"], []), reach
    assert "issue_refund" in reach["offered"]
    note = next(n for n in reach["notes"] if n.startswith("called, not reached"))
    assert "issue_refund" in note and "outside every seam" in note
