"""Did the run test what the config asked for? Fault coverage and vacuity. Pure.

A PASS is only worth something if the faults fired and the invariants judged
something. Per scenario, each fault's counters (matched / honestly fired / not
applicable) are summed over every cell and run that used it; a scenario none of whose
faults ever changed what the agent received, or an invariant that judged no run,
makes the run *vacuous* — an error unless the config allows it (then a warning).
Think of mutation testing's "no coverage" and Antithesis' "sometimes" assertions.

A profile runs one cell per fault: its rows are the profile's faults, and each cell adds
its counters to its own fault's row only (`Cell.fault_offset`). Every fault that did not
fire gets a `hint`, the way forward: another seed or more `runs` for a probability, an
`on_calls` the agent reaches, a target it calls, a fault kind that fits its answers.
"""

from __future__ import annotations

from gate.faults import TOOL
from gate.report.model import CellResult, FaultCoverage, InvariantSummary, ScenarioCoverage
from gate.verdict.reach import tools_called, unmatched_reason


def _blank(index: int, fault) -> dict:
    return {"index": index, "fault": fault.label(), "target": fault.target, "matched": 0, "fired": 0,
            "not_applicable": 0, "reason": "", "cells": 0, "most_calls": 0}


def _add_run(rows: list[dict], stats: dict | None, result_runs, offset: int = 0, width: int | None = None) -> None:
    """Add one run's counters to the rows `offset .. offset + width` (the cell's own faults);
    without proxy counters, fall back to what the trace shows."""
    own = rows[offset:offset + (len(rows) if width is None else width)]
    if stats is not None:
        for index, row in enumerate(own):
            got = stats.get(index) or stats.get(str(index)) or {}
            for key in ("matched", "fired", "not_applicable"):
                row[key] += int(got.get(key, 0))
            row["most_calls"] = max(row["most_calls"], int(got.get("matched", 0)))
    for step in result_runs:
        index = _index_of(step, own)
        if index is None:
            continue
        row = own[index]
        if step.fault_status == "not_applicable" and not row["reason"]:
            row["reason"] = step.note
        if stats is None:
            key = "not_applicable" if step.fault_status == "not_applicable" else "fired"
            row[key] += 1
            row["matched"] += 1
            row["most_calls"] = max(row["most_calls"], row["matched"])


def _index_of(step, rows: list[dict]) -> int | None:
    """The fault a trace step names: by index, or by label when that is unambiguous."""
    if step.fault_index is not None:
        return step.fault_index if step.fault_index < len(rows) else None
    same = [n for n, row in enumerate(rows) if step.fault and row["fault"] == step.fault]
    return same[0] if len(same) == 1 else None


def _status(row: dict) -> str:
    if row["fired"]:
        return "fired"
    if row["not_applicable"]:
        return "not_applicable"
    return "never_fired" if row["matched"] else "never_matched"


def fault_coverage(cells, results: dict[str, CellResult], stats: dict[str, list],
                   reach=None) -> list[ScenarioCoverage]:
    """cells: the plan cells that ran (they carry the faults); stats: cell id -> per-run counters;
    reach: what the gate reached (gate/verdict/reach.py), to say why a tool fault matched nothing."""
    groups: dict[tuple[str, str], dict] = {}
    for cell in cells:
        if not cell.faults or cell.id not in results:
            continue
        group = groups.setdefault((cell.stage, cell.scenario), {"cells": 0, "rows": None})
        every = getattr(cell, "scenario_faults", None) or cell.faults
        offset = getattr(cell, "fault_offset", 0) if every is not cell.faults else 0
        if group["rows"] is None:
            group["rows"] = [_blank(i, f) for i, f in enumerate(every)]
            group["faults"] = every
        group["cells"] += 1
        for row in group["rows"][offset:offset + len(cell.faults)]:
            row["cells"] += 1
        runs = results[cell.id].runs
        per_run = stats.get(cell.id) or [None] * len(runs)
        for run, run_stats in zip(runs, per_run, strict=False):
            _add_run(group["rows"], run_stats, run.trace, offset, len(cell.faults))
    out = []
    for (stage, scenario), group in groups.items():
        faults = [FaultCoverage(status=_status(row), **row) for row in group["rows"]]
        explain(faults, group["faults"], reach)
        out.append(ScenarioCoverage(stage=stage, scenario=scenario, cells=group["cells"], faults=faults))
    return out


