"""OpenAI Chat Completions (`POST …/chat/completions`), plus the OpenAI family's `/models`
and `/embeddings`, which every OpenAI-compatible client also calls.

Streams are `data: <chunk>` events ending in `data: [DONE]`; with
`stream_options.include_usage` every chunk carries `usage: null` and one last chunk
has empty `choices` and the usage. Tool calls stream as `delta.tool_calls[i]`: the
first fragment names the call, later ones carry pieces of `function.arguments`.

The deprecated `functions` / `function_call` request fields (still typed by the SDKs) are
spoken too: one call a turn, as `message.function_call` with finish reason
`function_call`, streamed as `delta.function_call` (the name first, then argument
pieces); results come back as `role: function` messages that name the function.

Azure OpenAI speaks the same wire under `/openai/deployments/<deployment>/chat/completions?api-version=…`
(routing is by the path's end, so it needs nothing of its own) with one difference: the deployment
in the path, not the body's `model`, is the model that answers, so it is the model here too.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from typing import Any

from gate.dialects import sse
from gate.dialects.base import Dialect, Encoded, Slot
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, Usage

ERROR_KINDS = {400: ("invalid_request_error", None), 401: ("authentication_error", "invalid_api_key"),
               403: ("permission_error", None), 404: ("invalid_request_error", "not_found"),
               429: ("requests", "rate_limit_exceeded"), 500: ("server_error", "server_error"),
               502: ("server_error", "bad_gateway"), 503: ("server_error", "service_unavailable"),
               529: ("server_error", "overloaded")}
FINISH = {"stop": "stop", "tool_calls": "tool_calls", "length": "length", "refusal": "stop",
          "content_filter": "content_filter"}


DEPLOYMENT = re.compile(r"/deployments/([^/?]+)/")


def deployment_of(path: str) -> str | None:
    """Azure OpenAI's deployment, from `/openai/deployments/<deployment>/…`; None for any other path."""
    found = DEPLOYMENT.search(path.split("?")[0])
    return found.group(1) if found else None


