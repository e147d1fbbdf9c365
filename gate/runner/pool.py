"""K workers, each owning one agent instance, pulling (cell, run) items from one queue.

Results are keyed by item and re-ordered by the plan afterwards, so which worker
ran what (and K itself) never shows in the verdict. `Worker.hooks` is the seam
where per-worker attachments (the chaos proxy, the tool worlds) see each run begin
and end, so they can apply the cell's faults and hand back its trace. A run is judged (its
checks, its result record) after the last cell, not between one answer and the next request:
see `Finished`.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from collections.abc import Callable

from gate.agent import AgentInstance
from gate.config import LoadedConfig
from gate.contracts import InvariantBase, Observation
from gate.errors import HarnessError
from gate.plan import Cell
from gate.report.model import RunResult, TraceStep
from gate.runner.session_probe import SessionProbe
from gate.verdict.evaluate import BYPASSED, BYPASS_FIX, FORGED, check_run


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


class Applicable(list):
    """The invariants a cell checks, asked once per distinct set whether any probes state after
    the cell (`probing`), not once per run."""

    __slots__ = ("probing",)

    def __init__(self, invariants):
        super().__init__(invariants)
        self.probing = any(inv.probe is not None for inv in self)


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
        """One run of one cell, judged now (the followups that re-run cells need the result at once)."""
        done = await self.observe(item, invariants, baseline)
        run, latency, times, stats, self.bodies = done.value()
        return run, latency, times, stats

    async def observe(self, item: WorkItem, invariants: list[InvariantBase], baseline: str | None) -> Finished:
        """One run of one cell, up to what must happen while the agent is live: its answer, the
        hooks' ends, the state probes, a restart. Judging it is left to `Finished.value()`. The
        awaits that usually have nothing to do (no reset request, no state probe, no restart) are
        skipped before their coroutines are made: this is the path every cell takes between one
        answer and the next request."""
        cell, instance = item.cell, self.instance
        if not isinstance(invariants, Applicable):  # a followup's list (recover, shrink)
            invariants = Applicable(invariants)
        ctx = {"cell_id": cell.id, "input_id": cell.input_id, "run": str(item.run)}
        obs = None
        begun: list[RunHook] = []
        probe = None
        try:
            await instance.ensure_alive()
            if instance.spec.reset is not None:
                await instance.reset(ctx)
            for hook in self.hooks:
                await hook.begin(cell, item.run)
                begun.append(hook)
            turns = getattr(cell, "turns", None)  # a conversation input: every turn, in one session
            probe = SessionProbe(instance, self.hooks, cell, item.run) if getattr(cell, "probe", None) else None
            if probe is not None:
                probe.start()
            raw = await (instance.invoke(cell.text, ctx) if turns is None else
                         instance.converse(turns, cell.history, ctx, self._turn_begins))
            probed = await probe.result() if probe is not None else None
            obs = Observation(output=raw.output, reason=raw.reason, status=raw.status,
                              latency_ms=raw.latency_ms, baseline=baseline, reference=cell.reference,
                              detail=raw.detail)
            if raw.turns is not None:  # the transcript, for a report to show
                obs.state["turns"] = raw.turns
            if probed is not None:  # the session beside it (isolates_sessions)
                obs.state["probe"] = probed
            for hook in begun:
                await hook.end(cell, item.run, obs)
            begun.clear()
            if instance.spec.time_scale > 1:  # a process the cell started (a command agent) counts too
                self._refuse_undilated()
            if invariants.probing:
                await self._probe_state(invariants, obs)
        except HarnessError as exc:
            return Finished.now(RunResult(run=item.run, reason="harness_error", error=str(exc)))
        except Exception as exc:  # a gate bug must become an error cell, never a traceback
            tb = traceback.format_exc(limit=3)
            return Finished.now(RunResult(run=item.run, reason="harness_error", error=f"gate error: {exc!r}\n{tb}"))
        finally:
            if probe is not None and probe.task is not None and not probe.task.done():
                probe.task.cancel()  # the run failed before the probe's end was awaited
            if begun:  # release held connections even when the run failed
                obs = obs or Observation(output=None, reason="harness_error", baseline=baseline)
                for hook in begun:
                    await hook.end(cell, item.run, obs)
            self.last_cell = cell.id
        if instance.spec.restart == "always" or raw.reason in STILL_BUSY:
            await self._restart_if_still_busy(raw.reason)
        return Finished(item.run, raw, obs, invariants)

    def _turn_begins(self, n: int) -> None:
        """A conversation's turn n is about to be sent: the hooks that key calls by turn learn it."""
        for hook in self.hooks:
            if hasattr(hook, "turn"):
                hook.turn(n)

    async def _restart_if_still_busy(self, reason: str) -> None:
        """An agent that outlived its cell's deadline may still be calling its LLM and tools;
        restarting it keeps those calls out of the next cell's trace (the proxy records any
        that arrive in between as stray, never as the next cell's)."""
        policy = self.instance.spec.restart
        busy = policy == "always" or (policy == "on_timeout" and reason in STILL_BUSY)
        if busy and self.instance.process is not None:
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


