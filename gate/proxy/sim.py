"""`sim`: a deterministic scripted model the gate serves itself, in OpenAI and Anthropic shapes.

Rules map the latest user message (regex) to a tool call and/or an answer, so the
example and the tests run with no key and no network, while the agent still talks
to it through its real SDK, streaming or not, with tool calls split into fragments.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from gate.proxy.exchange import RequestInfo, UpstreamResponse
from gate.proxy.sse import encode


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def conversation(doc: dict) -> tuple[str, list[str]]:
    """(latest user text, tool results that came after it), for either provider."""
    user, results = "", []
    for msg in doc.get("messages") or []:
        role, content = msg.get("role"), msg.get("content")
        blocks = content if isinstance(content, list) else []
        tool_blocks = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if role == "tool":
            results.append(_text_of(content) if not isinstance(content, str) else content)
        elif role == "user" and tool_blocks:
            results.extend(_text_of(b.get("content")) if not isinstance(b.get("content"), str) else b["content"]
                           for b in tool_blocks)
        elif role == "user":
            user, results = _text_of(content), []
    return user, results


def _render(template: str, groups: tuple, tool_result: str) -> str:
    def repl(m):
        key = m.group(1)
        if key == "tool_result":
            return tool_result
        idx = int(key)
        return (groups[idx] if idx < len(groups) else "") or ""
    return re.sub(r"\{\{\s*(tool_result|\d+)\s*\}\}", repl, template)


def _render_args(args: Any, groups: tuple) -> Any:
    if isinstance(args, str):
        return _render(args, groups, "")
    if isinstance(args, dict):
        return {k: _render_args(v, groups) for k, v in args.items()}
    if isinstance(args, list):
        return [_render_args(v, groups) for v in args]
    return args


def decide(spec, doc: dict) -> tuple[str | None, dict | None]:
    """(answer text, tool call {name, arguments}) for this request."""
    user, results = conversation(doc)
    for rule in spec.rules:
        m = re.search(rule.when, user, re.IGNORECASE | re.DOTALL)
        if not m:
            continue
        groups = (m.group(0),) + m.groups()
        if rule.tool and not results:
            return None, {"name": rule.tool, "arguments": _render_args(rule.arguments, groups)}
        return _render(rule.answer or spec.default, groups, results[-1] if results else ""), None
    return spec.default, None


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _ident(doc: dict, prefix: str) -> str:
    return prefix + hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:20]


def openai_response(spec, doc, answer, call) -> tuple[list[bytes], str]:
    model, rid = doc.get("model", "sim"), _ident(doc, "chatcmpl-sim-")
    args = json.dumps(call["arguments"]) if call else None
    if not doc.get("stream"):
        message: dict = {"role": "assistant", "content": answer, "refusal": None}
        if call:
            message["tool_calls"] = [{"id": _ident(doc, "call_"), "type": "function",
                                      "function": {"name": call["name"], "arguments": args}}]
        body = {"id": rid, "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if call else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}
        return [json.dumps(body).encode()], "application/json"

    def chunk(delta, finish=None):
        return encode({"id": rid, "object": "chat.completion.chunk", "created": 0, "model": model,
                       "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})
    out = [chunk({"role": "assistant", "content": ""})]
    if call:
        out.append(chunk({"tool_calls": [{"index": 0, "id": _ident(doc, "call_"), "type": "function",
                                          "function": {"name": call["name"], "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
                for p in _pieces(args, spec.chunk_chars)]
        out.append(chunk({}, "tool_calls"))
    else:
        out += [chunk({"content": p}) for p in _pieces(answer, spec.chunk_chars)]
        out.append(chunk({}, "stop"))
    out.append(b"data: [DONE]\n\n")
    return out, "text/event-stream"


def anthropic_response(spec, doc, answer, call) -> tuple[list[bytes], str]:
    model, mid = doc.get("model", "sim"), _ident(doc, "msg_sim_")
    block = ({"type": "tool_use", "id": _ident(doc, "toolu_"), "name": call["name"], "input": call["arguments"]}
             if call else {"type": "text", "text": answer})
    stop = "tool_use" if call else "end_turn"
    usage = {"input_tokens": 10, "output_tokens": 10}
    if not doc.get("stream"):
        body = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [block],
                "stop_reason": stop, "stop_sequence": None, "usage": usage}
        return [json.dumps(body).encode()], "application/json"
    start_block = dict(block, input={}) if call else dict(block, text="")
    out = [encode({"type": "message_start", "message": {"id": mid, "type": "message", "role": "assistant",
                                                         "model": model, "content": [], "stop_reason": None,
                                                         "stop_sequence": None, "usage": usage}}, "message_start"),
           encode({"type": "content_block_start", "index": 0, "content_block": start_block}, "content_block_start")]
    if call:
        out += [encode({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": p}}, "content_block_delta")
                for p in _pieces(json.dumps(call["arguments"]), spec.chunk_chars)]
    else:
        out += [encode({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
                       "content_block_delta") for p in _pieces(answer, spec.chunk_chars)]
    out += [encode({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            encode({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 10}}, "message_delta"),
            encode({"type": "message_stop"}, "message_stop")]
    return out, "text/event-stream"


class SimUpstream:
    """An upstream answered in-process by the scripted model."""

    def __init__(self, spec):
        self.spec = spec

    async def send(self, info: RequestInfo, headers, body: bytes) -> UpstreamResponse:
        try:
            doc = json.loads(body)
        except ValueError:
            return _static(400, {"error": {"message": "sim: request body is not JSON", "type": "invalid_request_error"}})
        answer, call = decide(self.spec, doc)
        if info.provider == "anthropic":
            parts, ctype = anthropic_response(self.spec, doc, answer, call)
        else:
            parts, ctype = openai_response(self.spec, doc, answer, call)

        async def chunks():
            for part in parts:
                yield part
        return UpstreamResponse(200, [("content-type", ctype)], chunks())

    async def aclose(self):
        pass


def _static(status, doc) -> UpstreamResponse:
    async def chunks():
        yield json.dumps(doc).encode()
    return UpstreamResponse(status, [("content-type", "application/json")], chunks())


class _Chunking:
    chunk_chars = 16


def completion_as_stream(body: str, provider: str) -> list[str] | None:
    """An OpenAI chat completion (e.g. imported from a trace) re-served as an SSE stream."""
    try:
        doc = json.loads(body)
        message = doc["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    call = None
    if message.get("tool_calls"):
        fn = message["tool_calls"][0]["function"]
        call = {"name": fn["name"], "arguments": json.loads(fn.get("arguments") or "{}")}
    request = {"model": doc.get("model", "imported"), "stream": True}
    maker = anthropic_response if provider == "anthropic" else openai_response
    parts, _ = maker(_Chunking, request, message.get("content") or "", call)
    return [p.decode() for p in parts]
