"""Sim fidelity, wire detail by wire detail, judged by the real SDKs over the real proxy.

Each test drives `sim_proxy()` with the SDK that sends or parses the detail: a rule's
`output` through pydantic-ai's and LangChain's output tools, Chat Completions' legacy
`functions` / `function_call`, parallel calls to one tool retried with their own
arguments, `bad_tool_args` on an Anthropic JSON answer (an object off its schema, as
the API can send, which the SDK's tool runner rejects), `on_error: auto` (re-issue a call
that did not parse, apologise for a failed tool), the frameworks' real words for a
failed tool, and a trace note for a rule that names a tool the request did not offer.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from gate.dialects.model import ToolCall, ToolResult
from gate.dialects import tool_errors
from proxy_harness import AN_TOOLS, OA_TOOLS, REFUND_SCHEMA, SIM, sim_proxy

BANK = {"when": "balance", "answer": "Your balance is $123.45.",
        "output": {"support_advice": "Your balance is $123.45.", "block_card": False, "risk": 1}}
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
FLAG = {"when": "card stolen", "answer": "No.", "output": False}
TWO_CITIES = {"when": "weather", "steps": [
    {"call": [{"tool": "get_weather", "arguments": {"city": "London"}},
              {"tool": "get_weather", "arguments": {"city": "Wiltshire"}}]},
    {"answer": "Weather: {{results}}"}]}
RETRYING = dict(TWO_CITIES, when="forecast", on_error={"action": "retry"})
THREE_STEPS = {"when": "trip", "steps": [TWO_CITIES["steps"][0], {"call": "get_weather", "arguments": {"city": "Bath"}},
                                         {"answer": "Trip: {{results}}"}]}


class SupportOutput(BaseModel):
    support_advice: str
    block_card: bool
    risk: int


@pytest.fixture(scope="module")
def proxy():
    with sim_proxy(sim={**SIM, "rules": [BANK, FLAG, TWO_CITIES, RETRYING, THREE_STEPS, *SIM["rules"]]}) as harness:
        yield harness


def run(proxy, fn, *faults):
    proxy.begin(*faults)
    try:
        return fn()
    finally:
        proxy.trace = proxy.end()


# -- 1. a rule's `output` through a framework's output tool --------------------------------------
@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("output_type, question, expected", [
    (SupportOutput, "What is my balance?",
     SupportOutput(support_advice="Your balance is $123.45.", block_card=False, risk=1)),
    (bool, "Should I worry that my card stolen?", False),  # a non-object output: pydantic-ai wraps {"response": ...}
])
def test_pydantic_ai_output_tool_carries_the_rules_output(proxy, api, output_type, question, expected):
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=proxy.env["OPENAI_BASE_URL"], api_key="sk-test")
    model = (OpenAIChatModel if api == "chat" else OpenAIResponsesModel)("gpt-4o", provider=provider)
    agent = Agent(model, output_type=output_type, instructions="You are a bank's support agent.")

    @agent.tool_plain
    def customer_balance(include_pending: bool) -> str:
        return "123.45"

    result = run(proxy, lambda: asyncio.run(agent.run(question)))
    assert result.output == expected  # not the simplest schema value (block_card came out `true`)
    [request] = [e for e in proxy.trace if e.kind == "llm"]
    sent = json.loads(request.body)
    assert sent["tool_choice"] == "required" and "final_result" in json.dumps(sent["tools"])


def test_langchain_structured_output_through_a_forced_tool(proxy):
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="gpt-4o", base_url=proxy.env["OPENAI_BASE_URL"], api_key="sk-test", max_retries=0)
    structured = model.with_structured_output(SupportOutput, method="function_calling")
    got = run(proxy, lambda: structured.invoke("What is my balance?"))
    assert got == SupportOutput(**BANK["output"])


# -- 2. Chat Completions' legacy functions / function_call ------------------------------------------
FUNCTIONS = [{"name": "refund_order", "description": "Refund an order.", "parameters": REFUND_SCHEMA}]
ASK = [{"role": "user", "content": "please refund order 1234"}]


def test_legacy_function_call_json_then_a_function_result(proxy):
    client = proxy.openai()
    first = run(proxy, lambda: client.chat.completions.create(model="gpt-4o-mini", messages=ASK, functions=FUNCTIONS,
                                                              function_call="auto"))
    choice = first.choices[0]
    assert choice.finish_reason == "function_call" and choice.message.tool_calls is None
    assert choice.message.function_call.name == "refund_order"
    assert json.loads(choice.message.function_call.arguments) == {"order_id": "1234", "reason": "broken"}
    history = ASK + [choice.message.model_dump(exclude_none=True),
                     {"role": "function", "name": "refund_order", "content": '{"status": "refunded"}'}]
    final = run(proxy, lambda: client.chat.completions.create(model="gpt-4o-mini", messages=history,
                                                              functions=FUNCTIONS))
    assert final.choices[0].finish_reason == "stop"
    assert final.choices[0].message.content == 'Refund for order 1234 is done: {"status": "refunded"}'


def test_legacy_function_call_streams_as_delta_function_call(proxy):
    client = proxy.openai()

    def stream():
        name, args, finish = "", "", None
        for chunk in client.chat.completions.create(model="gpt-4o-mini", messages=ASK, functions=FUNCTIONS,
                                                    function_call={"name": "refund_order"}, stream=True):
            delta = chunk.choices[0].delta
            assert not delta.tool_calls
            if delta.function_call:
                name += delta.function_call.name or ""
                args += delta.function_call.arguments or ""
            finish = chunk.choices[0].finish_reason or finish
        return name, args, finish
    name, args, finish = run(proxy, stream)
    assert (name, json.loads(args), finish) == ("refund_order", {"order_id": "1234", "reason": "broken"},
                                                "function_call")
    # the fault engine finds the legacy arguments too
    name, args, finish = run(proxy, stream, {"kind": "bad_tool_args"})
    assert proxy.trace[0].fault_status == "fired" and args.startswith("}")


def test_a_function_error_is_not_followed_by_a_scripted_success(proxy):
    client = proxy.openai()
    first = run(proxy, lambda: client.chat.completions.create(model="gpt-4o-mini", messages=ASK,
                                                              functions=FUNCTIONS))
    history = ASK + [first.choices[0].message.model_dump(exclude_none=True),
                     {"role": "function", "name": "refund_order", "content": "Error: 503 upstream unavailable"}]
    final = run(proxy, lambda: client.chat.completions.create(model="gpt-4o-mini", messages=history,
                                                              functions=FUNCTIONS))
    assert "could not complete" in final.choices[0].message.content


# -- 3. retried parallel calls to one tool keep their own arguments ---------------------------------
WEATHER_ASK = [{"role": "user", "content": "weather in London and Wiltshire?"}]


def _cities(message) -> list[str]:
    return [json.loads(c.function.arguments)["city"] for c in message.tool_calls]


def _answered(message, results: dict[str, str]) -> list[dict]:
    return [message.model_dump(exclude_none=True)] + [
        {"role": "tool", "tool_call_id": c.id, "content": results[json.loads(c.function.arguments)["city"]]}
        for c in message.tool_calls]


@pytest.mark.parametrize("stream", [False, True])
def test_both_damaged_calls_are_reissued_each_with_its_own_arguments(proxy, stream):
    """`duplicate_tool_fragment` damages each call's fragments; the SDK assembles damaged arguments."""
    client = proxy.openai()
    kw = dict(model="gpt-4o-mini", messages=WEATHER_ASK, tools=WEATHER_TOOLS)
    if stream:  # the SDK's own stream accumulator assembles the damaged fragments
        proxy.begin({"kind": "duplicate_tool_fragment"})
        with client.chat.completions.stream(**kw) as s:
            damaged = s.get_final_completion().choices[0].message
        proxy.end()
    else:
        damaged = run(proxy, lambda: client.chat.completions.create(**kw), {"kind": "bad_tool_args"}).choices[0].message
    calls = [c.function.arguments for c in damaged.tool_calls]
    assert len(calls) == 2 and all(not _parses(a) for a in calls)
    history = WEATHER_ASK + [damaged.model_dump(exclude_none=True)] + [
        {"role": "tool", "tool_call_id": c.id, "content": f"Invalid JSON: {c.function.arguments}"}
        for c in damaged.tool_calls]
    retried = client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=WEATHER_TOOLS)
    assert _cities(retried.choices[0].message) == ["London", "Wiltshire"]  # not London twice


