"""The Gemini dialect, judged by the real google-genai SDK: the sim answers it through the proxy
(text, function calls and responses, streams, tokens, embeddings, models, structured output,
Google-shaped errors), and each edit for faults, applied to a real encoded answer or chunk,
still parses in the SDK and says what the fault means."""

import asyncio
import json

import httpx
import jsonschema
import pydantic
import pytest
from google import genai
from google.genai import errors, types

from gate.dialects import Conversation, ToolCall, Turn, Usage, sse
from gate.dialects.gemini import Gemini
from proxy_harness import GEMINI_TOOLS, sim_proxy

MODEL = "gemini-2.5-flash"
HELLO = "Hello! How can I help you today with your order?"
TOOLS = types.GenerateContentConfig(tools=GEMINI_TOOLS)
G = Gemini()


@pytest.fixture(scope="module")
def proxy():
    with sim_proxy() as harness:
        yield harness


@pytest.fixture
def cell(proxy):
    """One run of a cell around the test; the trace is on `proxy.trace` afterwards."""
    proxy.begin()
    yield proxy
    proxy.trace = proxy.end()


def refund_history(client, result: dict) -> tuple[list, types.GenerateContentResponse]:
    """The first turn (a function call), then the user's side with `result` as its response."""
    first = client.models.generate_content(model=MODEL, contents="refund order 1234", config=TOOLS)
    call = first.function_calls[0]
    reply = types.Part.from_function_response(name=call.name, response=result)
    return [types.Content(role="user", parts=[types.Part(text="refund order 1234")]), first.candidates[0].content,
            types.Content(role="user", parts=[reply])], first


# -- the sim through the SDK ------------------------------------------------------------
def test_text_via_the_env_var_the_sdk_reads(cell, monkeypatch):
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", cell.env["GOOGLE_GEMINI_BASE_URL"])
    client = genai.Client(api_key="test-key")  # keep it: a dropped Client closes its HTTP client
    reply = client.models.generate_content(model=MODEL, contents="hello there")
    assert reply.text == HELLO
    assert reply.candidates[0].finish_reason == types.FinishReason.STOP
    usage = reply.usage_metadata
    assert usage.prompt_token_count > 0 and usage.total_token_count == usage.prompt_token_count \
        + usage.candidates_token_count
    assert reply.model_version == MODEL and reply.response_id
    cell.trace = cell.end()
    cell.begin()
    entry = cell.trace[0]
    assert (entry.path, entry.model, entry.status) == (f"/v1/models/{MODEL}:generateContent", MODEL, 200)


def test_function_call_then_its_result(cell):
    client = cell.gemini()
    history, first = refund_history(client, {"result": {"status": "refunded"}})
    call = first.function_calls[0]
    assert (call.name, call.args) == ("refund_order", {"order_id": "1234", "reason": "broken"}) and call.id
    second = client.models.generate_content(model=MODEL, contents=history, config=TOOLS)
    assert second.text == 'Refund for order 1234 is done: {"status": "refunded"}'
    assert not second.function_calls


def test_an_errored_function_response_gets_the_rules_apology(cell):
    client = cell.gemini()
    history, _ = refund_history(client, {"error": "database unavailable"})
    reply = client.models.generate_content(model=MODEL, contents=history, config=TOOLS)
    assert reply.text == "Sorry, I could not complete that: the refund_order tool failed."


def test_automatic_function_calling_runs_the_tool_and_gets_the_answer(cell):
    ran = []

    def refund_order(order_id: str, reason: str = "") -> dict:
        """Refund an order."""
        ran.append(order_id)
        return {"status": "refunded"}

    config = types.GenerateContentConfig(tools=[refund_order])
    client = cell.gemini()
    reply = client.models.generate_content(model=MODEL, contents="refund order 1234", config=config)
    assert ran == ["1234"]
    assert reply.text == 'Refund for order 1234 is done: {"status": "refunded"}'


def test_stream_text_equals_the_whole_answer_and_is_framed_as_the_api_frames_it(cell):
    client = cell.gemini()
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="hello there"))
    assert len(chunks) > 2 and "".join(c.text for c in chunks) == HELLO
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP and chunks[-1].usage_metadata
    assert all(c.candidates[0].finish_reason is None for c in chunks[:-1])
    url = f"{cell.env['GOOGLE_GEMINI_BASE_URL']}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    raw = httpx.post(url, json={"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}).content
    events = sse.split(raw)
    assert all(e.startswith(b"data: {") and e.endswith(b"\r\n\r\n") for e in events)
    assert b"event:" not in raw and b"[DONE]" not in raw


def test_async_client_stream(cell):
    async def run():
        client = cell.gemini()
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents="hello there")
        return [chunk.text async for chunk in stream]
    assert "".join(asyncio.run(run())) == HELLO


