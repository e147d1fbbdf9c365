"""Streamed answers (`agent.invoke.http.stream`, gate/agent/streams.py): each shape agents serve is read
as the assistant's text, an error event inside a 200 fails the run with its message, and the events'
ids and timestamps never reach the output invariants judge.

The unit tests read recorded byte strings of each shape, checked against its framework's source:
ChatKit (openai/chatkit-python chatkit/types.py: ThreadItemUpdatedEvent, AssistantMessageContentPartTextDelta,
ThreadItemDoneEvent, ErrorEvent), the OpenAI Responses events an Agents SDK app forwards, the Vercel AI SDK
data-stream (v4: `0:` text, `3:` error) and UI-message stream (v5: text-delta, error/errorText, [DONE])
protocols (ai-sdk.dev stream-protocol docs), LangServe (langserve/api_handler.py: data, error, metadata, end)
and LangGraph Platform (values, messages tuples). The end-to-end tests start a real agent
(tests/agents/streaming/stream_agent.py) that streams each shape chunk by chunk over loopback HTTP.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import load_report
from gate.agent.invoke import extract_stream
from gate.agent.streams import read_stream, sse_events, stream_kind
from gate.cli import main

HERE = Path(__file__).parent
ANSWER = "Your flight is on time."
ERROR = "upstream model failed: malformed completion"

CHATKIT = (b'data: {"type":"thread.created","thread":{"id":"thr_1","created_at":"2026-01-02T03:04:05.123Z"}}\n\n'
           b'data: {"type":"thread.item.added","item":{"type":"assistant_message","id":"msg_1","content":[]}}\n\n'
           b'data: {"type":"thread.item.updated","item_id":"msg_1","update":{"type":'
           b'"assistant_message.content_part.text_delta","content_index":0,"delta":"Your flight "}}\n\n'
           b'data: {"type":"thread.item.updated","item_id":"msg_1","update":{"type":'
           b'"assistant_message.content_part.text_delta","content_index":0,"delta":"is on time."}}\n\n')
CHATKIT_DONE = (b'data: {"type":"thread.item.done","item":{"type":"assistant_message","id":"msg_1","content":'
                b'[{"type":"output_text","text":"Your flight is on time.","annotations":[]}]}}\n\n')
RESPONSES = (b'event: response.created\ndata: {"type":"response.created","sequence_number":0,'
             b'"response":{"id":"resp_1","created_at":1767322245}}\n\n'
             b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1",'
             b'"output_index":0,"content_index":0,"delta":"Your flight ","sequence_number":1}\n\n'
             b'data: {"type":"raw_response_event","data":{"type":"response.output_text.delta","delta":"is on time."}}\n\n')
DATA_STREAM = (b'f:{"messageId":"msg-4111111111111111"}\n0:"Your flight "\n0:"is on time."\n'
               b'e:{"finishReason":"stop","usage":{"promptTokens":10,"completionTokens":7},"isContinued":false}\n'
               b'd:{"finishReason":"stop","usage":{"promptTokens":10,"completionTokens":7}}\n')
UI_MESSAGE = (b'data: {"type":"start","messageId":"msg-1"}\n\ndata: {"type":"start-step"}\n\n'
              b'data: {"type":"text-start","id":"t1"}\n\n'
              b'data: {"type":"text-delta","id":"t1","delta":"Your flight "}\n\n'
              b'data: {"type":"text-delta","id":"t1","delta":"is on time."}\n\n'
              b'data: {"type":"reasoning-delta","id":"r1","delta":"secret thoughts"}\n\n'
              b'data: {"type":"text-end","id":"t1"}\n\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n')
LANGSERVE = (b'event: metadata\r\ndata: {"run_id": "0b1e2c"}\r\n\r\n'
             b'event: data\r\ndata: {"content": "Your flight ", "type": "AIMessageChunk", "id": "run-1"}\r\n\r\n'
             b'event: data\r\ndata: {"content": "is on time.", "type": "AIMessageChunk", "id": "run-1"}\r\n\r\n'
             b'event: end\r\n\r\n')
LANGGRAPH = (b'event: metadata\ndata: {"run_id":"1ef-4111111111111111"}\n\n'
             b'event: messages\ndata: [{"content":"Your fli","type":"AIMessageChunk"},{"langgraph_node":"agent"}]\n\n'
             b'event: values\ndata: {"messages":[{"type":"human","content":"when?"},'
             b'{"type":"ai","content":[{"type":"text","text":"Your flight is on time."}],"id":"run-2"}]}\n\n'
             b'event: end\ndata: null\n\n')
NDJSON = (b'{"type":"run.started","run_id":4111111111111111,"at":"2026-01-02T03:04:05Z"}\n'
          b'{"delta":"Your flight "}\n{"delta":"is on time.","seq":2}\n{"type":"run.finished"}\n')


@pytest.mark.parametrize(("body", "kind"), [
    (CHATKIT, "sse"), (CHATKIT + CHATKIT_DONE, "sse"), (RESPONSES, "sse"), (DATA_STREAM, "ndjson"),
    (UI_MESSAGE, "sse"), (LANGSERVE, "sse"), (LANGGRAPH, "sse"), (NDJSON, "ndjson"),
    (b"data: Your flight\n\ndata:  is on time.\n\n", "sse"),
], ids=["chatkit-deltas", "chatkit-done", "responses", "data-stream", "ui-message", "langserve", "langgraph",
        "ndjson", "plain-data"])
def test_each_shape_is_read_as_the_assistant_text_alone(body, kind):
    assert extract_stream(body, kind, None) == (ANSWER, "ok", "")


@pytest.mark.parametrize(("body", "kind", "message"), [
    (CHATKIT + f'data: {{"type":"error","code":"stream.error","message":"{ERROR}"}}\n\n'.encode(), "sse", ERROR),
    (CHATKIT + b'data: {"type":"error","code":"stream.error","allow_retry":true}\n\n', "sse", "stream.error"),
    (RESPONSES + b'data: {"type":"response.failed","response":{"error":{"code":"server_error","message":"x"}}}\n\n',
     "sse", "x"),
    (DATA_STREAM + f'3:"{ERROR}"\n'.encode(), "ndjson", ERROR),
    (UI_MESSAGE + f'data: {{"type":"error","errorText":"{ERROR}"}}\n\n'.encode(), "sse", ERROR),
    (LANGSERVE + b'event: error\ndata: {"status_code": 500, "message": "Internal Server Error"}\n\n', "sse",
     "Internal Server Error"),
    (LANGGRAPH + f'event: error\ndata: {{"error":"ValueError","message":"{ERROR}"}}\n\n'.encode(), "sse", ERROR),
    (NDJSON + f'{{"error":{{"message":"{ERROR}"}}}}\n'.encode(), "ndjson", ERROR),
    (b"data: partial\n\nevent: error\ndata: the tool timed out\n\n", "sse", "the tool timed out"),
])
def test_an_error_event_inside_the_stream_is_a_stream_error_with_its_message(body, kind, message):
    output, reason, detail = extract_stream(body, kind, None)
    assert output is None and reason == "stream_error" and message in detail, detail


def test_select_reads_a_shape_no_extractor_knows_and_errors_are_still_seen():
    body = b'data: {"payload":{"token":"Your flight ","at":"2026-01-02"}}\n\ndata: {"payload":{"token":"is on time."}}\n\n'
    assert extract_stream(body, "sse", None)[1] == "bad_output_shape"  # said, never an empty pass
    assert extract_stream(body, "sse", "$.payload.token") == (ANSWER, "ok", "")
    assert extract_stream(body + b'data: {"type":"error","message":"m"}\n\n', "sse", "$.payload.token")[1] == \
        "stream_error"


def test_sse_framing_drops_ids_retries_and_comments_and_joins_data_lines():
    events = sse_events(": keepalive\nid: 4111111111111111\nretry: 1000\nevent: x\ndata: a\ndata: b\n\n"
                        'data: {"delta": "cut in ha')
    assert [(e.name, e.data) for e in events] == [("x", "a\nb")]  # the half event at the end is no text


def test_a_line_cut_in_half_is_never_text():
    assert extract_stream(NDJSON + b'{"delta": "more", "at": "2026-01-02T03:0', "ndjson", None) == (ANSWER, "ok", "")


def test_the_stream_kind_follows_the_content_type_unless_set():
    assert stream_kind("auto", "text/event-stream; charset=utf-8") == "sse"
    assert stream_kind("auto", "application/x-ndjson") == stream_kind("auto", "application/jsonl") == "ndjson"
    assert stream_kind("auto", "text/plain", vercel=True) == "ndjson"
    assert stream_kind("auto", "application/json") is None and stream_kind("off", "text/event-stream") is None
    assert stream_kind("sse", "application/json") == "sse"


def test_a_stream_that_is_not_utf8_is_refused_as_such():
    assert extract_stream(b"data: \xff\n\n", "sse", None)[1] == "bad_output_encoding"
    assert read_stream("", "sse").text == "" and extract_stream(b"", "sse", None)[1] == "bad_output_shape"


def run(tmp_path, shape: str, mode: str = "ok", **http):
    config = {
        "version": 1, "seed": 1,
        "agent": {"start": {"command": ["python3", str(HERE / "agents" / "streaming" / "stream_agent.py")],
                            "env": {"SHAPE": shape, "MODE": mode, "HTTPKIT": str(HERE)},
                            "ready": {"url": "{{url}}/health"}},
                  "invoke": {"http": {"url": "{{url}}/chat", "body": {"message": "{{input}}"}, **http}}},
        "inputs": [{"id": "when", "text": "is my flight on time?"}],
        "mutation": {"enabled": False}, "chaos": {"enabled": False},
        "contract": {"invariants": [{"id": "completes", "type": "completes"},
                                    {"id": "no-pii", "type": "excludes_pii", "severity": "critical"},
                                    {"id": "says", "type": "contains", "value": "on time"}]},
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    code = main(["run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
    report = load_report(tmp_path / "out")
    return code, report["verdict"]["cells"][0]


SHAPES = ["chatkit", "ui_message", "data_stream", "langserve", "ndjson"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_streaming_agent_passes_on_its_text_alone(tmp_path, shape):
    code, cell = run(tmp_path, shape)
    run_ = cell["runs"][0]
    assert code == 0 and cell["status"] == "pass", cell
    assert run_["output"] == ANSWER and run_["reason"] == "ok", run_
    assert _check(run_, "no-pii") is True  # the events' ids and timestamps never reached it


@pytest.mark.parametrize("shape", SHAPES)
def test_an_error_event_inside_a_200_fails_the_run_with_its_message(tmp_path, shape):
    code, cell = run(tmp_path, shape, "error")
    run_ = cell["runs"][0]
    assert code != 0 and cell["status"] == "fail", cell
    assert run_["reason"] == "stream_error" and run_["status"] == 200, run_
    assert ERROR in run_["detail"] and run_["output"] is None, run_
    assert _check(run_, "completes") is False


def _check(run_: dict, invariant: str):
    return next(c["passed"] for c in run_["checks"] if c["invariant"] == invariant)


@pytest.mark.parametrize("shape", ["chatkit", "ndjson"])
def test_a_stream_cut_before_its_end_is_a_stream_error_not_half_an_answer(tmp_path, shape):
    _, cell = run(tmp_path, shape, "cut")
    run_ = cell["runs"][0]
    assert run_["reason"] == "stream_error" and "cut" in run_["detail"] and run_["output"] is None, run_


def test_the_raw_stream_would_have_tripped_the_pii_invariant(tmp_path):
    """The control: the same stream judged whole (`stream: off`) shows its id as a card number."""
    _, cell = run(tmp_path, "chatkit", stream="off")
    run_ = cell["runs"][0]
    assert run_["reason"] == "ok" and "4111111111111111" in run_["output"], run_
    assert cell["status"] == "fail" and _check(run_, "no-pii") is False, cell


def test_the_stream_keys_are_checked_when_the_config_is_read():
    from pydantic import ValidationError

    from gate.config.models import HttpInvoke

    assert HttpInvoke.model_validate(yaml.safe_load("{url: 'http://x', stream: off}")).stream == "off"  # YAML's false
    for bad, says in [({"stream": "sse", "output": "$.reply"}, "'output' reads one JSON answer"),
                      ({"stream": "off", "select": "$.a"}, "'stream: off' reads none"),
                      ({"select": "payload.token"}, "must start with '[$]'")]:
        with pytest.raises(ValidationError, match=says):
            HttpInvoke(url="http://x", **bad)
