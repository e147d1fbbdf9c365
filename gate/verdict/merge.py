"""Merge shard reports into the one report an unsharded run would have produced.

Refuses what cannot be merged honestly — another config, another seed, a shard
missing or given twice, cells missing — with a message naming the problem: a
missing shard must never turn into a silent pass.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path


from gate.config import LoadedConfig
from gate.errors import ConfigError
from gate.report import read_report
from gate.report.model import Report
from gate.verdict.coverage import merge_coverage
from gate.verdict.assemble import assemble


def read_reports(paths: list[Path]) -> list[Report]:
    return [read_report(path) for path in paths]


def _check(loaded: LoadedConfig, reports: list[Report], paths: list) -> None:
    for path, r in zip(paths, reports):
        v = r.verdict
        if v.seed != loaded.config.seed:
            raise ConfigError(f"{path}: made with seed {v.seed}, but the config's seed is {loaded.config.seed} "
                              "(pass the same --seed to every shard and to merge)")
        if v.config_digest != loaded.digest:
            raise ConfigError(f"{path}: made from another config (digest {v.config_digest}, "
                              f"{loaded.path.name} is {loaded.digest}); merge reports of one config only")
        if r.run.shard is None and len(reports) > 1:
            raise ConfigError(f"{path}: not a shard report (run with --shard I/N)")
    totals = {r.run.shard.total for r in reports if r.run.shard}
    if len(totals) > 1:
        raise ConfigError(f"shard reports disagree on the number of shards: {sorted(totals)}")
    if totals:
        total = totals.pop()
        seen = [r.run.shard.index for r in reports]
        dupes = sorted({i for i in seen if seen.count(i) > 1})
        missing = sorted(set(range(1, total + 1)) - set(seen))
        if dupes:
            raise ConfigError(f"shard(s) {', '.join(f'{i}/{total}' for i in dupes)} given more than once")
        if missing:
            raise ConfigError(f"shard(s) {', '.join(f'{i}/{total}' for i in missing)} missing: "
                              "the verdict cannot be decided without every shard")
    if len({tuple(r.run.plan) for r in reports}) > 1:
        raise ConfigError("shard reports were planned differently (different tool versions or profiles?)")


def merge_reports(loaded: LoadedConfig, paths: list[Path], baseline: Report | None = None) -> Report:
    reports = read_reports(paths)
    if not reports:
        raise ConfigError("merge: no reports given")
    _check(loaded, reports, paths)
    plan = reports[0].run.plan
    order = {cell_id: n for n, cell_id in enumerate(plan)}
    cells = sorted((c for r in reports for c in r.verdict.cells), key=lambda c: order.get(c.id, len(order)))
    ids = [c.id for c in cells]
    if set(ids) != set(plan) or len(ids) != len(set(ids)):
        lost = sorted(set(plan) - set(ids))[:5]
        raise ConfigError(f"merged shards do not cover the plan exactly (missing e.g. {lost})")
    timings = sorted((t for r in reports for t in r.timings.cells), key=lambda t: order.get(t.id, len(order)))
    started = min(datetime.fromisoformat(r.timings.started_at) for r in reports)
    wall = max(r.timings.wall_seconds for r in reports)
    startup = [s for r in reports for s in r.timings.agent_startup_seconds]
    merged = assemble(loaded, cells, reports[0].verdict.config, started, wall, startup, timings,
                      concurrency=sum(r.run.concurrency for r in reports), only=None,
                      coverage=merge_coverage([r.verdict.coverage for r in reports], cells),
                      stray=[s for r in reports for s in r.run.stray], whole_plan=True, baseline=baseline)
    merged.run.plan = plan
    merged.run.time_scale = max(r.run.time_scale for r in reports)
    merged.run.agent_clock_rates = [rate for r in reports for rate in r.run.agent_clock_rates]
    return merged
