"""OpenAI Responses (`POST …/responses`, `POST …/responses/input_tokens`).

The API the OpenAI Agents SDK and pydantic-ai's `openai:` models speak by default.
Input is a string or a list of items (`message`, `function_call`,
`function_call_output`); `previous_response_id` continues a stored response, so the
server keeps history (the sim does, per worker). An answer is a `response` object
whose `output` holds `message` items (`output_text` / `refusal` parts) and
`function_call` items. Streams are named events, each with a `sequence_number`:
`response.created`, `response.in_progress`, then per output item `output_item.added`,
(`content_part.added`, `output_text.delta`…, `output_text.done`, `content_part.done`)
or (`function_call_arguments.delta`…, `.done`), `output_item.done`, and finally
`response.completed` (or `response.incomplete`) restating the whole response with usage.
Because the `.done` events and the final response restate what the deltas sent, edit
slots there are flagged `restates` so faults can keep both views consistent.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from gate.dialects import sse
from gate.dialects.base import Dialect, Encoded, Slot
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, Usage
from gate.dialects.openai_chat import openai_error, pieces

CREATED_AT = 1767225600  # a fixed timestamp (2026-01-01): the same request gives the same bytes
REFUSAL = "I'm sorry, but I can't help with that."
INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
FINISH_OF = {"max_output_tokens": "length", "content_filter": "content_filter"}
LIFECYCLE = ("response.created", "response.in_progress", "response.queued", "response.completed",
             "response.incomplete", "response.failed")


# -- requests --------------------------------------------------------------------------
def _text(content: Any) -> str:
    """A string, or the text of content parts (input_text, output_text, refusal)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or p.get("refusal") or "" for p in content if isinstance(p, dict))
    return ""


def _last(messages: list[Message], role: str) -> Message:
    """The message an item belongs to: consecutive calls (or outputs) form one turn, as the
    sim counts steps by turns — parallel calls answered together are one step."""
    if not messages or messages[-1].role != role:
        messages.append(Message(role))  # type: ignore[arg-type]
    return messages[-1]


def _items(items: list) -> tuple[list[Message], list[str]]:
    messages: list[Message] = []
    system: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message" and item.get("role") in ("system", "developer"):
            system.append(_text(item.get("content")))
        elif kind == "message" and item.get("role") == "assistant":
            _last(messages, "assistant").text += _text(item.get("content"))
        elif kind == "message" and item.get("role") == "user":
            messages.append(Message("user", _text(item.get("content"))))
        elif kind == "function_call":
            call = ToolCall(item.get("call_id") or "", item.get("name") or "", item.get("arguments") or "")
            _last(messages, "assistant").tool_calls.append(call)
        elif kind == "function_call_output":
            result = ToolResult(item.get("call_id") or "", _text(item.get("output")))
            _last(messages, "tool").tool_results.append(result)
    return messages, system  # reasoning items, item references and hosted tools are not the sim's business


def _name_results(messages: list[Message]) -> None:
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    for result in (r for m in messages for r in m.tool_results):
        result.name = result.name or names.get(result.call_id)


