"""A request body read once for what the proxy needs of it: its JSON, and a digest that survives retries.

Apart from routes.py and trace.py because both read bodies: routes to describe a request,
the trace to fingerprint it (replay matching, side_effect_once).
"""

from __future__ import annotations

import hashlib
import json

_SCAN = json.JSONDecoder().raw_decode
_SPACE = json.decoder.WHITESPACE.match


def json_of(body: bytes):
    """The body's JSON, or None. A UTF-8 body is scanned directly (json.loads on bytes first sniffs
    the encoding in Python, on every request); anything unusual takes json.loads' own path."""
    if not body:
        return None
    try:
        text = body.decode()
        doc, end = _SCAN(text, _SPACE(text, 0).end())
        if _SPACE(text, end).end() == len(text):
            return doc
    except ValueError:
        pass
    try:
        return json.loads(body)
    except ValueError:
        return None


VOLATILE = {"id", "request_id", "timestamp", "created", "nonce", "trace_id"}


def body_digest(body: bytes) -> str:
    """Digest of the body that ignores key order and volatile top-level fields."""
    doc = json_of(body)
    if isinstance(doc, dict):
        doc = {k: v for k, v in doc.items() if k not in VOLATILE}
    canonical = json.dumps(doc, sort_keys=True).encode() if doc is not None else body
    return hashlib.sha256(canonical).hexdigest()[:16]
