"""The run's cost budget (`gate.max_cost_usd`): once spent, no new cell run starts.

Costs are known only after a run ends, so the budget can be overshot by the runs
already in flight (at most one per worker); what it guarantees is that nothing new
starts. Runs without a price (an unpriced model) count as free and are reported so.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Budget:
    limit: float | None
    spent: float = 0.0
    skipped: int = 0  # cell runs that never started because the budget was spent

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.spent >= self.limit

    def charge(self, usage) -> None:
        cost = getattr(usage, "cost_usd", None)
        if cost:
            self.spent += cost

    def message(self, finished: int, planned: int) -> str:
        return (f"budget: the run spent ${self.spent:.4f} of gate.max_cost_usd ${self.limit:g}; no new cell "
                f"started after that ({finished} of {planned} cells finished, {self.skipped} cell run(s) skipped)")
