"""The OpenAI Responses dialect, judged by the real openai SDK: the sim answers `POST /responses`
through a real per-worker proxy (text, function calls, tool outputs, `previous_response_id`
continuations, structured output, tool_choice, streams event for event), and each edit a
fault uses is checked on a real encoded response and real events, validated by the SDK's models."""

import json

import httpx
import jsonschema
import openai
import pydantic
import pytest
from openai.types.responses import Response, ResponseStreamEvent

from gate.dialects import DIALECTS, sse
from gate.dialects.model import Message, ToolCall, Turn, Usage
from proxy_harness import ProxyHarness, ToolServer

SIM = {
    "rules": [
        {"when": r"weather in (\w+)", "steps": [{"call": "get_weather", "arguments": {"city": "{{1}}"}},
                                               {"answer": "It is {{tool_result}} in {{1}}."}]},
        {"when": r"trip to (\w+)", "steps": [{"call": "get_weather", "arguments": {"city": "{{1}}"}},
                                            {"call": "book_hotel", "arguments": {"city": "{{1}}", "nights": 2}},
                                            {"answer": "Booked after {{results}}"}]},
        {"when": "profile", "answer": "unused", "output": {"name": "Ada", "age": 36}},
        {"when": "hello", "answer": "Hello from the sim, how can I help?"},
    ],
    "default": "I can help with travel.",
    "chunk_chars": 5,
    "walk": False,  # the dialect's tests: an input no rule matches answers `default` (the walk: test_sim_walk.py)
}


def function(name: str, **props) -> dict:
    return {"type": "function", "name": name, "description": f"The {name} tool.", "strict": True,
            "parameters": {"type": "object", "properties": props, "required": list(props),
                           "additionalProperties": False}}


TOOLS = [function("get_weather", city={"type": "string"}),
         function("book_hotel", city={"type": "string"}, nights={"type": "integer"})]
PROFILE = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
           "required": ["name", "age"], "additionalProperties": False}
EVENTS = pydantic.TypeAdapter(ResponseStreamEvent)
DIALECT = DIALECTS["openai_responses"]


class Profile(pydantic.BaseModel):
    name: str
    age: int


@pytest.fixture(scope="module")
def proxy():
    tool = ToolServer()
    harness = ProxyHarness(tool.url, sim=SIM)
    yield harness
    harness.close()
    tool.close()


@pytest.fixture
def client(proxy):
    proxy.begin()
    yield proxy.openai()
    proxy.end()


def create(client, **kw):
    kw.setdefault("tools", TOOLS)
    return client.responses.create(model="gpt-4.1", **kw)


# -- through the SDK ---------------------------------------------------------------------
def test_text_answer(client):
    r = create(client, input="hello there", instructions="Be brief.")
    assert (r.object, r.status, r.id[:5]) == ("response", "completed", "resp_")
    assert r.output_text == "Hello from the sim, how can I help?"
    assert r.output[0].type == "message" and r.output[0].content[0].type == "output_text"
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens > 0
    assert r.instructions == "Be brief." and r.tools[0].name == "get_weather"


def test_function_call_then_outputs_with_the_full_history(client):
    first = create(client, input="What is the weather in Paris?", store=False)
    call = first.output[0]
    assert (call.type, call.name, call.status) == ("function_call", "get_weather", "completed")
    assert json.loads(call.arguments) == {"city": "Paris"}
    history = [{"role": "user", "content": "What is the weather in Paris?"}, call.model_dump(exclude_none=True),
               {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}]
    second = create(client, input=history, store=False)
    assert second.output_text == "It is sunny in Paris."
    with pytest.raises(openai.BadRequestError) as exc:  # store=False: nothing to continue from
        create(client, previous_response_id=second.id, input="and tomorrow?")
    assert exc.value.code == "previous_response_not_found"


