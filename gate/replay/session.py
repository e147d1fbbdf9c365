"""A recorded session: one cell's input, every exchange the proxy saw, the output.

Sessions are plain JSON files meant to be checked in: auth headers are never
recorded, secret values are redacted, and SSE answers are kept as their events in
order so a replay streams them back exactly.

An exchange also keeps how it unfolded on the wire (a delay before the answer, a
hold after what was sent, a dropped connection), so a replayed fault puts the agent
on the same path as the original: a timeout replayed as an instant drop would not.
Bodies that are not UTF-8 are stored as base64 (`encoding`); older sessions, which
lack these fields, read as before.

A session may be a conversation (`turns`: the user's messages in order, sent turn by turn in one
session, docs/conversations.md): an imported LangSmith thread or OpenTelemetry session, or a recorded
conversation cell. Its exchanges are the calls of every turn in order, each tagged with its `turn`;
`input` is the turns one per line, as a conversation cell shows its input. A session of one message
has neither field in its file, which reads and writes exactly as before.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from gate.errors import ConfigError

SCHEMA = "agent-chaos-gate/session@1"


class RecordedExchange(BaseModel):
    target: str
    kind: str
    method: str
    path: str
    digest: str
    request: Any = None
    status: int | None = None  # None: the connection was dropped (reset, timeout)
    content_type: str = "application/json"
    body: str = ""
    events: list[str] | None = None
    encoding: Literal["utf-8", "base64"] = "utf-8"  # of `body` and each of `events`
    fault: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)  # the few that steer a client (retry-after…)
    retry_after: float | None = None  # the Retry-After the gate sent (honors_retry_after checks it)
    forwarded: bool = False  # the upstream saw the request (side_effect_once counts it on replay)
    delay_ms: float | None = None  # silence before the response head (latency)
    hold_ms: float | None = None  # silence after what was sent (timeout, stall)
    # "time": the hold ran its course; "agent": it lasted until the agent gave up (or the cell ended)
    hold_until: Literal["time", "agent"] = "time"
    dropped: bool = False  # the connection was dropped after what was sent (status None: before any)
    length: int | None = None  # the content-length promised, when the body was then cut
    # imported traces: the run or span it came from, the traced name (a tool's own name), the error
    # it recorded (an LLM error is re-shaped in the requesting dialect on replay)
    run_id: str | None = None
    name: str | None = None
    error: str | None = None
    # a conversation's turn (1-based) the call belongs to; not written for a session of one message
    turn: int | None = Field(default=None, exclude_if=lambda v: v is None)

    def payloads(self) -> list[bytes]:
        """The body (or each SSE event) as the bytes the agent received."""
        texts = self.events if self.events is not None else [self.body]
        if self.encoding == "base64":
            return [base64.b64decode(t) for t in texts]
        return [t.encode("utf-8") for t in texts]


class Session(BaseModel):
    schema_: str = Field(default=SCHEMA, alias="schema")
    id: str
    input_id: str
    input: str
    output: str | None = None
    faults: list[str] = Field(default_factory=list)
    match: Literal["digest", "sequence"] = "digest"
    contract: str | None = None
    source: str = "recorded"
    exchanges: list[RecordedExchange] = Field(default_factory=list)
    # a conversation: the user's messages in order, and whether each turn is handed the previous ones;
    # neither is written for a session of one message, whose file stays byte for byte what it was
    turns: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    history: Literal["none", "messages"] = Field(default="none", exclude_if=lambda v: v == "none")

    model_config = {"populate_by_name": True}


def cell_fields(session: Session) -> dict:
    """The plan's fields of a replay cell of `session`: the text it shows and, for a conversation, its
    turns and history (as `gate.plan.cells.input_fields` gives a conversation input's)."""
    if not session.turns:
        return dict(text=session.input, original_text=session.input)
    text = "\n".join(session.turns)
    return dict(text=text, original_text=text, turns=tuple(session.turns), history=session.history)


def safe_name(cell_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "__", cell_id)


def write_session(session: Session, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{safe_name(session.id)}.json"
    path.write_text(session.model_dump_json(indent=2, by_alias=True) + "\n", encoding="utf-8")
    return path


def read_session(path: Path) -> Session:
    try:
        return Session.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the session: {exc.strerror}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"{path}: not a valid session: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def request_doc(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return body.decode("utf-8", "replace")
