"""Prices per model (the `pricing:` table) and the checks that keep cost settings meaningful.

Prices are USD per million tokens, input and output, keyed by a model glob; the first
entry whose glob matches a call's model prices it (write specific globs first). A cost
invariant or budget with no price table would judge nothing, so that is a config error.
"""

from __future__ import annotations

import fnmatch

from pydantic import Field

from gate.config.problems import Problem
from gate.contracts.base import StrictModel


class Price(StrictModel):
    input: float = Field(ge=0, description="USD per million input (prompt) tokens.")
    output: float = Field(ge=0, description="USD per million output (completion) tokens.")


class ShrinkConfig(StrictModel):
    """Shrink each failing chaos/contract cell to the smallest set of fault firings that still breaks it."""

    enabled: bool = True
    max_runs: int = Field(default=32, ge=1, le=1000, description="Re-runs per failing cell, at most.")


def price_for(model: str | None, pricing: dict[str, Price]) -> Price | None:
    if not model:
        return None
    if model in pricing:
        return pricing[model]
    return next((price for glob, price in pricing.items() if fnmatch.fnmatchcase(model, glob)), None)


def cost_usd(input_tokens: int, output_tokens: int, price: Price) -> float:
    return (input_tokens * price.input + output_tokens * price.output) / 1_000_000


def pricing_problems(config) -> list[Problem]:
    """cost_max and gate.max_cost_usd need prices; say so where they are set."""
    if config.pricing:
        return []
    why = "needs a `pricing:` table (model glob -> {input, output} USD per million tokens)"
    out = []
    if config.gate.max_cost_usd is not None:
        out.append(Problem(("gate", "max_cost_usd"), f"a cost budget {why}"))
    for i, inv in enumerate(config.contract.invariants):
        if inv.type == "cost_max":
            out.append(Problem(("contract", "invariants", i, "usd"), f"cost_max {why}"))
    return out
