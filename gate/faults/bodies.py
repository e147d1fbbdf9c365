"""What an answer looks like, and how to rewrite each look without lying about it.

Tools answer in JSON, MCP JSON-RPC (plain JSON or an SSE stream of messages) and text:
plain, Markdown, HTML, XML (web pages, documents, mail: the commonest carriers of
indirect prompt injection). LLMs answer in JSON or SSE. The rewrites here re-encode
only what they changed, so a rewrite that finds nothing to change gives back the
upstream's bytes exactly, and the proxy's honesty check sees that it did nothing.
"""

from __future__ import annotations

import copy
import html
import json
import re


def shape_of(content_type: str, body: bytes) -> str:
    """sse | json | html | xml | text | binary, from the media type (sniffed when absent)."""
    media = content_type.split(";")[0].strip().lower()
    if media == "text/event-stream":
        return "sse"
    if media.endswith("/json") or media.endswith("+json"):
        return "json"
    if media in ("text/html", "application/xhtml+xml"):
        return "html"
    if media.endswith("/xml") or media.endswith("+xml"):
        return "xml"
    if media.startswith("text/"):
        return "text"
    return _sniff(body) if not media else "binary"


def _sniff(body: bytes) -> str:
    try:
        json.loads(body)
        return "json"
    except ValueError:
        pass
    try:
        body.decode("utf-8")
        return "text"
    except UnicodeDecodeError:
        return "binary"


def charset_of(content_type: str) -> str:
    m = re.search(r'charset="?([\w.:-]+)', content_type, re.IGNORECASE)
    return m.group(1) if m else "utf-8"


def map_json(body: bytes, rewrite) -> bytes | None:
    """`rewrite(doc) -> doc` on a JSON body: the new bytes, the same bytes if nothing
    changed, None if the body is not JSON."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    new = rewrite(copy.deepcopy(doc))
    return body if new == doc else json.dumps(new).encode()


def map_event(event: bytes, rewrite) -> bytes:
    """One SSE event with its JSON data rewritten; left byte for byte when unchanged."""
    from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
    doc = sse.data_of(event)
    if not isinstance(doc, dict):
        return event
    new = rewrite(copy.deepcopy(doc))
    if new == doc:
        return event
    name = sse.name_of(event)
    if name is not None and name == doc.get("type") and isinstance(new, dict):
        name = new.get("type", name)  # a rewrite that changes the event's type renames the event too
    return sse.encode(new, name)


def map_sse(body: bytes, rewrite) -> bytes:
    """Every event of a whole SSE body through `map_event`."""
    from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
    out, rest = [], body
    while (m := sse.BOUNDARY.search(rest)) is not None:
        out.append(map_event(rest[: m.end()], rewrite))
        rest = rest[m.end():]
    if rest.strip():
        out.append(map_event(rest, rewrite))
    else:
        out.append(rest)
    return b"".join(out)


def add_text(shape: str, body: bytes, text: str, charset: str) -> bytes | None:
    """`text` added where a reader of that kind of document will see it; None when the
    shape has no place for text (binary, or XML without a closing root tag)."""
    if shape == "text":
        return body + f"\n\n{text}\n".encode(charset, "replace")
    if shape == "html":
        snippet = f"\n<p>{html.escape(text)}</p>\n".encode(charset, "replace")
        return _before(body, rb"</body\s*>", snippet) or body + snippet
    if shape == "xml":
        snippet = f"<note>{html.escape(text, quote=False)}</note>".encode(charset, "replace")
        return _before(body, rb"</[\w:.-]+\s*>\s*$", snippet)
    return None


def _before(body: bytes, pattern: bytes, snippet: bytes) -> bytes | None:
    """`snippet` inserted before the last match of `pattern`, or None without a match."""
    matches = list(re.finditer(pattern, body, re.IGNORECASE))
    if not matches:
        return None
    at = matches[-1].start()
    return body[:at] + snippet + body[at:]
