"""What a write means: its body without what differs between two sends of one intended write.

Idempotency keys, request ids, UUIDs, timestamps and nonces change on every send, so two sends
of one transfer differ in bytes and agree in meaning. `side_effect_once` and `writes_once` both
count writes by meaning, so a transfer re-sent under a fresh Idempotency-Key is the same
transfer twice, while a retry under the same key is one execution the server can deduplicate.
"""

from __future__ import annotations

import json
import re

VOLATILE_KEYS = re.compile(r"^(id|request_?id|requestid|idempotency_?key|nonce|timestamp|ts|time|created(_at)?|"
                           r"updated(_at)?|trace_?id|span_?id|correlation_?id|client_?(request|reference)_?id|"
                           r"uuid|date)$", re.IGNORECASE)
VOLATILE_VALUE = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{24,}|"
                            r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?|1[6-9]\d{8,11})$",
                            re.IGNORECASE)


def _strip(doc):
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items() if not VOLATILE_KEYS.match(str(k))}
    if isinstance(doc, list):
        return [_strip(v) for v in doc]
    if isinstance(doc, str) and VOLATILE_VALUE.match(doc.strip()):
        return "~"
    return doc


def body_meaning(body: bytes) -> str:
    """The body as canonical JSON without its volatile fields (or the text itself, if it is not JSON)."""
    try:
        doc = json.loads(body) if body else None
    except ValueError:
        return body.decode("utf-8", "replace")
    return json.dumps(_strip(doc), sort_keys=True, separators=(",", ":"), default=str)


def strings_in(doc, limit: int = 64, depth: int = 0):
    """Every string a JSON document holds, however it nests (to `limit` levels: the document may be an
    agent's, so its depth is bounded here, never by the interpreter's recursion limit)."""
    if depth > limit:
        return
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for value in doc.values():
            yield from strings_in(value, limit, depth + 1)
    elif isinstance(doc, list):
        for value in doc:
            yield from strings_in(value, limit, depth + 1)
