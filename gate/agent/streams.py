"""Read a streamed answer (SSE or NDJSON) as the assistant's text and the error it reported, if any.

An agent behind a chat UI answers with a stream of events, not one JSON document: text deltas
interleaved with ids, timestamps, run metadata and, when something broke after the 200 was sent,
an error event. Judging the raw stream would let a millisecond timestamp pass for a card number and
hide the error inside a 200, so `read_stream` keeps only what the assistant said and the error's
message. It is pure (bytes in, a `StreamRead` out) so each extractor is tested on recorded bytes.

Events are framed first (`sse_events`, `ndjson_events`), then each one is offered to the extractors
of the shapes agents serve, each checked against the framework's own source:

- OpenAI ChatKit (chatkit-python `chatkit/types.py`): `thread.item.updated` whose `update` is an
  `assistant_message.content_part.text_delta`, `thread.item.done` of an `assistant_message`,
  `{"type": "error", "message": ...}`;
- OpenAI Responses / Agents SDK raw events: `response.output_text.delta` / `.done`, `error`,
  `response.failed`;
- Vercel AI SDK: the data-stream protocol (`0:"text"`, `3:"error"` lines) and the UI-message stream
  (`{"type": "text-delta", "delta"}`, `{"type": "error", "errorText"}`, `[DONE]`);
- LangServe (`event: data|error|metadata|end`) and LangGraph Platform (`event: values|messages|
  messages/partial|error|metadata|end`): the last state's AI message, else the streamed chunks;
- Google ADK's `/run_sse` events and `/run`'s JSON list of them (adk-python `events/event.py`, served
  by `cli/api_server.py`, camelCase or snake_case alike): told by their shape (`author` and an
  `invocationId`); the text parts of the last model event are the answer (`partial: true` chunks only
  when no whole event came), and an `errorCode` (`MALFORMED_FUNCTION_CALL`, `SAFETY`...) is an error;
- plain `data:` text, and NDJSON objects with a text field (`delta`, `content`, `text`, ...) or an
  `error`.

A piece is a delta (concatenated), a final text (a finished message: preferred over the deltas it
repeats) or a snapshot (a whole state: the last one wins). `select`, a JSON path, replaces the text
extractors for shapes none of them knows; errors are still recognised. `read_documents` applies the
same extractors to a JSON list of events (ADK's `/run`), so a list and a stream read alike.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gate.templates import PathError, pick

_NO_JSON = object()
VERCEL_HEADER = "x-vercel-ai-data-stream"  # AI SDK 4 marks its data-stream protocol (text/plain) with it
_VERCEL_PART = re.compile(r"^([0-9a-z]):(.*)$", re.S)
_TEXT_KEYS = ("delta", "content", "text", "textDelta", "output", "answer", "reply")
_SKIP_EVENTS = frozenset({"metadata", "end", "done", "ping", "heartbeat", "updates", "debug", "feedback"})
_AI_TYPES = frozenset({"ai", "AIMessage", "AIMessageChunk", "assistant"})


@dataclass
class Event:
    name: str  # the SSE `event:` field, or a data-stream part's code; "" when none
    data: str
    doc: Any = _NO_JSON  # the data as JSON, when it is JSON


@dataclass
class StreamRead:
    text: str
    error: str | None = None
    events: int = 0
    recognised: int = 0  # events that carried answer text (or an error) an extractor knows


@dataclass
class _Pieces:
    deltas: list[str] = field(default_factory=list)
    finals: list[str] = field(default_factory=list)
    snapshot: str | None = None
    error: str | None = None
    recognised: int = 0


def _json(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return _NO_JSON


def sse_events(text: str) -> list[Event]:
    """The events of a text/event-stream body (WHATWG framing: `data:` lines joined by newlines,
    `event:` names; ids, retries and comments dropped: they are never part of the answer). An event
    the body ends in the middle of is dropped, as a browser drops it: half an event is not text."""
    events, name, data = [], "", []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if data:
                joined = "\n".join(data)
                events.append(Event(name, joined, _json(joined)))
            name, data = "", []
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "data":
            data.append(value)
        elif key == "event":
            name = value
    return events


def ndjson_events(text: str) -> list[Event]:
    """One event per non-empty line: a JSON value, or a Vercel data-stream part `<code>:<JSON>`. A line
    that is neither (a line cut in half) is an event no extractor reads (named "?")."""
    events = []
    for line in text.splitlines():
        if not line.strip():
            continue
        doc = _json(line)
        part = _VERCEL_PART.match(line) if doc is _NO_JSON else None
        if part and (value := _json(part.group(2))) is not _NO_JSON:
            events.append(Event(part.group(1), part.group(2), value))
        else:
            events.append(Event("" if doc is not _NO_JSON else "?", line, doc))
    return events


def _message_of(doc: Any) -> str:
    """The human message of an error payload, whatever its shape."""
    if isinstance(doc, str):
        return doc
    if isinstance(doc, dict):
        for key in ("message", "errorText", "error", "detail"):
            value = doc.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, dict):
                return _message_of(value)
        if isinstance(doc.get("code"), str):
            return doc["code"]
    return json.dumps(doc, ensure_ascii=False)[:300] if doc is not _NO_JSON else "error"


def _content_text(content: Any) -> str | None:
    """A message's `content`: a string, or a list of parts whose `text` is joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, str | dict)]
        return "".join(t for t in texts if isinstance(t, str))
    return None