def _tools(doc: dict) -> tuple[list[ToolSpec], str]:
    """Function tools (flat: name, description, parameters) and the tool choice."""
    tools = [ToolSpec(t.get("name") or "", t.get("description") or "", t.get("parameters") or {})
             for t in doc.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
    choice = doc.get("tool_choice", "auto")
    if isinstance(choice, str):
        return tools, choice if choice in ("auto", "none", "required") else "auto"
    if not isinstance(choice, dict):
        return tools, "auto"
    if choice.get("type") == "function":
        return tools, choice.get("name") or "required"
    if choice.get("type") == "allowed_tools":  # a subset offered for this turn, in a mode
        allowed = {t.get("name") for t in choice.get("tools") or [] if isinstance(t, dict)}
        return [t for t in tools if t.name in allowed], "required" if choice.get("mode") == "required" else "auto"
    return tools, "auto"  # a hosted tool (file_search, …): the sim has none, so it answers


def _format(doc: dict) -> tuple[dict | None, bool]:
    fmt = (doc.get("text") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        return fmt.get("schema") or {}, False
    return None, fmt.get("type") == "json_object"


# -- answers ---------------------------------------------------------------------------
def _usage(usage: Usage) -> dict:
    return {"input_tokens": usage.input_tokens, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": usage.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.total}


def _output(turn: Turn, ident: str, status: str) -> list[dict]:
    items = []
    if turn.refusal or turn.text or not turn.tool_calls:
        part = {"type": "refusal", "refusal": turn.refusal} if turn.refusal else \
            {"type": "output_text", "annotations": [], "logprobs": [], "text": turn.text}
        items.append({"id": f"msg_{ident}", "type": "message", "status": status, "content": [part],
                      "role": "assistant"})
    return items + [{"id": f"fc_{ident}{i}", "type": "function_call", "status": "completed",
                     "arguments": c.arguments, "call_id": c.id, "name": c.name} for i, c in enumerate(turn.tool_calls)]


def _echo(conv: Conversation) -> dict:
    """The request parameters a response repeats (the sim's view of them)."""
    choice: Any = conv.tool_choice if conv.tool_choice in ("auto", "none", "required") else \
        {"type": "function", "name": conv.tool_choice}
    fmt: dict = {"type": "json_object"} if conv.json_mode else {"type": "text"}
    if conv.response_schema is not None:
        fmt = {"type": "json_schema", "name": "output", "schema": conv.response_schema, "strict": True,
               "description": None}
    tools = [{"type": "function", "name": t.name, "description": t.description or None, "parameters": t.parameters,
              "strict": True} for t in conv.tools]
    return {"instructions": conv.system or None, "parallel_tool_calls": conv.parallel_tool_calls,
            "previous_response_id": conv.continues, "store": conv.store, "text": {"format": fmt, "verbosity": "medium"},
            "tool_choice": choice, "tools": tools}


def _message_events(emit, index: int, item: dict, size: int) -> None:
    part = item["content"][0]
    key, kind = ("refusal", "response.refusal") if part["type"] == "refusal" else ("text", "response.output_text")
    extra = {} if key == "refusal" else {"logprobs": []}
    at = {"item_id": item["id"], "output_index": index, "content_index": 0}
    emit("response.output_item.added", output_index=index, item=dict(item, status="in_progress", content=[]))
    emit("response.content_part.added", **at, part=dict(part, **{key: ""}))
    for piece in pieces(part[key], size):
        if piece:
            emit(f"{kind}.delta", **at, delta=piece, **extra)
    emit(f"{kind}.done", **at, **{key: part[key]}, **extra)
    emit("response.content_part.done", **at, part=part)
    emit("response.output_item.done", output_index=index, item=item)


def _call_events(emit, index: int, item: dict, size: int) -> None:
    at = {"item_id": item["id"], "output_index": index}
    emit("response.output_item.added", output_index=index, item=dict(item, status="in_progress", arguments=""))
    for piece in pieces(item["arguments"], size):
        if piece:
            emit("response.function_call_arguments.delta", **at, delta=piece)
    emit("response.function_call_arguments.done", **at, arguments=item["arguments"])
    emit("response.output_item.done", output_index=index, item=item)


# -- where things live, for edits --------------------------------------------------------
def _response_of(doc: dict) -> dict | None:
    """The response object a document carries: itself, or a lifecycle event's."""
    if doc.get("object") == "response":
        return doc
    inner = doc.get("response")
    return inner if doc.get("type") in LIFECYCLE and isinstance(inner, dict) else None


def _items_of(doc: dict) -> list[dict]:
    """Output items in a whole response, a final event, or an item event."""
    response = _response_of(doc)
    if response is not None:
        return [i for i in response.get("output") or [] if isinstance(i, dict)]
    item = doc.get("item")
    return [item] if doc.get("type") == "response.output_item.done" and isinstance(item, dict) else []


def _text_parts(doc: dict) -> list[dict]:
    """Finished output_text parts anywhere in a document (items, or a content_part.done event)."""
    parts = [p for i in _items_of(doc) if i.get("type") == "message" for p in i.get("content") or []]
    if doc.get("type") == "response.content_part.done":
        parts.append(doc.get("part"))
    return [p for p in parts if isinstance(p, dict) and p.get("type") == "output_text"]


def _refused(item_id: str) -> dict:
    return {"id": item_id, "type": "message", "status": "completed", "role": "assistant",
            "content": [{"type": "refusal", "refusal": REFUSAL}]}


class OpenAIResponses(Dialect):
    name = "openai_responses"
    provider = "openai"

    def operation(self, method, path):
        bare = path.split("?")[0].rstrip("/")
        if method == "POST" and bare.endswith("/responses/input_tokens"):
            return "count_tokens"
        if method == "POST" and bare.endswith("/responses"):
            return "generate"
        return None  # /models and /embeddings are the OpenAI family's, served by openai_chat

    def decode(self, path, doc):
        raw = doc.get("input")
        messages, system = _items([{"role": "user", "content": raw}] if isinstance(raw, str) else raw or [])
        _name_results(messages)
        if isinstance(doc.get("instructions"), str) and doc["instructions"]:
            system.insert(0, doc["instructions"])
        tools, choice = _tools(doc)
        schema, json_mode = _format(doc)
        previous = doc.get("previous_response_id")
        return Conversation(messages=messages, system="\n".join(s for s in system if s), model=doc.get("model"),
                            tools=tools, tool_choice=choice, response_schema=schema, json_mode=json_mode,
                            schema_name=str(((doc.get("text") or {}).get("format") or {}).get("name") or ""),
                            stream=bool(doc.get("stream")),
                            parallel_tool_calls=doc.get("parallel_tool_calls") is not False,
                            continues=previous if isinstance(previous, str) and previous else None,
                            store=doc.get("store") is not False)

    def continuation_id(self, ident, conv):
        return f"resp_{ident}" if conv.store else None  # the id the client sends back as previous_response_id

    def inherit(self, conv, stored):
        # outputs for calls made in a stored response: name them from the history now prepended
        # (instructions and tools are not carried over: the API takes them from each request)
        _name_results(conv.messages)

    def unknown_continuation(self, ident):
        body = openai_error(400, f"Previous response with id '{ident}' not found.")
        body["error"].update(param="previous_response_id", code="previous_response_not_found")
        return 400, body

    # -- answers --------------------------------------------------------------------
    def response(self, turn: Turn, conv: Conversation, ident: str) -> dict:
        """The whole `response` object, as the non-streaming answer and the final event carry it."""
        reason = INCOMPLETE.get(turn.finish)
        status = "incomplete" if reason else "completed"
        return {"id": f"resp_{ident}", "object": "response", "created_at": CREATED_AT, "status": status,
                "background": False, "completed_at": CREATED_AT if status == "completed" else None, "error": None,
                "incomplete_details": {"reason": reason} if reason else None, "max_output_tokens": None,
                "max_tool_calls": None, "model": conv.model or "sim", "output": _output(turn, ident, status),
                "reasoning": {"effort": None, "summary": None}, "service_tier": "default", "temperature": 1.0,
                "top_logprobs": 0, "top_p": 1.0, "truncation": "disabled", "usage": _usage(turn.usage),
                "user": None, "metadata": {}, **_echo(conv)}

    def encode(self, turn, conv, ident, chunk_chars=8):
        response = self.response(turn, conv, ident)
        if not conv.stream:
            return Encoded("application/json", [json.dumps(response).encode()])
        return Encoded("text/event-stream", self._stream(response, chunk_chars))

    @staticmethod
    def _stream(response: dict, size: int) -> list[bytes]:
        out: list[bytes] = []
        numbers = itertools.count()

        def emit(kind: str, **fields) -> None:
            out.append(sse.encode({"type": kind, "sequence_number": next(numbers), **fields}, kind))

        start = dict(response, status="in_progress", completed_at=None, incomplete_details=None, output=[],
                     usage=None)
        emit("response.created", response=start)
        emit("response.in_progress", response=start)
        for index, item in enumerate(response["output"]):
            (_message_events if item["type"] == "message" else _call_events)(emit, index, item, size)
        emit("response.incomplete" if response["status"] == "incomplete" else "response.completed", response=response)
        return out

    def decode_turn(self, doc):
        if doc.get("object") != "response" or not isinstance(doc.get("output"), list):
            return None
        items = [i for i in doc["output"] if isinstance(i, dict)]
        calls = [ToolCall(i.get("call_id") or "", i.get("name") or "", i.get("arguments") or "")
                 for i in items if i.get("type") == "function_call"]
        parts = [p for i in items if i.get("type") == "message" for p in i.get("content") or [] if isinstance(p, dict)]
        refusal = "".join(p.get("refusal") or "" for p in parts if p.get("type") == "refusal") or None
        reason = (doc.get("incomplete_details") or {}).get("reason")
        finish = FINISH_OF.get(reason) or ("tool_calls" if calls else "refusal" if refusal else "stop")
        return Turn(text="".join(p.get("text") or "" for p in parts if p.get("type") == "output_text"),
                    tool_calls=calls, finish=finish, usage=self.usage(doc) or Usage(), refusal=refusal)

    def error(self, status, message):
        return openai_error(status, message)

    def stream_error(self, message):
        # As the API sends it (a nested `error`, not the documented flat fields): the openai SDK
        # raises APIError on it. The sequence number of the event it replaces is not known here.
        error = {"type": "server_error", "code": "server_error", "message": message, "param": None}
        return sse.encode({"type": "error", "sequence_number": 0, "error": error}, "error")

    def count_tokens(self, conv):
        return {"object": "response.input_tokens", "input_tokens": conv.approx_input_tokens()}

    # -- edits ----------------------------------------------------------------------
    def classify(self, doc, event_name):
        kind = doc.get("type") if isinstance(doc, dict) else event_name
        if kind == "response.output_item.added":
            return "tool_start" if (doc.get("item") or {}).get("type") == "function_call" else "other"
        return {"response.created": "start", "response.output_text.delta": "text", "response.refusal.delta": "text",
                "response.function_call_arguments.delta": "tool_args", "response.completed": "done",
                "response.incomplete": "done", "response.failed": "error", "error": "error"}.get(kind, "other")

    def text_slots(self, doc, streaming):
        if doc.get("type") == "response.output_text.delta":
            return [Slot(doc, "delta")] if doc.get("delta") else []
        slots = [Slot(p, "text", restates=streaming) for p in _text_parts(doc) if p.get("text")]
        if doc.get("type") == "response.output_text.done" and doc.get("text"):
            slots.append(Slot(doc, "text", restates=True))
        return slots

    def started_tool_names(self, doc):
        item = doc.get("item") if doc.get("type") == "response.output_item.added" else None
        return [item.get("name") or ""] if isinstance(item, dict) and item.get("type") == "function_call" else []

    def tool_arg_slots(self, doc, streaming):
        kind = doc.get("type")
        if kind == "response.function_call_arguments.delta":
            return [Slot(doc, "delta")] if doc.get("delta") else []
        if kind == "response.function_call_arguments.done":
            return [Slot(doc, "arguments", restates=True)]
        return [Slot(i, "arguments", restates=streaming) for i in _items_of(doc) if i.get("type") == "function_call"]

    def mark_cut(self, doc, streaming):
        changed = False
        for item in _items_of(doc):
            if item.get("type") == "message" and item.get("status") != "incomplete":
                item["status"], changed = "incomplete", True
        response = _response_of(doc)
        if response is None or response.get("status") not in ("completed", "incomplete") \
                or (response.get("incomplete_details") or {}).get("reason") == "max_output_tokens":
            return changed
        response.update(status="incomplete", completed_at=None, incomplete_details={"reason": "max_output_tokens"})
        if doc.get("type") == "response.completed":
            doc["type"] = "response.incomplete"  # the event the API sends for a cut response
        return True

    def hollow(self, doc, streaming):
        response = _response_of(doc)
        if response is not None and response.get("output"):
            response["output"] = []
            return True
        return False

    def drift(self, doc, streaming, mode):
        return {"rename": self._rename, "refusal": self._refuse, "format": self._reformat}[mode](doc)

    @staticmethod
    def _rename(doc: dict) -> bool:
        """`text` becomes `value` wherever text lives (a field renamed under the client)."""
        holders = _text_parts(doc) + ([doc] if doc.get("type") == "response.output_text.done" else [])
        for holder in holders:
            holder["value"] = holder.pop("text", "")
        if doc.get("type") == "response.output_text.delta" and "delta" in doc:
            doc["value"] = doc.pop("delta")
            return True
        return bool(holders)

    @staticmethod
    def _refuse(doc: dict) -> bool:
        """The model refuses: refusal parts and events instead of text, and no tool calls."""
        kind, response = doc.get("type"), _response_of(doc)
        if kind == "response.output_text.delta":
            doc.update(type="response.refusal.delta", delta="")
            doc.pop("logprobs", None)
        elif kind == "response.output_text.done":
            doc.update(type="response.refusal.done", refusal=REFUSAL)
            for key in ("text", "logprobs"):
                doc.pop(key, None)
        elif kind in ("response.content_part.added", "response.content_part.done") \
                and (doc.get("part") or {}).get("type") == "output_text":
            doc["part"] = {"type": "refusal", "refusal": "" if kind.endswith("added") else REFUSAL}
        elif kind == "response.output_item.done" and (doc.get("item") or {}).get("type") == "message":
            doc["item"] = _refused(doc["item"].get("id") or "msg_refusal")
        elif response is not None and response.get("output"):
            ids = [i.get("id") for i in response["output"] if isinstance(i, dict) and i.get("type") == "message"]
            response["output"] = [_refused(ids[0] if ids else f"msg_{response.get('id', '')}")]
        else:
            return False
        return True

    @staticmethod
    def _reformat(doc: dict) -> bool:
        """The text arrives wrapped in a JSON object nobody asked for."""
        slots = [Slot(doc, "delta")] if doc.get("type") == "response.output_text.delta" and doc.get("delta") else \
            [Slot(p, "text") for p in _text_parts(doc) if p.get("text")] + \
            ([Slot(doc, "text")] if doc.get("type") == "response.output_text.done" and doc.get("text") else [])
        for slot in slots:
            slot.set(json.dumps({"answer": slot.get()}))
        return bool(slots)

    def usage(self, doc):
        if not isinstance(doc, dict):
            return None
        raw = doc.get("usage") if doc.get("object") == "response" else (_response_of(doc) or {}).get("usage")
        if not isinstance(raw, dict):
            return None
        return Usage(int(raw.get("input_tokens") or 0), int(raw.get("output_tokens") or 0))

    def malformed_event(self):
        return (b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", '
                b'"sequence_number": 4, "delta": "\\u00\n\n')
