"""Handoffs between agents, read off the LLM requests the proxy relays.

The OpenAI Agents SDK offers each handoff to the model as a function tool, `transfer_to_<agent>`
(described "Handoff to the <agent> agent to handle the request."), and when the model calls it the
runner switches agents in-process: no body runs, no transport sees a call, and the SDK sends back,
as that call's output, `{"assistant": "<agent>"}`. Read as a tool, a handoff is a function the model
called and nothing reached, which it is not: the reach line must name it as a handoff, and the trace
must say where the conversation went.

So a tool is a handoff when a request offers it with the SDK's description, or when its call's
output in the history is the SDK's transfer message (a handoff whose description the agent
overrode). Both are the SDK's own strings, so a function that only happens to be named
`transfer_to_savings` is never mistaken for one. Chat Completions and Responses requests are read
(the SDK speaks both); other dialects carry no handoffs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

DESCRIPTION = "Handoff to the "  # agents.handoffs.Handoff.default_tool_description
_MARKS = (DESCRIPTION.encode(), b'assistant\\"')  # a request without either names no handoff


@dataclass
class Handoffs:
    """What one request says of handoffs: the ones it offers, the ones its history took (name -> agent),
    and the one that brought the conversation here (the history's latest step), if any."""

    offered: list[str] = field(default_factory=list)
    taken: dict[str, str] = field(default_factory=dict)
    latest: tuple[str, str] | None = None

    def describe(self) -> str | None:
        """The trace's words for the handoff this request follows."""
        return f"{self.latest[0]} → {self.latest[1]}" if self.latest else None


def read(body: bytes, doc: Any) -> Handoffs:
    """The handoffs of one LLM request (`doc`: its parsed body)."""
    found = Handoffs()
    if not isinstance(doc, dict) or not any(body.find(mark) >= 0 for mark in _MARKS):
        return found
    for tool in _list(doc.get("tools")):
        spec = tool.get("function") if isinstance(tool, dict) and isinstance(tool.get("function"), dict) else tool
        if isinstance(spec, dict) and isinstance(spec.get("name"), str) \
                and str(spec.get("description") or "").startswith(DESCRIPTION):
            found.offered.append(spec["name"])
    names: dict[str, str] = {}  # call id -> tool name
    for item in _list(doc.get("messages")) + _list(doc.get("input")):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":  # Responses
            names[str(item.get("call_id"))] = str(item.get("name"))
        for call in _list(item.get("tool_calls")):  # Chat Completions
            if isinstance(call, dict):
                names[str(call.get("id"))] = str((call.get("function") or {}).get("name"))
        output, call_id = _output(item)
        if call_id is None:
            if item.get("role") == "assistant" or item.get("type") in ("message", "function_call"):
                found.latest = None  # the model spoke after the handoff: it is history, not the latest step
            continue
        agent = transfer_target(output)
        name = names.get(call_id)
        if agent is not None and name:
            found.taken[name] = agent
            found.latest = (name, agent)
    return found


def transfer_target(output: Any) -> str | None:
    """The agent a handoff call's output names (`{"assistant": "<agent>"}`, the SDK's transfer message)."""
    if isinstance(output, list):  # content parts
        output = "".join(p.get("text", "") for p in output if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(output, str) or '"assistant"' not in output:
        return None
    try:
        doc = json.loads(output)
    except ValueError:
        return None
    if isinstance(doc, dict) and list(doc) == ["assistant"] and isinstance(doc["assistant"], str):
        return doc["assistant"]
    return None


def _output(item: dict) -> tuple[Any, str | None]:
    """(output, call id) of a tool result item; (None, None) for anything else."""
    if item.get("type") == "function_call_output":  # Responses
        return item.get("output"), str(item.get("call_id"))
    if item.get("role") == "tool":  # Chat Completions
        return item.get("content"), str(item.get("tool_call_id"))
    return None, None


def _list(value) -> list:
    return value if isinstance(value, list) else []
