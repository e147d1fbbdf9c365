"""Server-sent events as the proxy sees them: raw event blocks, split without re-encoding.

Stream faults count, cut, duplicate and reorder whole events, so the split must keep
every byte of each event (comments, `event:` lines) exactly as the upstream sent it.
"""

from __future__ import annotations

import json
import re
from typing import AsyncIterator

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
    """The `event:` field of an event block, if it has one (Anthropic names every event)."""
    return next((ln[6:].strip() for ln in event.decode("utf-8", "replace").splitlines()
                 if ln.startswith("event:")), None)


def encode(doc, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(doc, separators=(",", ":")) + "\n\n").encode()


def is_tool_fragment(event: bytes) -> bool:
    """An event that carries a piece of tool-call arguments (OpenAI or Anthropic)."""
    doc = data_of(event)
    if not isinstance(doc, dict):
        return False
    if doc.get("type") == "content_block_delta":
        return (doc.get("delta") or {}).get("type") == "input_json_delta"
    for choice in doc.get("choices") or []:
        for call in (choice.get("delta") or {}).get("tool_calls") or []:
            if (call.get("function") or {}).get("arguments"):
                return True
    return False


def is_content(event: bytes) -> bool:
    doc = data_of(event)
    if not isinstance(doc, dict):
        return False
    if doc.get("type") == "content_block_delta":
        return (doc.get("delta") or {}).get("type") == "text_delta"
    return any((c.get("delta") or {}).get("content") for c in doc.get("choices") or [])
