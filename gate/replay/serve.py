"""Serve one recorded exchange back to the agent as it happened on the wire.

The order is the recording's: an optional delay, the response head, the body or
each SSE event as it was written, an optional hold, then a clean end or a drop. A
hold ends with the cell (or when the agent gives up), exactly as the live fault's
did, so an agent that mishandles a timeout meets a timeout again, not a quick reset.
Notes are built from the session file only, so a replay's verdict is deterministic.
"""

from __future__ import annotations

from gate.replay.session import RecordedExchange

HOLD_BOUND_S = 600.0  # a hold that lasted "until the agent gave up" is bounded by the cell anyway


async def serve_exchange(recorded: RecordedExchange, info, ex, imported: bool = False) -> None:
    entry = ex.entry
    entry.fault, entry.retry_after = recorded.fault, recorded.retry_after
    entry.extra["forwarded_as_recorded"] = recorded.forwarded  # the write happened, in the recording
    if recorded.delay_ms:
        ex.note(f"delayed {recorded.delay_ms:g} ms, as recorded")
        await ex.run.wait_or_end(recorded.delay_ms / 1000)
    if recorded.status is None:  # dropped before any response (reset, timeout, timeout_after_write)
        await _hold(recorded, ex)
        await ex.abort("dropped, as recorded")
    payloads, content_type = _payloads(recorded, info, imported)
    length = recorded.length if recorded.dropped else (None if content_type == "text/event-stream"
                                                       else sum(map(len, payloads)))
    await ex.start(recorded.status, _headers(recorded, content_type), length=length)
    for data in payloads:
        await ex.write(data)
    await _hold(recorded, ex)
    if recorded.dropped:
        await ex.abort("dropped, as recorded")
    await ex.finish()


def _payloads(recorded: RecordedExchange, info, imported: bool) -> tuple[list[bytes], str]:
    """What to send; an imported JSON answer (a trace has no wire bytes) is served in the dialect
    and stream mode the agent asked in. A recorded JSON answer to a stream request is a fault: kept."""
    if imported and recorded.events is None and recorded.kind == "llm" and recorded.status == 200:
        from gate.dialects.translate import answer_as

        served = answer_as(recorded.body, info)  # in the dialect (and stream mode) the agent asked in
        if served is not None:
            return served
    return recorded.payloads(), recorded.content_type


def _headers(recorded: RecordedExchange, content_type: str) -> list[tuple[str, str]]:
    kept = [(k, v) for k, v in recorded.headers.items() if k != "content-type"]
    return kept + [("content-type", content_type)]


async def _hold(recorded: RecordedExchange, ex) -> None:
    if recorded.hold_ms is None:
        return
    seconds = recorded.hold_ms / 1000 if recorded.hold_until == "time" else HOLD_BOUND_S
    await ex.hold(seconds)
