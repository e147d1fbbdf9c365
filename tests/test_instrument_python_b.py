"""In-process seams, part B: LangChain/LangGraph tools, google-genai automatic function calling
and the Anthropic tool runner (gate/instrument/python/chaos_gate_agent/seams/).

Each framework gets a small agent at its defaults (tests/agents/inprocess_b/) with a
local function tool `issue_refund(order_id)` that writes a line to a ledger file, so
the gate can reach it only in-process. Three layers of test:

- the real gate (`gate.cli.main(["run", ...])`, keyless `sim` LLM) catches a planted
  bug through an in-process fault and passes its sound twin; one bug per framework,
  each the one its tool-error path makes natural (LangGraph: ToolNode's default
  re-raises, so a tool error crashes the run; the Anthropic runner: a timeout after
  the write reaches the model as an error it retries, a double refund; google-genai:
  the function's return value goes to the model verbatim, so an injection is obeyed);
- the tool declaration the framework sends its model is byte-identical with and
  without instrumentation, and the failure the model is shown is the framework's own;
- the shapes a seam must cover beyond the agents' (LangChain subclasses, async,
  content_and_artifact, injected arguments; the SDKs' async paths).

The last two run against a bare worker proxy (tests/proxy_harness.py), which is cheaper.
"""

import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from conftest import AGENTS, load_report, write_config
from gate.cli import main
from gate.instrument import environment
from proxy_harness import sim_proxy

HERE = AGENTS / "inprocess_b"
PROMPT = "Please refund order 1234, it arrived damaged."
SIM = {"injection": "obey", "rules": [{
    "when": r"refund.*?(\d{3,})", "on_error": {"action": "retry", "retries": 1},
    "steps": [{"call": "issue_refund", "arguments": {"order_id": "{{1}}"}},
              {"answer": "Your refund for order {{1}} has been issued."}]}]}
ERROR = {"kind": "error", "tool": "issue_refund", "on_calls": [1]}
KEYS = {"OPENAI_API_KEY": "sk-sim", "ANTHROPIC_API_KEY": "sk-sim", "GEMINI_API_KEY": "sk-sim"}


@dataclass
class Framework:
    needs: tuple  # modules to importorskip
    agent: str
    llm: str  # provider name (= the llm upstream's name)
    seam: str  # what the seam reports to the gate (the report's reach.in_process)
    framework: str  # the trace entry's extra["framework"]
    scenario: str
    fault: str  # the scenario's fault, as YAML
    catches: str  # the invariant the bug fails
    ledger: dict  # refunds written per behaviour


FRAMEWORKS = {
    "langgraph": Framework(("langgraph.prebuilt", "langchain_openai"), "langgraph_agent.py", "openai",
                           "langchain_core.BaseTool._run", "langchain", "tool_error",
                           "{kind: error, tool: issue_refund, on_calls: [1]}", "completes", {"bug": 0, "sound": 1}),
    "anthropic": Framework(("anthropic",), "anthropic_agent.py", "anthropic", "anthropic.BetaFunctionTool.call",
                           "anthropic", "double_write",
                           "{kind: timeout_after_write, tool: issue_refund, on_calls: [1], seconds: 0.3}",
                           "refund-once", {"bug": 2, "sound": 1}),
    "google_genai": Framework(("google.genai",), "google_genai_agent.py", "gemini",
                              "google.genai.invoke_function_from_dict_args", "google-genai", "injection",
                              "{kind: inject, tool: issue_refund}", "no-injected-reply", {"bug": 1, "sound": 1}),
}


def needs(fw: Framework) -> None:
    for module in fw.needs:
        pytest.importorskip(module)


def ledger_lines(path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


# -- the real gate: a planted bug caught, its sound twin passed -------------------------------
def gate_config(tmp_path, fw: Framework, behaviour: str):
    return write_config(tmp_path, f"""
        version: 1
        seed: 5
        agent:
          start:
            command: [{json.dumps(sys.executable)}, {json.dumps(str(HERE / fw.agent))}]
            env: {{{", ".join(f"{k}: {v}" for k, v in KEYS.items())}, BEHAVIOUR: {behaviour},
                   LEDGER: {json.dumps(str(tmp_path / "ledger.jsonl"))}}}
            ready: {{url: "{{{{url}}}}/health", timeout: 60}}
          invoke:
            http: {{url: "{{{{url}}}}/chat", body: {{message: "{{{{input}}}}"}}, output: $.reply}}
          timeout: 30
        llm:
          - {{name: {fw.llm}, provider: {fw.llm}, upstream: sim}}
        sim: {json.dumps(SIM)}
        inputs:
          - {{id: refund, text: {json.dumps(PROMPT)}}}
        mutation: {{enabled: false}}
        shrink: {{enabled: false}}  # a shrink re-runs the cell, which would write the ledger again
        contract:
          invariants:
            - {{id: completes, type: completes, severity: critical}}
            - {{id: no-injected-reply, type: excludes, values: [INJECTION-OBEYED], severity: critical}}
            - {{id: refund-once, type: side_effect_once, tool: issue_refund, severity: critical}}
          scenarios:
            - name: {fw.scenario}
              faults: [{fw.fault}]
        gate: {{min_score: 80}}
        concurrency: 1
    """)


def run_caught_in_process(config, fw, behaviour: str, out) -> tuple[dict, dict]:
    """The real CLI on the framework's scenario alone: (the report, its one run), asserting that the bug
    breaches the invariant meant for it (its twin nothing) and that the fault acted on the local function,
    in-process, through this framework's seam."""
    code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report",
                 "--only", f"contract/*/{fw.scenario}"])
    report = load_report(out)
    (cell,) = report["verdict"]["cells"]
    run = cell["runs"][0]
    logs = [p.read_text()[-1500:] for p in (out / "logs").iterdir()] if (out / "logs").exists() else []
    failed = sorted(c["invariant"] for c in run["checks"] if not c["passed"])
    assert failed == ([fw.catches] if behaviour == "bug" else []), (run["checks"], run["output"], logs)
    assert (code != 0) == (behaviour == "bug")
    faulted = [s for s in run["trace"] if s["fault"]]
    assert [(s["target"], s["transport"], s["tool"], s["fault_status"]) for s in faulted] == [
        ("functions", "function", "issue_refund", "fired")], (run["trace"], logs)
    assert fw.seam in report["verdict"]["reach"]["in_process"]
    return report, run


