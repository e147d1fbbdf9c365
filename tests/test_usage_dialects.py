"""Token usage read by the proxy equals what the sim billed, in every dialect, JSON and stream.

Each request goes through the real SDK; what the SDK parsed from the sim's answer is the
reference, and the proxy's trace entry (read through the request's dialect) must agree.
A stream that carries no usage is estimated the way the sim counts, and marked so.
"""

import pytest

from proxy_harness import AN_TOOLS, OA_TOOLS, sim_proxy

MODEL_OA, MODEL_AN, MODEL_GE = "gpt-4o-mini", "claude-sonnet-4-6", "gemini-2.5-flash"
ASK = "Please refund order 1234, it arrived broken."


@pytest.fixture(scope="module")
def harness():
    with sim_proxy() as h:
        yield h


def metered(harness, call):
    """Run `call` inside one cell run; (what the SDK saw, the proxy's usage of the one LLM call)."""
    harness.begin()
    seen = call()
    trace = harness.end()
    assert len(trace) == 1, [e.describe() for e in trace]
    return seen, trace[0].usage, harness.state["usage"]


def chat_json(h):
    r = h.openai().chat.completions.create(model=MODEL_OA, messages=[{"role": "user", "content": ASK}], tools=OA_TOOLS)
    return r.usage.prompt_tokens, r.usage.completion_tokens


def chat_stream(h):
    usage = None
    for chunk in h.openai().chat.completions.create(model=MODEL_OA, messages=[{"role": "user", "content": ASK}],
                                                    tools=OA_TOOLS, stream=True,
                                                    stream_options={"include_usage": True}):
        usage = chunk.usage or usage
    return usage.prompt_tokens, usage.completion_tokens


def responses_json(h):
    r = h.openai().responses.create(model=MODEL_OA, input=ASK)
    return r.usage.input_tokens, r.usage.output_tokens


def responses_stream(h):
    done = [e.response for e in h.openai().responses.create(model=MODEL_OA, input=ASK, stream=True)
            if e.type == "response.completed"]
    return done[0].usage.input_tokens, done[0].usage.output_tokens


def messages_json(h):
    r = h.anthropic().messages.create(model=MODEL_AN, max_tokens=256, tools=AN_TOOLS,
                                      messages=[{"role": "user", "content": ASK}])
    return r.usage.input_tokens, r.usage.output_tokens


def messages_stream(h):
    with h.anthropic().messages.stream(model=MODEL_AN, max_tokens=256, tools=AN_TOOLS,
                                       messages=[{"role": "user", "content": ASK}]) as stream:
        final = stream.get_final_message()
    return final.usage.input_tokens, final.usage.output_tokens


def gemini_json(h):
    client = h.gemini()  # keep it: a dropped Client closes its HTTP client
    r = client.models.generate_content(model=MODEL_GE, contents=ASK)
    return r.usage_metadata.prompt_token_count, r.usage_metadata.candidates_token_count


def gemini_stream(h):
    client = h.gemini()
    last = list(client.models.generate_content_stream(model=MODEL_GE, contents=ASK))[-1]
    return last.usage_metadata.prompt_token_count, last.usage_metadata.candidates_token_count


CALLS = [chat_json, chat_stream, responses_json, responses_stream, messages_json, messages_stream, gemini_json,
         gemini_stream]


@pytest.mark.parametrize("call", CALLS, ids=[c.__name__ for c in CALLS])
def test_proxy_usage_equals_the_sims_in_every_dialect(harness, call):
    (sdk_in, sdk_out), usage, run = metered(harness, lambda: call(harness))
    assert sdk_in > 0 and sdk_out > 0
    assert (usage["input_tokens"], usage["output_tokens"], usage["estimated"]) == (sdk_in, sdk_out, False)
    assert (run["calls"], run["input_tokens"], run["output_tokens"], run["estimated"]) == (1, sdk_in, sdk_out, False)


def test_a_stream_without_usage_is_estimated_as_the_sim_counts(harness):
    (sdk_in, _), _, _ = metered(harness, lambda: chat_json(harness))

    def bare_stream():
        return "".join(c.choices[0].delta.content or "" for c in harness.openai().chat.completions.create(
            model=MODEL_OA, messages=[{"role": "user", "content": "hello there"}], stream=True) if c.choices)
    _, usage, run = metered(harness, bare_stream)
    assert usage["estimated"] and run["estimated"]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0


def test_an_error_answer_costs_nothing(harness):
    harness.begin({"kind": "rate_limit", "target": "llm", "retry_after": 0})
    import openai

    with pytest.raises(openai.RateLimitError):
        chat_json(harness)
    trace = harness.end()
    assert trace[0].usage is None and harness.state["usage"]["calls"] == 0  # never forwarded: never billed
