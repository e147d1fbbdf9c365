"""Invariants on what a run cost: tokens_max and cost_max, per cell run.

They read the run's usage the proxy measured (`obs.state["usage"]`, summed over the
run's LLM calls and priced from the `pricing:` table). Without the proxy there is no
usage to judge; an unpriced model leaves the cost unknown, which is said, not guessed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gate.contracts.base import InvariantBase, Observation, Verdict, register


def _usage(obs: Observation) -> dict | None:
    usage = obs.state.get("usage")
    return usage if isinstance(usage, dict) else None


def _estimated(usage: dict) -> str:
    return " (estimated: some calls reported no usage)" if usage.get("estimated") else ""


@register
class TokensMax(InvariantBase):
    """One run of the cell used at most `max` tokens (`count`: total, input or output)."""

    type: Literal["tokens_max"] = "tokens_max"
    kind = "trace"
    max: int = Field(ge=0, description="Most tokens one run of a cell may use.")
    count: Literal["total", "input", "output"] = Field(default="total", description="Which tokens are counted.")

    def check(self, obs):
        usage = _usage(obs)
        if usage is None:
            return Verdict.not_judged("no usage: the agent's LLM calls do not go through the gate's proxy")
        n = usage["input_tokens"] + usage["output_tokens"] if self.count == "total" else usage[f"{self.count}_tokens"]
        what = "" if self.count == "total" else f"{self.count} "
        return Verdict(n <= self.max, f"{n} {what}tokens in {usage['calls']} LLM call(s) "
                                      f"(max {self.max}){_estimated(usage)}")


@register
class CostMax(InvariantBase):
    """One run of the cell cost at most `usd` (needs `pricing:`)."""

    type: Literal["cost_max"] = "cost_max"
    kind = "trace"
    usd: float = Field(gt=0, description="Most USD one run of a cell may cost (needs `pricing:`).")

    def check(self, obs):
        usage = _usage(obs)
        if usage is None:
            return Verdict.not_judged("no usage: the agent's LLM calls do not go through the gate's proxy")
        if usage.get("unpriced"):
            return Verdict.not_judged(f"cost unknown: no pricing entry for {', '.join(usage['unpriced'])}")
        cost = usage.get("cost_usd") or 0.0
        return Verdict(cost <= self.usd, f"${cost:.6f} in {usage['calls']} LLM call(s) "
                                         f"(max ${self.usd:g}){_estimated(usage)}")
