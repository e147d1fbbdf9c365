"""Serve one recorded exchange back to the agent as it happened on the wire.

The order is the recording's: an optional delay, the response head, the body or
each SSE event as it was written, an optional hold, then a clean end or a drop. A
hold ends with the cell (or when the agent gives up), exactly as the live fault's
did, so an agent that mishandles a timeout meets a timeout again, not a quick reset.
Notes are built from the session file only, so a replay's verdict is deterministic.
"""

from __future__ import annotations

import json

from gate.replay.session import RecordedExchange

HOLD_BOUND_S = 600.0  # a hold that lasted "until the agent gave up" is bounded by the cell anyway


async def serve_exchange(recorded: RecordedExchange, info, ex, imported: bool = False) -> None:
    entry = ex.entry
    entry.fault, entry.retry_after = recorded.fault, recorded.retry_after
    entry.extra["forwarded_as_recorded"] = recorded.forwarded  # the write happened, in the recording
    if recorded.error:
        ex.note(f"as traced: {recorded.error}"[:160])
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
    if imported and recorded.kind == "llm" and recorded.error and (recorded.status or 0) >= 400:
        from gate.faults.shapes import error_for

        message = recorded.error.partition(": ")[2] or recorded.error  # the provider's own words, shaped as
        body = json.dumps(error_for(info, recorded.status, message)).encode()  # the agent's SDK expects
        return [body], "application/json"
    return recorded.payloads(), recorded.content_type


def _headers(recorded: RecordedExchange, content_type: str) -> list[tuple[str, str]]:
    kept = [(k, v) for k, v in recorded.headers.items() if k != "content-type"]
    return kept + [("content-type", content_type)]


async def _hold(recorded: RecordedExchange, ex) -> None:
    if recorded.hold_ms is None:
        return
    seconds = recorded.hold_ms / 1000 if recorded.hold_until == "time" else HOLD_BOUND_S
    await ex.hold(seconds)


class ReplayUpstream:
    """The recording as the upstream a fault forwards to: chaos on top of a replay.

    A fault that forwards (truncate, bad tool args, timeout after write…) damages the
    recorded answer instead of a live one; the trace keeps whether the recording's
    upstream saw the write, never that a real upstream did."""

    def __init__(self, book, ex):
        self.book, self.ex = book, ex

    async def send(self, info, headers, body):
        from gate.proxy.exchange import UpstreamResponse
        from gate.proxy.upstream import UpstreamUnavailable

        entry, digest = self.ex.entry, self.ex.entry.body_digest
        recorded = self.book.retry(info, digest) or self.book.take(info, digest)
        entry.forwarded = False  # no real upstream: the recording answers
        if recorded is None:
            return _miss(self.book, info, self.ex)
        entry.extra["forwarded_as_recorded"] = recorded.forwarded
        self.book.mark_faulted(info, digest)  # the fault now damages this answer: a repeat is a retry
        if recorded.status is None:
            raise UpstreamUnavailable("the recorded call was dropped")
        payloads, content_type = _payloads(recorded, info, self.book.session.source != "recorded")
        return UpstreamResponse(recorded.status, _headers(recorded, content_type), _iterate(payloads))


async def _iterate(payloads: list[bytes]):
    for data in payloads:
        yield data


def _miss(book, info, ex):
    from gate.faults.shapes import error_for
    from gate.proxy.exchange import UpstreamResponse
    from gate.replay.session import request_doc

    ex.entry.extra["replay_miss"] = book.explain_miss(info, request_doc(ex.body))
    ex.note("not in the recording")
    body = json.dumps(error_for(info, 502, "chaos-gate replay: request not in the recording")).encode()
    return UpstreamResponse(502, [("content-type", "application/json")], _iterate([body]))