def explain(rows: list[FaultCoverage], faults, reach) -> None:
    """Each row's status and, for a fault that did not fire, why and the way forward. A merge of shards
    calls it again over the summed rows with the union of the shards' reach, so the words are the
    unsharded run's: a reason that names what the agent offered, or a hint that names the most calls
    one run made, depends on every cell, not on one shard's."""
    for row, fault in zip(rows, faults, strict=False):
        row.status = _status(row.model_dump())
        row.tool = getattr(fault, "tool", None) if TOOL in fault.applies_to else None
        if row.matched == 0 and TOOL in fault.applies_to and fault.target in ("*", "tools", "functions", "mcp-stdio"):
            row.reason = unmatched_reason(fault, reach.offered if reach else [], reach)
        row.hint = hint(row.status, fault, row.most_calls, reach)


def hint(status: str, fault, most_calls: int, reach=None) -> str:
    """What to change so that a fault that did not fire does: the way forward, in one sentence."""
    if status == "fired":
        return ""
    if status == "not_applicable":
        return ("use a fault kind that fits what the agent receives there (the reason above), or aim it with "
                "`on_calls` / `model` / `tool` at a call whose answer it can alter")
    if status == "never_matched":
        seen = ", ".join(reach.wire) if reach is not None and reach.wire else ""
        where = f" (its calls went to: {seen})" if seen else ""
        return (f"set `target` (and `method`/`path`/`tool`) to a call the agent makes{where}, or give it an "
                "input that makes that call")
    if fault.probability is not None:
        return (f"its probability {fault.probability:g} chose none of the {most_calls or 'few'} matching call(s) "
                "per run: try another `--seed`, more `runs`, or a higher probability")
    if fault.on_calls:
        return (f"`on_calls: {fault.on_calls}` but no run made more than {most_calls} matching call(s): use "
                f"call numbers from 1 to {max(most_calls, 1)}")
    if fault.after_calls is not None:
        return (f"`after_calls: {fault.after_calls}` but no run made more than {most_calls} matching call(s): "
                f"lower it below {max(most_calls, 1)}")
    if fault.every is not None:
        return (f"`every: {fault.every}` but no run made more than {most_calls} matching call(s): lower it to "
                f"{max(most_calls, 1)} or less")
    return "try another `--seed` or more `runs`"


def _why(fault: FaultCoverage) -> str:
    forward = f" — {fault.hint}" if fault.hint else ""
    if fault.status == "never_matched":
        why = f": {fault.reason}" if fault.reason else ""
        return f"{fault.fault} (target {fault.target}) never matched a request{why}{forward}"
    if fault.status == "never_fired":
        return f"{fault.fault} matched {fault.matched} request(s) but its trigger never fired{forward}"
    return f"{fault.fault} could not alter any answer ({fault.reason or 'not applicable'}){forward}"


def vacuous_scenario_items(coverage: list[ScenarioCoverage]) -> list[tuple[ScenarioCoverage, str]]:
    """(scenario, message) for each scenario none of whose faults changed anything."""
    return [(sc, f"vacuous: {sc.stage} scenario '{sc.scenario}' injected no fault on any of its {sc.cells} "
                 f"cell(s): {'; '.join(_why(f) for f in sc.faults)}")
            for sc in coverage if sc.faults and not any(f.status == "fired" for f in sc.faults)]


def vacuous_scenarios(coverage: list[ScenarioCoverage]) -> list[str]:
    """A scenario none of whose faults changed anything tested nothing beyond the baseline."""
    return [message for _, message in vacuous_scenario_items(coverage)]


def idle_faults(coverage: list[ScenarioCoverage]) -> list[str]:
    """Faults that never fired inside scenarios where another fault did: worth a warning."""
    return [f"{sc.stage} scenario '{sc.scenario}': fault {f.index} {_why(f)}"
            for sc in coverage if any(x.status == "fired" for x in sc.faults)
            for f in sc.faults if f.status != "fired"]


