"""Server-sent events: the framing every streaming dialect shares, below faults and proxy.

Events are kept as raw blocks, split without re-encoding, because stream faults count,
cut, duplicate and reorder whole events and must keep every byte of each one
(comments, `event:` lines) exactly as the upstream sent it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

BOUNDARY = re.compile(rb"\r?\n\r?\n")


async def events(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """Yield each event block including its terminating blank line."""
    buffer = b""
    async for chunk in chunks:
        buffer += chunk
        while True:
            m = BOUNDARY.search(buffer)
            if not m:
                break
            yield buffer[: m.end()]
            buffer = buffer[m.end():]
    if buffer.strip():
        yield buffer


def split(body: bytes) -> list[bytes]:
    """A whole SSE body as its event blocks."""
    out, rest = [], body
    while (m := BOUNDARY.search(rest)) is not None:
        out.append(rest[: m.end()])
        rest = rest[m.end():]
    if rest.strip():
        out.append(rest)
    return out


def data_of(event: bytes) -> dict | str | None:
    """The JSON of an event's data lines (or the raw string, e.g. [DONE])."""
    lines = [ln[5:].lstrip() for ln in event.decode("utf-8", "replace").splitlines() if ln.startswith("data:")]
    if not lines:
        return None
    raw = "\n".join(lines)
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def name_of(event: bytes) -> str | None:
    """The `event:` field of an event block, if it has one (Anthropic and Responses name every event)."""
    return next((ln[6:].strip() for ln in event.decode("utf-8", "replace").splitlines()
                 if ln.startswith("event:")), None)


def encode(doc, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(doc, separators=(",", ":")) + "\n\n").encode()
