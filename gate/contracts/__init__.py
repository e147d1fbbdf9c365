"""Behavioural contracts: invariants, their registry, and evaluation of a run against them."""

from gate.contracts import outcome_checks, output_checks, trace_checks, usage_checks  # noqa: F401  (registration)
from gate.contracts import claims  # noqa: F401, I001  (registered last: the catalog's order is the docs' order)
from gate.contracts import universal  # noqa: F401, I001  (the oracles exploration judges with: docs/explore.md)
from gate.contracts import sessions  # noqa: F401, I001  (isolates_sessions, the last of them)
from gate.contracts.base import (
    INVARIANTS,
    SEVERITY_WEIGHT,
    InvariantBase,
    Observation,
    Verdict,
    When,
)

__all__ = ["INVARIANTS", "SEVERITY_WEIGHT", "InvariantBase", "Observation", "Verdict", "When"]
