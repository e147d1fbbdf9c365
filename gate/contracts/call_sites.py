"""What makes two calls the same call site, for exploration and for the oracles that judge it.

An HTTP tool call's site is its upstream, method and path template (`/orders/{id}`, not the
record); an MCP or in-process call's is its tool; an LLM call's is its upstream. Exploration
(gate/explore/sites.py) plans faults per site, and `bounded_retries` counts calls per site, so
both read the one rule here.
"""

from __future__ import annotations

import re

# a path segment that names one record, not the endpoint: numbers, UUIDs, long hex, ids with digits
_RECORD = re.compile(r"^(\d+|[0-9a-fA-F-]{16,}|[A-Za-z]*[-_]?\d[\w-]*)$")
_TAIL = r"(?:[?#]|$)"


def path_template(path: str) -> str:
    """`/orders/1234/items` -> `^/orders/[^/?]+/items(?:[?#]|$)`: the endpoint, not the record."""
    bare = path.split("?", 1)[0]
    parts = [("[^/?]+" if _RECORD.match(p) else re.escape(p)) if p else "" for p in bare.split("/")]
    return "^" + "/".join(parts) + _TAIL


def template_text(regex: str) -> str:
    """The template regex back as a readable path: `/orders/{id}/items`."""
    text = regex.removeprefix("^").removesuffix(_TAIL).replace("[^/?]+", "{id}")
    return re.sub(r"\\(.)", r"\1", text)


def transport_of(entry) -> str:
    """llm | http | mcp | mcp-stdio | function | command."""
    if entry.kind == "llm":
        return "llm"
    if entry.extra.get("mcp_http"):
        return "mcp"
    return entry.extra.get("transport") or "http"


def group_of(entry) -> str:
    """The site an entry is a call of, whatever its occurrence."""
    transport = transport_of(entry)
    if transport == "llm":
        return f"llm:{entry.target}"
    if transport == "http":
        return f"http:{entry.target} {entry.method} {path_template(entry.path)}"
    if transport in ("mcp", "mcp-stdio", "function"):  # one server or seam, many tools: the tool is the site
        return f"{transport}:{entry.target}:{entry.tool or entry.target}"
    return f"{transport}:{entry.target}"  # a command is its own upstream
