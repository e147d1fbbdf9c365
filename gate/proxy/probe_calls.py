"""The calls of a probe session, told apart from the faulted run's beside it (gate/explore/probes.py).

The probe runs on the same agent, through the same proxy, at the same time as a faulted conversation;
the agent says nothing of which session a call serves. Its model calls carry its first turn's text (the
planner chose a probe whose text the faulted input's does not contain, nor the reverse), and its tool
calls go to upstreams the faulted input never called. Claimed calls go to a RunState of their own: never
faulted, never in the cell's trace (they would count as its writes and retries), counted for the oracle.
"""

from __future__ import annotations

from gate.contracts.meaning import strings_in


class ProbeCalls:
    def __init__(self, first_text: str, targets, state):
        self.first_text, self.targets, self.state = first_text, frozenset(targets), state

    def claims(self, route, info) -> bool:
        if route.kind == "llm":
            return isinstance(info.doc, (dict, list)) and \
                any(self.first_text in s for s in strings_in(info.doc, limit=12))
        return route.name in self.targets

    def model_calls(self) -> int:
        return sum(1 for e in self.state.trace if e.kind == "llm")
