"""Turn one traced cell run into a Session file (request and response bodies included).

Besides the bytes, each exchange keeps what shaped the agent's next move: the status,
the headers a client acts on, the Retry-After the gate sent, whether the upstream saw
the request, and the wire timing of a fault (delay, hold, drop). The timing is read
from `entry.extra`, which the proxy fills while recording; it goes into the session
file only, never into the report, so the report's verdict part stays deterministic.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from gate.dialects.sse import BOUNDARY
from gate.replay.session import RecordedExchange, Session, request_doc, write_session

# Response headers that change what a client does next; the rest (dates, ids) are noise.
KEPT_HEADERS = {"content-type", "retry-after", "retry-after-ms", "x-should-retry", "mcp-session-id"}


def _events(data: bytes) -> list[bytes]:
    """Split an SSE body at event boundaries, keeping every byte (a cut tail included)."""
    out, pos = [], 0
    for m in BOUNDARY.finditer(data):
        out.append(data[pos:m.end()])
        pos = m.end()
    if data[pos:]:
        out.append(data[pos:])
    return out


def _encode(pieces: list[bytes], redact) -> tuple[str, list[str]]:
    """UTF-8 text (redacted) when every piece decodes; otherwise base64, byte for byte."""
    try:
        return "utf-8", [redact(p.decode("utf-8")) for p in pieces]
    except UnicodeDecodeError:
        return "base64", [base64.b64encode(p).decode("ascii") for p in pieces]


def _request(entry, redact):
    request = request_doc(entry.body)
    if isinstance(request, str):
        return redact(request)
    if request is not None:
        return json.loads(redact(json.dumps(request)))
    return None


def _wire(entry) -> dict:
    """The fault's timing on the wire, as the proxy measured it while recording."""
    extra = entry.extra
    closed = entry.status is not None and extra.get("closed", False)
    headers = {k.lower(): v for k, v in extra.get("headers", [])}
    held = extra.get("held_ms")
    return dict(
        headers={k: v for k, v in headers.items() if k in KEPT_HEADERS},
        delay_ms=round(extra["delay_ms"]) if extra.get("delay_ms") else None,
        hold_ms=None if held is None else round(held),
        hold_until="time" if extra.get("hold_ended", "full") == "full" else "agent",
        dropped=not closed,
        length=int(headers["content-length"]) if not closed and "content-length" in headers else None)


def exchange_of(entry, redact) -> RecordedExchange:
    data = b"".join(entry.response_chunks)
    sse = "text/event-stream" in (entry.content_type or "")
    encoding, pieces = _encode(_events(data) if sse else [data], redact)
    return RecordedExchange(
        target=entry.target, kind=entry.kind, method=entry.method, path=entry.path, digest=entry.body_digest,
        request=_request(entry, redact), status=entry.status,
        content_type=entry.content_type or "application/json",
        body="" if sse else pieces[0], events=pieces if sse else None, encoding=encoding, fault=entry.fault,
        retry_after=entry.retry_after, forwarded=entry.forwarded, **_wire(entry))


def record_session(cell, obs, trace, directory: Path, redact) -> Path:
    """A conversation cell keeps its turns (and history mode), each exchange the turn it was made in."""
    turns = getattr(cell, "turns", None)
    conversation = dict(turns=[redact(t) for t in turns], history=cell.history) if turns else {}
    exchanges = [exchange_of(e, redact) for e in trace]
    if turns:
        for ex, entry in zip(exchanges, trace, strict=True):
            ex.turn = getattr(entry, "turn", None)
    session = Session(
        id=cell.id, input_id=cell.input_id, input=redact(cell.text),
        output=None if obs.output is None else redact(obs.output),
        faults=[e.fault for e in trace if e.fault], exchanges=exchanges, **conversation)
    return write_session(session, Path(directory))