class Finished:
    """A run the agent has finished, judged when first asked (`value()`), then remembered.

    Judging is pure (the checks read only the observation), so when it happens does not change
    what it finds. The pool asks after its last cell: one tight loop over every run's checks and
    records costs about half the CPU of the same work done between one network wait and the next,
    when the machine's caches have gone cold. `checks`, `error` and `usage` read like a RunResult's,
    so a progress display can count failures from it."""

    __slots__ = ("run", "raw", "obs", "invariants", "_value")

    def __init__(self, run: int, raw, obs: Observation | None, invariants: list[InvariantBase]):
        self.run, self.raw, self.obs, self.invariants = run, raw, obs, invariants
        self._value = None

    @classmethod
    def now(cls, result: RunResult) -> Finished:
        """A run that ended in a harness error: nothing to judge, and no time measured."""
        done = cls(result.run, None, None, [])
        done._value = (result, 0.0, [], None, [])
        return done

    @property
    def usage(self):
        return self._value[0].usage if self.obs is None else self.obs.state.get("usage")

    @property
    def checks(self) -> list:
        return self.value()[0].checks

    @property
    def error(self) -> str | None:
        return self.value()[0].error

    def value(self) -> tuple[RunResult, float, list, dict | None, list]:
        """(result, latency ms, trace timings, the proxy's fault counters, (request, response) bytes per step)."""
        if self._value is None:
            self._value = _judge(self.run, self.raw, self.obs, self.invariants)
            self.raw = self.obs = self.invariants = None  # judged: the observation is no longer needed
        return self._value


def _judge(index: int, raw, obs: Observation, invariants: list[InvariantBase]):
    checks = check_run(invariants, obs)
    trace = obs.trace
    if trace:
        steps = [trace_step(e) for e in trace]
        times = [(e.start_ms, e.end_ms, e.bytes_out) for e in trace]
        bodies = [(e.body, e.extra.get("shown", b"")) for e in trace]  # excerpts for report.html
    else:  # no proxy in front of this agent (or no calls): nothing to copy
        steps, times, bodies = [], [], []
    state = obs.state
    worlds = {k[6:]: v for k, v in state.items() if k.startswith("world:")} if state else None
    clean = all(c.passed for c in checks)
    result = RunResult(run=index, reason=raw.reason, status=raw.status, output=raw.output, detail=raw.detail,
                       checks=checks, trace=steps, usage=state.get("usage"), state=None if clean else worlds,
                       turns=getattr(raw, "turns", None),
                       log="" if clean else getattr(raw, "log", ""))  # kept for failing runs only
    if state.get("seam_failed"):  # a harness error: the gate's part failed, whatever the agent then did
        result.error = ("the gate's in-process seam failed in the agent's process (the tool ran untouched): "
                        + "; ".join(state["seam_failed"]))
    if state.get("forged"):  # the agent's own doing, not the gate's: the run cannot be judged on its trace
        result.error = (f"{FORGED}: " + "; ".join(dict.fromkeys(state["forged"])))[:600]
    elif state.get("bypassed"):  # calls the trace never saw: judged on it, the run could pass a double write
        result.error = (f"{BYPASSED}: " + "; ".join(state["bypassed"]) + f"; {BYPASS_FIX}")[:600]
    return result, raw.latency_ms, times, state.get("faults"), bodies


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
    reached: list = field(default_factory=list)  # per worker hook: what its proxy reached (gate/verdict/reach.py)
    clock_rates: list = field(default_factory=list)  # under time_scale: each agent process's own clock rate
    unjudged: dict[WorkItem, Finished] = field(default_factory=dict)  # finished runs, until `judge()`

    def judge(self) -> None:
        """Every finished run's result into the dicts above, in the order the runs finished."""
        for item, done in self.unjudged.items():
            run, latency, times, stats, bodies = done.value()
            self.runs[item], self.latency_ms[item], self.trace_ms[item] = run, latency, times
            self.bodies[item], self.fault_stats[item] = bodies, stats
        self.unjudged.clear()


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
            if hasattr(hook, "agent_uid"):
                hook.agent_uid = instance.uid  # whose connections around the proxy are this worker's (services/peers.py)
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
    pending = iter(items)  # one iterator shared by the workers: each next() hands out one item

    async def loop(worker: Worker):
        for item in pending:
            await handle(worker, item)

    await asyncio.gather(*(loop(w) for w in workers))


