"""A conversation input's turns, sent in order in one session: the history each turn is handed and the
outcome the whole run ends with.

Pure helpers of `AgentInstance.converse` (gate/agent/instance.py), which owns the sending: kept apart so
the rules a reader must trust — which answer the checks judge, which turn a failure is charged to, what
`{{history}}` holds — read in one place, with no socket in sight. A run is one outcome, like a single
input's: the last turn's answer when every turn answered, else the first failed turn's reason, its detail
naming the turn (a conversation broken at turn 2 is no timeout of turn 5). A command agent gets the same turns
(`agent.invoke.command.conversation`): run once per turn, its history in $CHAOS_GATE_HISTORY, or once for the
whole conversation, a line a turn (gate/agent/invoke.py LineSession).
"""

from __future__ import annotations

import json

from gate.agent.invoke import RawOutcome

HISTORY_ENV = "CHAOS_GATE_HISTORY"  # a per-turn command's previous turns, with `history: messages`


def history_of(transcript: list[dict]) -> list[dict]:
    """The previous turns as OpenAI-style messages: each user text, then the agent's answer to it."""
    messages = []
    for turn in transcript:
        messages.append({"role": "user", "content": turn["text"]})
        messages.append({"role": "assistant", "content": turn["answer"] or ""})
    return messages


def turn_ctx(ctx: dict, n: int, history: str, transcript: list[dict]) -> dict:
    """The templates of turn `n` (1-based): `{{turn}}`, and `{{history}}` ([] unless `history: messages`)."""
    return {**ctx, "turn": str(n), "history": history_of(transcript) if history == "messages" else []}


def command_env(ctx: dict, history: str) -> dict[str, str]:
    """What a command run once per turn gets beside its configured env: with `history: messages`, the
    previous turns as messages JSON in $CHAOS_GATE_HISTORY (`[]` at turn 1)."""
    return {HISTORY_ENV: history_json(ctx)} if history == "messages" else {}


def history_json(ctx: dict) -> str:
    """`{{history}}` as the JSON text a command's env holds (an env value is a string, never a list)."""
    return json.dumps(ctx.get("history") or [], ensure_ascii=False)


def record(transcript: list[dict], n: int, text: str, outcome: RawOutcome) -> None:
    """One turn into the transcript a report can show: what was said, what came back and how it ended."""
    transcript.append({"turn": n, "text": text, "answer": outcome.output, "reason": outcome.reason,
                       "latency_ms": round(outcome.latency_ms, 1)})


def ended(last: RawOutcome, transcript: list[dict], total: int, latency_ms: float) -> RawOutcome:
    """The run's outcome from its last turn sent. Latency is the turns' sum (each had its own deadline);
    a failed turn keeps its reason and status, its detail saying which turn of how many failed."""
    n = len(transcript)
    detail = last.detail
    if last.reason != "ok":
        detail = f"turn {n} of {total}: {detail}" if detail else f"turn {n} of {total} failed ({last.reason})"
    return RawOutcome(last.output, last.reason, last.status, latency_ms, detail, last.log, turns=transcript)
