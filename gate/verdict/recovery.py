"""`recovers`, judged across cells: a process a fault left broken is charged to the cell that broke it.

The runner re-runs, on a restarted agent, a cell that failed on an instance an earlier cell's
faults had fired on (gate/runner/recover.py). When the re-run passes, the first failure was not
the victim's: the process had not recovered from the earlier cell. That cell is charged here with
a breach of its `recovers` oracle, naming the victim, where it applies (explored cells, or a cell
with a declared `recovers`); elsewhere the verdict's warning says it, as before.
"""

from __future__ import annotations


def charge_breakers(results, reruns, recovers: set[str]) -> None:
    """Fold each passed re-run into the `recovers` outcome (ids in `recovers`) of the cell that left the
    agent broken."""
    by_id = {r.id: r for r in results}
    for rerun in reruns:
        origin = by_id.get(rerun.left_broken_by or "") if rerun.outcome == "passed" else None
        at = next((n for n, o in enumerate(origin.invariants) if o.id in recovers), None) if origin else None
        if at is None or origin.invariants[at].breached:
            continue
        breach_outcome(origin, at, f"the agent did not recover: {rerun.cell} failed after this cell on the same "
                                   f"process ({rerun.first_reason}) and passed on a restarted one")


def breach_outcome(cell, at: int, message: str) -> None:
    """Charge `cell` a breach of its `at`-th outcome, found after it was judged; a passing cell now fails."""
    # a copy: an outcome may be shared by the cells whose runs were alike (gate/verdict/evaluate.py)
    cell.invariants[at] = cell.invariants[at].model_copy(update=dict(
        breached=True, passed_runs=0, total_runs=1, pass_rate=0.0, not_judged_runs=0, message=message))
    if cell.status == "pass":
        cell.status, cell.reason = "fail", f"contract:{cell.invariants[at].id}"
