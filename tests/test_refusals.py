"""The refusals only a conversation meets, in each provider's own words, judged by the real SDKs
(gate/dialects/refusals.py): the sim refuses a history whose tool call went unanswered, as OpenAI,
Anthropic and Gemini do, and the `context_length` fault answers as each provider answers a prompt over
its window — so an agent's error handling that reads the provider's code or message meets what it would
meet in production."""

from __future__ import annotations

import anthropic
import openai
import pytest
from google.genai import errors as genai_errors
from google.genai import types

from gate.dialects.model import Conversation, Message, ToolCall, ToolResult
from gate.dialects.refusals import unanswered_calls
from proxy_harness import sim_proxy

CALL = {"id": "call_1", "type": "function", "function": {"name": "refund_order", "arguments": '{"order_id": "1"}'}}
ANSWERED = [{"role": "user", "content": "refund order 1"}, {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "refunded"}, {"role": "user", "content": "thanks"}]
DANGLING = [m for m in ANSWERED if m.get("role") != "tool"]  # the tool's answer lost: the call left open
AN_DANGLING = [{"role": "user", "content": "refund order 1"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "refund_order",
                                                  "input": {"order_id": "1"}}]},
               {"role": "user", "content": "thanks"}]


@pytest.fixture(scope="module")
def proxy():
    with sim_proxy() as harness:
        yield harness


def asked(proxy, fault, ask):
    proxy.begin(*([fault] if fault else []))
    try:
        return ask()
    finally:
        proxy.trace = proxy.end()


def test_the_openai_sdk_reads_a_dangling_history_refused_and_an_answered_one_served(proxy):
    client = proxy.openai(timeout=2.0)
    chat = lambda messages: client.chat.completions.create(model="gpt-4o-mini", messages=messages)  # noqa: E731
    assert asked(proxy, None, lambda: chat(ANSWERED)).choices[0].message is not None
    with pytest.raises(openai.BadRequestError) as raised:
        asked(proxy, None, lambda: chat(DANGLING))
    assert "must be followed by tool messages" in str(raised.value) and "call_1" in str(raised.value)
    assert "unanswered tool calls" in proxy.trace[0].note


def test_the_anthropic_sdk_reads_a_dangling_tool_use_refused(proxy):
    client = proxy.anthropic(timeout=2.0)
    with pytest.raises(anthropic.BadRequestError) as raised:
        asked(proxy, None, lambda: client.messages.create(model="claude-test", max_tokens=64, messages=AN_DANGLING))
    assert "`tool_use` ids were found without `tool_result` blocks" in str(raised.value)


@pytest.mark.parametrize("dialect", ["chat", "responses", "messages", "gemini"])
def test_context_length_is_each_providers_own_error(proxy, dialect):
    fault = {"kind": "context_length", "target": "llm"}
    if dialect in ("chat", "responses"):
        client = proxy.openai(timeout=2.0)
        ask = (lambda: client.chat.completions.create(model="gpt-4o-mini", messages=ANSWERED)) if dialect == "chat" \
            else (lambda: client.responses.create(model="gpt-4o-mini", input="hello"))
        with pytest.raises(openai.BadRequestError) as raised:
            asked(proxy, fault, ask)
        assert raised.value.code == "context_length_exceeded"  # what a trimming agent tests for
    elif dialect == "messages":
        client = proxy.anthropic(timeout=2.0)
        with pytest.raises(anthropic.BadRequestError) as raised:
            asked(proxy, fault, lambda: client.messages.create(model="claude-test", max_tokens=64,
                                                               messages=[{"role": "user", "content": "hi"}]))
        assert "prompt is too long" in str(raised.value)
    else:
        client = proxy.gemini(timeout_ms=2000)
        with pytest.raises(genai_errors.ClientError) as raised:
            asked(proxy, fault, lambda: client.models.generate_content(
                model="gemini-test", contents="hi", config=types.GenerateContentConfig()))
        assert raised.value.code == 400 and "exceeds the maximum number of tokens" in str(raised.value)
    assert proxy.trace[0].fault_status == "fired" and not proxy.trace[0].forwarded


def test_what_counts_as_an_unanswered_call():
    """By id; by name where the wire leaves ids out (Gemini); a history that ends on the call is left alone."""
    call = Message("assistant", tool_calls=[ToolCall("c1", "lookup", "{}"), ToolCall("c2", "lookup", "{}")])
    user = Message("user", "next")
    both = Message("tool", tool_results=[ToolResult("c1", "a"), ToolResult("c2", "b")])
    one = Message("tool", tool_results=[ToolResult("c1", "a")])
    by_name = Message("tool", tool_results=[ToolResult("", "a", name="lookup"), ToolResult("", "b", name="lookup")])
    assert unanswered_calls(Conversation([user, call, both, user])) == []
    assert unanswered_calls(Conversation([user, call, one, user])) == ["c2"]
    assert unanswered_calls(Conversation([user, call, user])) == ["c1", "c2"]
    assert unanswered_calls(Conversation([user, call, by_name, user])) == []
    assert unanswered_calls(Conversation([user, call])) == []
