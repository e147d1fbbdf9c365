"""Shrink a failing chaos or contract cell to the smallest set of fault firings that still breaks it.

A scenario fires several faults; usually one of them is the bug. Delta debugging
(Zeller's ddmin) over the firings that actually happened in the failing run —
(fault index, upstream, call number) — re-runs the cell under the same seed with only
a subset allowed (`Schedule(only=...)`), keeping any subset that still breaches the
same invariant, until no single firing can be removed. The re-runs reuse the pool's
workers, happen only for failing cells, and stop at `shrink.max_runs` per cell.
A failure that does not come back with all of its own firings is flaky: not shrunk.

Only what has more than one fault to take apart is shrunk. A failing run with one firing, and an
explored cell of one fault (a point is one fault at one call, or one site's outage: minimal by
construction, gate/explore/planner.py), are marked minimal with no re-run — re-running them twice
each was half the time of an explored run. While shrinking runs it reports its progress the way the
pool does (`on_plan(total, phase=...)`, then `on_progress()` per cell shrunk).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gate.plan import Cell
from gate.plan.oracles import SCENARIO as EXPLORED
from gate.report.insight_model import Firing, Shrink
from gate.report.model import RunResult
from gate.verdict.evaluate import fold_cell

SHRINK_STAGES = ("chaos", "contract")
SHRINKING = "shrinking"  # the progress phase's name: `chaos-gate: shrinking 2 failing cell(s)`


class OutOfRuns(Exception):
    pass


@dataclass
class ShrinkJob:
    cell: Cell
    run: int
    invariant: str
    fired: list[Firing]
    result: Shrink | None = None
    minimal: list[Firing] | None = None
    reruns: int = 0
    seen: dict = field(default_factory=dict)


def fired_in(run: RunResult) -> list[Firing]:
    return [Firing(index=s.fault_index, target=s.target, call=s.call, fault=s.fault or "")
            for s in run.trace if s.fault_status == "fired" and s.fault_index is not None]


def plan_shrinks(cells: list[Cell], runs_of: dict[str, list[RunResult]], invariants: dict) -> list[ShrinkJob]:
    """One job per failing chaos/contract cell; flaky and fault-free failures are decided here already."""
    jobs = []
    for cell in cells:
        runs = runs_of.get(cell.id, [])
        if cell.stage not in SHRINK_STAGES or not cell.faults or not runs:
            continue
        folded = fold_cell(cell, [invariants[i] for i in cell.invariants], runs, "", lambda s: s)
        if folded.status != "fail":
            continue
        target = folded.breaches[0].id
        bad = next(r for r in runs if any(c.invariant == target and c.judged and not c.passed for c in r.checks))
        job = ShrinkJob(cell, bad.run, target, fired_in(bad))
        if folded.flaky:
            job.result = Shrink(status="flaky", invariant=target, fired=job.fired,
                                note="its runs disagree: a flaky failure is reported, not shrunk")
        elif not job.fired:
            job.result = Shrink(status="no_faults", invariant=target, note="it fails with no fault firing at all")
            job.minimal = []
        elif cell.scenario == EXPLORED and len(cell.faults) == 1:
            job.result = Shrink(status="minimal", invariant=target, fired=job.fired,
                                note="an explored point of one fault: minimal already, not re-run")
        elif len(job.fired) == 1:
            job.result = Shrink(status="minimal", invariant=target, fired=job.fired,
                                note="one fault fired: minimal already, not re-run")
            job.minimal = job.fired
        jobs.append(job)
    return jobs


def _allowing(cell: Cell, firings) -> Cell:
    return replace(cell, firings=frozenset((f.index, f.target, f.call) for f in firings), rerun=True)


async def _breaks(job: ShrinkJob, subset: list[Firing], execute, max_runs: int) -> bool:
    """Re-run the cell with only `subset` firing; True if the same invariant breaks again."""
    key = frozenset(f.spec for f in subset)
    if key in job.seen:
        return job.seen[key]
    if job.reruns >= max_runs:
        raise OutOfRuns()
    job.reruns += 1
    run = await execute(_allowing(job.cell, subset), job.run)
    broke = run.error is None and any(c.invariant == job.invariant and c.judged and not c.passed for c in run.checks)
    job.seen[key] = broke
    return broke


async def ddmin(items: list, breaks) -> list:
    """The classic minimising delta debugging: subsets first, then complements, then finer splits."""
    n = 2
    while len(items) >= 2:
        size = -(-len(items) // n)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        for chunk in chunks:
            if await breaks(chunk):
                items, n = chunk, 2
                break
        else:
            for chunk in chunks:
                rest = [x for x in items if x not in chunk]
                if len(chunks) > 2 and await breaks(rest):
                    items, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(items):
                    return items
                n = min(len(items), n * 2)
    return items


async def shrink_one(job: ShrinkJob, execute, max_runs: int) -> None:
    """Decide `job.result`: reproduce with every firing, try none, then ddmin over the firings."""
    async def breaks(subset):
        return await _breaks(job, subset, execute, max_runs)

    best = job.fired
    try:
        if not await breaks(job.fired):
            job.result = Shrink(status="flaky", invariant=job.invariant, fired=job.fired, reruns=job.reruns,
                                note="it did not fail again under its own seed and firings: flaky, not shrunk")
            return
        best = [] if await breaks([]) else await ddmin(job.fired, breaks)
        status, note = "shrunk", ""
    except OutOfRuns:
        best = min((s for s, broke in job.seen.items() if broke), key=len, default=None)
        best = [f for f in job.fired if best is not None and f.spec in best] if best is not None else job.fired
        status, note = "partial", f"stopped after shrink.max_runs ({max_runs}) re-runs: smallest failing set so far"
    job.minimal = best
    job.result = Shrink(status=status, invariant=job.invariant, fired=job.fired, reruns=job.reruns, note=note)


async def shrink_failures(workers, pool, cells: list[Cell], invariants: dict, baselines: dict,
                          max_runs: int, budget=None, on_plan=None, on_progress=None) -> dict[str, ShrinkJob]:
    """Shrink every failing chaos/contract cell with more than one fault on the pool's (still running) workers."""
    from gate.runner.pool import WorkItem, _drain

    runs_of: dict[str, list[RunResult]] = {}
    for item in sorted(pool.runs, key=lambda i: (i.cell.index, i.run)):
        runs_of.setdefault(item.cell.id, []).append(pool.runs[item])
    jobs = plan_shrinks(cells, runs_of, invariants)
    todo = [j for j in jobs if j.result is None]
    if todo and on_plan is not None:  # no silent minutes after the last cell: say what runs now
        on_plan(len(todo), phase=SHRINKING)

    async def handle(worker, job: ShrinkJob):
        async def execute(cell: Cell, run: int) -> RunResult:
            if budget is not None and budget.exhausted:
                raise OutOfRuns()  # shrinking spends tokens too: it stops with the budget
            applicable = [invariants[i] for i in cell.invariants]
            result, *_ = await worker.execute(WorkItem(cell, run), applicable, baselines.get(cell.input_id))
            if budget is not None:
                budget.charge(result.usage)
            return result
        await shrink_one(job, execute, max_runs)
        if on_progress is not None:
            on_progress()

    await _drain(workers, todo, handle)
    return {job.cell.id: job for job in jobs}
