"""What a faulted run is compared with: the fault-free baseline's answer, writes, calls and tool order. Pure.

The universal oracles (gate/contracts/universal.py) judge a faulted run against its input's baseline,
and exploration plans from the same reading of it (gate/explore/planner.py), so both read a trace here:
what its writes *mean* (`write_meanings` drops what differs between two sends of one intended write —
idempotency keys, request ids, UUIDs, timestamps, nonces — so a transfer re-sent under a fresh key is
the same transfer sent twice, while a retry under one key is one execution), the calls per site, and
the order the tool sites were first called in. A `Reference` keeps them, and, learned from the baseline's
samples, what a sound run of the input may also do (a real model never answers twice alike).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from gate.contracts.call_sites import group_of, transport_of
from gate.contracts.meaning import body_meaning
from gate.contracts.trace_checks import calls_of, is_tool_call
from gate.contracts.writes import call_writes, http_writes


@dataclass(frozen=True)
class Reference:
    """The fault-free run a faulted one is compared with, and what was done to the faulted one."""

    answer: str | None
    writes: Mapping[str, int] = field(default_factory=dict)  # meaning -> executions in the baseline
    calls: Mapping[str, int] = field(default_factory=dict)  # site group -> calls in the baseline
    transient: bool = False  # one short-lived fault: the outcome must be the baseline's
    canary: str | None = None  # the word the injected order asks for
    fault: str = ""  # the fault kind(s), for messages
    tools: tuple[str, ...] = ()  # the tool sites the baseline called, in the order it first called them
    # The baseline's natural variance, learned from its samples (a real model never answers twice alike):
    # `writes` and `calls` above are the most any sample made; these say what else a sound run may do.
    answers: tuple[str, ...] = ()  # every other sample's answer (other wording, another length)
    writes_always: tuple[str, ...] | None = None  # the writes every sample made (None: one sample, `writes`)
    tool_orders: tuple[tuple[str, ...], ...] = ()  # every other sample's tool calls, in order
    samples: int = 1
    # a conversation: per turn (from 1), the fewest model calls any sample made in it (() for a single input)
    turn_model_calls: tuple[int, ...] = ()
    # the session run beside a conversation's faulted cell, and its own baseline (gate/explore/probes.py)
    probe: dict | None = None

    def every_answer(self) -> list[str]:
        """The answers a sound run gave this input, the first sample's first."""
        return list(dict.fromkeys(a for a in (self.answer, *self.answers) if a))

    def writes_needed(self) -> set[str]:
        return set(self.writes if self.writes_always is None else self.writes_always)

    def compared(self) -> str:
        """How a message names what it compared with."""
        return "the baseline's" if self.samples == 1 else f"the baseline's {self.samples} samples'"


def write_meanings(entries) -> Counter:
    """Meaning -> executions: every write that reached its upstream, the same intended write once
    per distinct idempotency key it was sent under (each keyless send counts)."""
    keys: dict[str, set] = {}
    keyless: Counter = Counter()
    for e in entries:
        if e.kind != "tool" or not is_tool_call(e) or not (e.forwarded or e.extra.get("forwarded_as_recorded")):
            continue
        for meaning in meanings(e):
            if e.idempotency_key:
                keys.setdefault(meaning, set()).add(e.idempotency_key)
            else:
                keyless[meaning] += 1
    out = Counter(keyless)
    for meaning, seen in keys.items():
        out[meaning] += len(seen)
    return out


def meanings(e):
    """What each write of one trace entry means: its method, target, path and body, ids dropped."""
    transport = transport_of(e)
    if transport == "http":
        if http_writes(e.method, e.extra.get("writes")):
            yield f"{e.method} {e.target}{e.path.split('?')[0]} {body_meaning(e.body)}"
        return
    if transport == "command" and e.extra.get("writes") is not True:
        return
    for call in calls_of(e):
        if not call.get("idempotent") and call_writes(call.get("tool"), call.get("read_only"), call.get("writes")):
            args = body_meaning((call.get("arguments") or "").encode())
            yield f"{call.get('tool')}({args}) on {e.target}"


def tool_sites(entries) -> tuple[str, ...]:
    """The tool sites a run called, each once, in the order it first called them."""
    return tuple(dict.fromkeys(group_of(e) for e in entries if e.kind == "tool" and is_tool_call(e)))


def turn_model_calls(entries) -> tuple[int, ...]:
    """A conversation's model calls per turn, turn 1 first (() when the run was one turn of a single input)."""
    turns = [e.turn for e in entries if getattr(e, "turn", None)]
    if not turns:
        return ()
    return tuple(sum(1 for e in entries if e.kind == "llm" and e.turn == t) for t in range(1, max(turns) + 1))


def site_calls(entries) -> Counter:
    return Counter(group_of(e) for e in entries if e.kind == "llm" or is_tool_call(e))
