"""Behavioural contracts: invariants, their registry, and evaluation of a run against them."""

from gate.contracts import claims, outcome_checks, output_checks, trace_checks, usage_checks  # noqa: F401  (registration)
from gate.contracts.base import (
    INVARIANTS,
    SEVERITY_WEIGHT,
    InvariantBase,
    Observation,
    Verdict,
    When,
)

__all__ = ["INVARIANTS", "SEVERITY_WEIGHT", "InvariantBase", "Observation", "Verdict", "When"]