def test_continuation_sends_only_new_input_and_the_script_goes_on(client):
    first = create(client, input="Plan a trip to Rome")
    assert first.output[0].name == "get_weather"
    out = [{"type": "function_call_output", "call_id": first.output[0].call_id, "output": "sunny"}]
    second = create(client, previous_response_id=first.id, input=out)
    assert second.previous_response_id == first.id
    assert second.output[0].name == "book_hotel"  # the rule's second step: sim knew the history
    assert json.loads(second.output[0].arguments) == {"city": "Rome", "nights": 2}
    out = [{"type": "function_call_output", "call_id": second.output[0].call_id, "output": "hotel #7"}]
    third = create(client, previous_response_id=second.id, input=out)
    assert third.output_text == "Booked after sunny\nhotel #7"


def test_unknown_previous_response_id(client):
    with pytest.raises(openai.BadRequestError) as exc:
        create(client, previous_response_id="resp_nope", input="hi")
    assert exc.value.code == "previous_response_not_found" and exc.value.param == "previous_response_id"


def test_parallel_calls_are_one_turn(client):
    tools = TOOLS + [function("get_time", city={"type": "string"})]
    call = create(client, input="Weather in Oslo", tools=tools).output[0]
    history = [{"role": "user", "content": "Weather in Oslo"}, call.model_dump(exclude_none=True),
               {"type": "function_call_output", "call_id": call.call_id, "output": "cold"}]
    assert create(client, input=history, tools=tools).output_text == "It is cold in Oslo."


def event_types(events) -> list[str]:
    return [e.type for e in events]


