"""Turn one traced cell run into a Session file (request and response bodies included)."""

from __future__ import annotations

from pathlib import Path

from gate.proxy.sse import BOUNDARY
from gate.replay.session import RecordedExchange, Session, request_doc, write_session


def _events(data: bytes) -> list[str]:
    out, pos = [], 0
    for m in BOUNDARY.finditer(data):
        out.append(data[pos:m.end()].decode("utf-8", "replace"))
        pos = m.end()
    if data[pos:].strip():
        out.append(data[pos:].decode("utf-8", "replace"))
    return out


def exchange_of(entry, redact) -> RecordedExchange:
    data = b"".join(entry.response_chunks)
    sse = "text/event-stream" in (entry.content_type or "")
    request = request_doc(entry.body)
    if isinstance(request, str):
        request = redact(request)
    elif request is not None:
        import json

        request = json.loads(redact(json.dumps(request)))
    dropped = entry.status is None
    return RecordedExchange(
        target=entry.target, kind=entry.kind, method=entry.method, path=entry.path, digest=entry.body_digest,
        request=request, status=None if dropped else entry.status, content_type=entry.content_type or "application/json",
        body="" if sse else redact(data.decode("utf-8", "replace")),
        events=[redact(e) for e in _events(data)] if sse else None, fault=entry.fault)


def record_session(cell, obs, trace, directory: Path, redact) -> Path:
    session = Session(
        id=cell.id, input_id=cell.input_id, input=redact(cell.text),
        output=None if obs.output is None else redact(obs.output),
        faults=[e.fault for e in trace if e.fault], exchanges=[exchange_of(e, redact) for e in trace])
    return write_session(session, Path(directory))