def test_function_call_in_a_stream(cell):
    client = cell.gemini()
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="refund order 1234", config=TOOLS))
    calls = [f for c in chunks for f in c.function_calls or []]
    assert [(f.name, f.args) for f in calls] == [("refund_order", {"order_id": "1234", "reason": "broken"})]
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP


def test_count_tokens_grows_with_the_contents(cell):
    client = cell.gemini()
    models = client.models
    short = models.count_tokens(model=MODEL, contents="hello").total_tokens
    long = models.count_tokens(model=MODEL, contents="hello " * 50).total_tokens
    assert 0 < short < long


def test_embeddings_are_deterministic_vectors_of_the_configured_dimension(cell):
    client, dim = cell.gemini(), cell.config.sim.embedding_dim
    models = client.models
    first = models.embed_content(model="text-embedding-004", contents=["refund", "hello", "refund"]).embeddings
    again = models.embed_content(model="text-embedding-004", contents=["refund"]).embeddings
    assert [len(e.values) for e in first] == [dim] * 3
    assert first[0].values == first[2].values == again[0].values != first[1].values
    url = f"{cell.env['GOOGLE_GEMINI_BASE_URL']}/v1beta/models/text-embedding-004:embedContent"
    single = httpx.post(url, json={"content": {"parts": [{"text": "refund"}]}}).json()
    assert single["embedding"]["values"] == first[0].values


def test_models_list(cell):
    client = cell.gemini()
    assert [m.name for m in client.models.list()] == ["models/sim-1"]


class Refund(pydantic.BaseModel):
    order_id: str
    amount: float
    status: str


def test_structured_output_from_a_response_schema(cell):
    config = types.GenerateContentConfig(response_mime_type="application/json", response_schema=Refund)
    client = cell.gemini()
    reply = client.models.generate_content(model=MODEL, contents="hello there", config=config)
    assert isinstance(reply.parsed, Refund)


def test_structured_output_from_a_json_schema(cell):
    schema = {"type": "object", "properties": {"items": {"type": "array", "minItems": 2, "items": {"type": "string"}},
                                               "kind": {"enum": ["a", "b"]}}, "required": ["items", "kind"]}
    config = types.GenerateContentConfig(response_mime_type="application/json", response_json_schema=schema)
    client = cell.gemini()
    reply = client.models.generate_content(model=MODEL, contents="hello there", config=config)
    jsonschema.validate(json.loads(reply.text), schema)


def test_unsupported_path_is_a_google_shaped_404(cell):
    with pytest.raises(errors.ClientError) as exc:
        client = cell.gemini()
        client.models.get(model="sim-1")
    assert (exc.value.code, exc.value.status) == (404, "NOT_FOUND")


@pytest.mark.parametrize("kind, status, name, error", [
    ("rate_limit", 429, "RESOURCE_EXHAUSTED", errors.ClientError),
    ("auth_error", 401, "UNAUTHENTICATED", errors.ClientError),
    ("server_error", 500, "INTERNAL", errors.ServerError)])
def test_status_faults_raise_the_sdks_errors(proxy, kind, status, name, error):
    proxy.begin({"kind": kind})
    client = proxy.gemini()
    try:
        with pytest.raises(error) as exc:
            client.models.generate_content(model=MODEL, contents="hello")
    finally:
        trace = proxy.end()
    assert (exc.value.code, exc.value.status) == (status, name) and len(trace) == 1  # the SDK never retries


# -- edits for faults on real encoded answers ---------------------------------------------
def parse(doc: dict) -> types.GenerateContentResponse:
    """What google-genai makes of a response document."""
    return types.GenerateContentResponse._from_response(response=json.loads(json.dumps(doc)), kwargs={})


def answer(turn: Turn, stream: bool = False) -> list[dict]:
    conv = Conversation(model=MODEL, stream=stream)
    return [sse.data_of(p) if stream else json.loads(p) for p in G.encode(turn, conv, "r1", 4).parts]


TEXT = Turn(text="Hello there, friend", usage=Usage(7, 5))
CALL = Turn(tool_calls=[ToolCall("c1", "refund_order", '{"order_id":"1234"}')], finish="tool_calls", usage=Usage(7, 5))


def test_classify_each_chunk_of_a_stream():
    roles = [G.classify(d, None) for d in answer(TEXT, True)]
    assert roles == ["text"] * 5 + ["finish"]
    assert [G.classify(d, None) for d in answer(CALL, True)] == ["tool_args", "finish"]
    assert G.classify(sse.data_of(G.stream_error("boom")), None) == "error"


def test_text_slots_and_usage():
    whole = answer(TEXT)[0]
    assert [s.get() for s in G.text_slots(whole, False)] == ["Hello there, friend"]
    streamed = [s.get() for d in answer(TEXT, True) for s in G.text_slots(d, True)]
    assert streamed == ["Hell", "o th", "ere,", " fri", "end"]
    assert G.usage(whole) == Usage(7, 5) and G.usage(answer(TEXT, True)[-1]) == Usage(7, 5)