def text_of(content: Any) -> str:
    """String content, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def openai_error(status: int, message: str) -> dict:
    kind, code = ERROR_KINDS.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def model_list(names: list[str]) -> dict:
    return {"object": "list", "data": [{"id": n, "object": "model", "created": 0, "owned_by": "chaos-gate"}
                                       for n in names]}


def _tool_choice(choice: Any) -> str:
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name") or choice.get("name") or "required"
    return choice if choice in ("auto", "none", "required") else "auto"


def _legacy_id(position: int) -> str:
    """A legacy function call has no id: its result is the next `role: function` message."""
    return f"function_call_{position}"


def _message(raw: dict, position: int = 0) -> Message | None:
    role = raw.get("role")
    if role in ("system", "developer"):
        return Message("system", text_of(raw.get("content")))
    if role == "tool":
        return Message("tool", tool_results=[ToolResult(raw.get("tool_call_id") or "", text_of(raw.get("content")))])
    if role == "function":  # the legacy result: it names the function, not a call id
        return Message("tool", tool_results=[ToolResult("", text_of(raw.get("content")), name=raw.get("name"))])
    if role == "assistant":
        calls = [ToolCall(c.get("id") or "", (c.get("function") or {}).get("name") or "",
                          (c.get("function") or {}).get("arguments") or "")
                 for c in raw.get("tool_calls") or []]
        legacy = raw.get("function_call")
        if isinstance(legacy, dict) and not calls:
            calls = [ToolCall(_legacy_id(position), legacy.get("name") or "", legacy.get("arguments") or "")]
        return Message("assistant", text_of(raw.get("content")), tool_calls=calls)
    if role == "user":
        return Message("user", text_of(raw.get("content")))
    return None


class OpenAIChat(Dialect):
    name = "openai_chat"
    provider = "openai"

    def operation(self, method, path):
        bare = path.split("?")[0].rstrip("/")
        if method == "POST" and bare.endswith("/chat/completions"):
            return "generate"
        if method == "GET" and bare.endswith("/models"):
            return "models"
        if method == "POST" and bare.endswith("/embeddings"):
            return "embeddings"
        return None

    def model_in_path(self, path):
        return deployment_of(path)

    # -- requests -------------------------------------------------------------------
    def decode(self, path, doc):
        messages = [m for m in (_message(r, i) for i, r in enumerate(doc.get("messages") or [])
                                if isinstance(r, dict)) if m]
        names, pending = {c.id: c.name for m in messages for c in m.tool_calls}, ""
        for m in messages:
            pending = next((c.id for c in m.tool_calls if c.id.startswith("function_call_")), pending)
            for result in m.tool_results:
                if not result.call_id and result.name:  # a legacy result answers the latest legacy call
                    result.call_id = pending
                result.name = names.get(result.call_id) or result.name
        fmt = doc.get("response_format") or {}
        tools = [ToolSpec(f.get("name", ""), f.get("description") or "", f.get("parameters") or {})
                 for f in ((t.get("function") or {}) for t in doc.get("tools") or [] if isinstance(t, dict))]
        legacy = not tools and bool(doc.get("functions"))
        if legacy:
            tools = [ToolSpec(f.get("name", ""), f.get("description") or "", f.get("parameters") or {})
                     for f in doc["functions"] if isinstance(f, dict)]
        choice = doc.get("function_call", "auto") if legacy else doc.get("tool_choice", "auto")
        return Conversation(
            messages=[m for m in messages if m.role != "system"],
            system="\n".join(m.text for m in messages if m.role == "system"),
            model=deployment_of(path) or doc.get("model"), tools=tools, tool_choice=_tool_choice(choice),
            response_schema=(fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else None,
            schema_name=str((fmt.get("json_schema") or {}).get("name") or "") if fmt.get("type") == "json_schema" else "",
            json_mode=fmt.get("type") == "json_object", stream=bool(doc.get("stream")), n=int(doc.get("n") or 1),
            include_usage=bool((doc.get("stream_options") or {}).get("include_usage")),
            parallel_tool_calls=doc.get("parallel_tool_calls") is not False and not legacy,
            legacy_functions=legacy)

    # -- answers --------------------------------------------------------------------
    def encode(self, turn, conv, ident, chunk_chars=8):
        if conv.stream:
            return Encoded("text/event-stream", self._stream(turn, conv, ident, chunk_chars))
        body = {"id": f"chatcmpl-{ident}", "object": "chat.completion", "created": 0, "model": conv.model or "sim",
                "choices": [self._choice(turn, i, conv.legacy_functions) for i in range(max(1, conv.n))],
                "usage": self._usage(turn.usage), "system_fingerprint": "fp_chaos_gate"}
        return Encoded("application/json", [json.dumps(body).encode()])

    @staticmethod
    def _finish(turn: Turn, legacy: bool) -> str:
        return "function_call" if legacy and turn.tool_calls and turn.finish == "tool_calls" else FINISH[turn.finish]

    def _choice(self, turn: Turn, index: int, legacy: bool = False) -> dict:
        message: dict = {"role": "assistant", "content": None if turn.refusal else turn.text,
                         "refusal": turn.refusal, "annotations": []}
        if turn.tool_calls and legacy:
            call = turn.tool_calls[0]  # the old API makes one call a turn
            message["function_call"] = {"name": call.name, "arguments": call.arguments}
            message["content"] = turn.text or None
        elif turn.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}} for c in turn.tool_calls]
            message["content"] = turn.text or None
        return {"index": index, "message": message, "logprobs": None, "finish_reason": self._finish(turn, legacy)}

    @staticmethod
    def _usage(usage: Usage) -> dict:
        return {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                "total_tokens": usage.total}

    def _stream(self, turn: Turn, conv: Conversation, ident: str, size: int) -> list[bytes]:
        def chunk(index: int, delta: dict, finish: str | None = None) -> bytes:
            doc = {"id": f"chatcmpl-{ident}", "object": "chat.completion.chunk", "created": 0,
                   "model": conv.model or "sim", "system_fingerprint": "fp_chaos_gate",
                   "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            if conv.include_usage:
                doc["usage"] = None
            return sse.encode(doc)

        out: list[bytes] = []
        for n in range(max(1, conv.n)):
            out.append(chunk(n, {"role": "assistant", "content": "", "refusal": None}))
            if turn.refusal:
                out += [chunk(n, {"refusal": p}) for p in pieces(turn.refusal, size)]
            elif turn.text:
                out += [chunk(n, {"content": p}) for p in pieces(turn.text, size)]
            if conv.legacy_functions and turn.tool_calls:
                call = turn.tool_calls[0]
                out.append(chunk(n, {"function_call": {"name": call.name, "arguments": ""}}))
                out += [chunk(n, {"function_call": {"arguments": p}}) for p in pieces(call.arguments, size) if p]
            for i, call in enumerate([] if conv.legacy_functions else turn.tool_calls):
                out.append(chunk(n, {"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                                     "function": {"name": call.name, "arguments": ""}}]}))
                out += [chunk(n, {"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                        for p in pieces(call.arguments, size) if p]
            out.append(chunk(n, {}, self._finish(turn, conv.legacy_functions)))
        if conv.include_usage:
            out.append(sse.encode({"id": f"chatcmpl-{ident}", "object": "chat.completion.chunk", "created": 0,
                                   "model": conv.model or "sim", "system_fingerprint": "fp_chaos_gate",
                                   "choices": [], "usage": self._usage(turn.usage)}))
        out.append(b"data: [DONE]\n\n")
        return out

    def decode_turn(self, doc):
        choices = doc.get("choices")
        if doc.get("object") not in (None, "chat.completion") or not isinstance(choices, list) or not choices:
            return None
        message = choices[0].get("message") or {}
        calls = [ToolCall(c.get("id") or f"call_{i}", (c.get("function") or {}).get("name") or "",
                          (c.get("function") or {}).get("arguments") or "")
                 for i, c in enumerate(message.get("tool_calls") or [])]
        legacy = message.get("function_call")
        if isinstance(legacy, dict) and not calls:
            calls = [ToolCall(_legacy_id(0), legacy.get("name") or "", legacy.get("arguments") or "")]
        finish = {v: k for k, v in FINISH.items() if k != "refusal"} | {"function_call": "tool_calls"}
        finish = finish.get(choices[0].get("finish_reason"), "stop")
        usage = self.usage(doc) or Usage()
        return Turn(text=text_of(message.get("content")), tool_calls=calls, finish=finish, usage=usage,
                    refusal=message.get("refusal"))

    def error(self, status, message):
        return openai_error(status, message)

    def stream_error(self, message):
        return sse.encode({"error": {"message": message, "type": "server_error", "param": None, "code": None}})

    def list_models(self, names):
        return model_list(names)

    def embedding_inputs(self, doc):
        raw = doc.get("input")
        return [raw] if isinstance(raw, str) else [str(x) for x in raw or []]

    def embeddings(self, doc, path, vectors):
        b64 = doc.get("encoding_format") == "base64"  # the openai SDK asks for base64 by default
        data = [{"object": "embedding", "index": i,
                 "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if b64 else v}
                for i, v in enumerate(vectors)]
        tokens = sum(max(1, len(t) // 4) for t in self.embedding_inputs(doc))
        return {"object": "list", "data": data, "model": doc.get("model") or "sim-embedding",
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def count_tokens(self, conv):
        return {"input_tokens": conv.approx_input_tokens()}

    # -- edits ----------------------------------------------------------------------
    def classify(self, doc, event_name):
        if doc == "[DONE]":
            return "done"
        if not isinstance(doc, dict):
            return "other"
        if "error" in doc:
            return "error"
        choices = doc.get("choices")
        if choices == [] and doc.get("usage"):
            return "usage"
        for choice in choices or []:
            delta = choice.get("delta") or {}
            calls = list(delta.get("tool_calls") or [])
            if isinstance(delta.get("function_call"), dict):
                calls.append({"function": delta["function_call"]})  # the legacy field
            if any((c.get("function") or {}).get("arguments") for c in calls):
                return "tool_args"
            if calls:
                return "tool_start"
            if delta.get("content") or delta.get("refusal"):
                return "text"
            if choice.get("finish_reason"):
                return "finish"
            if delta.get("role"):
                return "start"
        return "other"

    def _holders(self, doc: dict, streaming: bool) -> list[dict]:
        key = "delta" if streaming else "message"
        return [c[key] for c in doc.get("choices") or [] if isinstance(c, dict) and isinstance(c.get(key), dict)]

    def text_slots(self, doc, streaming):
        return [Slot(h, "content") for h in self._holders(doc, streaming) if isinstance(h.get("content"), str)
                and h["content"]]

    def started_tool_names(self, doc):
        """A call's name comes on its first delta only (the legacy `function_call` alike)."""
        calls = [c.get("function") for h in self._holders(doc, True) for c in h.get("tool_calls") or []
                 if isinstance(c, dict)]
        calls += [h.get("function_call") for h in self._holders(doc, True)]
        return [f["name"] for f in calls if isinstance(f, dict) and isinstance(f.get("name"), str) and f["name"]]

    def tool_arg_slots(self, doc, streaming):
        holders = [c["function"] for h in self._holders(doc, streaming) for c in h.get("tool_calls") or []
                   if isinstance(c, dict) and isinstance(c.get("function"), dict)]
        holders += [h["function_call"] for h in self._holders(doc, streaming)
                    if isinstance(h.get("function_call"), dict)]
        return [Slot(f, "arguments") for f in holders if f.get("arguments") or not streaming]

    def mark_cut(self, doc, streaming):
        changed = False
        for choice in doc.get("choices") or []:
            if choice.get("finish_reason") and choice["finish_reason"] != "length":
                choice["finish_reason"], changed = "length", True
        return changed

    def hollow(self, doc, streaming):
        if doc.get("choices"):
            doc["choices"] = []
            return True
        return False

    def drift(self, doc, streaming, mode):
        changed = False
        for holder in self._holders(doc, streaming):
            if mode == "rename" and isinstance(holder.get("content"), str) and holder["content"]:
                holder["text"] = holder.pop("content")  # only real text: a null/empty one changes nothing
                changed = True
            elif mode == "refusal" and holder.get("content"):
                holder["refusal"], holder["content"] = "I'm sorry, but I can't help with that.", None
                changed = True
            elif mode == "format" and isinstance(holder.get("content"), str) and holder["content"]:
                holder["content"] = json.dumps({"answer": holder["content"]})
                changed = True
        return changed

    def usage(self, doc):
        raw = doc.get("usage") if isinstance(doc, dict) else None
        if not isinstance(raw, dict):
            return None
        return Usage(int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0))

    def malformed_event(self):
        return b'data: {"choices": [{"index": 0, "delta": {"content": "\\u00\n\n'