def _last_ai_text(messages: Any) -> str | None:
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("type", message.get("role")) in _AI_TYPES:
            return _content_text(message.get("content"))
    return None


def _error_of(event: Event) -> str | None:
    doc = event.doc
    if event.name == "error" or event.name == "3":
        return _message_of(event.data if doc is _NO_JSON else doc)
    if not isinstance(doc, dict):
        return None
    if is_adk_event(doc):
        return _adk_error(doc)
    kind = doc.get("type")
    if kind == "raw_response_event" and isinstance(doc.get("data"), dict):
        return _error_of(Event(event.name, event.data, doc["data"]))
    if kind == "error" or kind == "response.failed":
        return _message_of((doc.get("response") or {}).get("error") if kind == "response.failed" else doc)
    if event.name == "" and kind is None and doc.get("error"):
        return _message_of(doc["error"])
    return None


def is_adk_event(doc: Any) -> bool:
    """A Google ADK event: every one names its `author` and its invocation, whatever else it carries
    (text, a function call or response, state deltas, an error code)."""
    return isinstance(doc, dict) and isinstance(doc.get("author"), str) \
        and ("invocationId" in doc or "invocation_id" in doc)


def _either(doc: dict, camel: str, snake: str) -> Any:
    """ADK's pydantic models serve camelCase aliases (`by_alias=True`); a hand-rolled server may not."""
    return doc[camel] if camel in doc else doc.get(snake)


def _adk_error(doc: dict) -> str | None:
    """`errorCode` is set when the model's turn failed: a finish reason other than STOP with no content
    (`MALFORMED_FUNCTION_CALL`, `SAFETY`, `MAX_TOKENS`), a blocked prompt, an aborted invocation."""
    code = _either(doc, "errorCode", "error_code")
    if not code:
        return None
    message = _either(doc, "errorMessage", "error_message")
    return f"{code}: {message}" if message else str(code)


