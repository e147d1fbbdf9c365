"""Each in-process seam on the OLDEST release it supports, and one release below a floor.

The newest releases are the test env's own pins and the "crew" / "adk" groups' (run by
tests/test_instrument_python_a.py, _b.py and _c.py); the oldest are the first releases whose
tool-invocation function the seam patches exists, as docs/reach.md's seam table says
(gate/report/frameworks.py). They run here on cached virtualenvs of tests/framework_envs.py:
"oldest" (the Agents SDK 0.10.4, pydantic-ai 0.4.4, the Anthropic SDK 0.68.0, google-genai
1.11.0), "oldest-langchain" (langchain-core 0.2.32 with LangGraph 0.2.4, whose langchain-openai
wants openai 1.x) and "oldest-agno" (Agno 1.4.2, the first with the `tool_hooks` its twin uses).

Each framework's agent is written the way that release's docs wrote it: the newer tests' agent
where it runs unchanged (Agents SDK, Anthropic, Agno), a variant where the old API differs
(pydantic-ai 0.4 had no capabilities, LangGraph 0.2 no `prompt=` and a ToolNode that caught
every error, google-genai 1.11 no base-URL variable). Through the real CLI with the keyless
`sim` model, a fault that only reaches the tool in-process fires, the trace shows the call on
the in-process transport, the planted bug is caught and its sound twin passes, and the reach
line names the seam and no failed one. Two seams needed mending for this (the Agents SDK's
runner entry and Agno's `execute` had other names before 0.19 / 3.1.4); a hand-built Agents SDK
FunctionTool, which goes through that runner entry, is checked on 0.10.4 on its own.

Below a floor the seam must still never break the agent: on google-genai 1.10 (no async hook)
it reports itself failed, the agent runs untouched, and the verdict is an error, not a pass.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from conftest import AGENTS, ledger_lines, load_report, one_run, refund_config
from framework_envs import python_for
from gate.cli import main
from test_instrument_python_a import CASES, agent_env, sim
from test_instrument_python_b import FRAMEWORKS, gate_config, run_caught_in_process
from test_instrument_python_b import ledger_lines as json_lines
from test_instrument_python_c import CASES as C_CASES
from test_instrument_python_c import config as c_config

# the agent command's two flavours: a script reading stdin (part A's), an HTTP front (part B's)
COMMAND_CASES = {
    "openai-agents": ("oldest", {"openai-agents": "0.10.4"}, CASES["agents-function"]),
    "pydantic-ai": ("oldest", {"pydantic-ai-slim": "0.4.4"},
                    dataclasses.replace(CASES["pydantic-function"], agent="pydantic_ai_0_4_refund.py")),
}
HTTP_CASES = {
    "anthropic": ("oldest", {"anthropic": "0.68.0"}, FRAMEWORKS["anthropic"]),
    "google-genai": ("oldest", {"google-genai": "1.11.0"},
                     dataclasses.replace(FRAMEWORKS["google_genai"], agent="google_genai_1_11_agent.py")),
    "langgraph": ("oldest-langchain", {"langchain-core": "0.2.32", "langgraph": "0.2.4"},
                  dataclasses.replace(FRAMEWORKS["langgraph"], agent="langgraph_0_2_agent.py")),
}


# part C's frameworks (their newest in the "crew" / "adk" groups): a group of its own each
C_OLDEST = {
    "agno": ({"agno": "1.4.2"}, dataclasses.replace(C_CASES["agno"], env="oldest-agno")),
}


def interpreter(group: str, versions: dict[str, str]) -> str:
    """The group's python, checked to hold the oldest releases (not whatever a resolver picked)."""
    python = python_for(group)
    code = "import importlib.metadata as m, json, sys; print(json.dumps({p: m.version(p) for p in sys.argv[1:]}))"
    found = subprocess.run([python, "-c", code, *versions], capture_output=True, text=True, check=True).stdout
    assert json.loads(found) == versions
    return python


@pytest.mark.parametrize("variant", ["bug", "sound"])
@pytest.mark.parametrize("name", list(COMMAND_CASES))
def test_a_script_agent_on_the_oldest_release(name, variant, tmp_path):
    group, versions, case = COMMAND_CASES[name]
    python = interpreter(group, versions)
    ledger = tmp_path / "ledger.txt"
    invoke = {"command": [python, str(AGENTS / "inprocess_a" / case.agent)], "env": agent_env(ledger, variant)}
    code, report, run, failed, logs = one_run(refund_config(tmp_path, invoke, case.fault, sim(case.on_error)),
                                              tmp_path / "out")
    assert_caught_in_process(case, variant, ledger, code, report, run, failed, logs)


