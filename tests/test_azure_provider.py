"""Providers and handoffs as users have them (issue 40, item 5).

Azure OpenAI: real `openai.AzureOpenAI` / `AsyncAzureOpenAI` clients, built from the env vars the gate
sets for `provider: azure`, talk over loopback HTTP to the proxy in front of the sim (chat, streamed and
not, a tool round trip, Responses), and to a stand-in for a real Azure resource (path, api-version and
`api-key` forwarded, the key never kept). Then an agent on `AsyncAzureOpenAI` under `chaos-gate run`,
where a fault aimed at the *deployment* fires: it cannot, unless the deployment in the path is read as
the model (the body names another).

Handoffs: an OpenAI Agents SDK app of two agents whose triage agent hands off under the sim; the
report names the handoff as one, never as a tool called and not reached.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading

import pytest

from conftest import AGENTS, one_run, write_config
from httpkit import JsonHandler, serve
from proxy_harness import OA_TOOLS, FakeCell

openai = pytest.importorskip("openai")

DEPLOYMENT = "prod-4o"
SIM = {"rules": [{"when": r"refund.*?(\d{3,})", "tool": "refund_order", "arguments": {"order_id": "{{1}}"},
                  "answer": "Refund for order {{1}} is done: {{tool_result}}"}],
       "default": "I can help with refunds.", "chunk_chars": 5}


def _config(upstream: str = "sim", sim: dict | None = None):
    from gate.config.models import Config

    return Config.model_validate({
        "agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}"}}},
        "inputs": [{"id": "a", "text": "x"}],
        "llm": [{"name": "azure", "provider": "azure", "upstream": upstream}], "sim": sim or SIM})


@pytest.fixture
def azure_sim(monkeypatch):
    """A proxy with an Azure sim upstream; its env (endpoint, api-version, key) set as the agent gets it."""
    from gate.testing.proxy import ChaosProxy

    proxy = ChaosProxy(_config())
    for name, value in proxy.env().items():
        monkeypatch.setenv(name, value)
    run = proxy.begin(FakeCell("chaos/a/azure", 1))
    yield run
    run.end()
    proxy.close()


def test_provider_azure_sets_the_names_its_clients_read():
    from gate.config.chaos import LlmUpstream

    sim = LlmUpstream(name="azure", provider="azure", upstream="sim")
    assert sim.env_vars == ("AZURE_OPENAI_ENDPOINT", "AZURE_API_BASE")  # openai/langchain/pydantic-ai; LiteLLM
    assert sim.wire == "openai"
    assert sim.sim_env["OPENAI_API_VERSION"]  # AzureOpenAI() raises without one
    real = LlmUpstream(name="azure", provider="azure", upstream="https://res.openai.azure.com")
    assert real.sim_env == {}  # a real resource takes the user's own api-version, never the gate's
    assert LlmUpstream(name="a", provider="anthropic").env_vars == (
        "ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE", "ANTHROPIC_API_URL")
    assert LlmUpstream(name="g", provider="gemini").env_vars == ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_BASE")
    assert LlmUpstream(name="x", provider="azure", env="AZURE_ENDPOINT").env_vars == ("AZURE_ENDPOINT",)


def test_async_azure_chat_tool_round_trip_and_stream(azure_sim):
    async def talk():
        client = openai.AsyncAzureOpenAI(max_retries=0, timeout=10)  # everything from the environment
        messages = [{"role": "user", "content": "Please refund order 1234"}]
        first = await client.chat.completions.create(model=DEPLOYMENT, messages=messages, tools=OA_TOOLS)
        (call,) = first.choices[0].message.tool_calls
        assert call.function.name == "refund_order" and json.loads(call.function.arguments) == {"order_id": "1234"}
        messages += [first.choices[0].message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": call.id, "content": '{"refund_id": "rf_9"}'}]
        final = await client.chat.completions.create(model=DEPLOYMENT, messages=messages, tools=OA_TOOLS)
        stream = await client.chat.completions.create(model=DEPLOYMENT, stream=True,
                                                      messages=[{"role": "user", "content": "hello"}])
        pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        return final, pieces

    final, pieces = asyncio.run(talk())
    assert "rf_9" in final.choices[0].message.content and final.model == DEPLOYMENT
    assert "".join(pieces) == SIM["default"] and len(pieces) > 2
    steps = azure_sim.state.trace
    assert [s.path.split("?")[0] for s in steps] == [f"/openai/deployments/{DEPLOYMENT}/chat/completions"] * 3
    assert all("api-version=" in s.path and s.model == DEPLOYMENT and s.status == 200 for s in steps)


def test_azure_responses_and_the_deployment_is_the_model(azure_sim):
    client = openai.AzureOpenAI(max_retries=0, timeout=10)
    answer = client.responses.create(model=DEPLOYMENT, input="hello")
    assert answer.output_text == SIM["default"]
    streamed = client.responses.create(model=DEPLOYMENT, input="hello", stream=True)
    assert any(e.type == "response.completed" for e in streamed)
    # a client bound to a deployment: the body's model is not what Azure runs, the path's deployment is
    bound = openai.AzureOpenAI(azure_deployment="eu-4o-mini", max_retries=0, timeout=10)
    reply = bound.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}])
    assert reply.model == "eu-4o-mini"
    paths = [(s.path.split("?")[0], s.model) for s in azure_sim.state.trace]
    assert paths == [("/openai/responses", DEPLOYMENT)] * 2 + [("/openai/deployments/eu-4o-mini/chat/completions",
                                                                 "eu-4o-mini")]


def test_azure_v1_routes_through_the_plain_client(azure_sim):
    """Azure's newer v1 API is reached with the plain OpenAI client on `<endpoint>/openai/v1/`: the same
    provider entry serves it, the body's model (the deployment) named in the trace."""
    import os

    client = openai.OpenAI(base_url=os.environ["AZURE_OPENAI_ENDPOINT"] + "/openai/v1/", api_key="k", max_retries=0)
    chat = client.chat.completions.create(model=DEPLOYMENT, messages=[{"role": "user", "content": "hello"}])
    answer = client.responses.create(model=DEPLOYMENT, input="hello")
    assert chat.choices[0].message.content == answer.output_text == SIM["default"]
    assert [(s.path, s.model) for s in azure_sim.state.trace] == [("/openai/v1/chat/completions", DEPLOYMENT),
                                                                  ("/openai/v1/responses", DEPLOYMENT)]


