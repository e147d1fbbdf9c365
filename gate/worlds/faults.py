"""World faults: faultbench's vocabulary, decided per call from the cell's seed, on the world clock.

Per call, in faultbench's order: `latency_ms: [lo, hi]` (a drawn delay; the clock moves by
it too) → `not_found_if_newer_than` (the record a get/update/delete names is younger than
that on the clock) → `rate_limit: {calls, per_seconds}` (past `calls` in the window, on the
clock, an `http_429`) → one draw over `errors` (cumulative, in the order written).

What each error does: `timeout` runs the operation, then the agent gets a tool error (a
retry writes twice); `http_500`, `http_429`, `not_found` refuse before running;
`empty_result` answers a valid empty result and `malformed_json` an answer that is not
JSON, neither running the operation.

Draws are string-seeded per (seed, cell, run, world, operation, call number) — the
schedule's rule (gate/faults/schedule.py) — so a decision never depends on timing or on
other operations' calls, and the same seed gives the same faults in pytest and in
`chaos-gate run`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from gate.worlds.model import World

FAULT_FREE = frozenset({"baseline", "mutation", "replay"})


@dataclass
class WorldDecision:
    kind: str | None  # an error kind, or None: run normally
    latency_ms: float = 0.0
    why: str = ""


def applies(world: World, cell, forced: bool | None = None) -> bool:
    """Whether a world's faults apply to a cell: forced on/off (serve --faults, the plugin), or by
    `faults_apply` (scenarios: every cell but the fault-free ones)."""
    if forced is not None:
        return forced and bool(world.faults)
    if not world.faults or world.faults_apply == "never":
        return False
    if world.faults_apply == "always":
        return True
    scenario = getattr(cell, "scenario", None)
    return scenario is not None and scenario not in FAULT_FREE


class WorldFaults:
    """The fault counters of one world in one (cell, run); `decide` once per operation call."""

    def __init__(self, world: World, seed: int, cell_id: str, run: int, enabled: bool):
        self.world, self.seed, self.cell_id, self.run, self.enabled = world, seed, cell_id, run, enabled
        self.calls: dict[str, int] = {}
        self.windows: dict[str, list[float]] = {}
        self.fired: list[tuple[str, int, str]] = []  # (operation, call number, kind)

    def _rng(self, op: str, n: int, what: str) -> random.Random:
        return random.Random(f"{self.seed}:{self.cell_id}:{self.run}:world:{self.world.name}:{op}:{n}:{what}")

    def decide(self, op: str, state, args) -> WorldDecision | None:
        if not self.enabled or op not in self.world.operations:
            return None
        rule = self.world.rule_for(op)
        if rule is None:
            return None
        n = self.calls[op] = self.calls.get(op, 0) + 1
        decision = WorldDecision(None)
        if rule.latency_ms:
            lo, hi = rule.latency_ms
            decision.latency_ms = round(self._rng(op, n, "latency").uniform(lo, hi), 3)
        decision.kind, decision.why = self._conditional(rule, state, op, args)
        if decision.kind is None and rule.rate_limit is not None:
            decision.kind, decision.why = self._rate_limited(rule.rate_limit, op, state)
        if decision.kind is None:
            draw, total = self._rng(op, n, "error").random(), 0.0
            for kind, p in rule.probabilities().items():
                total += p
                if draw < total:
                    decision.kind, decision.why = kind, f"p={p:g}"
                    break
        if decision.kind is not None:
            self.fired.append((op, n, decision.kind))
        return decision if decision.kind or decision.latency_ms else None

    def _conditional(self, rule, state, op: str, args) -> tuple[str | None, str]:
        window = rule.newer_than()
        found = state.target(op, args) if window is not None else None
        if found is None:
            return None, ""
        age = state.age(*found)
        if age is not None and age < window:
            return "not_found", f"the record is {age:g}s old, newer than {window:g}s"
        return None, ""

    def _rate_limited(self, limit, op: str, state) -> tuple[str | None, str]:
        now = state.clock.seconds()
        recent = [t for t in self.windows.get(op, []) if now - t < limit.per_seconds]
        if len(recent) >= limit.calls:
            self.windows[op] = recent
            return "http_429", f"{limit.calls} calls in {limit.per_seconds:g}s on the clock"
        self.windows[op] = recent + [now]
        return None, ""