@pytest.mark.parametrize("behaviour", ["bug", "sound"])
@pytest.mark.parametrize("name", list(HTTP_CASES))
def test_an_http_agent_on_the_oldest_release(name, behaviour, tmp_path):
    group, versions, fw = HTTP_CASES[name]
    python = interpreter(group, versions)
    config = gate_config(tmp_path, fw, behaviour)
    # part B's config runs the agent on this interpreter; here it runs on the group's (and google-genai
    # before 1.13 read its key from GOOGLE_API_KEY only)
    text = config.read_text().replace(json.dumps(sys.executable), json.dumps(python))
    config.write_text(text.replace("GEMINI_API_KEY: sk-sim", "GEMINI_API_KEY: sk-sim, GOOGLE_API_KEY: sk-sim"))
    report, _ = run_caught_in_process(config, fw, behaviour, tmp_path / "out")
    reach = report["verdict"]["reach"]
    assert not reach["failed"], reach
    assert json_lines(tmp_path / "ledger.jsonl") == fw.ledger[behaviour]


@pytest.mark.parametrize("variant", ["bug", "sound"])
@pytest.mark.parametrize("name", list(C_OLDEST))
def test_a_crew_or_adk_framework_on_its_oldest_release(name, variant, tmp_path):
    versions, case = C_OLDEST[name]
    interpreter(case.env, versions)
    ledger = tmp_path / "ledger.txt"
    code, report, run, failed, logs = one_run(c_config(tmp_path, case, variant, ledger), tmp_path / "out")
    assert_caught_in_process(case, variant, ledger, code, report, run, failed, logs)


def test_one_release_below_a_floor_the_seam_reports_failed_and_the_agent_runs_untouched(tmp_path):
    """google-genai 1.10 calls the agent's functions itself but has no async hook for the seam to
    patch: the seam says so in the reach line (`failed`), patches nothing, and the agent runs as it
    would without the gate (its refund written once, its answer given). The fault cannot reach the
    tool, so the verdict is an error (vacuous), never a pass and never a failure charged to the agent."""
    python = interpreter("below-floor", {"google-genai": "1.10.0"})
    fw = dataclasses.replace(FRAMEWORKS["google_genai"], agent="google_genai_1_11_agent.py")
    config = gate_config(tmp_path, fw, "bug")
    text = config.read_text().replace(json.dumps(sys.executable), json.dumps(python))
    config.write_text(text.replace("GEMINI_API_KEY: sk-sim", "GEMINI_API_KEY: sk-sim, GOOGLE_API_KEY: sk-sim"))
    out = tmp_path / "out"
    code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report",
                 "--only", f"contract/*/{fw.scenario}"])
    verdict = load_report(out)["verdict"]
    (cell,) = verdict["cells"]
    assert (code, verdict["verdict"], verdict["error_reason"]) == (2, "error", "vacuous"), verdict["reasons"]
    assert cell["status"] != "fail" and cell["runs"][0]["output"] == "Your refund for order 1234 has been issued."
    assert json_lines(tmp_path / "ledger.jsonl") == 1
    reach = verdict["reach"]
    assert fw.seam not in reach["in_process"]
    assert [f.split(":")[:2] for f in reach["failed"]] == [["google.genai._extra_utils", " AttributeError"]], reach


def test_a_hand_built_function_tool_on_the_oldest_agents_sdk(tmp_path):
    """Before 0.19 the runner invoked a FunctionTool through `invoke_function_tool` (no
    `_invoke_function_tool_with_metadata` yet): the seam wraps that one, so a tool built by hand
    (no SDK failure handler) still fails the run the SDK's way, unrun, on 0.10.4."""
    from gate.instrument.environment import instrumented
    from proxy_harness import sim_proxy

    python = interpreter("oldest", {"openai-agents": "0.10.4"})
    ledger = tmp_path / "ledger.txt"
    with sim_proxy(sim=sim("retry")) as proxy:
        proxy.begin(CASES["pydantic-function"].fault)  # `error` on the first issue_refund call
        env = instrumented({**os.environ, **proxy.env, **agent_env(ledger, "bug")})
        done = subprocess.run([python, str(AGENTS / "inprocess_a" / "openai_agents_raw_tool.py")],
                              input="Please refund order 1234, it arrived damaged.", env=env,
                              capture_output=True, text=True, timeout=120)
        trace = proxy.end()
    assert done.returncode == 1
    assert "UserError: Error running tool issue_refund: 500: tool failed (injected by chaos-gate)" in done.stderr
    assert ledger_lines(ledger) == 0
    (call,) = [e for e in trace if e.kind == "tool"]
    assert (call.target, call.tool, call.fault, call.fault_status, call.forwarded, call.extra["framework"]) == \
           ("functions", "issue_refund", "error", "fired", False, "openai-agents")


def assert_caught_in_process(case, variant, ledger, code, report, run, failed, logs) -> None:
    """The bug breaches its invariant and its twin passes; the tool was reached in-process, the fault fired,
    and the reach line names the seam with none failed."""
    expected = (1, {case.breach}) if variant == "bug" else (0, set())
    assert (code, failed) == expected, (run["reason"], run["checks"], run.get("output"), logs)
    assert ledger_lines(ledger) == case.refunds[variant == "sound"], (run["output"], run["trace"])
    first = [e for e in run["trace"] if e["kind"] == "tool"][0]
    assert (first["target"], first["tool"], first["transport"], first["fault"], first["fault_status"]) == \
           ("functions", "issue_refund", "function", case.fault["kind"], "fired")
    reach = report["verdict"]["reach"]
    assert case.seam in reach["in_process"] and not reach["failed"], reach
