"""A recorded session: one cell's input, every exchange the proxy saw, the output.

Sessions are plain JSON files meant to be checked in: auth headers are never
recorded, secret values are redacted, and SSE answers are kept as their events in
order so a replay streams them back exactly.
"""

from __future__ import annotations

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
    fault: str | None = None


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

    model_config = {"populate_by_name": True}


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