def test_only_the_failed_call_is_retried_with_its_own_arguments(proxy):
    client = proxy.openai()
    for ask, then in (("forecast for London and Wiltshire?", "retry"), (WEATHER_ASK[0]["content"], "auto")):
        messages = [{"role": "user", "content": ask}]
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=WEATHER_TOOLS)
        assert _cities(first.choices[0].message) == ["London", "Wiltshire"]
        history = messages + _answered(first.choices[0].message,
                                       {"London": '{"temp": 14}', "Wiltshire": "Error: timed out"})
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=WEATHER_TOOLS)
        if then == "retry":  # London succeeded: not asked again; Wiltshire again, as Wiltshire
            assert _cities(reply.choices[0].message) == ["Wiltshire"]
        else:  # the default: a tool that failed (not its arguments) is apologised for
            assert reply.choices[0].message.tool_calls is None
            assert "could not complete" in reply.choices[0].message.content


def test_parallel_results_in_several_tool_messages_advance_one_step(proxy):
    """Chat Completions sends one `role: tool` message per call: together they answer one turn."""
    client = proxy.openai()
    messages = [{"role": "user", "content": "plan a trip: London, Wiltshire, then Bath"}]
    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=WEATHER_TOOLS)
    history = messages + _answered(first.choices[0].message, {"London": "14C", "Wiltshire": "12C"})
    second = client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=WEATHER_TOOLS)
    assert _cities(second.choices[0].message) == ["Bath"]  # step 2, not the answer


