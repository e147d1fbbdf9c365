"""Whether the run attacked the agent at all, in the words every surface puts on its first line.

A config with only inputs and invariants (no chaos profile, fault or scenario) still runs its
contract and mutation stages, and may pass with score 100.0; so may a run whose faults never fired
(vacuous, let through by `gate.allow_vacuous`). `PASS score 100.0` alone would then read as "it
survived the faults". So the first line of summary.md, the PR comment, report.html and the terminal
says that no fault was injected, from one function, so that they cannot drift. Only words: the
verdict is gate/verdict's and stays as it is; report.json says the same to a machine in
`verdict.faults_injected`.
"""

from __future__ import annotations

from gate.report.failure import STAGE  # the one cell of a run that could not judge any
from gate.report.model import Report


def no_fault_note(report: Report) -> str | None:
    """`no fault was injected (why)`, or None when a fault fired or no cell ran (then the verdict says why)."""
    v = report.verdict
    if v.faults_injected or all(c.stage == STAGE for c in v.cells):
        return None
    faults = sum(len(sc.faults) for sc in v.coverage)  # each row: a fault of a scenario that ran
    if faults == 0:
        whole = report.run.selected is None and report.run.shard is None  # else others may be elsewhere
        return f"no fault was injected ({'none is configured' if whole else 'none in the cells that ran'})"
    if faults == 1:
        return "no fault was injected (the one configured fault never fired)"
    return f"no fault was injected (none of the {faults} configured faults fired)"
