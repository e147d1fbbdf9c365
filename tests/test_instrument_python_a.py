"""In-process tool seams on real frameworks: the OpenAI Agents SDK, pydantic-ai, and MCP over stdio.

Each agent under tests/agents/inprocess_a/ is written the way its framework's docs write
one, at default settings, with one tool `issue_refund(order_id)` that appends to a
ledger file (the write is counted there, outside the gate). Five of them: Agents SDK and
pydantic-ai function tools, and a stdio MCP server reached by the `mcp` SDK's own
client, by pydantic-ai's MCPToolset (fastmcp) and by the Agents SDK's MCPServerStdio.
Each has a planted bug (VARIANT=bug) and its sound twin (VARIANT=sound).

The gate runs each variant once, through the real CLI with the keyless `sim` model and
one scenario whose fault can only reach the tool in-process: the bug must breach the one
invariant it plants, and the twin must pass the very same scenario. The trace must show
the call on the in-process transport with the fault fired, and the report the seam.

A seam must not change what the model sees: the schema tests run an agent of each seam
twice on a proxy, instrumented and not, and compare the first model request byte for
byte. A FunctionTool built by hand (no SDK failure handler) is checked on its own path.
pydantic-ai's MCPToolset needs fastmcp (`pydantic-ai-slim[mcp]`); without it that case skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import AGENTS, REFUND_INPUT, ledger_lines, one_run, refund_config

HERE = AGENTS / "inprocess_a"
INPUT = REFUND_INPUT
TIMEOUT_AFTER_WRITE = {"kind": "timeout_after_write", "tool": "issue_refund", "on_calls": [1], "seconds": 0.2}
ERROR = {"kind": "error", "tool": "issue_refund", "on_calls": [1]}


@dataclass(frozen=True)
class Case:
    agent: str
    needs: tuple[str, ...]  # modules whose absence skips the case
    fault: dict
    on_error: str  # what the sim, as the model, does after a failed tool: retry (as told to) or apologize
    breach: str  # the invariant the bug breaches
    seam: str  # the seam the report names
    target: str  # the trace target of the call (functions | mcp-stdio)
    refunds: tuple[int, int]  # ledger lines after the bug run, after the sound run


CASES = {
    # the SDK's failure handler tells the model the tool failed; the model retries the refund
    "agents-function": Case("openai_agents_refund.py", ("agents",), TIMEOUT_AFTER_WRITE, "retry", "refund-once",
                            "openai-agents.function_tool", "functions", (2, 1)),
    # an exception from a tool body fails pydantic-ai's run: the bug crashes, the twin's hook reports it
    "pydantic-function": Case("pydantic_ai_refund.py", ("pydantic_ai",), ERROR, "retry", "completes",
                              "pydantic-ai.FunctionToolset.call_tool", "functions", (0, 1)),
    # the agent's own retry of an MCPError, on a tool the server says is not idempotent
    "mcp-client": Case("mcp_client_refund.py", ("mcp", "openai"), TIMEOUT_AFTER_WRITE, "apologize", "refund-once",
                       "mcp.ClientSession.call_tool", "mcp-stdio", (2, 1)),
    # pydantic-ai makes a timed-out MCP call a ModelRetry (the sim retries, as a model told to would)
    "pydantic-mcp": Case("pydantic_ai_mcp_refund.py", ("pydantic_ai", "fastmcp"), TIMEOUT_AFTER_WRITE, "retry",
                         "refund-once", "mcp.ClientSession.call_tool", "mcp-stdio", (2, 1)),
    # the Agents SDK's own MCP retry (max_retry_attempts) resends the refund
    "agents-mcp": Case("openai_agents_mcp_refund.py", ("agents",), TIMEOUT_AFTER_WRITE, "apologize", "refund-once",
                       "mcp.ClientSession.call_tool", "mcp-stdio", (2, 1)),
}


def sim(on_error: str) -> dict:
    return {"rules": [{
        "when": r"refund.*?(\d{3,})", "on_error": {"action": on_error, "retries": 1},
        "steps": [{"call": "issue_refund", "arguments": {"order_id": "{{1}}"}},
                  {"answer": "Your refund for order {{1}} has been issued."}]}]}


def needs(case: Case) -> None:
    for module in case.needs:
        pytest.importorskip(module)
    if "agents" in case.needs:  # tests/agents is a directory too: make sure it is the SDK
        pytest.importorskip("agents.mcp")


def agent_env(ledger: Path, variant: str) -> dict[str, str]:
    # tracing exports to OpenAI's trace ingest (not the model API, not the wire under test): off
    return {"LEDGER": str(ledger), "VARIANT": variant, "OPENAI_API_KEY": "sk-sim",
            "OPENAI_AGENTS_DISABLE_TRACING": "1"}


refunds = ledger_lines


def config(tmp: Path, case: Case, variant: str, ledger: Path) -> Path:
    invoke = {"command": [sys.executable, str(HERE / case.agent)], "env": agent_env(ledger, variant)}
    return refund_config(tmp, invoke, case.fault, sim(case.on_error))


@pytest.mark.parametrize("variant", ["bug", "sound"])
@pytest.mark.parametrize("name", list(CASES))
def test_in_process_fault_catches_the_bug_and_passes_the_twin(name, variant, tmp_path):
    case = CASES[name]
    needs(case)
    ledger = tmp_path / "ledger.txt"
    code, report, run, failed, logs = one_run(config(tmp_path, case, variant, ledger), tmp_path / "out")
    if variant == "bug":
        assert (code, failed) == (1, {case.breach}), (run["reason"], run["checks"], run.get("output"), logs)
    else:
        assert (code, failed) == (0, set()), (run["reason"], run["checks"], run.get("output"), logs)
    assert refunds(ledger) == case.refunds[variant == "sound"], (run["output"], run["trace"])
    # the first refund call is the one faulted, in-process, on the framework's own path
    calls = [e for e in run["trace"] if e["kind"] == "tool"]
    first = calls[0]
    assert (first["target"], first["tool"], first["method"], first["transport"]) == \
           (case.target, "issue_refund", "CALL", "function" if case.target == "functions" else "mcp-stdio")
    assert (first["fault"], first["fault_status"]) == (case.fault["kind"], "fired")
    assert case.seam in report["verdict"]["reach"]["in_process"]
    assert not report["verdict"]["reach"]["failed"]


# -- the model sees the same tools with and without instrumentation ------------------------------
def run_on_proxy(agent: str, on_error: str, tmp: Path, instrument: bool = True, fault: dict | None = None):
    """One run of `agent` against a proxy with the sim: (process, trace, ledger lines)."""
    from gate.instrument.environment import instrumented, plain
    from proxy_harness import sim_proxy

    ledger = tmp / f"ledger-{instrument}.txt"
    with sim_proxy(sim=sim(on_error)) as p:
        p.begin(*([fault] if fault else []))
        env = {**os.environ, **p.env, **agent_env(ledger, "bug")}
        env = instrumented(env) if instrument else plain(env)
        done = subprocess.run([sys.executable, str(HERE / agent)], input=INPUT, env=env, capture_output=True,
                              text=True, timeout=120)
        trace = p.end()
    return done, trace, refunds(ledger)


# One agent per seam family (the three MCP clients share the session seam, whose list_tools
# hands back the server's own result): each framework import costs seconds.
@pytest.mark.parametrize("name", ["agents-function", "pydantic-function", "mcp-client"])
def test_tool_schema_the_model_sees_is_unchanged(name, tmp_path):
    case = CASES[name]
    needs(case)
    runs = {}
    for instrument in (False, True):
        done, trace, _ = run_on_proxy(case.agent, case.on_error, tmp_path, instrument)
        assert (done.returncode, done.stdout.strip()) == (0, "Your refund for order 1234 has been issued."), \
            done.stderr[-3000:]
        runs[instrument] = ([e.body for e in trace if e.kind == "llm"][0], [e for e in trace if e.kind == "tool"])
    (plain_body, plain_calls), (body, calls) = runs[False], runs[True]
    # the seam was live (the call was traced in-process) and the model's first request, with the
    # tools' names, descriptions and JSON schemas, is the same bytes
    assert plain_calls == [] and [(c.target, c.tool) for c in calls] == [(case.target, "issue_refund")]
    tools = json.loads(body)["tools"]
    assert [t.get("name") or t["function"]["name"] for t in tools] == ["issue_refund"]
    assert body == plain_body


def test_hand_built_function_tool_fails_the_run_as_its_own_exception_would(tmp_path):
    """A FunctionTool built by hand has no failure handler: the injected error must fail the
    run the way an exception from its `on_invoke_tool` does (the SDK's UserError), unrun."""
    needs(CASES["agents-function"])
    done, trace, written = run_on_proxy("openai_agents_raw_tool.py", "retry", tmp_path, fault=ERROR)
    assert done.returncode == 1
    assert "UserError: Error running tool issue_refund: 500: tool failed (injected by chaos-gate)" in done.stderr
    assert written == 0
    (call,) = [e for e in trace if e.kind == "tool"]
    assert (call.target, call.tool, call.fault, call.fault_status, call.forwarded, call.extra["framework"]) == \
           ("functions", "issue_refund", "error", "fired", False, "openai-agents")
