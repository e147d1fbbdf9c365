"""Import traces from observability tools as replayable sessions (LangSmith, OpenTelemetry GenAI).

Every importer reduces a trace to the same thing: the user's input, then each LLM and
tool call in order as the agent saw it on the wire (an answer, an error status, a hold
or a drop). LLM answers are stored as neutral turns (in Chat Completions JSON) and are
re-encoded at replay time in the dialect of the request, so the recording's own vendor
shape never reaches the agent. A trace that cannot be imported is skipped with its id
and reason; the rest are imported (see `ImportResult.exit_code`).

A multi-turn conversation (a LangSmith thread: root runs sharing a `session_id`, `thread_id` or
`conversation_id` in their metadata; an OpenTelemetry session: traces or agent spans sharing
`session.id` / `gen_ai.conversation.id`) is imported as ONE session of several turns: each turn
is reduced exactly as a single trace is, then the turns are joined in order (`conversation_of`):
the user's messages as `turns`, every turn's calls in order, each tagged with its turn. A thread
of one turn imports as the single trace it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from gate import dialects
from gate.dialects.model import Conversation, Turn
from gate.replay.importers.failures import Failure
from gate.replay.session import RecordedExchange, Session

ANY = "*"  # method of an imported exchange: the trace does not say how the agent called the upstream


class Skip(Exception):
    """This trace cannot be imported; the message says which run and why."""


@dataclass
class ImportResult:
    sessions: list[Session] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (trace id, reason)

    @property
    def exit_code(self) -> int:
        """0: all imported; 1: some traces skipped; 2: none could be imported."""
        if not self.sessions:
            return 2
        return 1 if self.skipped else 0


def llm_answer(turn: Turn, run_id: str, name: str | None, target: str) -> RecordedExchange:
    encoded = dialects.DIALECTS["openai_chat"].encode(turn, Conversation(model=name), f"imported-{run_id}")
    return RecordedExchange(target=target, kind="llm", method="POST", path="", digest="", status=200,
                            body=encoded.body.decode("utf-8"), run_id=run_id, name=name)


def failed(failure: Failure, kind: str, run_id: str, name: str | None, target: str,
           duration_ms: float | None = None) -> RecordedExchange:
    """A failed call as the agent saw it: an error answer, or a hold (timeout) and a drop."""
    common = dict(target=target, kind=kind, method="POST" if kind == "llm" else ANY, path="", digest="",
                  run_id=run_id, name=name, error=f"{failure.kind}: {failure.message}",
                  forwarded=kind == "tool" and failure.timeout)  # a timed-out write may have happened
    if failure.status is None:
        hold = dict(hold_ms=duration_ms or 0.0, hold_until="agent") if failure.timeout else {}
        return RecordedExchange(status=None, dropped=True, **hold, **common)
    headers = {"retry-after": f"{failure.retry_after:g}"} if failure.retry_after is not None else {}
    body = {"error": {"message": failure.message, "type": failure.kind}} if kind == "llm" \
        else {"error": failure.message, "status": failure.status}
    return RecordedExchange(status=failure.status, body=json.dumps(body), headers=headers,
                            retry_after=failure.retry_after, **common)


def tool_answer(output, run_id: str, name: str | None, target: str, is_error: bool = False) -> RecordedExchange:
    """What the tool returned, as its HTTP body: JSON when it is JSON, text otherwise."""
    body = output if isinstance(output, str) else json.dumps(output)
    try:
        json.loads(body)
        content_type = "application/json"
    except ValueError:
        content_type = "text/plain; charset=utf-8"
    return RecordedExchange(target=target, kind="tool", method=ANY, path="", digest="", status=500 if is_error else 200,
                            content_type=content_type, body=body, forwarded=not is_error, run_id=run_id, name=name)


def session_of(source: str, trace_id: str, name: str | None, text: str, output: str | None,
               exchanges: list[RecordedExchange]) -> Session:
    return Session(id=f"{source}-{trace_id}", input_id=str(name or "imported"), input=text, output=output,
                   match="sequence", source=source, exchanges=exchanges)


def conversation_of(source: str, key: str, turns: list[Session]) -> Session:
    """One session of several turns: each turn imported as a single trace would be, in order. The recorded
    calls of every turn answer the replay in order (sequence matching), tagged with their turn."""
    exchanges = [ex.model_copy(update={"turn": n}) for n, turn in enumerate(turns, 1) for ex in turn.exchanges]
    texts = [t.input for t in turns]
    return Session(id=f"{source}-{key}", input_id=turns[0].input_id, input="\n".join(texts), turns=texts,
                   output=turns[-1].output, match="sequence", source=source, exchanges=exchanges)
