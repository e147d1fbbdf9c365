"""K workers, each owning one agent instance, pulling (cell, run) items from one queue.

Results are keyed by item and re-ordered by the plan afterwards, so which worker
ran what (and K itself) never shows in the verdict. `Worker.hooks` is the seam
where per-worker attachments (the chaos proxy, the tool worlds) see each run begin
and end, so they can apply the cell's faults and hand back its trace.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from gate.agent import AgentInstance
from gate.config import LoadedConfig
from gate.contracts import InvariantBase, Observation
from gate.errors import HarnessError
from gate.plan import Cell
from gate.report.model import RunResult, TraceStep
from gate.runner.evaluate import check_run


class RunHook(Protocol):
    """Something attached to a worker that takes part in every run."""

    def env(self) -> dict[str, str]: ...
    async def start(self) -> None: ...
    async def begin(self, cell: Cell, run: int) -> None: ...
    async def end(self, cell: Cell, run: int, obs: Observation) -> None: ...
    async def stop(self) -> None: ...


@dataclass(frozen=True, eq=False)  # identity: each (cell, run) is made once and keys several dicts
class WorkItem:
    cell: Cell
    run: int


# Outcomes after which the agent may still be working on the cell it was given.
STILL_BUSY = frozenset({"agent_timeout", "output_flood"})


@dataclass
class Worker:
    index: int
    instance: AgentInstance
    hooks: list[RunHook] = field(default_factory=list)
    last_cell: str | None = None
    bodies: list = field(default_factory=list)  # the last run's (request, response) bytes, per trace step

    async def start(self) -> None:
        for hook in self.hooks:
            await hook.start()
        await self.instance.start()
        if self.instance.spec.time_scale > 1:
            await self._wait_for_clock_reading()
            self._refuse_undilated()

    def _clocks(self) -> list:
        return [h.agent_clock() for h in self.hooks if hasattr(h, "agent_clock")]

    async def _wait_for_clock_reading(self, seconds: float = 1.5) -> None:
        """An agent process that sent its first clock reading sends the second half a second of its
        time later (a twentieth of that at 10x, all of it if undilated): wait for it, briefly."""
        deadline = time.monotonic() + seconds
        while any(c.pending() for c in self._clocks()) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def _refuse_undilated(self) -> None:
        """HarnessError if an agent process's own clock did not speed up (gate/instrument/clock.py)."""
        for clock in self._clocks():
            reason = clock.undilated(self.instance.spec.time_scale)
            if reason is not None:
                raise HarnessError(reason)

    async def stop(self) -> None:
        await self.instance.stop()
        for hook in self.hooks:
            await hook.stop()

    async def reference(self, input_id: str, text: str) -> str | None:
        """The agent's answer to an unmutated input, used as the lexical baseline."""
        await self.instance.ensure_alive()
        raw = await self.instance.invoke(text, {"cell_id": f"reference/{input_id}", "input_id": input_id, "run": "0"})
        return raw.output

    async def execute(self, item: WorkItem, invariants: list[InvariantBase], baseline: str | None,
                      ) -> tuple[RunResult, float, list, dict | None]:
        cell = item.cell
        ctx = {"cell_id": cell.id, "input_id": cell.input_id, "run": str(item.run)}
        obs = Observation(output=None, reason="harness_error", baseline=baseline)
        begun: list[RunHook] = []
        try:
            await self.instance.ensure_alive()
            await self.instance.reset(ctx)
            for hook in self.hooks:
                await hook.begin(cell, item.run)
                begun.append(hook)
            raw = await self.instance.invoke(cell.text, ctx)
            obs = Observation(output=raw.output, reason=raw.reason, status=raw.status,
                              latency_ms=raw.latency_ms, baseline=baseline)
            for hook in begun:
                await hook.end(cell, item.run, obs)
            begun.clear()
            if self.instance.spec.time_scale > 1:  # a process the cell started (a command agent) counts too
                self._refuse_undilated()
            await self._probe_state(invariants, obs)
        except HarnessError as exc:
            return RunResult(run=item.run, reason="harness_error", error=str(exc)), 0.0, [], None
        except Exception as exc:  # a gate bug must become an error cell, never a traceback
            tb = traceback.format_exc(limit=3)
            return RunResult(run=item.run, reason="harness_error", error=f"gate error: {exc!r}\n{tb}"), 0.0, [], None
        finally:
            for hook in begun:  # release held connections even when the run failed
                await hook.end(cell, item.run, obs)
            self.last_cell = cell.id
        await self._restart_if_still_busy(obs.reason)
        checks = check_run(invariants, obs)
        steps = [trace_step(e) for e in obs.trace]
        times = [(e.start_ms, e.end_ms, e.bytes_out) for e in obs.trace]
        self.bodies = [(e.body, e.extra.get("shown", b"")) for e in obs.trace]  # excerpts for report.html
        worlds = {k[6:]: v for k, v in obs.state.items() if k.startswith("world:")}
        failed = not all(c.passed for c in checks)
        return RunResult(run=item.run, reason=raw.reason, status=raw.status, output=raw.output,
                         detail=raw.detail, checks=checks, trace=steps, usage=obs.state.get("usage"),
                         state=worlds if worlds and failed else None), raw.latency_ms, times, obs.state.get("faults")

    async def _restart_if_still_busy(self, reason: str) -> None:
        """An agent that outlived its cell's deadline may still be calling its LLM and tools;
        restarting it keeps those calls out of the next cell's trace (the proxy records any
        that arrive in between as stray, never as the next cell's)."""
        policy = self.instance.spec.restart
        if policy == "always" or (policy == "on_timeout" and reason in STILL_BUSY):
            if self.instance.process is not None:
                try:
                    await self.instance.restart()
                except Exception:  # the next cell's ensure_alive retries, and reports it as an error
                    pass

    def take_stray(self) -> list:
        return [call for hook in self.hooks for call in (getattr(hook, "take_stray", lambda: [])())]

    async def _probe_state(self, invariants: list[InvariantBase], obs: Observation) -> None:
        for inv in invariants:
            if inv.probe is not None:
                obs.state[inv.id] = await inv.probe(self.instance.http_client())


