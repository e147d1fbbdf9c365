"""Did a tool's answer say it worked? One reading, shared by the sim and by `claims_backed`.

The sim (the scripted model) must conclude from a tool result what a real model would,
and `claims_backed` must judge the answer the agent received the same way: if the two
read one answer differently, sim would make an honest agent look like a liar, or a liar
look honest. So both ask this module.

An answer is not a success when it is empty (`""`, `{}`, `null`, `None`: what the `empty`
fault leaves, on the wire or in-process), cut (a JSON or Python-literal document that ends
before it closes: `malformed`, `partial`), or worded as a failure in the frameworks' and
services' own words, which gate/dialects/tool_errors.py knows (an error object in a 200 is one).
A list that is empty (`[]`) is a real answer: "no rows" is not a failure.
"""

from __future__ import annotations

import json

from gate.dialects import tool_errors

EMPTY = frozenset({"", "{}", "null", "none", '""', "''"})
SCAN_CHARS = 1 << 16  # a cut is looked for in answers up to this size (a huge answer is not scanned char by char)


def empty(text: str) -> bool:
    return text.strip().casefold() in EMPTY


def cut(text: str) -> bool:
    """A document that opens a JSON object or array (or a Python literal, as frameworks print a
    dict) and ends before it closes. Parsed first (fast, in C); scanned only when that fails."""
    s = text.strip()
    if not s or s[0] not in "{[":
        return False
    try:
        json.loads(s)
        return False
    except ValueError:
        pass
    return len(s) <= SCAN_CHARS and not _closes(s)


def _closes(s: str) -> bool:
    """Does the bracket opened by s[0] close? Strings (either quote, with escapes) are skipped."""
    depth, quote, escaped = 0, None, False
    for ch in s:
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return True
    return False


def _ends_open(head: str, tail: str) -> bool:
    start, end = head.lstrip()[:1], tail.rstrip()[-1:]
    return start in ("{", "[") and end != {"{": "}", "[": "]"}[start]


def worded_failure(text: str) -> bool:
    head = text[:tool_errors.HEAD]
    return bool(tool_errors.FAILED.search(head) or tool_errors.BAD_CALL.search(head))


def failure(text: str, tail: str | None = None) -> str | None:
    """Why this answer is not a success ("empty", "cut", "an error"), or None when it reads as one.
    `tail`: when `text` is only the start of a longer answer, that answer's last characters — it is
    then cut when the bracket its start opens is not what its end closes (a `huge` answer is whole)."""
    if tail is not None:
        return "cut" if _ends_open(text, tail) else "an error" if worded_failure(text) else None
    if empty(text):
        return "empty"
    if cut(text):
        return "cut"
    if worded_failure(text):
        return "an error"
    return None


def is_error(result, call=None) -> bool:
    """The sim's question about a tool result: flagged or worded as a failure (tool_errors), or
    empty or cut (a model does not read an empty or cut answer as done)."""
    return tool_errors.is_error(result, call) or empty(result.content) or cut(result.content)
