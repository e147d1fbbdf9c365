"""What a wire dialect must do, so the sim, the faults and the proxy never branch on providers.

A dialect is one LLM API as its SDKs expect it on the wire (OpenAI Chat Completions,
OpenAI Responses, Anthropic Messages, Gemini). It has three jobs:

1. routing — which (method, path) are its, and which operation each one is;
2. translation — a request into the neutral `Conversation`, a neutral `Turn` into its
   JSON body or its exact stream events, errors in its own error shape;
3. edits for faults — the places in one of its JSON documents (a whole answer, or one
   stream event) where text, tool arguments, the finish reason and usage live, so a
   fault says *what* to damage ("the tool arguments") and the dialect says *where*.

Adding a dialect is one new module implementing this class, registered in __init__.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from gate.dialects.model import Conversation, Turn, Usage

Operation = Literal["generate", "count_tokens", "models", "embeddings"]
# What one stream event carries, as faults need to know it.
EventRole = Literal["start", "text", "tool_start", "tool_args", "finish", "usage", "done", "error", "other"]


@dataclass
class Slot:
    """A string field inside a JSON document that a fault may read and replace."""

    holder: dict
    key: str
    # True when the slot restates, whole, a value a stream already sent in pieces (Responses'
    # `.done` events and final response): a fault should make it match what it did to the pieces.
    restates: bool = False
    # True when the value is a JSON *object* on this wire, never text (Anthropic's `input`): a
    # fault cannot make it unparsable, only make it break the tool's schema.
    holds_object: bool = False

    def get(self) -> str:
        value = self.holder.get(self.key)
        return value if isinstance(value, str) else ""

    def set(self, value: Any) -> None:
        self.holder[self.key] = value


@dataclass
class Encoded:
    """A whole answer: one JSON body, or the stream's events in order."""

    content_type: str
    parts: list[bytes] = field(default_factory=list)
    status: int = 200

    @property
    def body(self) -> bytes:
        return b"".join(self.parts)


class Dialect:
    name: ClassVar[str]
    provider: ClassVar[str]  # the family whose error shapes and headers it uses
    request_id_header: ClassVar[str] = "x-request-id"

    # -- routing ------------------------------------------------------------------
    def operation(self, method: str, path: str) -> Operation | None:
        raise NotImplementedError

    def model_in_path(self, path: str) -> str | None:
        """Dialects that put the model in the URL (Gemini) say so here."""
        return None

    def wants_stream(self, path: str, doc: Any) -> bool:
        return isinstance(doc, dict) and bool(doc.get("stream"))

    # -- translation ----------------------------------------------------------------
    def decode(self, path: str, doc: dict) -> Conversation:
        raise NotImplementedError

    def encode(self, turn: Turn, conv: Conversation, ident: str, chunk_chars: int = 8) -> Encoded:
        raise NotImplementedError

    def continuation_id(self, ident: str, conv: Conversation) -> str | None:
        """The id a client may later continue this conversation from (a stored response,
        a thread); None for stateless dialects. The sim keeps the history under it."""
        return None

    def inherit(self, conv: Conversation, stored: Conversation) -> None:
        """What a continuation takes from the stored conversation besides its history (a thread
        keeps the system prompt and tools it was created with); nothing by default."""

    def unknown_continuation(self, ident: str) -> tuple[int, dict]:
        """Status and error body for a continuation of a conversation the server does not hold."""
        return 404, self.error(404, f"sim: no stored conversation {ident!r}")

    def decode_turn(self, doc: dict) -> Turn | None:
        """A whole JSON answer of this dialect as a neutral turn; None if it is not one."""
        return None

    def error(self, status: int, message: str) -> dict:
        raise NotImplementedError

    def stream_error(self, message: str) -> bytes:
        """An error delivered inside an open stream, as this provider does it."""
        raise NotImplementedError

    def list_models(self, names: list[str]) -> dict:
        raise NotImplementedError

    def count_tokens(self, conv: Conversation) -> dict:
        raise NotImplementedError

    def embeddings(self, doc: dict, path: str, vectors: list[list[float]]) -> dict:
        raise NotImplementedError

    def embedding_inputs(self, doc: dict) -> list[str]:
        return []

    # -- edits for faults (doc = a whole JSON answer, or one stream event's data) -------------
    def classify(self, doc: Any, event_name: str | None) -> EventRole:
        raise NotImplementedError

    def text_slots(self, doc: dict, streaming: bool) -> list[Slot]:
        raise NotImplementedError

    def tool_arg_slots(self, doc: dict, streaming: bool) -> list[Slot]:
        raise NotImplementedError

    def started_tool_names(self, doc: dict) -> list[str]:
        """The names of the tool calls a stream event begins, in order: the pieces of arguments that
        follow (and those of this event) are that call's, until the next one begins."""
        raise NotImplementedError

    def carries_tool_calls(self, doc: dict, streaming: bool) -> bool:
        """Does this answer (or stream event) carry a tool call the model made?"""
        return bool(self.tool_arg_slots(doc, streaming)) or (streaming and bool(self.started_tool_names(doc)))

    def mark_cut(self, doc: dict, streaming: bool) -> bool:
        """Say "stopped at the token limit" in this dialect's words; True if changed."""
        raise NotImplementedError

    def hollow(self, doc: dict, streaming: bool) -> bool:
        """Valid JSON, wrong shape: empty the container every SDK indexes into."""
        raise NotImplementedError

    def drift(self, doc: dict, streaming: bool, mode: str) -> bool:
        """The provider changed under you: rename | refusal | format. True if changed."""
        raise NotImplementedError

    def usage(self, doc: dict) -> Usage | None:
        raise NotImplementedError

    def malformed_event(self) -> bytes:
        """A stream event whose data is not valid JSON, framed as this dialect frames events."""
        raise NotImplementedError
