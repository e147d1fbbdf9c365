"""The tool calls of an LLM answer, each with its whole arguments, rewritten in any dialect, JSON or streamed.

`bad_tool_args` damages argument fragments where they lie; a fault that must read a call's whole
arguments first (to break them for the tool's schema) needs them assembled. A whole answer holds
each call in one place. A stream sends them in pieces (Chat, Responses, Anthropic) or whole
(Gemini), and some events restate them whole (Responses' `.done` events and its final response).
So the stream is relayed as it comes up to its first tool-call event and held from there to its
end — an agent cannot use a call before its last piece anyway — then read as calls: each piece
belongs to the call last begun (`Dialect.started_tool_names`). A call's new arguments go into its
first piece, its other pieces are emptied, and each restatement is made to say the same.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

from gate.faults.bodies import map_json


@dataclass
class Call:
    name: str | None
    slots: list = field(default_factory=list)  # gate.dialects.Slot: its arguments' pieces, in order

    def text(self) -> str:
        return "".join(s.get() for s in self.slots)

    def arguments(self) -> dict | None:
        """The arguments as the model sent them; None when they are not one JSON object."""
        if not self.slots:
            return None
        first = self.slots[0]
        if first.holds_object:
            value = first.holder.get(first.key)
            return value if isinstance(value, dict) else None
        try:
            value = json.loads(self.text())
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def replace(self, arguments: dict) -> None:
        first, *rest = self.slots
        first.set(arguments if first.holds_object else json.dumps(arguments))
        for piece in rest:
            piece.set("")


def calls_in(dialect, docs: list[dict], streaming: bool) -> tuple[list[Call], list]:
    """The tool calls of one whole answer, or of a stream's events in order; and the slots that restate
    a call's whole arguments."""
    calls: list[Call] = []
    restating = []
    for doc in docs:
        begun = len(calls)
        calls += [Call(name) for name in (dialect.started_tool_names(doc) if streaming else [])]
        slots = dialect.tool_arg_slots(doc, streaming)
        restating += [s for s in slots if s.restates]
        for i, slot in enumerate(s for s in slots if not s.restates):
            if not streaming:  # a whole answer: each slot is a call, its name beside it
                calls.append(Call(slot.holder.get("name"), [slot]))
                continue
            if not calls:  # a piece before any begun call: a stream the dialect cannot place
                calls.append(Call(None))
            (calls[begun + i] if begun + i < len(calls) else calls[-1]).slots.append(slot)
    return calls, restating


async def rewrite_calls(ex, dialect, edit) -> None:
    """Forward, then let `edit(calls) -> {old arguments text: new}` rewrite the answer's tool calls."""
    resp = await ex.forward()
    if not resp.is_sse:
        body = await resp.read()
        await resp.aclose()
        new = map_json(body, lambda doc: _edit_whole(dialect, doc, edit))
        await ex.respond(resp.status, body if new is None else new, resp.headers, content_type=None)
        return
    from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
    await ex.start(resp.status, resp.headers)
    held: list[bytes] = []
    async for event in sse.events(resp.chunks()):
        doc = sse.data_of(event) if not held else None
        if held or (isinstance(doc, dict) and dialect.carries_tool_calls(doc, True)):
            held.append(event)
        else:
            await ex.write(event)
    await resp.aclose()
    for event in _edit_stream(dialect, held, edit):
        await ex.write(event)
    await ex.finish()


def _edit_whole(dialect, doc, edit):
    if isinstance(doc, dict):
        edit(calls_in(dialect, [doc], False)[0])
    return doc


def _edit_stream(dialect, events: list[bytes], edit) -> list[bytes]:
    from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
    sent = [sse.data_of(e) for e in events]
    docs = [copy.deepcopy(d) if isinstance(d, dict) else None for d in sent]
    calls, restating = calls_in(dialect, [d for d in docs if d is not None], True)
    rewritten = edit(calls)
    for slot in restating:
        if slot.get() in rewritten:
            slot.set(rewritten[slot.get()])
    return [e if doc is None or doc == was else sse.encode(doc, sse.name_of(e))
            for e, doc, was in zip(events, docs, sent, strict=True)]