def _adk_piece(doc: dict) -> tuple[str, str] | None:
    """A model event's text parts (thoughts left out: they are not said to the user). A whole event is
    a snapshot, so the last one wins, and one holding only a function call leaves no answer yet; a
    `partial` chunk is a delta, kept only when no whole event came. The user's turn and the
    function responses ADK sends back to the model (role `user`) are not the agent's answer."""
    content = doc.get("content")
    if not isinstance(content, dict) or content.get("role") == "user" or doc.get("author") == "user":
        return None
    parts = content.get("parts")
    if not isinstance(parts, list):
        return None
    text = "".join(p["text"] for p in parts
                   if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought"))
    return ("delta" if doc.get("partial") else "snapshot"), text


def _typed(doc: dict, kind: str) -> tuple[str, str] | None:
    """OpenAI (ChatKit, Responses) and Vercel UI-message events, told apart by `type`."""
    if kind == "raw_response_event" and isinstance(doc.get("data"), dict):  # an Agents SDK event as served
        inner = doc["data"]
        return _typed(inner, inner["type"]) if isinstance(inner.get("type"), str) else None
    if kind == "thread.item.updated":
        update = doc.get("update") or {}
        if update.get("type") == "assistant_message.content_part.text_delta":
            return "delta", update.get("delta") or ""
    elif kind == "thread.item.done":
        item = doc.get("item") or {}
        if item.get("type") == "assistant_message":
            return "final", _content_text(item.get("content")) or ""
    elif kind in ("response.output_text.delta", "text-delta"):
        value = doc.get("delta", doc.get("textDelta"))
        return ("delta", value) if isinstance(value, str) else None
    elif kind == "response.output_text.done" and isinstance(doc.get("text"), str):
        return "final", doc["text"]
    return None


def _langgraph(event: Event) -> tuple[str, str] | None:
    """LangGraph Platform's stream modes: `values` is the whole state, `messages` a (chunk, metadata)
    pair, `messages/partial` and `/complete` the messages so far."""
    name, doc = event.name.split("|")[0], event.doc
    if name == "values" and isinstance(doc, dict):
        text = _last_ai_text(doc.get("messages"))
        return ("snapshot", text) if text is not None else None
    if name == "messages" and isinstance(doc, list) and doc and isinstance(doc[0], dict) \
            and doc[0].get("type") in _AI_TYPES:
        return "delta", _content_text(doc[0].get("content")) or ""
    if name in ("messages/partial", "messages/complete"):
        text = _last_ai_text(doc)
        return ("snapshot", text) if text is not None else None
    return None


def _generic(doc: Any) -> tuple[str, str] | None:
    """A plain string, an OpenAI chat chunk, or an object with a known text field."""
    if isinstance(doc, str):
        return "delta", doc
    if not isinstance(doc, dict):
        return None
    choices = doc.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        delta = choices[0].get("delta") or choices[0].get("message") or {}
        content = delta.get("content") if isinstance(delta, dict) else None
        return ("delta", content) if isinstance(content, str) else None
    if doc.get("type") in _AI_TYPES or doc.get("role") in _AI_TYPES:
        text = _content_text(doc.get("content"))
        return ("delta", text) if text is not None else None
    for key in _TEXT_KEYS:
        value = doc.get(key)
        text = value if isinstance(value, str) else _content_text(value) if key == "content" else None
        if text is not None:
            return "delta", text
    return None


def _piece(event: Event) -> tuple[str, str] | None:
    if event.name in _SKIP_EVENTS or event.data.strip() == "[DONE]":
        return None
    if event.doc is _NO_JSON:
        return ("delta", event.data) if event.name in ("", "message", "data") else None
    if event.name == "0":  # Vercel data stream: a text part
        return ("delta", event.doc) if isinstance(event.doc, str) else None
    if is_adk_event(event.doc):
        return _adk_piece(event.doc)
    if isinstance(event.doc, dict) and isinstance(event.doc.get("type"), str):
        typed = _typed(event.doc, event.doc["type"])
        if typed is not None or event.name in ("", "message"):
            return typed if typed is not None else _generic_typed(event.doc)
    found = _langgraph(event)
    if found is not None or event.name not in ("", "message", "data"):
        return found
    return _generic(event.doc)


def _generic_typed(doc: dict) -> tuple[str, str] | None:
    """An object with a `type` no extractor knows: only a message-like one carries answer text
    (lifecycle events such as `response.created` or `start-step` carry ids and times, never text)."""
    return _generic(doc) if doc["type"] in _AI_TYPES or doc["type"] in ("text", "message", "delta") else None


def _selected(event: Event, select: str) -> tuple[str, str] | None:
    if event.doc is _NO_JSON:
        return None
    try:
        value = pick(event.doc, select)
    except PathError:
        return None
    if value is None:
        return None
    return "delta", value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _collect(events: list[Event], select: str | None) -> _Pieces:
    pieces = _Pieces()
    for event in events:
        error = _error_of(event)
        if error is not None:
            pieces.error, pieces.recognised = pieces.error or error, pieces.recognised + 1
            continue
        found = _selected(event, select) if select else _piece(event)
        if found is None:
            continue
        kind, text = found
        pieces.recognised += 1
        if kind == "snapshot":
            pieces.snapshot = text
        else:
            (pieces.finals if kind == "final" else pieces.deltas).append(text)
    return pieces


def read_stream(text: str, kind: str, select: str | None = None) -> StreamRead:
    """The answer text and the error message (or None) of a decoded stream body; `kind` is sse or ndjson."""
    return _read(sse_events(text) if kind == "sse" else ndjson_events(text), select)


def is_adk_list(doc: Any) -> bool:
    """A JSON answer that is ADK's `/run`: a non-empty list of its events, nothing else."""
    return isinstance(doc, list) and bool(doc) and all(is_adk_event(item) for item in doc)


def read_documents(docs: list, select: str | None = None) -> StreamRead:
    """A JSON list of events read as the stream that would have carried them (ADK's `/run` is
    `/run_sse` collected into one array)."""
    return _read([Event("", "", doc) for doc in docs], select)


def _read(events: list[Event], select: str | None) -> StreamRead:
    pieces = _collect(events, select)
    if pieces.finals:
        answer = "\n".join(pieces.finals)
    elif pieces.snapshot is not None:
        answer = pieces.snapshot
    else:
        answer = "".join(pieces.deltas)
    return StreamRead(answer, pieces.error, len(events), pieces.recognised)


def stream_kind(mode: str, content_type: str, vercel: bool = False) -> str | None:
    """sse, ndjson or None (a plain JSON answer) for `stream:` and the response's Content-Type."""
    if mode in ("sse", "ndjson"):
        return mode
    if mode == "off":
        return None
    media = content_type.split(";")[0].strip().lower()
    if media == "text/event-stream":
        return "sse"
    if media in ("application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
                 "application/jsonlines") or vercel:
        return "ndjson"
    return None
