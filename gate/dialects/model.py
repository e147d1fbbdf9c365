"""One provider-neutral model of a conversation and of a model's turn.

Every wire dialect decodes its requests into a `Conversation` and encodes a `Turn`
into its own JSON or stream events; the sim and the LLM faults work on these two
types only, so no piece of logic above the dialects knows a provider's field names.
Tool-call arguments stay JSON *text*, because a fault must be able to make them
invalid and the model must be able to express that.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
Finish = Literal["stop", "tool_calls", "length", "refusal", "content_filter"]
INVALID_JSON = "INVALID_JSON"  # the key clients wrap unparsable arguments in when they send them back


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, exactly as the model "wrote" it

    def parsed(self) -> Any:
        try:
            return json.loads(self.arguments or "{}")
        except ValueError:
            return None

    @property
    def unparsable(self) -> bool:
        """The arguments, as the agent sent them back, are not a JSON object. pydantic-ai
        re-wraps such arguments as valid JSON (`{"INVALID_JSON": "<the raw text>"}`, the
        wrapper Anthropic's docs recommend), so that wrapper counts as unparsable too."""
        value = self.parsed()
        return not isinstance(value, dict) or list(value) == [INVALID_JSON]


@dataclass
class ToolResult:
    call_id: str
    content: str
    name: str | None = None
    is_error: bool = False


@dataclass
class Message:
    role: Role
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)


@dataclass
class ToolSpec:
    name: str
    description: str = ""
    parameters: dict = field(default_factory=dict)


@dataclass
class Conversation:
    """What the agent asked: history, tools offered and how the answer must look."""

    messages: list[Message] = field(default_factory=list)
    system: str = ""
    model: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: str = "auto"  # auto | required | none | the name of the one tool to call
    response_schema: dict | None = None  # structured output: a JSON Schema the text must satisfy
    schema_name: str = ""  # the name the request gives that schema (OpenAI's `json_schema.name`), when it does
    json_mode: bool = False  # "any JSON object" without a schema
    stream: bool = False
    n: int = 1
    include_usage: bool = False
    parallel_tool_calls: bool = True
    # Chat Completions' deprecated `functions` / `function_call`: one call a turn, answered in the
    # old fields (`message.function_call`, finish reason `function_call`) rather than `tool_calls`
    legacy_functions: bool = False
    continues: str | None = None  # previous_response_id / a server-side thread to continue
    store: bool = False

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def latest_user_text(self) -> str:
        return next((m.text for m in reversed(self.messages) if m.role == "user" and m.text), "")

    def results_since_user(self) -> list[ToolResult]:
        """Tool results that arrived after the latest user text, oldest first."""
        out: list[ToolResult] = []
        for message in reversed(self.messages):
            if message.role == "user" and message.text:
                break
            out = message.tool_results + out
        return out

    def approx_input_tokens(self) -> int:
        """A deterministic token estimate (about four characters a token)."""
        chars = len(self.system) + sum(len(m.text) + sum(len(r.content) for r in m.tool_results)
                                       + sum(len(c.arguments) for c in m.tool_calls) for m in self.messages)
        chars += sum(len(json.dumps(t.parameters)) + len(t.name) for t in self.tools)
        return max(1, chars // 4)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class Turn:
    """What the model says back: text and/or tool calls, why it stopped, what it cost."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish: Finish = "stop"
    usage: Usage = field(default_factory=Usage)
    refusal: str | None = None


def stable_id(prefix: str, *parts: Any) -> str:
    """An id derived from content, so the same request gets the same ids in every run."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return prefix + digest[:24]


def output_tokens(turn: Turn) -> int:
    chars = len(turn.text) + sum(len(c.arguments) + len(c.name) for c in turn.tool_calls)
    return max(1, chars // 4)


def sim_usage(conv: Conversation, turn: Turn) -> Usage:
    """The sim's deterministic usage for a turn: what a real provider would roughly bill."""
    return Usage(conv.approx_input_tokens(), output_tokens(turn))