def test_tool_args_are_read_as_json_text_and_written_back_as_an_object():
    doc = answer(CALL)[0]
    slot = G.tool_arg_slots(doc, False)[0]
    assert json.loads(slot.get()) == {"order_id": "1234"}
    slot.set('{"order_id": "9999"}')
    assert parse(doc).function_calls[0].args == {"order_id": "9999"}


@pytest.mark.parametrize("stream", [False, True])
def test_bad_tool_args_become_a_malformed_function_call(stream):
    doc = answer(CALL, stream)[0]
    for slot in G.tool_arg_slots(doc, stream):
        slot.set("}" + slot.get() if stream else '{"order_id": 1234, "amount": ')
    reply = parse(doc)
    assert reply.candidates[0].finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL
    assert not reply.function_calls and "refund_order" in reply.candidates[0].finish_message


def test_mark_cut_says_max_tokens():
    whole, last = answer(TEXT)[0], answer(TEXT, True)[-1]
    assert G.mark_cut(whole, False) and G.mark_cut(last, True) and not G.mark_cut(answer(TEXT, True)[0], True)
    assert parse(whole).candidates[0].finish_reason == parse(last).candidates[0].finish_reason \
        == types.FinishReason.MAX_TOKENS


def test_hollow_empties_the_candidates():
    doc = answer(CALL)[0]
    assert G.hollow(doc, False) and not G.hollow(doc, False)
    reply = parse(doc)
    assert reply.candidates == [] and reply.text is None and reply.function_calls is None


def test_drift_rename_refusal_format():
    renamed, refused, formatted = answer(TEXT)[0], answer(TEXT)[0], answer(TEXT, True)[0]
    assert G.drift(renamed, False, "rename") and parse(renamed).text is None
    assert G.drift(refused, False, "refusal")
    assert parse(refused).candidates[0].finish_reason == types.FinishReason.SAFETY and parse(refused).text is None
    assert G.drift(formatted, True, "format") and json.loads(parse(formatted).text) == {"answer": "Hell"}


def test_a_refusal_is_a_blocked_candidate():
    for doc in (answer(Turn(refusal="no", finish="refusal"))[0], answer(Turn(refusal="no"), True)[0]):
        reply = parse(doc)
        assert reply.candidates[0].finish_reason == types.FinishReason.SAFETY and reply.text is None


def test_errors_and_bad_chunks_in_googles_shapes():
    for status, name in [(400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED"), (403, "PERMISSION_DENIED"),
                         (404, "NOT_FOUND"), (429, "RESOURCE_EXHAUSTED"), (500, "INTERNAL"), (503, "UNAVAILABLE"),
                         (504, "DEADLINE_EXCEEDED")]:
        assert G.error(status, "m") == {"error": {"code": status, "message": "m", "status": name}}
    assert isinstance(sse.data_of(G.malformed_event()), str)  # not JSON: the SDK's parse fails


def test_decode_reads_what_the_sdk_sends():
    call = {"functionCall": {"name": "refund_order", "args": {"order_id": "1"}}}  # no id: paired by name
    doc = {"contents": [{"role": "user", "parts": [{"text": "refund 1234"}]}, {"role": "model", "parts": [call]},
                        {"role": "user", "parts": [{"functionResponse": {"name": "refund_order",
                                                                         "response": {"error": "boom"}}}]}],
           "systemInstruction": {"role": "user", "parts": [{"text": "be brief"}]},
           "tools": [{"functionDeclarations": [
               {"name": "refund_order", "parameters_json_schema": {"type": "object"}},
               {"name": "lookup", "parameters": {"type": "OBJECT", "properties": {"q": {"type": "STRING"}},
                                                 "property_ordering": ["q"]}}]}],
           "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["lookup"]}},
           "generationConfig": {"responseMimeType": "application/json",
                                "responseSchema": {"type": "ARRAY", "items": {"type": "INTEGER"}}}}
    conv = G.decode(f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse", doc)
    assert (conv.model, conv.stream, conv.system, conv.tool_choice) == (MODEL, True, "be brief", "lookup")
    assert conv.tools[0].parameters == {"type": "object", "properties": {"q": {"type": "string"}}}
    assert conv.response_schema == {"type": "array", "items": {"type": "integer"}}
    result = conv.messages[-1].tool_results[0]
    assert (result.is_error, result.content, result.call_id) == (True, "boom", conv.messages[1].tool_calls[0].id)


def test_decode_turn_reads_an_encoded_answer_back():
    turn = G.decode_turn(answer(CALL)[0])
    assert (turn.finish, turn.tool_calls[0].name, turn.tool_calls[0].parsed()) == \
        ("tool_calls", "refund_order", {"order_id": "1234"})
    assert G.decode_turn({"choices": []}) is None