async def run_pool(workers: list[Worker], cells: list[Cell], runs: int, invariants: dict[str, InvariantBase],
                   baselines: dict[str, str | None], need_reference: dict[str, str],
                   on_progress: Callable[..., None] | None = None, result: PoolResult | None = None,
                   budget=None, followup=None, phases=None) -> PoolResult:
    """`result` may be passed in so that whatever finished survives a cancellation (SIGINT/SIGTERM).
    `budget` (gate/runner/budget.py) stops new runs once spent; `followup(workers, result)` runs on
    the still-started workers after the plan (shrinking failures reuses them). `phases` (exploration,
    gate/runner/explore_run.py) splits the plan: `phases.first(cells)` run first, then the cells
    `phases.then(rest)` makes of the rest once those are done, then `phases.later()`: the cells those
    runs leave worth running."""
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

        applicable_to: dict[tuple, list] = {}  # a cell's invariant ids -> the invariants (a few distinct sets)

        async def handle(worker, item: WorkItem):
            if budget is not None and budget.exhausted:
                budget.skipped += 1
                return
            began = time.monotonic()
            ids = item.cell.invariants
            applicable = applicable_to.get(ids)
            if applicable is None:
                applicable = applicable_to[ids] = Applicable(invariants[i] for i in ids)
            done = await worker.observe(item, applicable, baselines.get(item.cell.input_id))
            if done.obs is not None and done.obs.trace:  # proxied runs: judged now, their trace entries let go
                done.value()
            result.unjudged[item] = done
            result.wall_ms[item] = (time.monotonic() - began) * 1000
            if budget is not None:
                budget.charge(done.usage)
            if on_progress:
                on_progress(done)  # reads like the run's result: progress can count failures as they happen

        first = cells if phases is None else phases.first(cells)
        await _drain(workers, [WorkItem(c, r) for c in first for r in range(c.runs or runs)], handle)
        if phases is not None:
            ran = {c.id for c in first}
            more = phases.then([c for c in cells if c.id not in ran])
            await _drain(workers, [WorkItem(c, r) for c in more for r in range(c.runs or runs)], handle)
            last = phases.later()  # what the runs so far leave worth running
            await _drain(workers, [WorkItem(c, r) for c in last for r in range(c.runs or runs)], handle)
        result.judge()  # before the followup, which reads the results
        if followup is not None:
            await followup(workers, result)
    finally:
        result.judge()  # an interrupted run keeps every run that finished
        result.startup_seconds = [round(w.instance.startup_seconds, 3) for w in workers]
        await asyncio.gather(*(w.stop() for w in workers), return_exceptions=True)
        result.stray = [call for w in workers for call in w.take_stray()]
        result.reached = [h.reached() for w in workers for h in w.hooks if hasattr(h, "reached")]
        result.clock_rates = [round(r, 1) for w in workers for c in w._clocks() for r in c.rates.values()]
    return result
