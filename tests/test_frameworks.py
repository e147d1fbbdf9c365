"""The framework examples (examples/frameworks/*) pass their baseline under `sim`.

Each example is a small agent on a real framework at its default settings — the OpenAI
Agents SDK (Responses and chat), pydantic-ai (`openai:` and the chat model), LangGraph,
the Anthropic SDK's tool runner, google-genai, and Node's npm `openai` — so a pass
means the framework could not tell the keyless sim from its real provider. Also here:
the sim behaviours these frameworks needed (a retried call after damaged arguments,
the frameworks' own words for a failed tool). Each config starts the orders service
itself (`services:`), so a test is one CLI run.
"""

import json
from importlib import metadata

import pytest

from conftest import ROOT, load_report, npm_ci
from gate.cli import main
from gate.config.sim import SimConfig
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec
from gate.sim.script import Script

FRAMEWORKS = ROOT / "examples" / "frameworks"
EXAMPLES = sorted(p.name for p in FRAMEWORKS.iterdir() if (p / "chaos-gate.yaml").exists())
# the distribution each example needs (by its installed name: `agents` alone would also
# find tests/agents), so a missing install skips with its name
NEEDS = {"openai_agents": "openai-agents", "openai_agents_chat": "openai-agents", "pydantic_ai": "pydantic-ai-slim",
         "pydantic_ai_chat": "pydantic-ai-slim", "langgraph": "langgraph", "anthropic_tool_runner": "anthropic",
         "google_genai": "google-genai"}


def test_every_framework_has_an_example():
    assert set(EXAMPLES) == set(NEEDS) | {"node_openai"}


def node_ready() -> None:
    """`npm ci` for the Node example once (node_modules is not committed)."""
    npm_ci(FRAMEWORKS / "node_openai")


@pytest.mark.parametrize("name", EXAMPLES)
def test_sound_agent_passes_its_baseline_under_sim(name, tmp_path):
    if name == "node_openai":
        node_ready()
    else:
        try:
            metadata.version(NEEDS[name])
        except metadata.PackageNotFoundError:
            pytest.skip(f"{NEEDS[name]} not installed: pip install -e '.[test,frameworks]'")
    code = main(["run", "-c", str(FRAMEWORKS / name / "chaos-gate.yaml"), "-o", str(tmp_path), "--quiet", "--full-report",
                 "--only", "contract/*/baseline"])
    report = load_report(tmp_path)
    (cell,) = report["verdict"]["cells"]
    run = cell["runs"][0]
    assert code == 0, (run["reason"], run.get("detail"), (tmp_path / "logs").exists() and
                       [p.read_text()[-2000:] for p in (tmp_path / "logs").iterdir()])
    assert run["output"] == "Your refund for order 1234 has been issued."
    # the tool really ran through the proxy, between two model calls (inside the function tool
    # that made the call, when the gate reached that in-process: traced just before it)
    wire = [s["target"] for s in run["trace"] if s["target"] != "functions"]
    assert wire[-3:] in (
        ["openai", "orders", "openai"], ["anthropic", "orders", "anthropic"], ["gemini", "orders", "gemini"])


# -- the sim behaviours the frameworks needed ----------------------------------------------
REFUND = SimConfig.model_validate({"rules": [{
    "when": r"refund.*?(\d{3,})", "on_error": {"action": "retry", "retries": 1},
    "steps": [{"call": "refund_order", "arguments": {"order_id": "{{1}}"}}, {"answer": "Refunded {{1}}."}]}]})


def after_tool(arguments: str, result: str, is_error: bool = False) -> Conversation:
    call = ToolCall("call_1", "refund_order", arguments)
    return Conversation(tools=[ToolSpec("refund_order", parameters={"type": "object"})], messages=[
        Message("user", "refund order 1234"), Message("assistant", tool_calls=[call]),
        Message("tool", tool_results=[ToolResult("call_1", result, is_error=is_error)])])


@pytest.mark.parametrize("sent_back", [
    '{"order_id": 1234, "amount": ',             # the damaged arguments as they were
    '{"INVALID_JSON": "{\\"order_id\\": 12"}',  # pydantic-ai re-wraps them as valid JSON
])
def test_a_retry_after_damaged_arguments_regenerates_the_scripted_call(sent_back):
    turn = Script(REFUND, after_tool(sent_back, "Error: arguments are not valid JSON")).turn()
    assert [(c.name, json.loads(c.arguments)) for c in turn.tool_calls] == [("refund_order", {"order_id": "1234"})]


@pytest.mark.parametrize("result", [
    "An error occurred while running the tool. Please try again.",  # OpenAI Agents SDK default
    "Unexpected token '}', \"}{\"order_i\"... is not valid JSON",  # npm openai runTools, bad arguments
])
def test_framework_tool_error_texts_are_errors_not_success(result):
    turn = Script(REFUND, after_tool('{"order_id":"1234"}', result)).turn()
    assert turn.tool_calls and turn.text == ""  # retried, never "Refunded 1234."
