"""Every LLM fault kind × every wire dialect × JSON and stream, judged by the real SDKs.

For each combination the proxy's trace must say `fired` or `not_applicable` (with a
reason), and a fault that says `fired` must change what the SDK hands the agent: an
exception where there was none, or a different parsed answer (text, tool arguments,
finish reason) than the same request gets without the fault. The stream helpers that
frameworks use (`responses.stream(...).get_final_response()`, `messages.stream(...)`)
are the judges for streams, so a fault that damages only the deltas and not the final
view would be caught here.
"""

from __future__ import annotations

import pytest

from gate.faults import FAULTS
from gate.faults.base import LLM
from proxy_harness import AN_TOOLS, GEMINI_TOOLS, OA_TOOLS, sim_proxy

LLM_KINDS = sorted(k for k, cls in FAULTS.items() if LLM in cls.applies_to)
DIALECTS = ["chat", "responses", "messages", "gemini"]
PARAMS = {"timeout": {"seconds": 0.5}, "stall": {"seconds": 0.5, "after_events": 1}, "latency": {"ms": 30},
          "truncate_stream": {"after_events": 1}}
REFUND = "refund order 1234"
HELLO = "hello there"
TEXT_KINDS = {"drift", "cut_content"}  # they damage text: asked with a prompt the sim answers in words
RESPONSES_TOOLS = [{"type": "function", "name": "refund_order", "description": "Refund an order.",
                    "parameters": OA_TOOLS[0]["function"]["parameters"]}]
# Combinations where nothing in the answer is there for the fault to damage.
NOT_APPLICABLE = {
    ("stall", "json"), ("truncate_stream", "json"), ("malformed_sse", "json"), ("stream_error", "json"),
    ("duplicate_tool_fragment", "json"), ("reorder_tool_fragments", "json"),
    # Gemini streams each function call whole, in one chunk: one call has nothing to swap it with
    ("reorder_tool_fragments", "gemini", "stream"),
}


@pytest.fixture(scope="module")
def proxy():
    with sim_proxy() as harness:
        yield harness


def _observe(proxy, dialect: str, stream: bool, prompt: str):
    """What the agent's SDK makes of the answer: a comparable value, or the exception's type."""
    try:
        return _ask(proxy, dialect, stream, prompt)
    except Exception as exc:  # noqa: BLE001 - the exception *is* the observation
        return ("raised", type(exc).__name__)


def _ask(proxy, dialect: str, stream: bool, prompt: str):
    if dialect == "chat":
        client = proxy.openai(timeout=2.0)
        kw = dict(model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}], tools=OA_TOOLS)
        if not stream:
            choice = client.chat.completions.create(**kw).choices[0]
            calls = [(c.function.name, c.function.arguments) for c in choice.message.tool_calls or []]
            return choice.message.content, calls, choice.finish_reason
        text, args, finish = "", "", None
        for chunk in client.chat.completions.create(stream=True, **kw):
            for choice in chunk.choices:
                text += choice.delta.content or ""
                args += "".join(c.function.arguments or "" for c in choice.delta.tool_calls or [] if c.function)
                finish = choice.finish_reason or finish
        return text, args, finish
    if dialect == "responses":
        client = proxy.openai(timeout=2.0)
        kw = dict(model="gpt-4o-mini", input=prompt, tools=RESPONSES_TOOLS)
        if stream:
            with client.responses.stream(**kw) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**kw)
        calls = [(o.name, o.arguments) for o in response.output if o.type == "function_call"]
        return response.output_text, calls, response.status
    if dialect == "messages":
        client = proxy.anthropic(timeout=2.0)
        kw = dict(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": prompt}], tools=AN_TOOLS)
        if stream:
            with client.messages.stream(**kw) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kw)
        return [b.model_dump() for b in message.content], message.stop_reason
    client = proxy.gemini(timeout_ms=2000)
    from google.genai import types

    config = types.GenerateContentConfig(tools=GEMINI_TOOLS)
    if stream:
        parts = [(c.text, [(f.name, f.args) for f in c.function_calls or []],
                  c.candidates[0].finish_reason if c.candidates else None)
                 for c in client.models.generate_content_stream(model="gemini-test", contents=prompt, config=config)]
        return parts
    reply = client.models.generate_content(model="gemini-test", contents=prompt, config=config)
    return reply.text, [(f.name, f.args) for f in reply.function_calls or []], \
        reply.candidates[0].finish_reason if reply.candidates else None


def _run(proxy, dialect, stream, prompt, fault=None):
    proxy.begin(*([fault] if fault else []))
    try:
        return _observe(proxy, dialect, stream, prompt)
    finally:
        proxy.trace = proxy.end()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("kind", LLM_KINDS)
def test_fault_applies_or_says_why_not(proxy, kind, dialect, stream):
    mode = "stream" if stream else "json"
    prompt = HELLO if kind in TEXT_KINDS else REFUND
    clean = _run(proxy, dialect, stream, prompt)
    assert clean[0] != "raised", f"the un-faulted answer must parse: {clean}"
    faulted = _run(proxy, dialect, stream, prompt, {"kind": kind, "target": "llm", **PARAMS.get(kind, {})})
    faulted_steps = [e for e in proxy.trace if e.fault]
    assert faulted_steps, f"{kind} on {dialect}/{mode}: the fault was not consulted"
    step = faulted_steps[0]
    expected_na = (kind, mode) in NOT_APPLICABLE or (kind, dialect, mode) in NOT_APPLICABLE
    if expected_na:
        assert step.fault_status == "not_applicable" and step.note, (kind, dialect, mode, step.note)
        assert faulted == clean, "a fault that does not apply must leave the answer untouched"
        return
    assert step.fault_status == "fired", (kind, dialect, mode, step.fault_status, step.note)
    if kind != "latency":  # latency changes when, not what
        assert faulted != clean, f"{kind} on {dialect}/{mode} fired but the SDK saw the same answer: {clean}"


def test_every_llm_fault_kind_is_in_the_matrix():
    assert set(LLM_KINDS) == {k for k, cls in FAULTS.items() if LLM in cls.applies_to}
    assert {k for k, *_ in NOT_APPLICABLE} <= set(LLM_KINDS)