def vacuous_invariant_items(summaries: list[InvariantSummary],
                            judged: dict[str, int]) -> list[tuple[str, bool, str]]:
    """(invariant id, whether it applied but judged no run, message) for each vacuous invariant."""
    problems = []
    for inv in summaries:
        if inv.checked == 0:
            problems.append((inv.id, False, f"vacuous: invariant '{inv.id}' applied to no cell that ran (and "
                                            "was judged) — check its `when` against the ids `chaos-gate plan` lists"))
        elif judged.get(inv.id, 0) == 0:
            problems.append((inv.id, True, f"vacuous: invariant '{inv.id}' judged no run (every run it applied to "
                                           "had no output, or, for a `claims_backed`, an output that made none of "
                                           "its claims) — fix what `completes` reports first, then it has an "
                                           "answer to judge; a claim's `says` must match what the agent answers"))
    return problems


def vacuous_invariants(summaries: list[InvariantSummary], judged: dict[str, int]) -> list[str]:
    """Invariants that applied to no cell, or judged no run of the cells they applied to."""
    return [message for _, _, message in vacuous_invariant_items(summaries, judged)]


def merge_coverage(parts: list[list[ScenarioCoverage]], cells=(), faults_of=None, reach=None) -> list[ScenarioCoverage]:
    """Sum shard reports' coverage, scenario by scenario and fault by fault. `cells`: the merged cells in
    plan order; the scenarios then come in the order an unsharded run lists them (that of their first
    cell in the plan), not in the order the shards happened to hold them. `faults_of`: (stage, scenario)
    -> its faults (from the plan), to explain the summed rows again with `reach`, the shards' union."""
    merged: dict[tuple[str, str], ScenarioCoverage] = {}
    for part in parts:
        for sc in part:
            have = merged.get((sc.stage, sc.scenario))
            if have is None:
                merged[(sc.stage, sc.scenario)] = sc.model_copy(deep=True)
                continue
            have.cells += sc.cells
            for mine, theirs in zip(have.faults, sc.faults, strict=False):
                mine.cells += theirs.cells
                mine.matched += theirs.matched
                mine.fired += theirs.fired
                mine.not_applicable += theirs.not_applicable
                mine.most_calls = max(mine.most_calls, theirs.most_calls)
                mine.reason = mine.reason or theirs.reason
                mine.status = _status(mine.model_dump())
                mine.hint = "" if mine.status == "fired" else (mine.hint or theirs.hint)
    for key, sc in merged.items():
        faults = (faults_of or {}).get(key)
        if faults is not None and len(faults) == len(sc.faults):
            explain(sc.faults, faults, reach)
    first: dict[tuple[str, str], int] = {}
    for n, cell in enumerate(cells):
        first.setdefault((cell.stage, cell.scenario), n)
    return sorted(merged.values(), key=lambda sc: first.get((sc.stage, sc.scenario), len(first)))


def unmatched_tool_globs(config, cells, called: list[str] | None = None) -> list[tuple[str, str]]:
    """(invariant id, glob) for each trace invariant whose `tool:` glob met no call in any cell it
    judged. In-process tool names are known only at run time, so this is where a misspelt name is
    caught (never a silent pass). It reads each cell's `reached` (kept in every report row), so a
    merge of shard reports finds exactly what the unsharded run found. `called`: tools_called(cells),
    when the caller has it already."""
    import fnmatch

    from gate.config.references import in_process_reachable
    from gate.plan import invariants_of

    at_load = not in_process_reachable(config)  # then a trace filter's names were checked at load (references.py)
    named = []
    for inv in invariants_of(config):
        if hasattr(inv, "tool_globs"):  # claims_backed: its backings' tools, checked here whatever the config
            named += [(inv, glob) for glob in inv.tool_globs()]
        elif not at_load and getattr(inv, "kind", "") == "trace" and getattr(inv, "tool", None):
            named.append((inv, inv.tool))
    if not named:
        return []
    seen = tools_called(cells) if called is None else called
    applied = {o.id for c in cells for o in c.invariants}
    return [(inv.id, glob) for inv, glob in named
            if inv.id in applied and not any(fnmatch.fnmatchcase(name, glob) for name in seen)]


def unmatched_tool_filters(config, cells) -> list[str]:
    """The vacuity message of each `tool:` glob no cell called (unmatched_tool_globs)."""
    called = tools_called(cells)
    unmatched = unmatched_tool_globs(config, cells, called)
    shown = ", ".join(called[:20]) or "none"
    return [f"vacuous: invariant '{inv_id}' names tool '{glob}', and no cell called a tool by that name "
            f"(tools called: {shown}) — fix the `tool:` glob, or check that the gate reached the tool "
            f"(the report's reach line)" for inv_id, glob in unmatched]
