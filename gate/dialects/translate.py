"""An answer recorded in one dialect, served in another: whole JSON answer -> neutral Turn -> the
requesting dialect's JSON or stream.

Imported traces (LangSmith, OpenTelemetry) keep an answer in whatever shape the recorder
saw; the agent replaying it may speak another dialect, or ask for a stream. Serving the
recording's own shape would crash the agent's SDK (or, worse, pass by accident), so the
answer is decoded into the neutral model and re-encoded for the request in hand.
"""

from __future__ import annotations

import json

from gate import dialects
from gate.dialects.model import Conversation, Turn


def turn_of(body: str | bytes) -> Turn | None:
    """The neutral turn of a whole JSON answer in any known dialect; None if none reads it."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    for dialect in dialects.DIALECTS.values():
        turn = dialect.decode_turn(doc)
        if turn is not None:
            return turn
    return None


def answer_as(body: str | bytes, info, ident: str = "replayed") -> tuple[list[bytes], str] | None:
    """(payloads, content type) of `body` re-encoded for the request described by `info`."""
    dialect = dialects.DIALECTS.get(info.dialect or "")
    turn = turn_of(body)
    if dialect is None or turn is None:
        return None
    encoded = dialect.encode(turn, Conversation(model=info.model, stream=info.stream), ident, 16)
    return encoded.parts, encoded.content_type