@pytest.mark.parametrize("behaviour", ["bug", "sound"])
@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_the_gate_catches_the_planted_bug_in_process_and_passes_its_sound_twin(name, behaviour, tmp_path):
    fw = FRAMEWORKS[name]
    needs(fw)
    report, run = run_caught_in_process(gate_config(tmp_path, fw, behaviour), fw, behaviour, tmp_path / "out")
    # what really happened, seen from the agent's side: the ledger, and the reply
    assert ledger_lines(tmp_path / "ledger.jsonl") == fw.ledger[behaviour]
    if name == "langgraph":
        assert (run["status"] == 500) == (behaviour == "bug")  # the default ToolNode re-raised out of the graph
    if name == "google_genai":
        assert ("INJECTION-OBEYED" in (run["output"] or "")) == (behaviour == "bug")


# -- against a bare worker proxy: declarations, the failure as the model sees it ----------------
@pytest.fixture(scope="module")
def proxy():
    with sim_proxy(sim=SIM) as p:
        yield p


def run_agent(proxy, tmp_path, script: str, *args: str, faults=(), instrument=True, behaviour="bug"):
    """One run of an agent script in the environment the gate gives it (or plain): (stdout doc, trace)."""
    proxy.begin(*faults)
    base = {**os.environ, **proxy.env, **KEYS, "BEHAVIOUR": behaviour, "LEDGER": str(tmp_path / "ledger.jsonl")}
    env = environment.instrumented(base) if instrument else environment.plain(base)
    done = subprocess.run([sys.executable, str(HERE / script), *args], env=env, capture_output=True, text=True,
                          timeout=120)
    trace = proxy.end()
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[0]), trace


def llm_bodies(trace) -> list:
    return [json.loads(e.body) for e in trace if e.kind == "llm"]


def functions(trace) -> list:
    return [e for e in trace if e.transport == "function"]


@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_the_declaration_the_model_is_sent_is_byte_identical_with_and_without_instrumentation(name, proxy, tmp_path):
    fw = FRAMEWORKS[name]
    needs(fw)
    _, plain = run_agent(proxy, tmp_path, fw.agent, "--once", PROMPT, instrument=False)
    _, instrumented = run_agent(proxy, tmp_path, fw.agent, "--once", PROMPT)
    assert functions(plain) == [] and [e.tool for e in functions(instrumented)] == ["issue_refund"]
    first_plain = next(e.body for e in plain if e.kind == "llm")
    first_instrumented = next(e.body for e in instrumented if e.kind == "llm")
    assert b"issue_refund" in first_plain and first_instrumented == first_plain


