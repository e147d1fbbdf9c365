"""Faults: the catalog (one small unit per kind) and the pure, seeded schedule."""

from gate.faults import commands, llm, rpc, shared, streams, tools  # noqa: F401  (registration)
from gate.faults.base import FAULTS, LLM, TOOL, FaultBase
from gate.faults.schedule import Decision, Schedule, fires

__all__ = ["FAULTS", "LLM", "TOOL", "Decision", "FaultBase", "Schedule", "fires"]
