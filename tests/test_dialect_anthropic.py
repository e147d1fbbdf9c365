"""The Anthropic Messages dialect against the real `anthropic` SDK, through a real proxy and the sim.

The SDK is the judge of the wire format: its tool runner with its defaults (a
server-side thread: `thread: create`, then `continue` with only the tool results),
streams, structured outputs, token counting and the models list must all parse and
reach the answer the sim's script says — never its default text.
"""

import asyncio
import json
from unittest import mock

import anthropic
import pydantic
import pytest
from anthropic import beta_async_tool, beta_tool

import proxy_harness
from proxy_harness import AN_TOOLS, ProxyHarness, ToolServer

MODEL = "claude-test"
SIM = {
    "rules": [
        {"when": r"trip to (\w+)", "steps": [
            {"call": "lookup_city", "arguments": {"city": "{{1}}"}},
            {"call": "get_forecast", "arguments": {"city": "{{1}}"}},
            {"answer": "Trip to {{1}}: {{results}}"}]},
        {"when": r"compare (\w+) and (\w+)", "steps": [
            {"call": [{"tool": "get_forecast", "arguments": {"city": "{{1}}"}},
                      {"tool": "get_forecast", "arguments": {"city": "{{2}}"}}]},
            {"answer": "Both: {{results}}"}]},
        {"when": r"refund.*?(\d{3,})", "tool": "refund_order", "arguments": {"order_id": "{{1}}"},
         "answer": "Refund for order {{1}} is done"},
        {"when": "profile of (\\w+)", "answer": "unused", "output": {"name": "{{1}}", "age": 42, "tags": ["x"]}},
        {"when": "hello", "answer": "Hello! How can I help you today?"},
    ],
    "default": "SIM DEFAULT TEXT",
    "chunk_chars": 5,
}


@pytest.fixture(scope="module")
def proxy():
    tool = ToolServer()
    with mock.patch.object(proxy_harness, "SIM", SIM):
        harness = ProxyHarness(tool.url)
    yield harness
    harness.close()
    tool.close()


@pytest.fixture
def run(proxy):
    """A fault-free cell around the test (read its requests with `trace_so_far`)."""
    proxy.begin()
    yield proxy
    proxy.end()


def trace_so_far(proxy):
    """End the cell to read its trace, and begin a fresh one for the fixture to end."""
    trace = proxy.end()
    proxy.begin()
    return trace


def sim_of(proxy):
    return proxy.hook.app.routes[("llm", "anthropic")].upstream


def bodies(trace) -> list[dict]:
    return [json.loads(e.body) for e in trace if e.kind == "llm" and e.body]


# -- the tools the runner runs -------------------------------------------------------------
@beta_tool
def lookup_city(city: str) -> str:
    """Find a city.

    Args:
        city: the city's name
    """
    if city == "Atlantis":
        raise ValueError("no such city")
    return f"{city} found"


@beta_tool
def get_forecast(city: str) -> str:
    """The forecast for a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


@beta_async_tool(name="lookup_city")
async def lookup_city_async(city: str) -> str:
    """Find a city.

    Args:
        city: the city's name
    """
    return f"{city} found"


@beta_async_tool(name="get_forecast")
async def get_forecast_async(city: str) -> str:
    """The forecast for a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


def runner(client, text, tools=(lookup_city, get_forecast), **kw):
    return client.beta.messages.tool_runner(model=MODEL, max_tokens=256, tools=list(tools),
                                            messages=[{"role": "user", "content": text}], **kw)


def final_text(message) -> str:
    return "".join(b.text for b in message.content if b.type == "text")


# -- the tool runner with its defaults: a server-side thread ----------------------------------
def test_tool_runner_defaults_run_the_script_over_a_thread(run, monkeypatch):
    sim, headers, paths = sim_of(run), [], set()
    send = sim.send

    async def recording(info, request_headers, body):
        headers.append({k.lower(): v for k, v in request_headers})
        paths.add(info.path)
        return await send(info, request_headers, body)
    monkeypatch.setattr(sim, "send", recording)
    final = runner(run.anthropic(), "plan a trip to Paris", system="You plan trips.").until_done()
    assert final_text(final) == "Trip to Paris: Paris found\nsunny in Paris"
    sent = bodies(trace_so_far(run))
    assert [b["thread"]["type"] for b in sent] == ["create", "continue", "continue"]
    assert paths == {"/v1/messages"}  # no thread endpoint, no query
    assert all("message-threads-2026-08-12" in h["anthropic-beta"] for h in headers)
    # a continue sends only the tool results; system and tools stay with the thread
    assert "tools" in sent[0] and "system" in sent[0]
    for body in sent[1:]:
        assert "tools" not in body and "system" not in body
        assert [m["role"] for m in body["messages"]] == ["user"]
        assert body["messages"][0]["content"][0]["type"] == "tool_result"
    assert sent[2]["thread"]["previous_message_id"] != sent[1]["thread"]["previous_message_id"]


