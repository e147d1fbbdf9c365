"""Run a loaded config end to end and return the canonical Report.

config -> plan -> pool of workers -> fold runs into cells -> score -> Report.
The stages that need more than an agent (chaos proxy, replay, worlds) plug in
through `stage_builders` (extra cells in the plan) and `hook_factory` (per-worker
attachments), so this file does not change when they arrive. After the plan, cells that
failed on an agent an earlier cell left broken are re-run on a restarted one
(gate/runner/recover.py), then failures are shrunk.
"""

from __future__ import annotations

import time
from datetime import datetime, UTC
from pathlib import Path
from collections.abc import Callable

from gate.agent.accounting import accounted_run
from gate.agent.logs import scrub_dir
from gate.config import LoadedConfig
from gate.contracts.output_checks import SimilarToBaseline
from gate.errors import ConfigError
from gate.runner.proxy_hook import needs_proxy, proxy_factory
from gate.plan import Cell, build_plan, invariants_of, select
from gate.plan.oracles import explore_spec
from gate.plan.shard import shard_of
from gate.report.exchanges import cell_exchanges
from gate.report.model import CellTiming, PinStatus, Report, ShardInfo
from gate.verdict.evaluate import fold_cell, forget_shared, reproduce_command
from gate.runner import insights, recover
from gate.verdict.assemble import assemble, finish_cell
from gate.verdict.coverage import fault_coverage
from gate.verdict.reach import build_reach, mark_reached
from gate.verdict.recovery import charge_breakers
from gate.verdict.late import charge_late_writes
from gate.runner.guard import end_interrupted, finished_cells, run_pool_interruptible
from gate.heap import frozen_heap, settle_heap
from gate.report.failure import mark_error
from gate.runner.pool import PoolResult, make_workers, run_pool
from gate.runner.explore_run import Exploration, dropped_result, explore_summary


def _needs_reference(loaded: LoadedConfig, cells: list[Cell], invariants) -> dict[str, str]:
    similar = {i.id for i in invariants.values() if isinstance(i, SimilarToBaseline)}
    inputs = {i.id: i for i in loaded.config.inputs}
    # not yet for a conversation: its reference run would be the whole conversation (docs/conversations.md)
    return {c.input_id: inputs[c.input_id].text for c in cells
            if similar & set(c.invariants) and inputs[c.input_id].baseline is None and inputs[c.input_id].turns is None}


def plan_for(loaded: LoadedConfig, only: list[str] | None = None, stage_builders: dict | None = None,
             shard: tuple[int, int] | None = None) -> tuple[list[Cell], list[Cell]]:
    """(the whole plan, the cells to run here)."""
    reuse = loaded.plan is not None and stage_builders is None
    whole = loaded.plan if reuse else build_plan(loaded.config, stage_builders=stage_builders,
                                                 base_dir=loaded.base_dir)
    cells = select(whole, only)
    if shard is not None:
        chosen = set(cells)
        cells = [c for c in shard_of(whole, shard[0], shard[1], loaded.config.runs) if c in chosen]
    if only and not cells and explore_spec(loaded.config) is None:  # explored cells are named after discovery
        raise ConfigError(f"--only {' '.join(only)}: no cell of {loaded.path.name} has that id "
                          f"(list them with `chaos-gate plan -c {loaded.path.name}`)")
    return whole, cells


def _with_pins(loaded: LoadedConfig, whole, cells, stage_builders):
    """Pinned cells first (under their own seeds), then the rest of the plan."""
    from gate.replay.pins import pinned_cells

    def build(seed):
        return build_plan(loaded.config.model_copy(update={"seed": seed}), stage_builders=stage_builders,
                          base_dir=loaded.base_dir)

    first, statuses = pinned_cells(loaded, whole, build)
    ids = {c.id for c in first}
    return first + [c for c in cells if c.id not in ids], statuses


def run_gate(loaded: LoadedConfig, *, output_dir: Path | None = None, **options) -> Report:
    """The services the agent depends on run around the whole run (gate/services), on every exit path."""
    from gate.services import running_services

    out_dir = Path(output_dir or loaded.base_dir / loaded.config.output.dir)
    if loaded.config.agent.time_scale > 1:  # refused with its reason before anything starts (gate/agent/dilation.py)
        from gate.agent.dilation import verify

        verify(loaded.config)
    # accounted_run exits last: every process the agent started is gone before the report exists
    with accounted_run() as account, frozen_heap(), running_services(loaded, out_dir / "logs") as resolved:
        report = _run_gate(resolved, output_dir=output_dir, **options)
    account.stamp(report)
    if loaded.config.agent.time_scale > 1:
        from gate.agent.dilation import timed_wait_caveat

        caveat = timed_wait_caveat(loaded.config.agent.time_scale)
        if caveat:  # the gate's own part may have hung an agent: said beside the verdict, never blamed silently
            report.verdict.warnings.append(caveat)
    return report