def _parses(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


# -- 4. the frameworks' real words for a failed tool --------------------------------------------------
CALL = ToolCall("c1", "refund_order", '{"order_id":"1234"}')
# (text, is it the call's own fault) as each framework really sent it back (measured: see tool_errors.py)
WORDINGS = [
    ("Expected ',' or '}' after property value in JSON at position 17", True),  # npm openai, fn.parse (V8)
    ("Unexpected token '}', \"}{\"order_i\"... is not valid JSON", True),  # npm openai, fn.parse (V8)
    ("Unterminated string in JSON at position 4", True),
    ("Unexpected end of JSON input", True),
    ("An error occurred while running the tool. Please try again.", False),  # OpenAI Agents SDK
    ('{"error":[{"type":"json_invalid","loc":[],"msg":"Invalid JSON: EOF while parsing"}]}', True),  # pydantic-ai
    ("ValueError('Invalid arguments for function refund_order')", True),  # Anthropic tool runner
    ("TypeError('Input must be a dictionary, got str')", True),  # Anthropic tool runner
    ("HTTPStatusError(\"Server error '500 Internal Server Error'\")", False),  # Anthropic tool runner
    ("Error: ValueError('boom')\n Please fix your mistakes.", False),  # LangGraph ToolNode
    ("Failed to invoke function refund_order with converted arguments {} because of error x", False),  # genai
    ("Expecting value: line 1 column 1 (char 0)", True),  # Python's json
]


@pytest.mark.parametrize("text, bad_call", WORDINGS)
def test_framework_wordings_for_a_failed_tool(text, bad_call):
    result = ToolResult("c1", text)
    assert tool_errors.is_error(result, CALL)
    assert tool_errors.bad_call(result, CALL) == bad_call


def test_a_generic_failure_of_a_call_that_did_not_parse_is_the_calls_fault():
    generic = ToolResult("c1", "An error occurred while running the tool. Please try again.")  # Agents SDK
    for sent_back in ('{"order_id": "12', '{"INVALID_JSON": "{\\"order_id\\": 12"}'):
        assert tool_errors.bad_call(generic, ToolCall("c1", "refund_order", sent_back))
    assert not tool_errors.bad_call(generic, CALL)
    # unparsable arguments alone are no failure: a lenient agent may really have run the tool
    done = ToolResult("c1", '{"refund_id": "rf_1", "status": "refunded"}')
    assert not tool_errors.is_error(done, ToolCall("c1", "refund_order", '{"order_id": "12'))


# -- 5. bad_tool_args on an Anthropic JSON answer --------------------------------------------------
def test_anthropic_bad_tool_args_is_an_object_off_the_tools_schema(proxy):
    client = proxy.anthropic()
    reply = run(proxy, lambda: client.messages.create(model="claude-test", max_tokens=64, tools=AN_TOOLS,
                                                      messages=ASK), {"kind": "bad_tool_args"})
    [use] = [b for b in reply.content if b.type == "tool_use"]
    assert isinstance(use.input, dict) and use.input["order_id"] == 1234  # an object, never a string
    assert proxy.trace[0].note == "tool input made invalid for its schema: 'order_id' is not a string"


def test_the_tool_runner_rejects_it_and_the_model_reissues_the_call(proxy):
    from anthropic import beta_tool

    refunded = []

    @beta_tool
    def refund_order(order_id: str, reason: str = "") -> str:
        """Refund an order.

        Args:
            order_id: the order to refund
            reason: why
        """
        refunded.append(order_id)
        return '{"status": "refunded"}'

    client = proxy.anthropic()
    final = run(proxy, lambda: client.beta.messages.tool_runner(
        model="claude-test", max_tokens=256, tools=[refund_order], messages=ASK).until_done(),
        {"kind": "bad_tool_args", "on_calls": [1]})
    assert refunded == ["1234"]  # the damaged call never ran; the re-issued one did
    assert final.content[0].text == 'Refund for order 1234 is done: {"status": "refunded"}'


# -- 8. a rule naming a tool the request did not offer ---------------------------------------------
def test_a_rule_tool_the_request_did_not_offer_is_a_trace_note(proxy):
    client = proxy.openai()
    reply = run(proxy, lambda: client.chat.completions.create(model="gpt-4o-mini", messages=ASK,
                                                              tools=WEATHER_TOOLS))
    assert reply.choices[0].message.content == SIM["default"]
    assert proxy.trace[0].note == ("sim: the rule calls refund_order, which the request did not offer "
                                   "(offered: get_weather); answered `default`")
    run(proxy, lambda: client.chat.completions.create(model="gpt-4o-mini", messages=ASK, tools=OA_TOOLS))
    assert proxy.trace[0].note == ""
