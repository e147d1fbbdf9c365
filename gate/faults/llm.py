"""Faults in an LLM's answer: broken streams, broken JSON, wrong shapes, drift.

Each forwards the request (the upstream or the sim really answers) and then damages
the answer in one precise way. Stream faults count whole SSE events, so "after 3
events" means the same bytes every time.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from gate.faults.base import LLM, FaultBase, register
from gate.faults.shapes import anthropic_stream_error
from gate.proxy import sse


class _LlmFault(FaultBase):
    applies_to = frozenset({LLM})


async def _relay_events(ex, resp, upto: int | None = None):
    """Start the response and relay events; returns the events not yet sent."""
    await ex.start(resp.status, resp.headers)
    pending, sent = [], 0
    async for event in sse.events(resp.chunks()):
        if upto is not None and sent >= upto:
            pending.append(event)
            continue
        await ex.write(event)
        sent += 1
    await resp.aclose()
    return pending


@register
class Stall(_LlmFault):
    """The stream stops after N events and hangs (bounded), then drops."""

    kind: Literal["stall"] = "stall"
    after_events: int = Field(default=2, ge=0)
    seconds: float = Field(default=30.0, gt=0, le=600)

    async def apply(self, ex):
        resp = await ex.forward()
        if not resp.is_sse:
            body = await resp.read()
            await ex.start(resp.status, resp.headers, length=len(body))
            await ex.write(body[: len(body) // 2])
        else:
            await _relay_events(ex, resp, self.after_events)
        ex.note(f"stalled after {self.after_events} events")
        await ex.hold(self.seconds)
        await ex.abort("then dropped")


@register
class TruncateStream(_LlmFault):
    """Close the stream cleanly after N events: no finish reason, no [DONE] / message_stop."""

    kind: Literal["truncate_stream"] = "truncate_stream"
    after_events: int = Field(default=3, ge=0)

    async def apply(self, ex):
        resp = await ex.forward()
        if not resp.is_sse:
            body = await resp.read()
            ex.note("body cut in half")
            await ex.respond(resp.status, body[: len(body) // 2], resp.headers)
            return
        await _relay_events(ex, resp, self.after_events)
        ex.note(f"stream closed after {self.after_events} events")
        await ex.finish()


@register
class MalformedSse(_LlmFault):
    """After N events, an event whose data is not valid JSON, then the rest of the stream."""

    kind: Literal["malformed_sse"] = "malformed_sse"
    after_events: int = Field(default=1, ge=0)

    async def apply(self, ex):
        resp = await ex.forward()
        if not resp.is_sse:
            return await MalformedJson().apply_to(ex, resp)
        rest = await _relay_events(ex, resp, self.after_events)
        if ex.info.provider == "anthropic":
            await ex.write(b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
                           b'"delta": {"type": "text_delta", "text": "\\u00\n\n')
        else:
            await ex.write(b'data: {"choices": [{"delta": {"content": "\\u00\n\n')
        for event in rest:
            await ex.write(event)
        ex.note(f"bad event after {self.after_events} events")
        await ex.finish()


@register
class MalformedJson(_LlmFault):
    """A 200 whose JSON body is cut mid-document."""

    kind: Literal["malformed_json"] = "malformed_json"

    async def apply(self, ex):
        await self.apply_to(ex, await ex.forward())

    async def apply_to(self, ex, resp):
        body = await resp.read()
        await resp.aclose()
        cut = body[: max(1, len(body) * 2 // 3)]
        await ex.respond(200, cut, [(k, v) for k, v in resp.headers if k.lower() != "content-type"])


def _openai_choices(doc: dict) -> list[dict]:
    return doc.get("choices") or []


async def _rewrite_json(ex, rewrite) -> None:
    """Forward, then rewrite a non-streaming JSON answer (or each stream event's JSON)."""
    resp = await ex.forward()
    if resp.is_sse:
        await ex.start(resp.status, resp.headers)
        async for event in sse.events(resp.chunks()):
            doc = sse.data_of(event)
            if isinstance(doc, dict):
                event = sse.encode(rewrite(doc, True), sse.name_of(event))
            await ex.write(event)
        await ex.finish()
        return
    try:
        doc = await resp.json()
    except ValueError:
        return await ex.respond(resp.status, await resp.read(), resp.headers)
    await ex.respond_json(resp.status, rewrite(doc, False))


@register
class CutContent(_LlmFault):
    """The answer is cut short: finish_reason `length` / stop_reason `max_tokens`."""

    kind: Literal["cut_content"] = "cut_content"

    async def apply(self, ex):
        resp = await ex.forward()
        if resp.is_sse:
            await ex.start(resp.status, resp.headers)
            content_seen = 0
            async for event in sse.events(resp.chunks()):
                if sse.is_content(event):
                    content_seen += 1
                    if content_seen > 1:
                        continue
                doc = sse.data_of(event)
                if isinstance(doc, dict):
                    event = sse.encode(_cut(doc, True), sse.name_of(event))
                await ex.write(event)
            ex.note("content cut after the first delta")
            return await ex.finish()
        doc = await resp.json()
        await ex.respond_json(resp.status, _cut(doc, False))


def _cut(doc: dict, streaming: bool) -> dict:
    for choice in _openai_choices(doc):
        msg = choice.get("message") or {}
        if isinstance(msg.get("content"), str):
            msg["content"] = msg["content"][: max(1, len(msg["content"]) // 3)]
        if choice.get("finish_reason"):
            choice["finish_reason"] = "length"
    if doc.get("type") == "message":
        for block in doc.get("content") or []:
            if block.get("type") == "text":
                block["text"] = block["text"][: max(1, len(block["text"]) // 3)]
        doc["stop_reason"] = "max_tokens"
    if doc.get("type") == "message_delta":
        doc.setdefault("delta", {})["stop_reason"] = "max_tokens"
    return doc


@register
class WrongShape(_LlmFault):
    """Valid JSON, wrong schema: `choices: []` / `content: []`."""

    kind: Literal["wrong_shape"] = "wrong_shape"

    async def apply(self, ex):
        def rewrite(doc, streaming):
            if "choices" in doc:
                doc["choices"] = []
            if doc.get("type") == "message":
                doc["content"] = []
            if doc.get("type") == "content_block_delta":
                doc["delta"] = {}
            return doc
        await _rewrite_json(ex, rewrite)


@register
class BadToolArgs(_LlmFault):
    """Tool-call arguments that are not JSON."""

    kind: Literal["bad_tool_args"] = "bad_tool_args"
    arguments: str = '{"order_id": 1234, "amount": '

    async def apply(self, ex):
        corrupted = []  # streaming: only the first argument fragment is damaged

        def rewrite(doc, streaming):
            for choice in _openai_choices(doc):
                holder = choice.get("delta" if streaming else "message") or {}
                for call in holder.get("tool_calls") or []:
                    fn = call.get("function") or {}
                    if not streaming and "arguments" in fn:
                        fn["arguments"] = self.arguments
                    elif streaming and fn.get("arguments") and not corrupted:
                        fn["arguments"] = "}" + fn["arguments"]
                        corrupted.append(True)
            if doc.get("type") == "message":
                for block in doc.get("content") or []:
                    if block.get("type") == "tool_use":
                        block["input"] = self.arguments
            if doc.get("type") == "content_block_delta" and doc["delta"].get("type") == "input_json_delta" \
                    and not corrupted:
                doc["delta"]["partial_json"] = "}" + doc["delta"]["partial_json"]
                corrupted.append(True)
            return doc
        ex.note("tool arguments made invalid")
        await _rewrite_json(ex, rewrite)


async def _fragments(ex, mutate) -> None:
    """Buffer the stream's tool-argument fragments and let `mutate` rearrange them."""
    resp = await ex.forward()
    if not resp.is_sse:
        return await ex.pipe(resp)
    await ex.start(resp.status, resp.headers)
    held = []
    async for event in sse.events(resp.chunks()):
        if sse.is_tool_fragment(event):
            held.append(event)
            continue
        if held:
            for e in mutate(held):
                await ex.write(e)
            held = []
        await ex.write(event)
    for e in mutate(held):
        await ex.write(e)
    await ex.finish()


@register
class DuplicateToolFragment(_LlmFault):
    """One tool-argument fragment of the stream is sent twice."""

    kind: Literal["duplicate_tool_fragment"] = "duplicate_tool_fragment"
    fragment: int = Field(default=1, ge=0, description="Index of the fragment to repeat.")

    async def apply(self, ex):
        def mutate(frags):
            if not frags:
                return frags
            i = min(self.fragment, len(frags) - 1)
            ex.note(f"fragment {i} duplicated")
            return frags[: i + 1] + [frags[i]] + frags[i + 1:]
        await _fragments(ex, mutate)


@register
class ReorderToolFragments(_LlmFault):
    """Two adjacent tool-argument fragments of the stream arrive swapped."""

    kind: Literal["reorder_tool_fragments"] = "reorder_tool_fragments"
    fragment: int = Field(default=0, ge=0)

    async def apply(self, ex):
        def mutate(frags):
            if len(frags) < 2:
                return frags
            i = min(self.fragment, len(frags) - 2)
            ex.note(f"fragments {i} and {i + 1} swapped")
            return frags[:i] + [frags[i + 1], frags[i]] + frags[i + 2:]
        await _fragments(ex, mutate)


@register
class Drift(_LlmFault):
    """The provider changed under you: a renamed field, a refusal, or a new format."""

    kind: Literal["drift"] = "drift"
    mode: Literal["rename", "refusal", "format"] = "rename"

    async def apply(self, ex):
        ex.note(f"drift: {self.mode}")
        await _rewrite_json(ex, self._rewrite)

    def _rewrite(self, doc, streaming):
        for choice in _openai_choices(doc):
            holder = choice.get("delta" if streaming else "message") or {}
            if self.mode == "rename" and "content" in holder:
                holder["text"] = holder.pop("content")
            elif self.mode == "refusal" and holder.get("content") is not None:
                holder["refusal"] = "I'm sorry, but I can't help with that."
                holder["content"] = None
            elif self.mode == "format" and isinstance(holder.get("content"), str) and holder["content"]:
                holder["content"] = json.dumps({"answer": holder["content"]})
        if doc.get("type") == "message":
            if self.mode == "refusal":
                doc["content"], doc["stop_reason"] = [], "refusal"
            for block in doc.get("content") or []:
                if block.get("type") == "text":
                    if self.mode == "rename":
                        block["type"], block["value"] = "output_text", block.pop("text")
                    elif self.mode == "format":
                        block["text"] = json.dumps({"answer": block["text"]})
        return doc


@register
class StreamError(_LlmFault):
    """Mid-stream provider error: Anthropic's `event: error`, OpenAI's error chunk."""

    kind: Literal["stream_error"] = "stream_error"
    after_events: int = Field(default=2, ge=0)

    async def apply(self, ex):
        resp = await ex.forward()
        if not resp.is_sse:
            return await ex.pipe(resp)
        await _relay_events(ex, resp, self.after_events)
        if ex.info.provider == "anthropic":
            await ex.write(anthropic_stream_error())
        else:
            await ex.write(sse.encode({"error": {"message": "The server had an error (injected by chaos-gate)",
                                                 "type": "server_error"}}))
        ex.note(f"error event after {self.after_events} events")
        await ex.finish()