def test_tool_runner_yields_each_turn(run):
    turns = list(runner(run.anthropic(), "plan a trip to Rome"))
    assert [t.stop_reason for t in turns] == ["tool_use", "tool_use", "end_turn"]
    assert [b.name for b in turns[0].content if b.type == "tool_use"] == ["lookup_city"]
    assert [b.name for b in turns[1].content if b.type == "tool_use"] == ["get_forecast"]
    continued = [b["thread"].get("previous_message_id") for b in bodies(trace_so_far(run))]
    assert continued == [None, turns[0].id, turns[1].id]  # each turn goes on from the reply before
    assert final_text(turns[-1]) == "Trip to Rome: Rome found\nsunny in Rome"


@pytest.mark.parametrize("eager", [False, True])
def test_streaming_tool_runner(run, eager):
    texts = []
    for stream in runner(run.anthropic(), "plan a trip to Oslo", stream=True, run_tools_eagerly=eager):
        message = stream.get_final_message()
        texts.append(final_text(message))
    assert texts[-1] == "Trip to Oslo: Oslo found\nsunny in Oslo"
    assert len(texts) == 3


@pytest.mark.parametrize("stream", [False, True])
def test_async_tool_runner(run, stream):
    async def go():
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test", base_url=run.env["ANTHROPIC_BASE_URL"],
                                          max_retries=0, timeout=5.0)
        found = client.beta.messages.tool_runner(model=MODEL, max_tokens=256, stream=stream,
                                                 tools=[lookup_city_async, get_forecast_async],
                                                 messages=[{"role": "user", "content": "plan a trip to Lima"}])
        if not stream:
            return await found.until_done()
        async for turn in found:
            last = await turn.get_final_message()
        return last
    assert final_text(asyncio.run(go())) == "Trip to Lima: Lima found\nsunny in Lima"


def test_a_failing_tool_gets_the_scripted_apology(run):
    final = runner(run.anthropic(), "plan a trip to Atlantis").until_done()
    assert final_text(final) == "Sorry, I could not complete that: the lookup_city tool failed."
    sent = bodies(trace_so_far(run))
    assert sent[1]["messages"][0]["content"][0]["is_error"] is True
    assert len(sent) == 2  # no scripted success after the error


@pytest.mark.parametrize("stream", [False, True])
def test_parallel_tool_calls_in_one_turn(run, stream):
    found = runner(run.anthropic(), "compare Oslo and Rome", stream=stream)
    turns = [t.get_final_message() for t in found] if stream else list(found)
    assert [b.input["city"] for b in turns[0].content if b.type == "tool_use"] == ["Oslo", "Rome"]
    assert final_text(turns[-1]) == "Both: sunny in Oslo\nsunny in Rome"


def test_runner_without_a_thread_resends_history(run):
    final = runner(run.anthropic(), "plan a trip to Bern", thread=False).until_done()
    assert final_text(final) == "Trip to Bern: Bern found\nsunny in Bern"
    sent = bodies(trace_so_far(run))
    assert all("thread" not in b for b in sent)
    assert [len(b["messages"]) for b in sent] == [1, 3, 5]


def test_unknown_thread_is_thread_not_found_and_the_sdk_replays(run):
    client = run.anthropic()
    with pytest.raises(anthropic.NotFoundError) as exc:
        client.beta.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}],
                                    thread={"type": "continue", "previous_message_id": "msg_gone"})
    assert exc.value.body["error"]["details"]["error_code"] == "thread_not_found"
    assert exc.value.body["error"]["type"] == "not_found_error"


def test_a_lost_thread_is_replayed_under_a_new_one(run):
    thread = run.anthropic().beta.messages.thread(model=MODEL, max_tokens=64, system="Be brief.")
    thread.send({"role": "user", "content": "hello"})
    sim_of(run).threads.clear()  # the server lost it (a restart, another worker)
    again = thread.send({"role": "user", "content": "hello again"})
    assert final_text(again) == "Hello! How can I help you today?"
    trace = trace_so_far(run)
    sent = [(b["thread"]["type"], len(b["messages"])) for b in bodies(trace)]
    assert sent == [("create", 1), ("continue", 1), ("create", 3)]  # the SDK replays the whole history
    assert [e.status for e in trace] == [200, 404, 200]


