"""Faults in an LLM's answer: broken JSON, cut content, wrong shapes, bad tool
arguments (unparsable, or well-formed and wrong for the tool's schema), drift
(stream-level faults live in streams.py).

Each forwards the request (the upstream or the sim really answers) and then damages
the answer in one precise way, in JSON or in each event of a stream. *What* to damage
is the fault's business; *where* it lives in the answer is the wire dialect's
(gate/dialects: text slots, tool-argument slots, the finish reason), so every fault
works alike in Chat, Responses, Messages and Gemini without naming any of them. Only
what a rewrite changed is re-encoded, and a fault that finds nothing to damage (no
tool call, no JSON, no dialect) says so as `not_applicable`.
"""

from __future__ import annotations

import json
import random
from typing import Literal

from gate.faults.base import LLM, FaultBase, register
from gate.faults.bodies import map_event, map_json
from gate.faults.shapes import dialect_of, error_headers

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


NO_DIALECT = "not an answer of a known LLM dialect"


async def _rewrite_json(ex, rewrite) -> None:
    """Forward, then rewrite a non-streaming JSON answer (or each stream event's JSON).
    `rewrite(dialect, doc, streaming)` edits doc in place and returns whether it changed it."""
    from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
    resp = await ex.forward()
    dialect = dialect_of(ex.info)
    if dialect is None or ex.info.dialect is None:
        ex.not_applicable(NO_DIALECT)
        return await ex.pipe(resp)
    edit = _editor(dialect, rewrite)
    if resp.is_sse:
        await ex.start(resp.status, resp.headers)
        async for event in sse.events(resp.chunks()):
            await ex.write(map_event(event, lambda doc: edit(doc, True)))
        await resp.aclose()
        return await ex.finish()
    await _rewrite_body(ex, resp, lambda doc: edit(doc, False))


def _editor(dialect, rewrite):
    def edit(doc, streaming):
        rewrite(dialect, doc, streaming)
        return doc
    return edit


async def _rewrite_body(ex, resp, rewrite) -> None:
    body = await resp.read()
    await resp.aclose()
    new = map_json(body, rewrite)
    if new is None:
        ex.not_applicable(NOT_JSON)
    await ex.respond(resp.status, body if new is None else new, resp.headers, content_type=None)


@register
class CutContent(_LlmFault):
    """The answer is cut short, and says so: finish_reason `length`, stop_reason
    `max_tokens`, status `incomplete`, finishReason `MAX_TOKENS` — in the dialect's words."""

    kind: Literal["cut_content"] = "cut_content"

    async def apply(self, ex):
        from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
        resp = await ex.forward()
        dialect = dialect_of(ex.info)
        if dialect is None or ex.info.dialect is None:
            ex.not_applicable(NO_DIALECT)
            return await ex.pipe(resp)
        if not resp.is_sse:
            return await _rewrite_body(ex, resp, lambda doc: _cut_whole(dialect, doc))
        await ex.start(resp.status, resp.headers)
        content_seen, delivered = 0, []
        async for event in sse.events(resp.chunks()):
            doc = sse.data_of(event)
            if dialect.classify(doc, sse.name_of(event)) == "text":
                content_seen += 1
                if content_seen > 1:
                    continue
                delivered += [slot.get() for slot in dialect.text_slots(doc, True) if not slot.restates]
            await ex.write(map_event(event, lambda d, delivered=delivered: _marked(dialect, d, "".join(delivered))))
        await resp.aclose()
        if content_seen > 1:
            ex.note(f"content cut after the first delta ({content_seen - 1} dropped)")
        await ex.finish()


