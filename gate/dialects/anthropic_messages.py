"""Anthropic Messages (`POST /v1/messages`, `/v1/messages/count_tokens`, `GET /v1/models`).

Answers are a `message` with content blocks (`text`, `tool_use`); streams are named
events — `message_start`, `content_block_start` / `_delta` (`text_delta`,
`input_json_delta`) / `_stop` per block, `message_delta` (stop_reason, usage),
`message_stop` — and errors mid-stream arrive as `event: error`. Tool results come
back as `tool_result` blocks in a user message, with `is_error` when the tool failed.
A request may continue a server-side thread (the SDK's tool runner does by default):
see anthropic_threads.py.
"""

from __future__ import annotations

import json
from typing import Any

from gate.dialects import anthropic_threads as threads
from gate.dialects import sse
from gate.dialects.base import Dialect, Encoded, Slot
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, Usage
from gate.dialects.openai_chat import pieces

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
               502: "api_error", 503: "api_error", 529: "overloaded_error"}
STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "refusal": "refusal",
        "content_filter": "refusal"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _messages(raw: dict) -> list[Message]:
    role, content = raw.get("role"), raw.get("content")
    if role == "system":  # inline tool additions / removals (a beta): nothing the sim acts on
        return []
    blocks = content if isinstance(content, list) else []
    if role == "assistant":
        calls = [ToolCall(b.get("id") or "", b.get("name") or "", json.dumps(b.get("input") or {}))
                 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        return [Message("assistant", _text(content), tool_calls=calls)]
    results = [ToolResult(b.get("tool_use_id") or "", _text(b.get("content")), is_error=bool(b.get("is_error")))
               for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    out = [Message("tool", tool_results=results)] if results else []
    text = _text(content)
    return out + [Message("user", text)] if text or not results else out


def _tool_choice(choice: Any) -> str:
    if not isinstance(choice, dict):
        return "auto"
    kind = choice.get("type")
    if kind == "tool":
        return choice.get("name") or "required"
    return {"any": "required", "none": "none"}.get(kind, "auto")


def _schema(doc: dict) -> dict | None:
    """Structured outputs: `output_config.format` (and the older `output_format`)."""
    for holder in ((doc.get("output_config") or {}).get("format"), doc.get("output_format")):
        if isinstance(holder, dict) and holder.get("type") == "json_schema":
            return holder.get("schema") or {}
    return None


class AnthropicMessages(Dialect):
    name = "anthropic_messages"
    provider = "anthropic"
    request_id_header = "request-id"

    def operation(self, method, path):
        bare = path.split("?")[0].rstrip("/")
        if method == "POST" and bare.endswith("/messages/count_tokens"):
            return "count_tokens"
        if method == "POST" and bare.endswith("/messages"):
            return "generate"
        if method == "GET" and bare.endswith("/models"):
            return "models"
        return None

    def decode(self, path, doc):
        messages = [m for raw in doc.get("messages") or [] if isinstance(raw, dict) for m in _messages(raw)]
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        for m in messages:
            for result in m.tool_results:
                result.name = names.get(result.call_id)
        tools = [ToolSpec(t.get("name", ""), t.get("description") or "", t.get("input_schema") or {})
                 for t in doc.get("tools") or [] if isinstance(t, dict) and t.get("name")]
        conv = Conversation(messages=messages, system=_text(doc.get("system")), model=doc.get("model"), tools=tools,
                            tool_choice=_tool_choice(doc.get("tool_choice")), response_schema=_schema(doc),
                            stream=bool(doc.get("stream")),
                            parallel_tool_calls=not (doc.get("tool_choice") or {}).get("disable_parallel_tool_use"))
        threads.read(doc, conv)
        return conv

    # -- threads ----------------------------------------------------------------------
    def continuation_id(self, ident, conv):
        return f"msg_{ident}" if conv.store else None  # a thread goes on from the reply's id

    def inherit(self, conv, stored):
        threads.inherit(conv, stored)

    def unknown_continuation(self, ident):
        return 404, threads.not_found(self.error(404, ""), ident)

    # -- answers --------------------------------------------------------------------
    def _blocks(self, turn: Turn) -> list[dict]:
        blocks = [{"type": "text", "text": turn.refusal or turn.text}] if (turn.text or turn.refusal) else []
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.parsed() if c.parsed() is not None
                    else c.arguments} for c in turn.tool_calls]
        return blocks or [{"type": "text", "text": ""}]

    @staticmethod
    def _usage(usage: Usage) -> dict:
        return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

    def encode(self, turn, conv, ident, chunk_chars=8):
        message = {"id": f"msg_{ident}", "type": "message", "role": "assistant", "model": conv.model or "sim",
                   "content": self._blocks(turn), "stop_reason": STOP[turn.finish], "stop_sequence": None,
                   "usage": self._usage(turn.usage)}
        if not conv.stream:
            return Encoded("application/json", [json.dumps(message).encode()])
        return Encoded("text/event-stream", self._stream(message, turn, chunk_chars))

    def _stream(self, message: dict, turn: Turn, size: int) -> list[bytes]:
        start = dict(message, content=[], stop_reason=None,
                     usage=dict(message["usage"], output_tokens=1))
        out = [sse.encode({"type": "message_start", "message": start}, "message_start")]
        for index, block in enumerate(message["content"]):
            out += self._block_events(index, block, turn, size)
        out.append(sse.encode({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                                  "stop_sequence": None},
                               "usage": {"output_tokens": message["usage"]["output_tokens"]}}, "message_delta"))
        out.append(sse.encode({"type": "message_stop"}, "message_stop"))
        return out

    def _block_events(self, index: int, block: dict, turn: Turn, size: int) -> list[bytes]:
        def event(kind: str, **fields) -> bytes:
            return sse.encode({"type": kind, "index": index, **fields}, kind)
        if block["type"] == "tool_use":
            call = next(c for c in turn.tool_calls if c.id == block["id"])
            out = [event("content_block_start", content_block=dict(block, input={}))]
            out += [event("content_block_delta", delta={"type": "input_json_delta", "partial_json": p})
                    for p in pieces(call.arguments, size)]
        else:
            out = [event("content_block_start", content_block={"type": "text", "text": ""})]
            out += [event("content_block_delta", delta={"type": "text_delta", "text": p})
                    for p in pieces(block["text"], size) if p]
        return out + [event("content_block_stop")]

    def decode_turn(self, doc):
        if doc.get("type") != "message" or not isinstance(doc.get("content"), list):
            return None
        blocks = [b for b in doc["content"] if isinstance(b, dict)]
        calls = [ToolCall(b.get("id") or f"toolu_{i}", b.get("name") or "", json.dumps(b.get("input") or {}))
                 for i, b in enumerate(blocks) if b.get("type") == "tool_use"]
        finish = {v: k for k, v in STOP.items() if k != "content_filter"}.get(doc.get("stop_reason"), "stop")
        return Turn(text=_text(blocks), tool_calls=calls, finish=finish, usage=self.usage(doc) or Usage())

    def error(self, status, message):
        return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}

    def stream_error(self, message):
        return sse.encode({"type": "error", "error": {"type": "overloaded_error", "message": message}}, "error")

    def list_models(self, names):
        data = [{"type": "model", "id": n, "display_name": n, "created_at": "2026-01-01T00:00:00Z",
                 "lifecycle": "active", "max_input_tokens": 200000, "max_tokens": 64000} for n in names]
        return {"data": data, "has_more": False, "first_id": names[0] if names else None,
                "last_id": names[-1] if names else None}

    def count_tokens(self, conv):
        return {"input_tokens": conv.approx_input_tokens()}

    # -- edits ----------------------------------------------------------------------
    def classify(self, doc, event_name):
        kind = doc.get("type") if isinstance(doc, dict) else event_name
        delta = (doc.get("delta") or {}) if isinstance(doc, dict) else {}
        if kind == "content_block_delta":
            return {"text_delta": "text", "input_json_delta": "tool_args"}.get(delta.get("type"), "other")
        if kind == "content_block_start":
            block = doc.get("content_block") or {}
            return "tool_start" if block.get("type") == "tool_use" else "other"
        return {"message_start": "start", "message_delta": "finish", "message_stop": "done",
                "error": "error"}.get(kind, "other")

    def text_slots(self, doc, streaming):
        if doc.get("type") == "message":
            return [Slot(b, "text") for b in doc.get("content") or [] if b.get("type") == "text" and b.get("text")]
        delta = doc.get("delta")
        if doc.get("type") == "content_block_delta" and isinstance(delta, dict) and delta.get("type") == "text_delta":
            return [Slot(delta, "text")]
        return []

    def started_tool_names(self, doc):
        block = doc.get("content_block") if doc.get("type") == "content_block_start" else None
        return [block.get("name") or ""] if isinstance(block, dict) and block.get("type") == "tool_use" else []

    def tool_arg_slots(self, doc, streaming):
        if doc.get("type") == "message":  # `input` is always an object: the API never sends text there
            return [Slot(b, "input", holds_object=True) for b in doc.get("content") or []
                    if b.get("type") == "tool_use"]
        delta = doc.get("delta")
        if doc.get("type") == "content_block_delta" and isinstance(delta, dict) \
                and delta.get("type") == "input_json_delta" and delta.get("partial_json"):
            return [Slot(delta, "partial_json")]
        return []

    def mark_cut(self, doc, streaming):
        holder = doc if doc.get("type") == "message" else doc.get("delta") if doc.get("type") == "message_delta" \
            else None
        if isinstance(holder, dict) and holder.get("stop_reason") not in (None, "max_tokens"):
            holder["stop_reason"] = "max_tokens"
            return True
        return False

    def hollow(self, doc, streaming):
        if doc.get("type") == "message" and doc.get("content"):
            doc["content"] = []
            return True
        if doc.get("type") == "content_block_delta" and doc.get("delta"):
            doc["delta"] = {}
            return True
        return False

    def drift(self, doc, streaming, mode):
        if doc.get("type") == "message":
            return self._drift_message(doc, mode)
        delta = doc.get("delta")
        if not isinstance(delta, dict):
            return False
        if doc.get("type") == "message_delta" and mode == "refusal":
            delta["stop_reason"] = "refusal"
            return True
        if delta.get("type") != "text_delta" or not isinstance(delta.get("text"), str):
            return False
        if mode == "rename":
            delta["value"] = delta.pop("text")
        elif mode == "refusal":
            delta["text"] = ""
        elif delta["text"]:
            delta["text"] = json.dumps({"answer": delta["text"]})
        return True

    @staticmethod
    def _drift_message(doc: dict, mode: str) -> bool:
        if mode == "refusal":
            doc["content"], doc["stop_reason"] = [], "refusal"
            return True
        changed = False
        for block in doc.get("content") or []:
            if block.get("type") == "text":
                if mode == "rename":
                    block["type"], block["value"] = "output_text", block.pop("text")
                else:
                    block["text"] = json.dumps({"answer": block["text"]})
                changed = True
        return changed

    def usage(self, doc):
        raw = doc.get("usage") or (doc.get("message") or {}).get("usage") if isinstance(doc, dict) else None
        if not isinstance(raw, dict):
            return None
        return Usage(int(raw.get("input_tokens") or 0), int(raw.get("output_tokens") or 0))

    def malformed_event(self):
        return (b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
                b'"delta": {"type": "text_delta", "text": "\\u00\n\n')