def test_real_resource_gets_path_version_and_api_key_never_kept():
    """A stand-in for an Azure resource: the proxy forwards the path, the api-version and the `api-key`
    header as they are; the Redactor learns the key from the header, as it does a Bearer token."""
    from gate.config.secrets import Redactor
    from gate.runner.proxy_hook import ProxyHook

    seen = []

    class Azure(JsonHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            seen.append((self.path, self.headers.get("api-key"), self.headers.get("authorization")))
            self.reply(200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o",
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": "ok from azure"}}]})

    server, url = serve(Azure)
    redactor = Redactor()
    hook = ProxyHook(_config(upstream=url), redact=redactor.redact)
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    asyncio.run_coroutine_threadsafe(hook.start(), loop).result(10)
    try:
        env = hook.env()
        assert "OPENAI_API_VERSION" not in env  # a real resource: the user's version, not the sim's
        key = "azure-key-0123456789abcdef"
        client = openai.AzureOpenAI(azure_endpoint=env["AZURE_OPENAI_ENDPOINT"], api_key=key,
                                    api_version="2024-10-21", max_retries=0, timeout=10)
        reply = client.chat.completions.create(model="prod", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "ok from azure"
        assert seen == [("/openai/deployments/prod/chat/completions?api-version=2024-10-21", key, None)]
        assert key not in redactor.redact(f"the agent sent {key}")
    finally:
        asyncio.run_coroutine_threadsafe(hook.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        server.shutdown()
        server.server_close()


def test_async_azure_agent_under_chaos_gate_run(tmp_path):
    """The deployment is the model: a fault aimed at it fires on the agent's first call (the body says
    gpt-4o), the trace records it, and the SDK's own retry carries the agent through to the tool's answer."""
    doc = {
        "version": 1, "seed": 3,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(AGENTS / "azure" / "azure_chat_agent.py")],
                                         "input": "stdin",
                                         "env": {"AZURE_OPENAI_API_KEY": "sim-key",
                                                 "AZURE_OPENAI_DEPLOYMENT": DEPLOYMENT}}},
                  "timeout": 60},
        "llm": [{"name": "azure", "provider": "azure", "upstream": "sim"}],
        "sim": {"rules": [{"when": r"order (\d+)", "tool": "lookup_order", "arguments": {"order_id": "{{1}}"},
                           "answer": "Order {{1}}: {{tool_result}}"}]},
        "inputs": [{"id": "order", "text": "Where is order 4411?"}],
        "mutation": {"enabled": False}, "shrink": {"enabled": False},
        "contract": {"baseline": False,
                     "invariants": [{"id": "completes", "type": "completes", "severity": "critical"},
                                    {"id": "status", "type": "contains", "value": "shipped", "severity": "high"}],
                     "scenarios": [{"name": "deployment_down", "faults": [
                         {"kind": "server_error", "target": "azure", "model": DEPLOYMENT, "status": 503,
                          "on_calls": [1]}]}]},
        "gate": {"min_score": 50}, "concurrency": 1,
    }
    code, report, run, failed, logs = one_run(write_config(tmp_path, json.dumps(doc)), tmp_path / "out")
    assert code == 0 and not failed, (failed, logs)
    llm = [s for s in run["trace"] if s["kind"] == "llm"]
    assert llm[0]["fault"] == "server_error" and llm[0]["fault_status"] == "fired" and llm[0]["status"] == 503
    assert {s["model"] for s in llm} == {DEPLOYMENT}
    assert all(s["path"].startswith(f"/openai/deployments/{DEPLOYMENT}/chat/completions?api-version=") for s in llm)
    assert len(llm) == 3  # the failed call, its retry (a tool call), the final answer
    assert "shipped" in run["output"]