def _cut_whole(dialect, doc: dict) -> dict:
    for slot in dialect.text_slots(doc, False):
        text = slot.get()
        slot.set(text[: max(1, len(text) // 3)])
    dialect.mark_cut(doc, False)
    return doc


def _marked(dialect, doc: dict, delivered: str) -> dict:
    """A stream event marked as cut; where the event restates the whole text (Responses'
    `.done` events and final response), it restates only what was really delivered."""
    for slot in dialect.text_slots(doc, True):
        if slot.restates:
            slot.set(delivered)
    dialect.mark_cut(doc, True)
    return doc


@register
class WrongShape(_LlmFault):
    """Valid JSON, wrong schema: the list every SDK indexes into comes back empty."""

    kind: Literal["wrong_shape"] = "wrong_shape"

    async def apply(self, ex):
        await _rewrite_json(ex, lambda dialect, doc, streaming: dialect.hollow(doc, streaming))


@register
class BadToolArgs(_LlmFault):
    """Tool-call arguments that are not JSON (in a stream: the first fragment is damaged).

    Where the arguments are a JSON object on the wire, never text (a whole Anthropic
    answer's `input`), the API cannot send unparsable ones; what it can send is an object
    that breaks the tool's schema (tools are not strict by default), so that is the damage:
    a property of the wrong type, else a required one missing. Gemini's own answer to a
    call that does not parse (MALFORMED_FUNCTION_CALL) is its dialect's business."""

    kind: Literal["bad_tool_args"] = "bad_tool_args"
    arguments: str = '{"order_id": 1234, "amount": '

    async def apply(self, ex):
        corrupted, broke = [], []

        def rewrite(dialect, doc, streaming):
            for slot in dialect.tool_arg_slots(doc, streaming):
                if slot.holds_object:
                    why = self._break_schema(slot, dialect, ex)
                    if why:
                        broke.append(why)
                elif slot.restates and corrupted:  # the whole arguments restated: damaged as the pieces were
                    slot.set("}" + slot.get())
                elif not slot.restates and not (streaming and corrupted):
                    slot.set("}" + slot.get() if streaming else self.arguments)
                    corrupted.append(True)
        await _rewrite_json(ex, rewrite)
        if corrupted:
            ex.note("tool arguments made invalid")
        elif broke:
            ex.note("tool input made invalid for its schema: " + "; ".join(broke))
        elif not ex.inapplicable:
            ex.not_applicable("the answer has no tool call")

    def _break_schema(self, slot, dialect, ex) -> str:
        """Replace an object-valued input with one its tool's schema rejects; what was broken."""
        current = slot.holder.get(slot.key)
        current = current if isinstance(current, dict) else {}
        try:
            given = json.loads(self.arguments)
        except ValueError:
            given = None
        if isinstance(given, dict) and given != current:  # the fault's own object, when it is one
            slot.holder[slot.key] = given
            return "the fault's arguments"
        schema = _tool_schema(dialect, ex, slot.holder.get("name"))
        broken = off_schema(schema, current)
        if broken is None:
            ex.not_applicable("the tool input is an object on this wire and nothing in its tool's schema can be "
                              "broken (no typed or required property)")
            return ""
        slot.holder[slot.key], why = broken
        return why


@register
class WrongToolArgs(_LlmFault):
    """Tool-call arguments that parse and break the tool's schema, as real models send them: a required
    field missing, a field of the wrong JSON type, or a value outside its enum or range (`variant`; by
    default drawn from the cell's seed).

    The tool's schema is the one the request offered; the first call whose schema can be broken is, and
    the trace note names the field and what was done to it. No tool call, or no schema: not applicable."""

    kind: Literal["wrong_tool_args"] = "wrong_tool_args"
    variant: Literal["any", "missing", "wrong_type", "outside"] = "any"

    async def apply(self, ex):
        from gate.faults.arg_breaker import break_arguments
        from gate.faults.call_edits import rewrite_calls

        dialect = dialect_of(ex.info)
        if dialect is None or ex.info.dialect is None:
            ex.not_applicable(NO_DIALECT)
            return await ex.pipe(await ex.forward())
        schedule = getattr(ex.run, "schedule", None)  # the cell's seed: its reproduction breaks the same field
        rng = random.Random(f"{getattr(schedule, 'seed', 0)}:wrong_tool_args:{ex.entry.call}")
        done: list[str] = []  # what was done to the one call broken (the first that can be)
        skipped: list[str] = []  # why each call before it was left alone

        def edit(calls) -> dict[str, str]:
            for call in calls:
                schema, current = _tool_schema(dialect, ex, call.name), call.arguments()
                broken = break_arguments(schema, current, rng, self.variant) if current is not None else None
                if broken is None:
                    skipped.append(_unbroken(call.name, schema, current))
                    continue
                old = call.text()
                call.replace(broken.arguments)
                done.append(f"{call.name}: {broken.why} ({broken.variant})")
                return {old: call.text()}
            return {}
        await rewrite_calls(ex, dialect, edit)
        if done:
            ex.note(f"tool arguments made wrong for the schema: {done[0]}")
        else:
            ex.not_applicable("; ".join(skipped) or "the answer has no tool call")


def _unbroken(name, schema, current) -> str:
    if current is None:
        return f"{name}'s arguments are not a JSON object"
    if schema is None:
        return f"the request offered no schema for {name}"
    return f"nothing in {name}'s schema can be broken (no required, typed, enumerated or bounded field)"


WRONG_TYPE = {"string": 1234, "integer": "not-a-number", "number": "not-a-number", "boolean": "maybe",
              "array": "not-an-array", "object": "not-an-object"}


def off_schema(schema: dict | None, current: dict) -> tuple[dict, str] | None:
    """An object the schema rejects, as close to `current` as possible: a property of the wrong
    type, else a required property missing. Without a schema, the current values' own types
    are broken. None when nothing can be broken."""
    props = (schema or {}).get("properties") or {}
    for name, sub in props.items():
        kind = sub.get("type") if isinstance(sub, dict) else None
        if isinstance(kind, str) and kind in WRONG_TYPE:
            return dict(current, **{name: WRONG_TYPE[kind]}), f"'{name}' is not a{'n' * (kind[0] in 'aeiou')} {kind}"
    required = [r for r in (schema or {}).get("required") or [] if isinstance(r, str)]
    if required:
        return {k: v for k, v in current.items() if k != required[0]}, f"required '{required[0]}' is missing"
    if schema is None and current:
        name, value = next(iter(current.items()))
        kind = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array",
                dict: "object"}.get(type(value))
        if kind:
            return dict(current, **{name: WRONG_TYPE[kind]}), f"'{name}' is not a{'n' * (kind[0] in 'aeiou')} {kind}"
    return None


def _tool_schema(dialect, ex, name) -> dict | None:
    """The input schema of the named tool, as the request offered it; None when not offered here
    (a continued thread keeps its tools on the server side)."""
    doc = ex.json  # a property: the request body's JSON
    if not isinstance(doc, dict):
        return None
    try:
        tools = dialect.decode(ex.info.path, doc).tools
    except Exception:  # a request the dialect cannot read offers no schema
        return None
    return next((t.parameters for t in tools if t.name == name), None)


@register
class Drift(_LlmFault):
    """The provider changed under you: a renamed field, a refusal, or a new format."""

    kind: Literal["drift"] = "drift"
    mode: Literal["rename", "refusal", "format"] = "rename"

    async def apply(self, ex):
        ex.note(f"drift: {self.mode}")
        await _rewrite_json(ex, lambda dialect, doc, streaming: dialect.drift(doc, streaming, self.mode))


@register
class ContextLength(_LlmFault):
    """The provider refuses the prompt as longer than the model's context window: a 400 in the family's exact
    body (OpenAI's `context_length_exceeded`, Anthropic's `prompt is too long`, Gemini's token-count error;
    gate/dialects/refusals.py). What a conversation grown long meets: an agent that neither trims nor
    summarises crashes the turn. Never forwarded."""

    kind: Literal["context_length"] = "context_length"

    async def apply(self, ex):
        from gate.dialects.refusals import context_length_error

        dialect = dialect_of(ex.info)
        name = dialect.name if dialect is not None else "openai_chat"
        tokens = len(ex.body or b"") // 4  # the prompt's size as the error names it, at ~4 bytes a token
        await ex.respond_json(400, context_length_error(name, tokens), error_headers(ex.info))
