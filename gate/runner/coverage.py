"""Did the run test what the config asked for? Fault coverage and vacuity. Pure.

A PASS is only worth something if the faults fired and the invariants judged
something. Per scenario, each fault's counters (matched / honestly fired / not
applicable) are summed over every cell and run that used it; a scenario none of whose
faults ever changed what the agent received, or an invariant that judged no run,
makes the run *vacuous* — an error unless the config allows it (then a warning).
Think of mutation testing's "no coverage" and Antithesis' "sometimes" assertions.
"""

from __future__ import annotations

from gate.report.model import CellResult, FaultCoverage, InvariantSummary, ScenarioCoverage


def _blank(index: int, fault) -> dict:
    return {"index": index, "fault": fault.label(), "target": fault.target, "matched": 0, "fired": 0,
            "not_applicable": 0, "reason": ""}


def _add_run(rows: list[dict], stats: dict | None, result_runs) -> None:
    """Add one run's counters; without proxy counters, fall back to what the trace shows."""
    if stats is not None:
        for index, row in enumerate(rows):
            got = stats.get(index) or stats.get(str(index)) or {}
            for key in ("matched", "fired", "not_applicable"):
                row[key] += int(got.get(key, 0))
    for step in result_runs:
        index = _index_of(step, rows)
        if index is None:
            continue
        row = rows[index]
        if step.fault_status == "not_applicable" and not row["reason"]:
            row["reason"] = step.note
        if stats is None:
            key = "not_applicable" if step.fault_status == "not_applicable" else "fired"
            row[key] += 1
            row["matched"] += 1


def _index_of(step, rows: list[dict]) -> int | None:
    """The fault a trace step names: by index, or by label when that is unambiguous."""
    if step.fault_index is not None:
        return step.fault_index if step.fault_index < len(rows) else None
    same = [n for n, row in enumerate(rows) if step.fault and row["fault"] == step.fault]
    return same[0] if len(same) == 1 else None


def _explain_unmatched(rows: list[dict], faults, reach) -> None:
    """A tool fault that matched no call: which tools the agent did offer, and how to reach more."""
    from gate.faults import TOOL
    from gate.runner.reach import unmatched_reason

    for row, fault in zip(rows, faults):
        if row["matched"] == 0 and not row["reason"] and TOOL in fault.applies_to and fault.target in ("*", "tools", "functions", "mcp-stdio"):
            row["reason"] = unmatched_reason(fault, reach.offered if reach else [], reach)


def _status(row: dict) -> str:
    if row["fired"]:
        return "fired"
    if row["not_applicable"]:
        return "not_applicable"
    return "never_fired" if row["matched"] else "never_matched"


def fault_coverage(cells, results: dict[str, CellResult], stats: dict[str, list],
                   reach=None) -> list[ScenarioCoverage]:
    """cells: the plan cells that ran (they carry the faults); stats: cell id -> per-run counters;
    reach: what the gate reached (gate/runner/reach.py), to say why a tool fault matched nothing."""
    groups: dict[tuple[str, str], dict] = {}
    for cell in cells:
        if not cell.faults or cell.id not in results:
            continue
        group = groups.setdefault((cell.stage, cell.scenario), {"cells": 0, "rows": None})
        if group["rows"] is None:
            group["rows"] = [_blank(i, f) for i, f in enumerate(cell.faults)]
            group["faults"] = cell.faults
        group["cells"] += 1
        runs = results[cell.id].runs
        per_run = stats.get(cell.id) or [None] * len(runs)
        for run, run_stats in zip(runs, per_run):
            _add_run(group["rows"], run_stats, run.trace)
    out = []
    for (stage, scenario), group in groups.items():
        _explain_unmatched(group["rows"], group["faults"], reach)
        faults = [FaultCoverage(status=_status(row), **row) for row in group["rows"]]
        out.append(ScenarioCoverage(stage=stage, scenario=scenario, cells=group["cells"], faults=faults))
    return out


def _why(fault: FaultCoverage) -> str:
    if fault.status == "never_matched":
        why = f": {fault.reason}" if fault.reason else ""
        return f"{fault.fault} (target {fault.target}) never matched a request{why}"
    if fault.status == "never_fired":
        return f"{fault.fault} matched {fault.matched} request(s) but its trigger never fired"
    return f"{fault.fault} could not alter any answer ({fault.reason or 'not applicable'})"


def vacuous_scenarios(coverage: list[ScenarioCoverage]) -> list[str]:
    """A scenario none of whose faults changed anything tested nothing beyond the baseline."""
    problems = []
    for sc in coverage:
        if sc.faults and not any(f.status == "fired" for f in sc.faults):
            whys = "; ".join(_why(f) for f in sc.faults)
            problems.append(f"vacuous: {sc.stage} scenario '{sc.scenario}' injected no fault on any of its "
                            f"{sc.cells} cell(s): {whys}")
    return problems


def idle_faults(coverage: list[ScenarioCoverage]) -> list[str]:
    """Faults that never fired inside scenarios where another fault did: worth a warning."""
    return [f"{sc.stage} scenario '{sc.scenario}': fault {f.index} {_why(f)}"
            for sc in coverage if any(x.status == "fired" for x in sc.faults)
            for f in sc.faults if f.status != "fired"]


def vacuous_invariants(summaries: list[InvariantSummary], judged: dict[str, int]) -> list[str]:
    """Invariants that applied to no cell, or judged no run of the cells they applied to."""
    problems = []
    for inv in summaries:
        if inv.checked == 0:
            problems.append(f"vacuous: invariant '{inv.id}' applied to no cell that ran")
        elif judged.get(inv.id, 0) == 0:
            problems.append(f"vacuous: invariant '{inv.id}' judged no run (every run it applied to had no output)")
    return problems


def merge_coverage(parts: list[list[ScenarioCoverage]]) -> list[ScenarioCoverage]:
    """Sum shard reports' coverage, scenario by scenario and fault by fault."""
    merged: dict[tuple[str, str], ScenarioCoverage] = {}
    for part in parts:
        for sc in part:
            have = merged.get((sc.stage, sc.scenario))
            if have is None:
                merged[(sc.stage, sc.scenario)] = sc.model_copy(deep=True)
                continue
            have.cells += sc.cells
            for mine, theirs in zip(have.faults, sc.faults):
                mine.matched += theirs.matched
                mine.fired += theirs.fired
                mine.not_applicable += theirs.not_applicable
                mine.reason = mine.reason or theirs.reason
                mine.status = _status(mine.model_dump())
    return list(merged.values())
