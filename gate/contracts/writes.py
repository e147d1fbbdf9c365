"""Does a call change anything? One rule for every transport, so a retried read is never a double write.

`side_effect_once` counts repeats of writes only (and exploration faults writes first), and the
same call must read the same way whichever transport carries it:

1. the config says so: `tools[].writes: true|false` (the team knows its tools best);
2. the server says so: MCP's `readOnlyHint` (in `tools/list`, over HTTP or seen by a seam);
3. a tool call's name reads like a read: get/list/lookup/search/find/fetch/read/query/check/
   describe/show/view/count/is/has/can, followed by `_`, a capital or nothing;
3b. a tool whose name says neither (`access_cart_information`) reads when its description does —
   a read word (returns, retrieves, information, status, …) and no write word (update, add,
   cancel, send, book, …) in its name and description — as the proxy reads it off the LLM requests;
4. plain HTTP: any method but GET, HEAD and OPTIONS writes (an HTTP call's "tool" is its
   upstream's name, which says nothing of the call, so rule 3 is not asked of it).

A call of an unknown kind writes: counting a read twice is a false alarm the user can silence
with `writes: false`; missing a double write is a bug shipped.
"""

from __future__ import annotations

import re

READ_NAME = re.compile(r"^(get|list|lookup|look_up|search|find|fetch|read|query|check|describe|show|view|"
                       r"count|is|has|can)(_|[A-Z]|$)")
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def http_writes(method: str | None, declared: bool | None = None) -> bool:
    """Whether a plain HTTP request writes."""
    if declared is not None:
        return declared
    return (method or "").upper() not in READ_METHODS


def call_writes(tool: str | None, read_only_hint: bool | None = None, declared: bool | None = None) -> bool:
    """Whether a tool call (MCP over HTTP or stdio, an in-process function, a command) writes."""
    if declared is not None:
        return declared
    if read_only_hint is not None:
        return not read_only_hint
    return not (tool and READ_NAME.match(tool))


WRITE_WORDS = frozenset({"update", "modify", "change", "create", "add", "remove", "delete", "cancel", "book", "send",
                         "pay", "transfer", "refund", "submit", "place", "set", "approve", "schedule", "register",
                         "write", "save", "post", "issue", "apply", "reset", "purchase", "buy", "confirm", "assign",
                         "insert", "edit", "upload", "grant", "revoke", "close", "charge", "reserve", "notify",
                         "email", "execute", "run", "trigger", "deploy", "move", "rename", "archive", "enroll"})
READ_WORDS = frozenset({"get", "gets", "list", "lists", "lookup", "look", "looks", "search", "searches", "find",
                        "finds", "fetch", "fetches", "read", "reads", "query", "check", "checks", "describe",
                        "show", "shows", "view", "count", "access", "accesses", "information", "info", "details",
                        "status", "retrieve", "retrieves", "return", "returns", "current", "available"})
_WORD = re.compile(r"[a-z]+")


def described_read(name: str, description: str | None) -> bool:
    """Rule 3b: a tool whose name and description carry a read word and no write word reads."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name or "").replace("_", " ").lower()
    said = set(_WORD.findall(f"{spaced} {(description or '').lower()}"))
    return bool(said & READ_WORDS) and not said & WRITE_WORDS
