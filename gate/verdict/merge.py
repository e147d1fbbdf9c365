"""Merge shard reports into the one report an unsharded run would have produced.

Refuses what cannot be merged honestly — another config, another seed, another gate
version, a shard missing or given twice, cells missing — with a message naming the shard
and the problem: a missing shard must never turn into a silent pass.

Everything a verdict needs from the run travels in the shard reports: each cell's row keeps
what its runs reached (tools called, calls seen), passing or not; the reach sections are
united; the coverage is summed and explained again over the union; re-runs, pins and stray
calls are carried. Then the same `assemble` that closes an unsharded run judges the whole.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path


from gate.version import __version__
from gate.config import LoadedConfig
from gate.plan import build_plan
from gate.errors import ConfigError
from gate.report import read_report
from gate.contracts.base import SEVERITY_RANK
from gate.explore.planner import REPEATS_OUTAGE, REPEATS_PAIR
from gate.report.model import ExploreSummary, Report
from gate.verdict.coverage import merge_coverage
from gate.verdict.reach import merge_reach
from gate.verdict.assemble import assemble


def read_reports(paths: list[Path]) -> list[Report]:
    return [read_report(path) for path in paths]


def _check(loaded: LoadedConfig, reports: list[Report], paths: list) -> None:
    for path, r in zip(paths, reports, strict=True):
        v = r.verdict
        if v.seed != loaded.config.seed:
            raise ConfigError(f"{path}: made with seed {v.seed}, but the config's seed is {loaded.config.seed} "
                              "(pass the same --seed to every shard and to merge)")
        if v.runs_per_cell != loaded.config.runs:
            raise ConfigError(f"{path}: made with {v.runs_per_cell} run(s) per cell, but the config's runs is "
                              f"{loaded.config.runs} (pass the same --runs to every shard and to merge)")
        if r.run.tool_version != __version__:
            raise ConfigError(f"{path}: made by chaos-gate {r.run.tool_version}, and this is {__version__}; "
                              "run every shard and the merge with one version of the gate")
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
    reach = merge_reach([r.verdict.reach for r in reports])
    coverage = merge_coverage([r.verdict.coverage for r in reports], cells, _faults_of(loaded), reach)
    merged = assemble(loaded, cells, reports[0].verdict.config, started, wall, startup, timings,
                      concurrency=sum(r.run.concurrency for r in reports), only=None, coverage=coverage,
                      stray=[s for r in reports for s in r.run.stray], whole_plan=True, baseline=baseline,
                      reruns=[x for r in reports for x in r.run.reruns], reach=reach,
                      pins=[p for r in reports for p in r.verdict.pins],
                      explored=merge_explored([r.verdict.explore for r in reports]))
    merged.run.plan = plan
    merged.run.time_scale = max(r.run.time_scale for r in reports)
    merged.run.agent_clock_rates = [rate for r in reports for rate in r.run.agent_clock_rates]
    merged.run.separation = merge_separation([r.run.separation for r in reports])
    return merged


def merge_separation(lines: list[str | None]) -> str | None:
    """One line for every shard's: each distinct part once, in the order the shards said it (shards of one
    config on like runners say the same; a shard that could not separate must not be hidden by one that did)."""
    parts = [p for line in lines if line for p in line.split("; ")]
    return "; ".join(dict.fromkeys(parts)) or None


def _faults_of(loaded: LoadedConfig) -> dict[tuple[str, str], tuple]:
    """(stage, scenario) -> the scenario's faults, from the plan, as fault_coverage lists them."""
    whole = loaded.plan if loaded.plan is not None else build_plan(loaded.config, base_dir=loaded.base_dir)
    out: dict[tuple[str, str], tuple] = {}
    for cell in whole:
        if cell.faults:
            out.setdefault((cell.stage, cell.scenario), tuple(getattr(cell, "scenario_faults", None) or cell.faults))
    return out


DROPPED = (REPEATS_OUTAGE, REPEATS_PAIR)


def merge_explored(parts: list[ExploreSummary | None]) -> ExploreSummary | None:
    """Shards planned the same exploration; each found what its own cells showed."""
    present = [p for p in parts if p is not None]
    if not present:
        return None
    merged = present[0].model_copy(deep=True)
    points = merged.run + sum(merged.pruned.get(k, 0) for k in DROPPED)
    for reason in DROPPED:  # dropped by the shard that ran the sibling: each counted once, in its shard
        total = sum(p.pruned.get(reason, 0) for p in present)
        merged.pruned.pop(reason, None)
        if total:
            merged.pruned[reason] = total
    merged.run = points - sum(merged.pruned.get(k, 0) for k in DROPPED)
    seen = {f.cell for f in merged.findings}
    for part in present[1:]:
        merged.findings += [f for f in part.findings if f.cell not in seen]
        seen |= {f.cell for f in part.findings}
    merged.findings.sort(key=lambda f: (SEVERITY_RANK.get(f.severity, 9), f.cell))
    return merged
