"""Invariants on how the run ended: completion, status, latency.

`completes` is the one every tool gets wrong: it must fail on errors, crashes and
timeouts, and pass only on a 2xx response or exit code 0 inside the deadline.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gate.contracts.base import InvariantBase, Observation, Verdict, register


@register
class Completes(InvariantBase):
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
    type: Literal["latency_max"] = "latency_max"
    ms: float = Field(gt=0)

    def check(self, obs: Observation) -> Verdict:
        # The message states the limit, not the measured value: the verdict part must be
        # byte-stable across runs; the measured latency lives in the timings section.
        ok = obs.latency_ms <= self.ms and obs.reason != "agent_timeout"
        return Verdict(ok, f"latency {'within' if ok else 'over'} {self.ms:g} ms")