@pytest.mark.parametrize("kind", ["rate_limit", "server_error", "reset"])
def test_a_fault_on_a_continue_is_retried_on_the_same_thread(proxy, kind):
    proxy.begin({"kind": kind, "on_calls": [2]})
    try:
        final = runner(proxy.anthropic(max_retries=1), "plan a trip to Oslo").until_done()
    finally:
        trace = proxy.end()
    assert final_text(final) == "Trip to Oslo: Oslo found\nsunny in Oslo"
    threads = [b["thread"] for b in bodies(trace)]
    assert threads[1]["type"] == "continue" and threads[1] == threads[2]  # the SDK re-sent the same turn
    assert trace[1].fault == kind and len(trace) == 4


def test_thread_send_continues_by_hand(run):
    thread = run.anthropic().beta.messages.thread(model=MODEL, max_tokens=64, system="Be brief.")
    first = thread.send({"role": "user", "content": "hello"})
    assert final_text(first) == "Hello! How can I help you today?"
    assert thread.previous_message_id == first.id
    second = thread.send({"role": "user", "content": "refund order 5555"})
    assert final_text(second) == "SIM DEFAULT TEXT"  # no tools on the thread: the sim calls none


# -- plain requests ----------------------------------------------------------------------------
def test_stream_get_final_message_with_tool_use(run):
    client = run.anthropic()
    with client.messages.stream(model=MODEL, max_tokens=64, tools=AN_TOOLS,
                                messages=[{"role": "user", "content": "refund order 1234"}]) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    assert message.content[0].input == {"order_id": "1234"}
    with client.messages.stream(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "hello"}]) as s:
        assert "".join(s.text_stream) == "Hello! How can I help you today?"
        assert s.get_final_message().usage.output_tokens > 0


@pytest.mark.parametrize("choice, expect", [
    ({"type": "none"}, "text"),
    ({"type": "any"}, "refund_order"),
    ({"type": "tool", "name": "refund_order"}, "refund_order"),
])
def test_tool_choice_is_honoured(run, choice, expect):
    message = run.anthropic().messages.create(model=MODEL, max_tokens=64, tools=AN_TOOLS, tool_choice=choice,
                                              messages=[{"role": "user", "content": "hello"}])
    kinds = [b.name if b.type == "tool_use" else b.type for b in message.content]
    assert kinds == [expect]


def test_disable_parallel_tool_use_makes_one_call(run):
    tools = [lookup_city.to_dict(), get_forecast.to_dict()]
    message = run.anthropic().messages.create(
        model=MODEL, max_tokens=64, tools=tools, tool_choice={"type": "auto", "disable_parallel_tool_use": True},
        messages=[{"role": "user", "content": "compare Oslo and Rome"}])
    assert [b.input for b in message.content if b.type == "tool_use"] == [{"city": "Oslo"}]


class Profile(pydantic.BaseModel):
    name: str
    age: int
    tags: list[str]


class Weather(pydantic.BaseModel):
    city: str
    celsius: float
    kind: str = pydantic.Field(json_schema_extra={"enum": ["sun", "rain"]})


def test_structured_outputs_parse(run):
    client = run.anthropic()
    parsed = client.messages.parse(model=MODEL, max_tokens=64, output_format=Profile,
                                   messages=[{"role": "user", "content": "profile of Ada"}])
    assert parsed.parsed_output == Profile(name="Ada", age=42, tags=["x"])
    generated = client.beta.messages.parse(model=MODEL, max_tokens=64, output_format=Weather,
                                           messages=[{"role": "user", "content": "weather please"}])
    assert isinstance(generated.parsed_output, Weather)
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
              "additionalProperties": False}
    raw = client.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "x"}],
                                 output_config={"format": {"type": "json_schema", "schema": schema}})
    answer = json.loads(raw.content[0].text)
    assert list(answer) == ["ok"] and isinstance(answer["ok"], bool)


def test_structured_output_in_a_tool_runner(run):
    final = runner(run.anthropic(), "plan a trip to Kyiv", output_format=Weather).until_done()
    assert isinstance(final.parsed_output, Weather)


def test_count_tokens_and_models(run):
    client = run.anthropic()
    count = client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hello " * 40}],
                                         tools=AN_TOOLS)
    assert count.input_tokens > 40
    assert client.beta.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hi"}]).input_tokens
    models = client.models.list()
    assert [m.id for m in models.data] == ["sim-1"] and models.data[0].type == "model"
    assert [m.id for m in client.beta.models.list()] == ["sim-1"]


def test_unknown_path_is_a_404_in_anthropic_shape(run):
    client = run.anthropic()
    with pytest.raises(anthropic.NotFoundError) as exc:
        client.messages.batches.list()
    assert exc.value.body["type"] == "error" and exc.value.body["error"]["type"] == "not_found_error"
    assert exc.value.status_code == 404
