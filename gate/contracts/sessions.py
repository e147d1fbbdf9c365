"""`isolates_sessions`: a fault in one session leaves the sessions beside it alone. Pure.

While an explored cell's conversation is held or failing (a hang, a Retry-After longer than the turn, an
outage), the runner sends a probe — another input, in a session of its own, on the same agent instance —
and the proxy keeps the probe's calls apart, never faulted (gate/runner/session_probe.py). A sound agent
answers the probe as its fault-free baseline did, in about the baseline's time. What breaks it is shared
state: a blocking sleep in an async handler stalls every session, a module-level flag set by one
session's failure answers every other one, a lock held across a hang queues them all.

The probe's baseline is the probe input's own fault-free samples (`Reference.probe`): the slowest of
them, doubled, plus a margin is its time bound (a stall must be longer than a busy machine's jitter).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from gate.contracts.base import InvariantBase, Observation, Severity, Verdict, register
from gate.contracts.universal import overlap, short
from gate.dialects import answers
from gate.dialects.acknowledgement import acknowledged


RESTATES = 0.5  # word overlap with a baseline answer that reads as the same answer


@register
class IsolatesSessions(InvariantBase):
    """While a fault holds one session, a probe session run beside it on the same agent answers as its own
    baseline did, within twice its baseline's time plus `margin_ms`."""

    type: Literal["isolates_sessions"] = "isolates_sessions"
    severity: Severity = "critical"
    kind: ClassVar[str] = "trace"
    margin_ms: float = Field(default=1500.0, ge=0, description="Time a probe may take past twice its baseline's.")

    def check(self, obs: Observation) -> Verdict:
        if not any(e.fault_status == "fired" for e in obs.trace):
            return Verdict.not_judged("no fault fired in this run: nothing to judge")
        ref = getattr(obs, "reference", None)
        base = getattr(ref, "probe", None)
        probe = obs.state.get("probe")
        if not base or not probe:
            return Verdict.not_judged("no probe session ran beside this cell")
        if probe.get("skipped"):
            return Verdict.not_judged(probe["skipped"])
        who = f"a session beside it (input {base['input']})"
        if probe["reason"] != "ok":
            return Verdict(False, f"while {ref.fault} held this cell's session, {who} failed: {probe['reason']}"
                                  f"{': ' + probe['detail'] if probe.get('detail') else ''}")
        bound = 2 * base["latency_ms"] + self.margin_ms
        if probe["latency_ms"] > bound:
            return Verdict(False, f"while {ref.fault} held this cell's session, {who} took "
                                  f"{probe['latency_ms'] / 1000:.1f}s where its fault-free baseline took "
                                  f"{base['latency_ms'] / 1000:.1f}s (bound {bound / 1000:.1f}s): the sessions share "
                                  "what the fault held")
        if probe["model_calls"] == 0 and base["model_calls"] > 0:
            return Verdict(False, f"while {ref.fault} held this cell's session, {who} was answered without asking "
                                  f"the model (its baseline asked it {base['model_calls']} time(s)): "
                                  f"{short(probe['answer'])}")
        answer, claims = probe["answer"] or "", [a for a in base["answers"] if a]
        # an apology that still says what the baseline said is the model's manners ("Closed on Sundays, sorry!"),
        # not a session told the system is down: a failure must also leave the baseline's words behind
        owned = acknowledged(answer, "\n".join(claims)) if claims else None
        owned = owned if owned and max((overlap(answer, c) for c in claims), default=0.0) < RESTATES else None
        why = answers.failure(answer)
        if (owned or why) and all(answers.failure(a) is None for a in claims):
            return Verdict(False, f"while {ref.fault} held this cell's session, {who} answered with a failure "
                                  f"(\"{owned or why}\") where its baseline answered: {short(answer)}")
        return Verdict(True, f"{who} answered as its baseline did, within its time bound")  # no timing: a verdict is the same in any run
