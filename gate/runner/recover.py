"""Charge a failure to the cell that caused it: re-run, on a restarted agent, a cell that failed
on an agent instance an earlier cell's faults may have left broken.

One agent process serves many cells, so a fault can break something that outlives its
cell (one MCP session per process, killed by `timeout_after_write`), and every later cell
on that instance fails on `completes` although its own faults never fired — while its
reproduce command, on a fresh agent, passes. The rule (the gate's, stated in the README):

- a failing cell none of whose faults fired, in any of its runs, that ran on an instance
  where an earlier cell's faults had fired since the instance last (re)started, is re-run
  — every run of it — on a restarted agent, and judged on that re-run alone;
- it is charged with the failure only if it fails again; if it passes, it is not charged,
  and the report names the cell where the damage began (`left_broken_by`: the last cell
  on that instance whose faults fired before the streak of failures that ended in it);
- a cell whose own faults fired is charged as it ran: its faults were there.

`Ledger` is the per-worker RunHook that records what ran where (cell, run, the instance's
restart count, whether a fault fired) and whether the agent process was still up when the
run ended (`obs.state["agent_alive"]`, read by `stays_up`). Only an agent the gate starts
can be restarted; for `agent.url` or command agents nothing is re-run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gate.plan import Cell
from gate.report.model import Rerun, RunResult
from gate.verdict.evaluate import fold_cell


@dataclass
class Entry:
    cell: Cell
    run: int
    epoch: int  # the instance's restart count when the run began: a new epoch is a fresh agent
    fired: bool = False  # one of the cell's own faults changed what the agent received


@dataclass
class Ledger:
    """A RunHook: the order of the runs on one worker's agent instance."""

    worker: int
    instance: object = None
    entries: list[Entry] = field(default_factory=list)
    _open: Entry | None = None
    _process_agent: bool | None = None

    def env(self) -> dict[str, str]:
        return {}

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def begin(self, cell: Cell, run: int) -> None:
        self._open = Entry(cell, run, getattr(self.instance, "restarts", 0))
        self.entries.append(self._open)

    async def end(self, cell: Cell, run: int, obs) -> None:
        entry, self._open = self._open, None
        if entry is None:
            return
        stats = obs.state.get("faults")  # the proxy's hook ended first: its counters are in
        entry.fired = bool(stats) and any(int(s.get("fired", 0)) > 0 for s in stats.values())
        process = getattr(self.instance, "process", None)
        if process is not None and self._starts_process():
            # a child process (a waitpid, cheap): restarted during the cell (a crash) or found dead is not up
            obs.state["agent_alive"] = self.instance.restarts == entry.epoch and await process.is_alive()

    def _starts_process(self) -> bool:
        """The agent is a process the gate starts (asked once: the spec does not change during a run)."""
        if self._process_agent is None:
            start = getattr(getattr(self.instance, "spec", None), "start", None)
            self._process_agent = getattr(start, "command", None) is not None
        return self._process_agent


def attach(workers) -> list[Ledger]:
    """A Ledger on every worker, after its other hooks (so the fault counters are there when it ends)."""
    ledgers = []
    for worker in workers:
        ledger = Ledger(worker.index, worker.instance)
        worker.hooks.append(ledger)
        ledgers.append(ledger)
    return ledgers


def _failed(run: RunResult | None) -> bool:
    return run is not None and run.error is None and not all(c.passed for c in run.checks)


def _how(run: RunResult) -> str:
    """How a failing run ended: its outcome, or the first invariant it breached."""
    if run.reason != "ok":
        return run.reason
    return next((f"contract:{c.invariant}" for c in run.checks if not c.passed), "ok")


def left_broken_by(entries: list[Entry], at: int, failed) -> str | None:
    """The cell where the damage that `entries[at]` met began: walk back over the streak of failing
    runs on the same (re)start of the instance, then to the last run before it whose faults fired."""
    epoch, start = entries[at].epoch, at
    while start > 0 and entries[start - 1].epoch == epoch and failed(entries[start - 1]):
        start -= 1
    for n in range(start, -1, -1):
        if entries[n].epoch != epoch:
            return None
        if n != at and entries[n].fired and entries[n].cell.id != entries[at].cell.id:
            return entries[n].cell.id
    return None


@dataclass
class Suspect:
    cell: Cell
    first_reason: str
    origin: str
    worker: int


def suspects(ledgers: list[Ledger], pool, cells: list[Cell]) -> list[Suspect]:
    """Failing cells whose own faults never fired and that ran after another cell's faults fired on the
    same instance, in plan order."""
    by_key = {(item.cell.id, item.run): pool.runs[item] for item in pool.runs}
    fired_cells = {e.cell.id for ledger in ledgers for e in ledger.entries if e.fired}
    found: dict[str, Suspect] = {}
    for ledger in ledgers:
        entries = list(ledger.entries)
        failed = lambda e: _failed(by_key.get((e.cell.id, e.run)))  # noqa: E731
        for n, entry in enumerate(entries):
            cid = entry.cell.id
            if cid in found or cid in fired_cells or entry.cell.rerun or not failed(entry):
                continue
            origin = left_broken_by(entries, n, failed)
            if origin is not None:
                found[cid] = Suspect(entry.cell, _how(by_key[(cid, entry.run)]), origin, ledger.worker)
    order = {c.id: n for n, c in enumerate(cells)}
    return sorted(found.values(), key=lambda s: order.get(s.cell.id, len(order)))


def followup(config, cells: list[Cell], invariants: dict, baselines: dict, budget, ledgers: list[Ledger],
             reruns: list[Rerun]):
    """The pool's followup that re-runs the suspects (None when the agent is not a process the gate starts)."""
    if config.agent.start is None:
        return None

    async def rerun_suspects(workers, pool):
        from gate.runner.pool import WorkItem, _drain

        items = {(item.cell.id, item.run): item for item in pool.runs}
        jobs = suspects(ledgers, pool, cells)

        async def handle(worker, job: Suspect):
            if budget is not None and budget.exhausted:
                return
            applicable = [invariants[i] for i in job.cell.invariants]
            try:
                await worker.instance.restart()
            except Exception:  # could not restart: the failure stands as it ran
                return
            again = replace(job.cell, rerun=True)
            runs = []
            for run in range(config.runs):
                item = WorkItem(again, run)
                result, latency, times, stats = await worker.execute(item, applicable,
                                                                     baselines.get(job.cell.input_id))
                if budget is not None:
                    budget.charge(result.usage)
                runs.append(result)
                original = items.get((job.cell.id, run))
                if original is not None:  # the cell is judged on the restarted agent's runs
                    pool.runs[original], pool.latency_ms[original], pool.trace_ms[original] = result, latency, times
                    pool.fault_stats[original] = stats
                    pool.bodies[original], worker.bodies = worker.bodies, []
            status = fold_cell(job.cell, applicable, runs, "", lambda s: s).status
            outcome = {"pass": "passed", "fail": "failed_again"}.get(status, "error")
            reruns.append(Rerun(cell=job.cell.id, first_reason=job.first_reason, outcome=outcome,
                                left_broken_by=job.origin, worker=job.worker))

        await _drain(workers, jobs, handle)
        order = {c.id: n for n, c in enumerate(cells)}
        reruns.sort(key=lambda r: order.get(r.cell, len(order)))
    return rerun_suspects


def chain(*followups):
    """One followup that runs the given ones (None skipped) in order."""
    present = [f for f in followups if f is not None]
    if not present:
        return None

    async def run_all(workers, pool):
        for step in present:
            await step(workers, pool)
    return run_all
