"""Invariants on how the run ended: completion, status, latency, the agent process staying up.

`completes` is the one every tool gets wrong: it must fail on errors, crashes and
timeouts, and pass only on a 2xx response or exit code 0 inside the deadline.
`stays_up` asks whether the agent process outlived the cell: a crash is an outage, so
for a process the gate starts it is implicit and critical (gate/plan/cells.py).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gate.contracts.base import InvariantBase, Observation, Verdict, register


@register
class Completes(InvariantBase):
    """The run answered: a 2xx response or exit 0 within the deadline; fails on errors, crashes and timeouts."""

    type: Literal["completes"] = "completes"

    def check(self, obs: Observation) -> Verdict:
        if obs.completed:
            return Verdict(True, "agent completed")
        detail = f" (status {obs.status})" if obs.status is not None else ""
        return Verdict(False, f"agent did not complete: {obs.reason}{detail}")


@register
class Status(InvariantBase):
    """The HTTP status (or the command's exit code) is one of `in`."""

    type: Literal["status"] = "status"
    in_: list[int] = Field(alias="in", min_length=1)

    def check(self, obs: Observation) -> Verdict:
        if obs.status is None:  # no answer at all: `completes` says why
            return Verdict.not_judged(f"not judged: no status (outcome: {obs.reason})")
        ok = obs.status in self.in_
        return Verdict(ok, f"status {obs.status} {'is' if ok else 'is not'} in {self.in_}")


@register
class LatencyMax(InvariantBase):
    """The answer came within `ms` milliseconds."""

    type: Literal["latency_max"] = "latency_max"
    ms: float = Field(gt=0)

    def check(self, obs: Observation) -> Verdict:
        # The message states the limit, not the measured value: the verdict part must be
        # byte-stable across runs; the measured latency lives in the timings section.
        ok = obs.latency_ms <= self.ms and obs.reason != "agent_timeout"
        return Verdict(ok, f"latency {'within' if ok else 'over'} {self.ms:g} ms")


@register
class StaysUp(InvariantBase):
    """The agent process is still running when the cell ends (not merely answering before it died).

    `obs.state["agent_alive"]` is set by the runner for an agent process it started (the
    process checked, and not restarted, since the cell began: gate/runner/recover.py); without
    it, the run's outcome says: `agent_crash` is a process that died during the cell."""

    type: Literal["stays_up"] = "stays_up"

    def check(self, obs: Observation) -> Verdict:
        alive = obs.state.get("agent_alive")
        if obs.reason == "agent_crash":
            return Verdict(False, "the agent process died during the cell (agent_crash)")
        if alive is False:
            return Verdict(False, "the agent process was not running when the cell ended")
        if alive is None and obs.reason == "harness_error":
            return Verdict.not_judged("not judged: the gate could not run the cell")
        return Verdict(True, "the agent process stayed up")
