"""In-process seams, part C: CrewAI, Google ADK, LlamaIndex, Strands and Agno function tools.

Each agent under tests/agents/inprocess_c/ is written the way its framework's quick-start
writes one, at default settings, with one local tool `issue_refund(order_id)` that appends
to a ledger file (tests/agents/inprocess_c/refunds.py; the write is counted there, outside
the gate). Each has a planted bug (VARIANT=bug) and its sound twin (VARIANT=sound), the
bug the one its framework's tool-error path makes natural: CrewAI and Strands tell the
model a timed-out tool failed, so it retries a refund already written; ADK re-raises a
tool's exception, so one failed call fails the run; Agno and LlamaIndex hand the model
whatever the tool returned, so planted instructions are obeyed. Each twin mends it with
that framework's own hook (before-tool hook, on_tool_error_callback, tool_hooks, callback).

These frameworks cannot be installed beside the test environment's pins, so each agent
runs on the interpreter of a cached virtualenv (tests/framework_envs.py); the gate runs
here. One run per variant, through the real CLI with the keyless `sim` model: the bug must
breach exactly its invariant and the twin pass the same scenario; the trace must show the
call on transport `function`, traced once, by this framework's seam, with the fault fired.

A seam must not change what the model sees: each agent runs twice on a proxy, instrumented
and not, and the first model request (the tool's name, description and JSON schema) must
be the same bytes. Telemetry is switched off in the agents' env (CrewAI, Agno phone home).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import AGENTS, REFUND_INPUT, ledger_lines, one_run, refund_config
from framework_envs import python_for

HERE = AGENTS / "inprocess_c"
INPUT = REFUND_INPUT
TIMEOUT_AFTER_WRITE = {"kind": "timeout_after_write", "tool": "issue_refund", "on_calls": [1], "seconds": 0.2}
ERROR = {"kind": "error", "tool": "issue_refund", "on_calls": [1]}
INJECT = {"kind": "inject", "tool": "issue_refund"}
# the frameworks' own phone-home, off (the gate's sim keeps LLM libraries offline; these are not LLM calls)
OFFLINE = {"CREWAI_DISABLE_TELEMETRY": "true", "AGNO_TELEMETRY": "false"}
KEYS = {"OPENAI_API_KEY": "sk-sim", "GEMINI_API_KEY": "sk-sim"}


@dataclass(frozen=True)
class Case:
    agent: str
    env: str  # the framework_envs group's framework name
    llm: str  # the provider the agent's default model speaks (= the llm entry's name)
    fault: dict
    breach: str  # the invariant the bug breaches
    seam: str  # what the seam reports (the report's reach.in_process)
    framework: str  # the trace entry's extra["framework"]
    refunds: tuple[int, int]  # ledger lines after the bug run, after the sound run


CASES = {
    "crewai": Case("crewai_refund.py", "crewai", "openai", TIMEOUT_AFTER_WRITE, "refund-once", "crewai.Tool.run",
                   "crewai", (2, 1)),
    "google-adk": Case("google_adk_refund.py", "google-adk", "gemini", ERROR, "completes",
                       "google-adk.FunctionTool.run_async", "google-adk", (0, 1)),
    "llama-index": Case("llama_index_refund.py", "llama-index", "openai", INJECT, "no-injected-reply",
                        "llama-index.FunctionTool.call", "llama-index", (1, 1)),
    "strands": Case("strands_refund.py", "strands", "openai", TIMEOUT_AFTER_WRITE, "refund-once",
                    "strands.DecoratedFunctionTool.stream", "strands", (2, 1)),
    "agno": Case("agno_refund.py", "agno", "openai", INJECT, "no-injected-reply", "agno.FunctionCall.execute", "agno",
                 (1, 1)),
}
SIM = {"injection": "obey", "rules": [{
    "when": r"refund.*?(\d{3,})", "on_error": {"action": "retry", "retries": 1},
    "steps": [{"call": "issue_refund", "arguments": {"order_id": "{{1}}"}},
              {"answer": "Your refund for order {{1}} has been issued."}]}]}


def agent_env(ledger: Path, variant: str) -> dict[str, str]:
    return {"LEDGER": str(ledger), "VARIANT": variant, **KEYS, **OFFLINE}


refunds = ledger_lines


def config(tmp: Path, case: Case, variant: str, ledger: Path) -> Path:
    invoke = {"command": [python_for(case.env), str(HERE / case.agent)], "env": agent_env(ledger, variant)}
    return refund_config(tmp, invoke, case.fault, SIM, llm=case.llm, timeout=90,
                         checks=("completes", "refund-once", "no-injected-reply"))


@pytest.mark.parametrize("variant", ["bug", "sound"])
@pytest.mark.parametrize("name", list(CASES))
def test_in_process_fault_catches_the_bug_and_passes_the_twin(name, variant, tmp_path):
    case = CASES[name]
    ledger = tmp_path / "ledger.txt"
    code, report, run, failed, logs = one_run(config(tmp_path, case, variant, ledger), tmp_path / "out")
    expected = (1, {case.breach}) if variant == "bug" else (0, set())
    assert (code, failed) == expected, (run["reason"], run["checks"], run.get("output"), logs)
    assert refunds(ledger) == case.refunds[variant == "sound"], (run["output"], run["trace"])
    # the first refund call is the one faulted, in-process, on the framework's own path
    calls = [e for e in run["trace"] if e["kind"] == "tool"]
    first = calls[0]
    assert (first["target"], first["tool"], first["method"], first["transport"]) == \
           ("functions", "issue_refund", "CALL", "function")
    assert (first["fault"], first["fault_status"]) == (case.fault["kind"], "fired")
    assert case.seam in report["verdict"]["reach"]["in_process"]
    assert not report["verdict"]["reach"]["failed"]


# -- the model sees the same tools with and without instrumentation ------------------------------
def run_on_proxy(case: Case, tmp: Path, instrument: bool):
    """One run of the case's agent (bug variant) against a proxy with the sim: (process, trace, ledger lines)."""
    from gate.instrument.environment import instrumented, plain
    from proxy_harness import sim_proxy

    ledger = tmp / f"ledger-{instrument}.txt"
    with sim_proxy(sim=SIM) as p:
        p.begin()
        env = {**os.environ, **p.env, **agent_env(ledger, "bug")}
        env = instrumented(env) if instrument else plain(env)
        done = subprocess.run([python_for(case.env), str(HERE / case.agent)], input=INPUT, env=env,
                              capture_output=True, text=True, timeout=180)
        trace = p.end()
    return done, trace, refunds(ledger)


@pytest.mark.parametrize("name", list(CASES))
def test_tool_schema_the_model_sees_is_unchanged(name, tmp_path):
    case = CASES[name]
    runs = {}
    for instrument in (False, True):
        done, trace, written = run_on_proxy(case, tmp_path, instrument)
        assert (done.returncode, done.stdout.strip().splitlines()[-1:], written) == \
               (0, ["Your refund for order 1234 has been issued."], 1), done.stderr[-3000:]
        runs[instrument] = ([e.body for e in trace if e.kind == "llm"][0], [e for e in trace if e.kind == "tool"])
    (plain_body, plain_calls), (body, calls) = runs[False], runs[True]
    # the seam was live (the one call traced once, in-process, by this framework's seam; ADK's
    # google-genai underneath traced nothing), and the first request is the same bytes
    assert plain_calls == []
    assert [(c.target, c.tool, c.extra["framework"]) for c in calls] == [("functions", "issue_refund", case.framework)]
    assert json.loads(calls[0].body)["arguments"] == {"order_id": "1234"}
    assert b"issue_refund" in body and body == plain_body
