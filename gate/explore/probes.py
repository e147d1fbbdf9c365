"""Which explored cells run a probe session beside them, and which input it sends. Pure.

`isolates_sessions` (gate/contracts/sessions.py) asks whether a fault held in one session reaches the
others. Only an agent that keeps sessions can fail it, so only a conversation input's cells are probed,
and only under the faults that hold or fail a session (a hang, a long Retry-After, an error, an outage)
— the rest change one answer, not the process.

The probe is another input of the config, in a session of its own, whose calls the proxy must tell
apart from the faulted conversation's without the agent's help: its model calls by its first turn's
text, its tool calls by upstream. So it is an input whose baseline called none of the upstreams the
faulted input's did (one that calls no tool at all is best), and whose first turn neither contains
nor is contained in the other's. Without one, the cell runs unprobed (the oracle says so).
"""

from __future__ import annotations

from dataclasses import replace

PROBED = frozenset({"timeout", "hang_after_write", "stall", "rate_limit", "error", "server_error", "exit_code",
                    "latency", "timeout_after_write"})


def with_probes(points: list, baselines: list) -> list:
    """`points` with `reference.probe` set where a probe session runs beside them."""
    by_id = {b.input_id: b for b in baselines if b.reason == "ok" and b.answer is not None}
    out = []
    for point in points:
        base = by_id.get(point.input_id)
        if base is None or not base.turn_calls or not any(f["kind"] in PROBED for f in point.faults):
            out.append(point)
            continue
        probe = probe_for(base, list(by_id.values()))
        out.append(replace(point, reference=replace(point.reference, probe=probe)) if probe else point)
    return out


def probe_for(faulted, candidates: list) -> dict | None:
    """The probe of `faulted`'s cells: the input whose calls are the easiest to tell apart (fewest tool
    upstreams, none shared), with the envelope of its own fault-free samples."""
    usable = [b for b in candidates if b.input_id != faulted.input_id and not set(b.targets) & set(faulted.targets)]
    if not usable:
        return None
    best = min(usable, key=lambda b: len(b.targets))  # min keeps the config's order among equals
    every = (best, *best.others)
    return {"input": best.input_id, "answers": [s.answer for s in every if s.answer],
            "latency_ms": max(s.latency_ms for s in every), "model_calls": min(_llm(s) for s in every),
            "targets": list(best.targets)}


def _llm(base) -> int:
    return sum(n for group, n in base.calls.items() if group.startswith("llm:"))
