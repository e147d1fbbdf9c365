"""Which tools the agent offered its model: read off the LLM requests the proxy relays.

Validation cannot know a framework's in-process tools (they exist only once the agent
runs), so coverage learns them here: every dialect's request names its tools (Chat and
Responses `tools[]`, Anthropic `tools[].name`, Gemini `functionDeclarations`). A fault
whose `tool:` glob met none of them is reported with the names the agent did offer.
"""

from __future__ import annotations

import json
from typing import Any

_UNPARSED = object()


def tool_names(body: bytes, doc: Any = _UNPARSED) -> list[str]:
    """The tool names an LLM request offers (empty when it offers none or is not JSON). `doc`: the
    body already parsed (the proxy parses each request once; an LLM body carries the whole history)."""
    if body.find(b'"tools"') < 0 and body.find(b'"functions"') < 0:  # find, not `in`: see gate/proxy/server.py
        return []
    if doc is _UNPARSED:
        try:
            doc = json.loads(body)
        except ValueError:
            return []
    if not isinstance(doc, dict):
        return []
    names = []
    for tool in (doc.get("tools") or []) + (doc.get("functions") or []):
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.append(fn["name"])  # Chat Completions
        elif isinstance(tool.get("name"), str):
            names.append(tool["name"])  # Responses, Anthropic, legacy functions
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                names.append(decl["name"])  # Gemini
    return names
