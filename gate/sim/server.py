"""The sim as an upstream: decode the request through its dialect, script a turn, encode it.

One instance per worker, so the conversation state that stateful APIs keep on the
server side (Responses' `previous_response_id`, Anthropic's threads) belongs to that
worker's agent alone. A path the sim does not serve gets a 404 in the dialect's own
error shape and the trace says `sim: unsupported path` — never a 200 of the wrong shape. A history
whose tool calls went unanswered is refused as the provider refuses it (gate/dialects/refusals.py).
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from typing import Any

from gate import dialects
from gate.config.sim import SimConfig
from gate.dialects.model import Conversation, Message, Turn, stable_id
from gate.dialects.refusals import unanswered_calls, unanswered_error
from gate.proxy.exchange import RequestInfo, UpstreamResponse, WholeBody
from gate.sim.protocols import script_for
from gate.sim.script import READ_THROUGH

UNSUPPORTED = "sim: unsupported path"
REFUSED_HISTORY = "sim: refused a history with unanswered tool calls (400, as the provider does)"


def _response(status: int, content_type: str, parts: list[bytes], note: str = "") -> UpstreamResponse:
    async def chunks():
        for part in parts:
            yield part
    body = WholeBody(parts[0]) if len(parts) == 1 else chunks()  # a stream is never relayed whole (Exchange.pipe)
    resp = UpstreamResponse(status, [("content-type", content_type)], body)
    resp.note = note
    return resp


def _json(status: int, doc: Any, note: str = "") -> UpstreamResponse:
    return _response(status, "application/json", [json.dumps(doc).encode()], note)


def embedding(text: str, dim: int) -> list[float]:
    """A unit vector seeded by the text: equal texts get equal vectors, in every process."""
    rng = random.Random(f"sim-embedding:{text}")
    raw = [rng.uniform(-1.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [round(x / norm, 6) for x in raw]


class SimUpstream:
    """An upstream answered in-process by the scripted model."""

    def __init__(self, spec: SimConfig):
        self.spec = spec
        self.threads: dict[str, Conversation] = {}  # continuation id -> the conversation so far
        self.originals: dict[str, str] = {}  # the run's mutated input -> its original (set by the runner's hook)

    async def send(self, info: RequestInfo, headers, body: bytes) -> UpstreamResponse:
        found = dialects.find(info.provider, info.method, info.path)
        if found is None:
            return self._unsupported(info)
        dialect, operation = found
        doc: Any = None
        if body:
            try:
                doc = json.loads(body)
            except ValueError:
                return _json(400, dialect.error(400, "sim: the request body is not JSON"), "sim: body not JSON")
        if operation == "models":
            return _json(200, dialect.list_models(self.spec.models))
        if not isinstance(doc, dict):
            return _json(400, dialect.error(400, "sim: the request body must be a JSON object"))
        if operation == "embeddings":
            vectors = [embedding(t, self.spec.embedding_dim) for t in dialect.embedding_inputs(doc)]
            return _json(200, dialect.embeddings(doc, info.path, vectors))
        conv = dialect.decode(info.path, doc)
        conv.stream = dialect.wants_stream(info.path, doc)
        conv.model = conv.model or dialect.model_in_path(info.path)
        missing = self._restore(dialect, conv)
        if missing:
            status, error = dialect.unknown_continuation(missing)
            return _json(status, error, "sim: unknown thread")
        if operation == "count_tokens":
            return _json(200, dialect.count_tokens(conv))
        unanswered = unanswered_calls(conv)
        if unanswered:  # the provider refuses such a history: a broken session must show as one
            status, error = unanswered_error(dialect.name, unanswered)
            return _json(status, error, REFUSED_HISTORY)
        script = script_for(self.spec, conv)  # the generic Script, unless the agent speaks a text protocol
        token = READ_THROUGH.set(self.originals)
        try:
            turn = script.turn()
        finally:
            READ_THROUGH.reset(token)
        ident = stable_id("", info.path, body.decode("utf-8", "replace"))  # same request, same ids
        self._remember(dialect, conv, turn, ident)
        encoded = dialect.encode(turn, conv, ident, self.spec.chunk_chars)
        fallback = getattr(script, "fallback", None)  # a text protocol's script may not say
        said = script.fallback_note() if fallback else None
        notes = script.notes + ([said] if said else [])
        resp = _response(encoded.status, encoded.content_type, encoded.parts, "; ".join(notes))
        resp.fallback = fallback
        return resp

    def _restore(self, dialect, conv: Conversation) -> str | None:
        """Prepend the stored history a continuation refers to; the id when it is unknown."""
        if conv.continues is None:
            return None
        stored = self.threads.get(conv.continues)
        if stored is None:
            return conv.continues
        conv.messages = stored.messages + conv.messages
        dialect.inherit(conv, stored)
        return None

    def _remember(self, dialect, conv: Conversation, turn: Turn, ident: str) -> None:
        key = dialect.continuation_id(ident, conv)
        if key is not None:
            said = Message("assistant", turn.text, tool_calls=list(turn.tool_calls))
            self.threads[key] = dataclasses.replace(conv, messages=conv.messages + [said])

    def _unsupported(self, info: RequestInfo) -> UpstreamResponse:
        family = dialects.family(info.provider) or dialects.DIALECTS["openai_chat"]
        message = f"sim: {info.method} {info.path.split('?')[0]} is not served by the scripted model"
        return _json(404, family.error(404, message), UNSUPPORTED)

    async def aclose(self):
        pass

