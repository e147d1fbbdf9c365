"""Faults in an LLM's answer: broken JSON, cut content, wrong shapes, bad tool
arguments, drift (stream-level faults live in streams.py).

Each forwards the request (the upstream or the sim really answers) and then damages
the answer in one precise way, in JSON or in each event of a stream. Only what a
rewrite changed is re-encoded, and a fault that finds nothing to damage (no tool call,
no JSON) says so as `not_applicable`.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from gate.faults.base import LLM, FaultBase, register
from gate.faults.bodies import map_event, map_json
from gate.proxy import sse

NOT_JSON = "the answer is not JSON"


class _LlmFault(FaultBase):
    applies_to = frozenset({LLM})


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
            await ex.write(map_event(event, lambda doc: rewrite(doc, True)))
        await resp.aclose()
        return await ex.finish()
    await _rewrite_body(ex, resp, lambda doc: rewrite(doc, False))


async def _rewrite_body(ex, resp, rewrite) -> None:
    body = await resp.read()
    await resp.aclose()
    new = map_json(body, rewrite)
    if new is None:
        ex.not_applicable(NOT_JSON)
    await ex.respond(resp.status, body if new is None else new, resp.headers, content_type=None)


@register
class CutContent(_LlmFault):
    """The answer is cut short: finish_reason `length` / stop_reason `max_tokens`."""

    kind: Literal["cut_content"] = "cut_content"

    async def apply(self, ex):
        resp = await ex.forward()
        if not resp.is_sse:
            return await _rewrite_body(ex, resp, lambda doc: _cut(doc, False))
        await ex.start(resp.status, resp.headers)
        content_seen = 0
        async for event in sse.events(resp.chunks()):
            if sse.is_content(event):
                content_seen += 1
                if content_seen > 1:
                    continue
            await ex.write(map_event(event, lambda doc: _cut(doc, True)))
        await resp.aclose()
        if content_seen > 1:
            ex.note(f"content cut after the first delta ({content_seen - 1} dropped)")
        await ex.finish()


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
                        corrupted.append(True)
                    elif streaming and fn.get("arguments") and not corrupted:
                        fn["arguments"] = "}" + fn["arguments"]
                        corrupted.append(True)
            if doc.get("type") == "message":
                for block in doc.get("content") or []:
                    if block.get("type") == "tool_use":
                        block["input"] = self.arguments
                        corrupted.append(True)
            delta = doc.get("delta") if doc.get("type") == "content_block_delta" else None
            if isinstance(delta, dict) and delta.get("type") == "input_json_delta" and not corrupted:
                delta["partial_json"] = "}" + delta.get("partial_json", "")
                corrupted.append(True)
            return doc
        await _rewrite_json(ex, rewrite)
        if corrupted:
            ex.note("tool arguments made invalid")
        elif not ex.inapplicable:
            ex.not_applicable("the answer has no tool call")


@register
class Drift(_LlmFault):
    """The provider changed under you: a renamed field, a refusal, or a new format."""

    kind: Literal["drift"] = "drift"
    mode: Literal["rename", "refusal", "format"] = "rename"

    async def apply(self, ex):
        ex.note(f"drift: {self.mode}")
        await _rewrite_json(ex, self._rewrite)

    def _rewrite(self, doc, streaming):
        self._openai(doc, streaming)
        if doc.get("type") == "message":
            self._anthropic(doc)
        if doc.get("type") in ("content_block_delta", "message_delta"):
            self._anthropic_event(doc)
        return doc

    def _openai(self, doc, streaming):
        for choice in _openai_choices(doc):
            holder = choice.get("delta" if streaming else "message") or {}
            if self.mode == "rename" and "content" in holder:
                holder["text"] = holder.pop("content")
            elif self.mode == "refusal" and holder.get("content") is not None:
                holder["refusal"] = "I'm sorry, but I can't help with that."
                holder["content"] = None
            elif self.mode == "format" and isinstance(holder.get("content"), str) and holder["content"]:
                holder["content"] = json.dumps({"answer": holder["content"]})

    def _anthropic(self, doc):
        if self.mode == "refusal":
            doc["content"], doc["stop_reason"] = [], "refusal"
        for block in doc.get("content") or []:
            if block.get("type") == "text":
                if self.mode == "rename":
                    block["type"], block["value"] = "output_text", block.pop("text")
                elif self.mode == "format":
                    block["text"] = json.dumps({"answer": block["text"]})

    def _anthropic_event(self, doc):
        """A Messages stream: text deltas renamed, emptied (refusal) or reformatted."""
        delta = doc.get("delta")
        if not isinstance(delta, dict):
            return
        if doc["type"] == "message_delta" and self.mode == "refusal":
            delta["stop_reason"] = "refusal"
        elif delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
            if self.mode == "rename":
                delta["value"] = delta.pop("text")
            elif self.mode == "refusal":
                delta["text"] = ""
            elif delta["text"]:
                delta["text"] = json.dumps({"answer": delta["text"]})