def test_stream_text_events_exactly(client):
    events = list(create(client, input="hello", stream=True))
    text = "Hello from the sim, how can I help?"
    deltas = -(-len(text) // 5)
    assert event_types(events) == (["response.created", "response.in_progress", "response.output_item.added",
                                    "response.content_part.added"] + ["response.output_text.delta"] * deltas
                                   + ["response.output_text.done", "response.content_part.done",
                                      "response.output_item.done", "response.completed"])
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == text
    final = events[-1].response
    assert final.output_text == text and final.usage.output_tokens > 0 and final.status == "completed"
    assert events[0].response.status == "in_progress" and events[0].response.output == []


def test_stream_function_call_events(client):
    events = list(create(client, input="weather in Lima", stream=True))
    types = event_types(events)
    assert types[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert types[-3:] == ["response.function_call_arguments.done", "response.output_item.done", "response.completed"]
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert len(deltas) > 1 and json.loads("".join(deltas)) == {"city": "Lima"}
    assert events[2].item.type == "function_call" and events[2].item.arguments == ""
    assert events[-1].response.output[0].arguments == "".join(deltas)


def test_stream_helper_final_response(client):
    with client.responses.stream(model="gpt-4.1", input="weather in Kyiv", tools=TOOLS) as stream:
        snapshots = [e.snapshot for e in stream if e.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    assert json.loads(snapshots[-1]) == {"city": "Kyiv"} == json.loads(final.output[0].arguments)
    with client.responses.stream(model="gpt-4.1", input="hello", tools=TOOLS) as stream:
        assert stream.get_final_response().output_text == "Hello from the sim, how can I help?"


def test_every_wire_event_is_named_by_its_type(proxy, client):
    body = {"model": "gpt-4.1", "input": "trip to Oslo", "tools": TOOLS, "stream": True}
    raw = httpx.post(proxy.env["OPENAI_BASE_URL"] + "/responses", json=body, timeout=5).content
    for event in sse.split(raw):
        doc = sse.data_of(event)
        assert sse.name_of(event) == doc["type"]
        EVENTS.validate_python(doc)  # the SDK's models, validating, not just constructing


def test_structured_output_json_schema(client):
    fmt = {"format": {"type": "json_schema", "name": "profile", "schema": PROFILE, "strict": True}}
    scripted = create(client, input="my profile please", text=fmt)
    assert json.loads(scripted.output_text) == {"name": "Ada", "age": 36}
    generated = create(client, input="anything at all", text=fmt)
    jsonschema.validate(json.loads(generated.output_text), PROFILE)
    parsed = client.responses.parse(model="gpt-4.1", input="my profile", text_format=Profile, tools=TOOLS)
    assert parsed.output_parsed == Profile(name="Ada", age=36)
    with client.responses.stream(model="gpt-4.1", input="profile", text_format=Profile) as stream:
        assert stream.get_final_response().output_parsed == Profile(name="Ada", age=36)


def test_json_object_mode(client):
    r = create(client, input="anything", text={"format": {"type": "json_object"}})
    assert isinstance(json.loads(r.output_text), dict)


@pytest.mark.parametrize("choice, text, called", [
    ("required", "hello", "get_weather"),
    ("none", "weather in Paris", None),
    ({"type": "function", "name": "book_hotel"}, "weather in Paris", "book_hotel"),
    ({"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "book_hotel"}]},
     "hello", "book_hotel"),
])
def test_tool_choice(client, choice, text, called):
    r = create(client, input=text, tool_choice=choice)
    calls = [o for o in r.output if o.type == "function_call"]
    assert [c.name for c in calls] == ([called] if called else [])
    if called is None:
        assert r.output_text == "I can help with travel."


def test_input_tokens_count(client):
    count = client.responses.input_tokens.count(model="gpt-4.1", input="hello there", tools=TOOLS)
    assert count.object == "response.input_tokens" and count.input_tokens > 0


def test_faults_reach_responses(proxy):
    client = proxy.openai()
    proxy.begin({"kind": "bad_tool_args"})
    r = create(client, input="weather in Rome")
    proxy.end()
    with pytest.raises(ValueError):
        json.loads(r.output[0].arguments)
    proxy.begin({"kind": "cut_content"})
    r = create(client, input="hello")
    proxy.end()
    assert r.status == "incomplete" and r.incomplete_details.reason == "max_output_tokens"
    proxy.begin({"kind": "drift", "mode": "refusal"})
    with client.responses.stream(model="gpt-4.1", input="hello", tools=TOOLS) as stream:
        final = stream.get_final_response()
    proxy.end()
    assert final.output[0].content[0].type == "refusal" and final.output_text == ""
    proxy.begin({"kind": "stream_error", "after_events": 3})
    with pytest.raises(openai.APIError):
        list(create(client, input="hello", stream=True))
    proxy.end()


# -- decode ------------------------------------------------------------------------------
def test_decode_items():
    conv = DIALECT.decode("/v1/responses", {
        "model": "m", "instructions": "Be kind.", "store": False, "parallel_tool_calls": False,
        "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Dev."}]},
                  {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
                  {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Yo"}]},
                  {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
                  {"type": "function_call", "call_id": "c2", "name": "b", "arguments": "{}"},
                  {"type": "function_call_output", "call_id": "c1", "output": "one"},
                  {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "2"}]},
                  {"type": "reasoning", "id": "rs_1", "summary": []}]})
    assert conv.system == "Be kind.\nDev." and not conv.store and not conv.parallel_tool_calls
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool"]
    assert conv.messages[1].text == "Yo" and [c.name for c in conv.messages[1].tool_calls] == ["a", "b"]
    assert [(r.content, r.name) for r in conv.messages[2].tool_results] == [("one", "a"), ("2", "b")]
    assert DIALECT.continuation_id("x", conv) is None


def test_outputs_for_stored_calls_are_named_after_restore():
    conv = DIALECT.decode("/v1/responses", {"previous_response_id": "resp_1",
                                            "input": [{"type": "function_call_output", "call_id": "c1", "output": "x"}]})
    assert conv.continues == "resp_1" and conv.messages[-1].tool_results[0].name is None
    conv.messages = [Message("user", "go"), Message("assistant", tool_calls=[ToolCall("c1", "a", "{}")])] + conv.messages
    DIALECT.inherit(conv, conv)
    assert conv.messages[-1].tool_results[0].name == "a"


def test_routes():
    assert DIALECT.operation("POST", "/v1/responses") == "generate"
    assert DIALECT.operation("POST", "/v1/responses/input_tokens") == "count_tokens"
    assert DIALECT.operation("GET", "/v1/models") is None and DIALECT.operation("POST", "/v1/embeddings") is None


# -- edits on real encoded answers ---------------------------------------------------------
def encoded(stream: bool, text: str = "Hello there, friend", calls: int = 0, finish: str = "stop"):
    conv = DIALECT.decode("/v1/responses", {"model": "m", "input": "x", "stream": stream, "tools": TOOLS})
    turn = Turn(text=text, finish=finish, usage=Usage(10, 5),
                tool_calls=[ToolCall(f"call_{i}", "get_weather", '{"city":"Paris"}') for i in range(calls)])
    parts = DIALECT.encode(turn, conv, "abc", chunk_chars=4).parts
    return [sse.data_of(p) for p in parts] if stream else json.loads(parts[0])


def test_encoded_answers_validate_and_round_trip():
    whole = encoded(False, calls=1)
    Response.model_validate(whole)
    for doc in encoded(True, calls=2):
        EVENTS.validate_python(doc)
    turn = DIALECT.decode_turn(whole)
    assert (turn.text, turn.finish, turn.usage.total) == ("Hello there, friend", "tool_calls", 15)
    cut = encoded(True, finish="length")
    assert cut[-1]["type"] == "response.incomplete"
    assert cut[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}


def test_classify():
    roles = [DIALECT.classify(doc, doc["type"]) for doc in encoded(True, calls=1)]
    assert roles[:2] == ["start", "other"] and roles[-1] == "done"
    assert "text" in roles and "tool_start" in roles and "tool_args" in roles
    assert DIALECT.classify(sse.data_of(DIALECT.stream_error("boom")), "error") == "error"


def test_text_and_tool_arg_slots():
    whole = encoded(False, calls=1)
    assert [s.get() for s in DIALECT.text_slots(whole, False)] == ["Hello there, friend"]
    assert [s.get() for s in DIALECT.tool_arg_slots(whole, False)] == ['{"city":"Paris"}']
    events = encoded(True, calls=1)
    text = [s for e in events for s in DIALECT.text_slots(e, True)]
    args = [s for e in events for s in DIALECT.tool_arg_slots(e, True)]
    assert "".join(s.get() for s in text if not s.restates) == "Hello there, friend"
    assert {s.get() for s in text if s.restates} == {"Hello there, friend"}  # .done, part, item, final
    assert "".join(s.get() for s in args if not s.restates) == '{"city":"Paris"}'
    assert {s.get() for s in args if s.restates} == {'{"city":"Paris"}'}


def test_mark_cut():
    whole = encoded(False)
    assert DIALECT.mark_cut(whole, False) and not DIALECT.mark_cut(whole, False)
    r = Response.model_validate(whole)
    assert (r.status, r.incomplete_details.reason, r.output[0].status) == ("incomplete", "max_output_tokens",
                                                                         "incomplete")
    final = encoded(True)[-1]
    assert DIALECT.mark_cut(final, True) and final["type"] == "response.incomplete"
    assert EVENTS.validate_python(final).response.status == "incomplete"


def test_hollow():
    whole = encoded(False)
    assert DIALECT.hollow(whole, False) and whole["output"] == []
    events = encoded(True)
    changed = [e["type"] for e in events if DIALECT.hollow(e, True)]
    assert changed == ["response.completed"] and events[-1]["response"]["output"] == []


def test_drift():
    rename = encoded(False)
    assert DIALECT.drift(rename, False, "rename") and "text" not in rename["output"][0]["content"][0]
    refusal = encoded(False, calls=1)
    assert DIALECT.drift(refusal, False, "refusal")
    r = Response.model_validate(refusal)
    assert [o.type for o in r.output] == ["message"] and r.output[0].content[0].type == "refusal"
    fmt = encoded(False)
    assert DIALECT.drift(fmt, False, "format")
    assert json.loads(Response.model_validate(fmt).output_text) == {"answer": "Hello there, friend"}
    events = encoded(True)
    assert all(DIALECT.drift(e, True, "refusal") for e in events[3:])  # from the first content part on
    for doc in events:
        EVENTS.validate_python(doc)  # refusal events and parts the SDK knows
    assert events[-1]["response"]["output"][0]["content"][0]["type"] == "refusal"


def test_usage_and_malformed_event():
    assert DIALECT.usage(encoded(False)) == Usage(10, 5)
    events = encoded(True)
    assert DIALECT.usage(events[-1]) == Usage(10, 5) and DIALECT.usage(events[3]) is None
    assert isinstance(sse.data_of(DIALECT.malformed_event()), str)
    assert sse.name_of(DIALECT.malformed_event()) == "response.output_text.delta"
