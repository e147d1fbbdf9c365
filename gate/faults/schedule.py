"""The schedule: (seed, cell, run, fault, call number) -> fire or not. Pure.

A decision never depends on timing or on other cells: each (cell, run) gets its own
counters, and probabilities are drawn from a string-seeded RNG private to that exact
call, so the same seed gives the same faults on the same calls in any process.

`only` replaces the triggers with an explicit set of firings, (fault index, upstream,
call number to that upstream): shrinking and `--faults` replay exactly that set.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


def fires(fault, *, seed: int, cell_id: str, run: int, index: int, call: int, fired: int) -> bool:
    """Whether fault number `index` fires on its `call`-th matching request."""
    if fault.max_fires is not None and fired >= fault.max_fires:
        return False
    if fault.on_calls is not None and call not in fault.on_calls:
        return False
    if fault.after_calls is not None and call <= fault.after_calls:
        return False
    if fault.every is not None and call % fault.every != 0:
        return False
    if fault.probability is not None:
        draw = random.Random(f"{seed}:{cell_id}:{run}:fault{index}:{call}").random()
        if draw >= fault.probability:
            return False
    return True


@dataclass
class Decision:
    fault: object
    index: int
    call: int  # this fault's matching-call number


@dataclass
class Schedule:
    """Counters for one (cell, run); `decide` is called once per request, in arrival order."""

    faults: tuple
    seed: int
    cell_id: str
    run: int
    calls: dict[int, int] = field(default_factory=dict)
    fired: dict[int, int] = field(default_factory=dict)
    not_applicable: dict[int, int] = field(default_factory=dict)  # firings that met an answer they could not alter
    only: frozenset | None = None  # {(index, upstream, upstream call number)}: fire exactly these

    def _fires(self, index: int, fault, call: int, info, target_call: int) -> bool:
        if self.only is not None:
            return (index, info.name, target_call) in self.only
        return fires(fault, seed=self.seed, cell_id=self.cell_id, run=self.run, index=index, call=call,
                     fired=self.fired.get(index, 0))

    def decide(self, info, target_call: int = 0) -> Decision | None:
        """`target_call`: this request's number among the run's calls to its upstream (for `only`)."""
        chosen = None
        for index, fault in enumerate(self.faults):
            if not fault.matches(info):
                continue
            call = self.calls.get(index, 0) + 1
            self.calls[index] = call
            if chosen is None and self._fires(index, fault, call, info, target_call):
                self.fired[index] = self.fired.get(index, 0) + 1
                chosen = Decision(fault, index, call)
        return chosen

    def mark_not_applicable(self, index: int) -> None:
        self.not_applicable[index] = self.not_applicable.get(index, 0) + 1

    def stats(self) -> dict[int, dict[str, int]]:
        """Per fault index: requests matched, honest firings, firings that changed nothing."""
        return {index: {"matched": self.calls.get(index, 0),
                        "fired": self.fired.get(index, 0) - self.not_applicable.get(index, 0),
                        "not_applicable": self.not_applicable.get(index, 0)}
                for index in range(len(self.faults))}