def _run_gate(loaded: LoadedConfig, *, only: list[str] | None = None, output_dir: Path | None = None,
              config_label: str | None = None, on_progress: Callable[..., None] | None = None,
              on_plan: Callable[[int], None] | None = None, hook_factory=None, stage_builders=None,
              shard: tuple[int, int] | None = None, record_dir: Path | None = None,
              baseline: Report | None = None, firings: frozenset | None = None,
              explore_plan: Path | None = None, discover: Path | None = None) -> Report:
    config = loaded.config
    forget_shared()  # results shared between cells are this run's alone (gate/verdict/evaluate.py)
    whole, cells = plan_for(loaded, only, stage_builders, shard)
    cells = insights.with_firings(cells, firings, only)  # --faults: exactly these firings
    pins: list[dict] = []
    if not only and (shard is None or shard[0] == 1):
        cells, pins = _with_pins(loaded, whole, cells, stage_builders)
    invariants = {inv.id: inv for inv in invariants_of(config)}
    baselines = {i.id: i.baseline for i in config.inputs if i.baseline is not None}
    out_dir = Path(output_dir or loaded.base_dir / config.output.dir)
    workers_needed = max(1, min(config.concurrency, len(cells) * config.runs))
    if hook_factory is None and needs_proxy(config):
        hook_factory = proxy_factory(config, record_dir, loaded.redactor.redact)
    from gate.services.runtime import with_service_hooks

    hook_factory = with_service_hooks(hook_factory)  # services reset, restarted, watched for bypasses
    whole, cells = list(whole), list(cells)  # exploration extends both with the cells it plans
    exploration = Exploration.needed(loaded, cells, whole, invariants, on_plan, shard, only,
                                     plan_file=explore_plan, discover=discover)
    if exploration is not None:  # baselines first, then what they planned (gate/runner/explore_run.py)
        hook_factory = exploration.hooks(hook_factory)
    workers = make_workers(loaded, workers_needed, out_dir / "logs", hook_factory)
    ledgers = recover.attach(workers)  # what ran where, and whether the agent stayed up
    if on_plan:
        on_plan(len(cells) * config.runs)
    started, t0 = datetime.now(UTC), time.monotonic()
    budget, shrinks = insights.budget_for(config), {}
    reruns: list = []
    followup = recover.chain(recover.followup(config, cells, invariants, baselines, budget, ledgers, reruns),
                             insights.shrink_followup(config, cells, invariants, baselines, budget, shrinks, firings,
                                                      on_plan, on_progress))
    pool, interrupted = run_pool_interruptible(
        lambda partial: run_pool(workers, cells, config.runs, invariants, baselines,
                                 _needs_reference(loaded, cells, invariants), on_progress, result=partial,
                                 budget=budget, followup=followup, phases=exploration),
        PoolResult({}, {}, {}, {}, []))
    settle_heap()  # the pool's results live on into the report
    planned = len(cells)
    over_budget = budget is not None and budget.skipped > 0
    if interrupted or over_budget:
        cells = finished_cells(cells, pool, config.runs)
    label = config_label or str(loaded.path)
    results = []
    timings = []
    items_of: dict[str, list] = {}
    for item in pool.runs:
        items_of.setdefault(item.cell.id, []).append(item)
    stats = _stats_by_cell(pool, cells)
    for cell in cells:
        items = sorted(items_of.get(cell.id, []), key=lambda i: i.run)
        runs = [pool.runs[i] for i in items]
        applicable = [invariants[i] for i in cell.invariants]
        results.append(fold_cell(cell, applicable, runs, reproduce_command(label, cell, env=loaded.env_used,
                                                                             digest=loaded.digest),
                                  loaded.redactor.redact, stats.get(cell.id)))
        finish_cell(results[-1], cell, shrinks.get(cell.id), label, loaded.env_used, loaded.digest)
        if exploration is not None and cell.id in exploration.dropped:
            results[-1] = dropped_result(results[-1], exploration.dropped[cell.id])
        if pool.reached:  # the gate watched this agent's calls: what the cell's runs reached
            mark_reached(results[-1], runs)
        timings.append(CellTiming(id=cell.id, latency_ms=[round(pool.latency_ms[i], 1) for i in items],
                                  wall_ms=round(sum(pool.wall_ms[i] for i in items), 1),
                                  trace_ms=[pool.trace_ms[i] for i in items]))
    reach = build_reach(pool.reached) if pool.reached else None
    charge_breakers(results, reruns, {i.id for i in invariants.values() if i.type == "recovers"})
    charge_late_writes(results, pool.stray, {i.id: i.type for i in invariants.values()})
    explored = explore_summary(exploration, results) if exploration is not None else None
    coverage = fault_coverage(cells, {r.id: r for r in results}, stats, reach)
    status = {c.id: c.status for c in results}
    report = assemble(loaded, results, label, started, time.monotonic() - t0, pool.startup_seconds, timings,
                      concurrency=len(workers), only=only, coverage=coverage, stray=pool.stray,
                      whole_plan=not only and shard is None, baseline=baseline, reruns=reruns, reach=reach,
                      pins=[PinStatus(**{**p, "status": status.get(p["cell"], p["status"])}) for p in pins],
                      explored=explored)
    report.run.plan = [c.id for c in whole]
    report.run.time_scale, report.run.agent_clock_rates = config.agent.time_scale, pool.clock_rates
    report.run.shard = ShardInfo(index=shard[0], total=shard[1]) if shard else None
    report.exchanges = cell_exchanges(results, pool)  # bodies for report.html, outside the verdict
    if interrupted:
        end_interrupted(report, loaded, interrupted, len(cells), planned)
    elif over_budget:
        mark_error(report, loaded, "budget", budget.message(len(cells), planned))
    _redact_logs(out_dir / "logs", loaded.redactor, config.agent.log_max_bytes)
    return report


def _stats_by_cell(pool, cells: list[Cell]) -> dict[str, list]:
    """cell id -> the proxy's per-run fault counters, in run order."""
    out: dict[str, list] = {}
    for item in sorted(pool.fault_stats, key=lambda i: (i.cell.index, i.run)):
        out.setdefault(item.cell.id, []).append(pool.fault_stats[item])
    return out


def _redact_logs(log_dir: Path, redactor, cap: int | None = None) -> None:
    """The agents wrote their own logs; scrub secret values (streaming) and cap them before anyone reads them."""
    scrub_dir(log_dir, redactor, cap)