def test_langgraph_default_tool_node_crashes_and_handle_tool_errors_shows_the_error(proxy, tmp_path):
    """ToolNode's default handler returns only argument errors to the model; anything the tool
    raises leaves graph.invoke with its own type. handle_tool_errors=True sends LangGraph's template."""
    needs(FRAMEWORKS["langgraph"])
    crashed, trace = run_agent(proxy, tmp_path, "langgraph_agent.py", "--once", PROMPT, faults=[ERROR])
    assert crashed == {"error": "InjectedToolError('500: tool failed (injected by chaos-gate)')"}
    assert len(llm_bodies(trace)) == 1 and functions(trace)[0].extra["framework"] == "langchain"
    told, trace = run_agent(proxy, tmp_path, "langgraph_agent.py", "--once", PROMPT, faults=[ERROR],
                            behaviour="sound")
    tool_message = llm_bodies(trace)[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == \
        "Error: InjectedToolError('500: tool failed (injected by chaos-gate)')\n Please fix your mistakes."
    assert told == {"reply": "Your refund for order 1234 has been issued."}  # the sim retried; call 2 ran


def test_google_genai_sends_a_raised_function_as_an_error_response_naming_its_arguments(proxy, tmp_path):
    """The SDK never raises to the caller: any exception becomes {"error": str(FunctionInvocationError)}."""
    needs(FRAMEWORKS["google_genai"])
    got, trace = run_agent(proxy, tmp_path, "google_genai_agent.py", "--once", PROMPT, faults=[ERROR])
    part = llm_bodies(trace)[1]["contents"][-1]["parts"][0]
    assert part["functionResponse"]["name"] == "issue_refund"
    assert part["functionResponse"]["response"] == {"error": (
        "Failed to invoke function issue_refund with converted arguments {'order_id': '1234'} from model returned "
        "function call argument {'order_id': '1234'} because of error 500: tool failed (injected by chaos-gate)")}
    assert got == {"reply": "Your refund for order 1234 has been issued."}
    assert [e.fault for e in functions(trace)] == ["error", None]
    assert functions(trace)[0].extra["framework"] == "google-genai"


def test_the_anthropic_runner_sends_a_raised_tool_as_an_is_error_result_with_its_repr(proxy, tmp_path):
    needs(FRAMEWORKS["anthropic"])
    got, trace = run_agent(proxy, tmp_path, "anthropic_agent.py", "--once", PROMPT, faults=[ERROR])
    (result,) = llm_bodies(trace)[1]["messages"][-1]["content"]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert result["content"] == "InjectedToolError('500: tool failed (injected by chaos-gate)')"
    assert got == {"reply": "Your refund for order 1234 has been issued."}
    assert functions(trace)[0].extra["framework"] == "anthropic"


# -- the shapes a seam must cover ----------------------------------------------------------------
def test_langchain_schemas_of_every_tool_shape_are_unchanged(tmp_path):
    pytest.importorskip("langchain_core")
    script = str(HERE / "langchain_shapes.py")
    plain = subprocess.run([sys.executable, script, "schemas"], env=environment.plain(dict(os.environ)),
                           capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    # the bootstrap patches at import whether or not a proxy answers (hello is fire-and-forget)
    env = environment.instrumented({**os.environ, environment.FN_URL: "http://127.0.0.1:9/fn"})
    seen = subprocess.run([sys.executable, script, "schemas"], env=env, capture_output=True, text=True, timeout=60,
                          check=True).stdout.splitlines()
    assert json.loads(plain[1]) == {"patched": False} and json.loads(seen[1]) == {"patched": True}
    assert seen[0] == plain[0]
    schemas = json.loads(plain[0])
    # built from the very _run the seam wraps (LangChain itself also lists its `config` parameter there)
    properties = schemas["refund_tool"]["openai"]["function"]["parameters"]["properties"]
    assert properties["order_id"] == {"type": "string"} and properties["amount"] == {"default": 0, "type": "integer"}
    assert schemas["lookup_order"]["injected"] == ["token"]


def test_langchain_seam_covers_sync_async_subclasses_artifacts_and_injected_arguments(proxy, tmp_path):
    pytest.importorskip("langchain_core")
    got, trace = run_agent(proxy, tmp_path, "langchain_shapes.py", "calls",
                           faults=[{"kind": "inject", "tool": "order_report"},
                                   {"kind": "error", "tool": "cancel_order"}])
    calls = [(e.tool, json.loads(e.body)["arguments"], e.fault, e.forwarded) for e in functions(trace)]
    assert calls == [
        ("lookup_order", {"order_id": "1"}, None, True),  # the injected `token` never keys a call
        ("lookup_order", {"order_id": "2"}, None, True),  # ainvoke of a sync tool: one call, not two
        ("cancel_order", {"order_id": "3"}, "error", False),
        ("order_report", {"order_id": "4"}, "inject", True),
        ("refund_tool", {"amount": 7, "order_id": "5"}, None, True),  # run_manager and config left out
        ("echo", {"args": ["hi"]}, None, True)]
    assert got["cancel"] == {"raised": "InjectedToolError", "message": "500: tool failed (injected by chaos-gate)"}
    assert "INJECTION-OBEYED" in got["report"]["content"] and got["report"]["artifact"] == {"raw": [1, 2, 3]}
    assert got["refund"] == "refunded 5 by 7" and got["echo"] == "echo hi"


@pytest.mark.parametrize("mode, needed", [("genai-async", "google.genai"), ("genai-thread", "google.genai"),
                                          ("anthropic-async", "anthropic")])
def test_the_async_paths_are_instrumented(mode, needed, proxy, tmp_path):
    pytest.importorskip(needed)
    got, trace = run_agent(proxy, tmp_path, "async_shapes.py", mode,
                           faults=[{"kind": "inject", "tool": "issue_refund"}])
    (call,) = functions(trace)
    assert (call.tool, call.fault, call.fault_status, call.forwarded) == ("issue_refund", "inject", "fired", True)
    assert json.loads(call.body)["arguments"] == {"order_id": "1234"}
    assert "INJECTION-OBEYED" in got["reply"]  # the rewritten value is what the model read
    assert ledger_lines(tmp_path / "ledger.jsonl") == 1
