"""LLM wire dialects: one module per API, one neutral model between them (see base.py).

Beside them, what is read off any dialect's turns: the tools a request offered and called
(offered.py), tool protocols that travel as text (text/), and whether a tool's answer says it
worked (answers.py, tool_errors.py), shared by the sim, the proxy and the invariants.

`find(provider, method, path)` picks the dialect and operation for a proxied request.
The path decides (each API's paths are distinct); the upstream's provider breaks the
one tie, a bare `/models`, which both OpenAI and Anthropic serve in their own shapes.
"""

from __future__ import annotations

import functools

from gate.dialects.base import Dialect, Encoded, EventRole, Operation, Slot
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, Usage
from gate.dialects.anthropic_messages import AnthropicMessages
from gate.dialects.gemini import Gemini
from gate.dialects.openai_chat import OpenAIChat
from gate.dialects.openai_responses import OpenAIResponses

DIALECTS: dict[str, Dialect] = {}


def register(dialect: Dialect) -> Dialect:
    DIALECTS[dialect.name] = dialect
    find.cache_clear()  # a dialect registered late is found from then on
    return dialect


@functools.lru_cache(maxsize=1024)
def find(provider: str, method: str, path: str) -> tuple[Dialect, Operation] | None:
    """The dialect and operation of a request; the upstream's own provider family first. Asked on
    every proxied call, of a handful of distinct paths: answered once per path (`register` forgets the
    answers)."""
    ranked = sorted(DIALECTS.values(), key=lambda d: d.provider != provider)
    for dialect in ranked:
        op = dialect.operation(method, path)
        if op is not None:
            return dialect, op
    return None


register(OpenAIChat())
register(AnthropicMessages())
register(Gemini())
register(OpenAIResponses())
# one line per dialect module; the order does not matter (paths are distinct)


def family(provider: str) -> Dialect | None:
    """The dialect whose error shapes a provider's upstream uses, for answers outside any route."""
    return next((d for d in DIALECTS.values() if d.provider == provider), None)


__all__ = ["DIALECTS", "Conversation", "Dialect", "Encoded", "EventRole", "Message", "Operation", "Slot", "ToolCall",
           "ToolResult", "ToolSpec", "Turn", "Usage", "family", "find", "register"]
