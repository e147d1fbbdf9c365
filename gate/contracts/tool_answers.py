"""What one tool call answered, as the agent received it: a success, or how it failed.

`claims_backed` asks of each call to a tool whether its answer reached the agent as a
success. The trace entry already holds what that takes, on every transport: the status
the agent got (None when the connection was dropped before an answer), whether the
answer ended cleanly (`extra["closed"]`), a command's exit code, the fault that fired on
it, and the first bytes the agent was sent (`extra["shown"]`, kept for the HTML viewer:
gate/proxy/exchange.py) and, for an answer longer than that, its last bytes (`extra["tail"]`),
so no body is copied for this check and a `huge` answer is judged whole, not called cut. MCP answers are unwrapped
(a JSON-RPC error, an `isError` result, the result's text), and the text is then read as
the sim reads a tool result (gate/dialects/answers.py), so the two never disagree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from gate.dialects import answers

EXCERPT = 80  # characters of an answer quoted in a message


@dataclass(frozen=True)
class Reading:
    ok: bool
    how: str  # what the agent got, in a few words: "201", "timeout_after_write", "an empty answer"
    text: str  # the answer's text (MCP: its content), for `result_matches`


def read(entry) -> Reading:
    """The answer of one tool trace entry (a TraceEntry; a TraceStep without bodies reads by status)."""
    extra = getattr(entry, "extra", None) or {}
    shown = extra.get("shown", b"")
    text = shown.decode("utf-8", "replace") if isinstance(shown, bytes) else str(shown)
    status = entry.status
    fired = None  # the fault that fired on it, named with what the agent got: "timeout_after_write (no answer)"
    if entry.fault and getattr(entry, "fault_status", None) == "fired":
        fired = f"{entry.fault} ({'no answer' if status is None else status})"
    if status is None:
        return Reading(False, fired or "no answer (the connection was dropped)", "")
    if status >= 400:
        return Reading(False, fired or f"{status}", text)
    code = extra.get("exit_code")
    if code not in (None, 0):
        return Reading(False, fired or f"exit {code}", text)
    if hasattr(entry, "extra") and not extra.get("closed"):  # headers sent, then the connection dropped
        return Reading(False, fired or f"a cut answer ({status}, the connection dropped mid-body)", text)
    text, mcp_failure = _unwrap_mcp(text, entry)
    if mcp_failure:
        return Reading(False, fired or mcp_failure, text)
    why = answers.failure(text, _tail(entry, shown))
    if why is not None:
        word = {"empty": "an empty answer", "cut": "a cut answer"}.get(why, f"an error object in a {status}")
        quoted = f"{word}: {excerpt(text)}" if text.strip() else word
        return Reading(False, fired or quoted, text)
    return Reading(True, f"{status}", text)


def _tail(entry, shown) -> str | None:
    """The end of an answer longer than what `shown` kept of it (gate/proxy/exchange.py); None when whole."""
    extra = getattr(entry, "extra", None) or {}
    if getattr(entry, "bytes_out", 0) <= len(shown) or "tail" not in extra:
        return None
    tail = extra["tail"]
    return tail.decode("utf-8", "replace") if isinstance(tail, bytes) else str(tail)


def excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= EXCERPT else flat[:EXCERPT - 1] + "…")


def _unwrap_mcp(text: str, entry) -> tuple[str, str | None]:
    """(the result's text, why it failed or None) for an MCP answer; any other answer as it is."""
    extra = getattr(entry, "extra", None) or {}
    if not (extra.get("mcp_http") or extra.get("transport") == "mcp-stdio" or '"jsonrpc"' in text[:200]):
        return text, None
    docs = [d for d in _messages(text) if isinstance(d, dict)]
    for doc in docs:
        if isinstance(doc.get("error"), dict):
            return json.dumps(doc["error"]), f"a JSON-RPC error: {excerpt(str(doc['error'].get('message', '')))}"
    result = next((d["result"] for d in docs if isinstance(d.get("result"), dict)), None)
    if result is None:
        result = next((d for d in docs if "content" in d or "isError" in d), None)
    if result is None:
        return text, None
    parts = [c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict)]
    if result.get("structuredContent") is not None:
        parts.append(json.dumps(result["structuredContent"]))
    inner = "\n".join(p for p in parts if p)
    if result.get("isError"):
        return inner, f"an isError result: {excerpt(inner)}"
    return inner, None


def _messages(text: str) -> list:
    """The JSON documents of an answer: one JSON body (or batch), or the data of SSE events."""
    try:
        doc = json.loads(text)
        return doc if isinstance(doc, list) else [doc]
    except ValueError:
        pass
    out = []
    for line in text.splitlines():
        if line.startswith("data:"):
            try:
                out.append(json.loads(line[5:].strip()))
            except ValueError:
                continue
    return out