def trace_step(entry) -> TraceStep:
    """The deterministic part of a proxy trace entry (timings go to the report's timings)."""
    return TraceStep.model_validate(entry, from_attributes=True)


@dataclass
class PoolResult:
    runs: dict[WorkItem, RunResult]
    latency_ms: dict[WorkItem, float]
    trace_ms: dict[WorkItem, list]
    wall_ms: dict[WorkItem, float]
    startup_seconds: list[float]
    fault_stats: dict[WorkItem, dict | None] = field(default_factory=dict)
    stray: list = field(default_factory=list)
    bodies: dict[WorkItem, list] = field(default_factory=dict)  # (request, response) bytes per trace step
    reached: list = field(default_factory=list)  # per worker hook: what its proxy reached (gate/runner/reach.py)
    clock_rates: list = field(default_factory=list)  # under time_scale: each agent process's own clock rate


def make_workers(loaded: LoadedConfig, count: int, log_dir: Path,
                 hook_factory: Callable[[int], list[RunHook]] | None = None) -> list[Worker]:
    from gate.instrument.commands import shim_dir_for

    workers = []
    shims = shim_dir_for(loaded.config)  # `kind: command` tools: one shim directory per gate run
    for index in range(count):
        hooks = hook_factory(index) if hook_factory else []
        env = {k: v for hook in hooks for k, v in hook.env().items()}
        instance = AgentInstance(loaded.config.agent, loaded.base_dir, index, log_dir, extra_env=env)
        instance.shim_dir = shims
        for hook in hooks:
            if hasattr(hook, "agent_pid"):
                hook.agent_pid = instance.pid  # the proxy's time base reads the agent's CPU (gate/agent/dilation.py)
        workers.append(Worker(index, instance, hooks))
    return workers


async def _start_all(workers: list[Worker]) -> None:
    results = await asyncio.gather(*(w.start() for w in workers), return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        await asyncio.gather(*(w.stop() for w in workers), return_exceptions=True)
        first = failures[0]
        raise first if isinstance(first, HarnessError) else HarnessError(f"could not start the agent: {first!r}")


async def _drain(workers: list[Worker], items: list, handle) -> None:
    queue: asyncio.Queue = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def loop(worker: Worker):
        while not queue.empty():
            await handle(worker, queue.get_nowait())

    await asyncio.gather(*(loop(w) for w in workers))


async def run_pool(workers: list[Worker], cells: list[Cell], runs: int, invariants: dict[str, InvariantBase],
                   baselines: dict[str, str | None], need_reference: dict[str, str],
                   on_progress: Callable[..., None] | None = None, result: PoolResult | None = None,
                   budget=None, followup=None) -> PoolResult:
    """`result` may be passed in so that whatever finished survives a cancellation (SIGINT/SIGTERM).
    `budget` (gate/runner/budget.py) stops new runs once spent; `followup(workers, result)` runs on
    the still-started workers after the plan (shrinking failures reuses them)."""
    await _start_all(workers)
    result = result if result is not None else PoolResult({}, {}, {}, {}, [])
    try:
        async def reference(worker, pair):
            input_id, text = pair
            try:
                baselines[input_id] = await worker.reference(input_id, text)
            except Exception:  # the checks that need it will say "no baseline"
                baselines[input_id] = None

        await _drain(workers, sorted(need_reference.items()), reference)

        async def handle(worker, item: WorkItem):
            if budget is not None and budget.exhausted:
                budget.skipped += 1
                return
            began = time.monotonic()
            applicable = [invariants[i] for i in item.cell.invariants]
            run, latency, times, stats = await worker.execute(item, applicable, baselines.get(item.cell.input_id))
            result.runs[item], result.latency_ms[item], result.trace_ms[item] = run, latency, times
            result.bodies[item], worker.bodies = worker.bodies, []
            result.fault_stats[item] = stats
            result.wall_ms[item] = (time.monotonic() - began) * 1000
            if budget is not None:
                budget.charge(run.usage)
            if on_progress:
                on_progress(run)  # the run's result, so progress can count failures as they happen

        await _drain(workers, [WorkItem(c, r) for c in cells for r in range(runs)], handle)
        if followup is not None:
            await followup(workers, result)
    finally:
        result.startup_seconds = [round(w.instance.startup_seconds, 3) for w in workers]
        await asyncio.gather(*(w.stop() for w in workers), return_exceptions=True)
        result.stray = [call for w in workers for call in w.take_stray()]
        result.reached = [h.reached() for w in workers for h in w.hooks if hasattr(h, "reached")]
        result.clock_rates = [round(r, 1) for w in workers for c in w._clocks() for r in c.rates.values()]
    return result
