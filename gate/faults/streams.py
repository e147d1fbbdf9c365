"""Faults in an LLM's stream: a stall, a clean truncation, a malformed or error event,
tool-argument fragments duplicated or reordered.

Each counts whole SSE events, so "after 3 events" means the same bytes every time. A
stream fault that meets a non-streaming answer, or a stream too short to cut, passes
the answer through and records `not_applicable` with the reason, rather than claiming
a stall that never happened or silently turning into another fault.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gate.faults.base import LLM, FaultBase, register
from gate.faults.bodies import map_event
from gate.faults.shapes import dialect_of

NOT_A_STREAM = "the answer is not a stream"
NO_DIALECT = "not an answer of a known LLM dialect"


class _StreamFault(FaultBase):
    applies_to = frozenset({LLM})


async def _pass(ex, resp, reason: str) -> None:
    ex.not_applicable(reason)
    await ex.pipe(resp)


def _too_short(events: int) -> str:
    return f"the stream ended within {events} events"


async def _relay_events(ex, resp, upto: int | None = None) -> list[bytes]:
    """Start the response and relay events; returns the events not yet sent."""
    from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
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
class Stall(_StreamFault):
    """The stream stops after N events and hangs (bounded), then drops."""

    kind: Literal["stall"] = "stall"
    after_events: int = Field(default=2, ge=0)
    seconds: float = Field(default=30.0, gt=0, le=600)

    async def apply(self, ex):
        resp = await ex.forward()
        if not resp.is_sse:
            return await _pass(ex, resp, NOT_A_STREAM)
        if not await _relay_events(ex, resp, self.after_events):
            ex.not_applicable(_too_short(self.after_events))
            return await ex.finish()
        ex.note(f"stalled after {self.after_events} events;")
        await ex.hold(self.seconds)
        await ex.abort("then dropped")


@register
class TruncateStream(_StreamFault):
    """Close the stream cleanly after N events: no finish reason, no [DONE] / message_stop."""

    kind: Literal["truncate_stream"] = "truncate_stream"
    after_events: int = Field(default=3, ge=0)

    async def apply(self, ex):
        resp = await ex.forward()
        if not resp.is_sse:
            return await _pass(ex, resp, NOT_A_STREAM)
        if await _relay_events(ex, resp, self.after_events):
            ex.note(f"stream closed after {self.after_events} events")
        else:
            ex.not_applicable(_too_short(self.after_events))
        await ex.finish()


async def _insert_event(ex, after: int, make_event, then_rest: bool, note: str) -> None:
    """Relay `after` events, then one event the dialect makes, then (or not) the rest."""
    resp = await ex.forward()
    dialect = dialect_of(ex.info)
    if not resp.is_sse or dialect is None:
        return await _pass(ex, resp, NOT_A_STREAM if dialect else NO_DIALECT)
    rest = await _relay_events(ex, resp, after)
    await ex.write(make_event(dialect))
    for event in rest if then_rest else ():
        await ex.write(event)
    ex.note(note)
    await ex.finish()


@register
class MalformedSse(_StreamFault):
    """After N events, an event whose data is not valid JSON, then the rest of the stream."""

    kind: Literal["malformed_sse"] = "malformed_sse"
    after_events: int = Field(default=1, ge=0)

    async def apply(self, ex):
        await _insert_event(ex, self.after_events, lambda d: d.malformed_event(), True,
                            f"bad event after {self.after_events} events")


@register
class StreamError(_StreamFault):
    """A provider error inside an open stream, as the dialect delivers one (an `error` event or chunk)."""

    kind: Literal["stream_error"] = "stream_error"
    after_events: int = Field(default=2, ge=0)

    async def apply(self, ex):
        await _insert_event(ex, self.after_events,
                            lambda d: d.stream_error("The server had an error (injected by chaos-gate)"), False,
                            f"error event after {self.after_events} events")


async def _fragments(ex, mutate) -> None:
    """Buffer each run of tool-argument fragments and let `mutate` rearrange it
    (`mutate` returns None when a run is too short for it)."""
    from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
    resp = await ex.forward()
    dialect = dialect_of(ex.info)
    if not resp.is_sse or dialect is None:
        return await _pass(ex, resp, f"{NOT_A_STREAM} (no tool-argument fragments)" if dialect else NO_DIALECT)
    await ex.start(resp.status, resp.headers)
    held, seen, done = [], 0, 0
    rewritten: dict[str, str] = {}  # whole arguments as sent in pieces -> as the agent now assembles them

    def arguments(events: list[bytes]) -> str:
        return "".join(slot.get() for e in events for slot in dialect.tool_arg_slots(_doc(e), True)
                       if not slot.restates)

    async def flush():
        nonlocal held, done
        out = mutate(held) if held else None
        done += out is not None
        if out is not None:
            rewritten[arguments(held)] = arguments(out)
        for e in out if out is not None else held:
            await ex.write(e)
        held = []

    def restate(doc):
        """Events that restate the whole arguments (Responses' `.done`, the final response) say
        what the reordered or duplicated pieces now add up to, so both views agree."""
        for slot in dialect.tool_arg_slots(doc, True):
            if slot.restates and slot.get() in rewritten:
                slot.set(rewritten[slot.get()])
        return doc

    async for event in sse.events(resp.chunks()):
        if dialect.classify(sse.data_of(event), sse.name_of(event)) == "tool_args":
            held.append(event)
            seen += 1
            continue
        await flush()
        await ex.write(map_event(event, restate) if rewritten else event)
    await flush()
    await resp.aclose()
    if not done:
        ex.not_applicable("the answer has no tool call" if not seen else f"only {seen} tool-argument fragment(s)")
    await ex.finish()


def _doc(event: bytes) -> dict:
    from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
    doc = sse.data_of(event)
    return doc if isinstance(doc, dict) else {}


@register
class DuplicateToolFragment(_StreamFault):
    """One tool-argument fragment of the stream is sent twice."""

    kind: Literal["duplicate_tool_fragment"] = "duplicate_tool_fragment"
    fragment: int = Field(default=1, ge=0, description="Index of the fragment to repeat.")

    async def apply(self, ex):
        def mutate(frags):
            i = min(self.fragment, len(frags) - 1)
            ex.note(f"fragment {i} duplicated")
            return frags[: i + 1] + [frags[i]] + frags[i + 1:]
        await _fragments(ex, mutate)


@register
class ReorderToolFragments(_StreamFault):
    """Two adjacent tool-argument fragments of the stream arrive swapped."""

    kind: Literal["reorder_tool_fragments"] = "reorder_tool_fragments"
    fragment: int = Field(default=0, ge=0)

    async def apply(self, ex):
        def mutate(frags):
            if len(frags) < 2:
                return None
            i = min(self.fragment, len(frags) - 2)
            ex.note(f"fragments {i} and {i + 1} swapped")
            return frags[:i] + [frags[i + 1], frags[i]] + frags[i + 2:]
        await _fragments(ex, mutate)