def test_handoffs_read_off_chat_and_responses_requests():
    from gate.dialects.handoffs import read

    offered = [{"type": "function", "name": "transfer_to_billing", "description": "Handoff to the Billing agent "
                "to handle the request. ", "parameters": {}},
               {"type": "function", "name": "transfer_to_savings", "description": "Move money.", "parameters": {}}]
    responses = {"tools": offered, "input": [
        {"role": "user", "content": "refund"},
        {"type": "function_call", "call_id": "c1", "name": "transfer_to_billing", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": '{"assistant": "Billing"}'}]}
    body = json.dumps(responses).encode()
    found = read(body, responses)
    assert found.offered == ["transfer_to_billing"] and found.taken == {"transfer_to_billing": "Billing"}
    assert found.describe() == "transfer_to_billing → Billing"
    # a bank transfer tool named like a handoff, called and answered: no handoff
    chat = {"messages": [{"role": "user", "content": "move 5"},
                         {"role": "assistant", "tool_calls": [{"id": "t1", "type": "function", "function": {
                             "name": "transfer_to_savings", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": "t1", "content": '{"assistant": "ok", "amount": 5}'}]}
    assert read(json.dumps(chat).encode(), chat).taken == {}
    # a handoff whose description was overridden, known by the SDK's transfer message; once the model
    # spoke after it, it is history, no longer what brought this request
    chat["messages"][1]["tool_calls"][0]["function"]["name"] = "escalate"
    chat["messages"][2]["content"] = '{"assistant": "Human desk"}'
    chat["messages"].append({"role": "assistant", "content": "Escalated."})
    found = read(json.dumps(chat).encode(), chat)
    assert found.taken == {"escalate": "Human desk"} and found.describe() is None


@pytest.mark.parametrize("nest", ["0", "1"], ids=["history", "nested-history"])
def test_agents_sdk_handoff_is_reported_as_a_handoff(tmp_path, nest):
    """With the transfer call in the next agent's history the proxy reads it off the wire; with the history
    nested into one summary message only the agent's own process knows, and the seam reports it."""
    pytest.importorskip("agents.handoffs")
    doc = {
        "version": 1, "seed": 3,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(AGENTS / "azure" / "agents_handoff.py")],
                                         "input": "stdin",
                                         "env": {"OPENAI_API_KEY": "sk-sim", "OPENAI_AGENTS_DISABLE_TRACING": "1",
                                                 "NEST": nest}}},
                  "timeout": 60},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "sim": {"rules": [{"when": r"refund.*?(\d{3,})", "steps": [
            {"call": "transfer_to_billing_agent", "arguments": {}},
            {"call": "refund_status", "arguments": {"order_id": "{{1}}"}},
            {"answer": "Refund {{1}}: {{tool_result}}"}]}]},
        "inputs": [{"id": "refund", "text": "What about my refund for order 1234?"}],
        "mutation": {"enabled": False}, "shrink": {"enabled": False},
        "contract": {"baseline": True, "invariants": [{"id": "completes", "type": "completes", "severity": "critical"}],
                     "scenarios": []},
        "chaos": {"enabled": False}, "gate": {"min_score": 50}, "concurrency": 1,
    }
    code, report, run, failed, logs = one_run(write_config(tmp_path, json.dumps(doc)), tmp_path / "out")
    assert code == 0 and not failed, (failed, logs)
    assert run["output"].strip().endswith("[Billing agent]"), logs
    reach = report["verdict"]["reach"]
    assert reach["handoffs"] == ["transfer_to_billing_agent → Billing agent"]
    assert not any("not reached" in note for note in reach["notes"]), reach["notes"]
    marked = [s for s in run["trace"] if s.get("handoff")]
    assert [s["handoff"] for s in marked] == ["transfer_to_billing_agent → Billing agent"]
    assert marked[0]["kind"] == "llm" and marked[0]["seq"] == 2
    summary = (tmp_path / "out" / "summary.md").read_text().replace("\\", "")  # Markdown escapes
    assert "Handoffs: transfer_to_billing_agent → Billing agent (taken)" in summary


def test_init_recognises_an_azure_app(tmp_path, capsys):
    from gate.cli import main
    from gate.plan import load_config

    app = tmp_path / "app"
    (app / "src").mkdir(parents=True)
    (app / "src" / "chat.py").write_text("from openai import AsyncAzureOpenAI\nclient = AsyncAzureOpenAI()\n")
    assert main(["init", "--dir", str(app), "--script", "python3 src/chat.py"]) == 0
    config = load_config(app / "chaos-gate.yaml").config
    assert [(llm.provider, llm.env_vars[0]) for llm in config.llm] == [("azure", "AZURE_OPENAI_ENDPOINT")]
    assert "AZURE_OPENAI_API_KEY" in (app / "chaos-gate.yaml").read_text()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "agent.py").write_text("from openai import OpenAI\n")
    assert main(["init", "--dir", str(plain), "--script", "python3 agent.py"]) == 0
    assert [llm.provider for llm in load_config(plain / "chaos-gate.yaml").config.llm] == ["openai"]
