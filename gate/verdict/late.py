"""Late writes, judged in the cell that made them: a write repeated after the cell answered is its double write.

An agent whose conversation runs on after it answered (it gave up waiting, or it confirms in the
background) may execute an intended write again once the next cell has begun. The proxy keeps such
calls out of the running cell's trace and lists them as strays of the cell whose conversation they
carry (gate/proxy/late_calls.py); one that executes again a write that cell had already executed is marked
`repeats`. Here that cell's `writes_once` (explored cells) or `side_effect_once` outcome is breached,
naming the write — the same finding it would be had the call arrived in time.
"""

from __future__ import annotations

from gate.verdict.recovery import breach_outcome

ONCE = frozenset({"writes_once", "side_effect_once"})


def charge_late_writes(results, stray, types_of: dict[str, str]) -> None:
    """Breach the once-only outcome of each cell a late write repeated an intended write of.
    `types_of`: invariant id -> its type."""
    by_id = {r.id: r for r in results}
    for call in stray:
        cell = by_id.get(call.after_cell or "") if call.late_write and call.repeats else None
        at = next((n for n, o in enumerate(cell.invariants) if types_of.get(o.id) in ONCE), None) if cell else None
        if at is None or cell.invariants[at].breached:
            continue
        breach_outcome(cell, at, f"one intended write was executed again after the agent had answered "
                                 f"({call.method} {call.target}{call.path}, which arrived while the next cell ran): "
                                 f"{call.repeats[:100]}")
