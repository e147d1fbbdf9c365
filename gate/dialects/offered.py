"""Which tools the agent offered its model, and which it ran for it: read off the LLM requests the
proxy relays.

Validation cannot know a framework's in-process tools (they exist only once the agent
runs), so coverage learns them here: every dialect's request names its tools (Chat and
Responses `tools[]`, Anthropic `tools[].name`, Gemini `functionDeclarations`). A fault
whose `tool:` glob met none of them is reported with the names the agent did offer.

A request also carries the history: the tool calls the model made earlier in the conversation
(`called_names`), whose results the agent ran and sent back. A name the model called that no
transport saw a call to ran outside every seam: the reach line says "called, not reached".

Agents whose tool protocol is text (DSPy's fields, smolagents' calls written as text) name
their tools and calls in the messages, not in native fields: `text_protocol_tools` reads them
with the readers the sim uses too (gate/dialects/text), only for a request that carries their marks.
"""

from __future__ import annotations

import json
from typing import Any

_UNPARSED = object()


def tool_names(body: bytes, doc: Any = _UNPARSED) -> list[str]:
    """The tool names an LLM request offers (empty when it offers none or is not JSON). `doc`: the
    body already parsed (the proxy parses each request once; an LLM body carries the whole history)."""
    return list(tool_specs(body, doc))


def tool_specs(body: bytes, doc: Any = _UNPARSED) -> dict[str, str]:
    """The tools an LLM request offers, name -> description (what says whether a tool reads or writes
    when its name does not: gate/contracts/writes.py)."""
    if body.find(b'"tools"') < 0 and body.find(b'"functions"') < 0:  # find, not `in`: see gate/proxy/server.py
        return {}
    if doc is _UNPARSED:
        try:
            doc = json.loads(body)
        except ValueError:
            return {}
    if not isinstance(doc, dict):
        return {}
    specs: dict[str, str] = {}
    for tool in _list(doc.get("tools")) + _list(doc.get("functions")):
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        decls = [fn] if isinstance(fn, dict) else [tool]  # Chat Completions; Responses, Anthropic, legacy
        decls += _list(tool.get("functionDeclarations") or tool.get("function_declarations"))  # Gemini
        for decl in decls:
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                about = decl.get("description")
                specs[decl["name"]] = about if isinstance(about, str) else ""
    return specs


_CALL_MARKS = (b'"tool_calls"', b'"function_call"', b'"tool_use"', b'"functionCall"')


def called_names(body: bytes, doc: Any) -> list[str]:
    """The tool names the model called earlier in this conversation, as the request's history shows
    them (Chat `tool_calls`, Responses `function_call` items, Anthropic `tool_use`, Gemini
    `functionCall`). `doc`: the parsed body."""
    if not isinstance(doc, dict) or not any(body.find(mark) >= 0 for mark in _CALL_MARKS):
        return []
    names = []
    for item in (doc.get("messages") or doc.get("contents") or []) + _list(doc.get("input")):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":  # Responses
            names.append(item.get("name"))
        for call in _list(item.get("tool_calls")):  # Chat Completions
            names.append((call.get("function") or {}).get("name") if isinstance(call, dict) else None)
        for part in _list(item.get("content")) + _list(item.get("parts")):
            if isinstance(part, dict) and part.get("type") == "tool_use":  # Anthropic
                names.append(part.get("name"))
            elif isinstance(part, dict) and isinstance(part.get("functionCall"), dict):  # Gemini
                names.append(part["functionCall"].get("name"))
    return [n for n in names if isinstance(n, str)]


def _list(value) -> list:
    return value if isinstance(value, list) else []



# what DSPy's adapters and smolagents' agents write into the messages (gate/dialects/text)
_TEXT_MARKS = (b"Your output fields are:", b"Calling tools:", b"behaving like regular python functions")


def text_protocol_tools(body: bytes, doc: Any, provider: str, method: str, path: str) -> tuple[list[str], list[str]]:
    """(offered, called) of a request whose tools travel as text; ([], []) for any other request."""
    if not isinstance(doc, dict) or not any(body.find(mark) >= 0 for mark in _TEXT_MARKS):
        return [], []
    from gate import dialects
    from gate.dialects.text.dspy import FINISH, dspy_conversation, dspy_request
    from gate.dialects.text.smolagents import FINAL_ANSWER, code_tools, neutral

    found = dialects.find(provider, method, path)
    if found is None:
        return [], []
    try:
        conv = found[0].decode(path, doc)
    except Exception:  # noqa: BLE001 - the agent's bytes: a body the dialect cannot read names no tools
        return [], []
    req = dspy_request(conv)
    if req is not None:
        translated, tools = dspy_conversation(conv, req), req.tools
    else:
        in_code = code_tools(conv)
        translated, tools = neutral(conv, in_code) or conv, in_code or conv.tools
    own = {FINISH, FINAL_ANSWER}  # the frameworks' own last steps, not the agent's tools
    called = [c.name for m in translated.messages for c in m.tool_calls if c.name not in own]
    return [t.name for t in tools if t.name not in own], called
