"""Exploration in a run: the baselines first, then the cells their call sites plan.

The plan's fault-free baselines run first on every worker (`Exploration.first`); a hook reads
each one's call sites off its trace as it ends (the proxy's entries, before they are let go);
then `Exploration.then` plans the fault points (gate/explore/planner.py) and hands the pool
their cells, with the rest of the plan. A written scenario whose invariants include a universal
oracle (a pinned finding) gets the same baseline as its reference.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from gate.config import LoadedConfig
from gate.contracts.reference import site_calls
from gate.contracts.universal import CANARY, UNIVERSAL
from gate.errors import ConfigError
from gate.explore.cells import cells_for, faults_key, point_key
from gate.explore.planfile import dump_plan, load_plan
from gate.explore.findings import findings_for
from gate.explore.kinds import CATALOG
from gate.explore.planner import REPEATS_OUTAGE, REPEATS_PAIR, Baseline, ExplorePlan, plan_points
from gate.plan import Cell, select
from gate.plan.cells import BASELINE
from gate.plan.oracles import SCENARIO, explore_spec
from gate.plan.shard import shard_of
from gate.report import write_atomic
from gate.report.model import ExploreSummary, Finding

TRANSIENT = {k.kind for k in CATALOG if k.transient}


def dropped_result(result, why: str):
    """A deferred cell that was not run: skipped, with the reason, in no score."""
    return result.model_copy(update={"status": "skipped", "reason": "pruned", "note": why, "invariants": [],
                                     "flaky": False})


def _is_baseline(cell: Cell) -> bool:
    return cell.stage == "contract" and cell.scenario == BASELINE


class BaselineRecorder:
    """A run hook, attached last: the baselines' call sites, read while their trace entries live, and
    how often each explored cell's run called each site (what decides its outage and pairs)."""

    def __init__(self, into: dict[str, dict[int, Baseline]], calls: dict[str, Counter]):
        self.into, self.calls = into, calls  # input id -> run -> that sample of its baseline

    def env(self) -> dict[str, str]:
        return {}

    async def start(self) -> None:
        return None

    async def begin(self, cell, run: int) -> None:
        return None

    async def end(self, cell, run: int, obs) -> None:
        if _is_baseline(cell) and not cell.rerun:  # every sample: the runs may end in any order
            self.into.setdefault(cell.input_id, {})[run] = Baseline.read(cell.input_id, obs.output, obs.reason,
                                                                         obs.trace, obs.latency_ms)
        elif run == 0 and cell.scenario == SCENARIO and not cell.rerun:
            self.calls[cell.id] = site_calls(obs.trace)

    async def stop(self) -> None:
        return None


class Exploration:
    """The two phases of a run that explores, or whose cells compare with a baseline."""

    def __init__(self, loaded: LoadedConfig, cells: list[Cell], whole: list[Cell], invariants: dict, on_plan=None,
                 shard: tuple[int, int] | None = None, only: list[str] | None = None,
                 plan_file: Path | None = None, discover: Path | None = None):
        self.loaded, self.cells, self.whole, self.on_plan = loaded, cells, whole, on_plan
        self.shard, self.only, self.discover = shard, only, discover
        self.shared = _read_plan(plan_file, loaded) if plan_file is not None else None
        self.spec = explore_spec(loaded.config)
        self.samples: dict[str, dict[int, Baseline]] = {}  # input id -> run -> that baseline sample
        self.baselines: dict[str, Baseline] = {}  # input id -> its first sample, the others beside it
        self.calls: dict[str, Counter] = {}  # explored cell id -> its run's calls per site group
        self.plan: ExplorePlan | None = None
        self.points: dict = {}
        self.deferred: list[Cell] = []  # outages and pairs, run after the single that decides them
        self.dropped: dict[str, str] = {}  # cell id -> why its run would repeat its sibling's
        self.oracle_ids = {i for i, inv in invariants.items() if inv.type in UNIVERSAL}
        self.selected: int | None = None  # explored cells `--only` kept: the summary counts those as run

    @classmethod
    def needed(cls, loaded: LoadedConfig, cells: list[Cell], whole: list[Cell], invariants: dict, on_plan=None,
               shard: tuple[int, int] | None = None, only: list[str] | None = None, **plan_files):
        """An Exploration when the run explores or a written cell is judged by an oracle, else None.
        `plan_files`: `plan_file` (explore from it) or `discover` (write the plan there, explore nothing)."""
        run = cls(loaded, cells, whole, invariants, on_plan, shard, only, **plan_files)
        compares = any(set(c.invariants) & run.oracle_ids for c in cells if not _is_baseline(c))
        return run if run.spec is not None or compares else None

    def hooks(self, factory):
        recorder = BaselineRecorder(self.samples, self.calls)
        return lambda index: [*(factory(index) if factory else []), recorder]

    def first(self, cells: list[Cell]) -> list[Cell]:
        """The baselines: a shard, or a run of `--only` cells, runs every input's (they plan the explored
        cells), and reports only its own."""
        mine = [c for c in cells if _is_baseline(c)]
        if self.spec is None or (self.shard is None and not self.only) or self.shared is not None:
            return self._sampled(mine)  # a shared plan carries every point's reference: no other baseline needed
        ran = {c.id for c in mine}
        return self._sampled(mine + [c for c in self.whole if _is_baseline(c) and c.id not in ran])

    def _sampled(self, baselines: list[Cell]) -> list[Cell]:
        """Each baseline run as often as exploration learns its variance from (`baseline_runs`), in place."""
        runs = max(self.loaded.config.runs, self.spec.baseline_runs) if self.spec is not None else None
        if runs is None or runs == self.loaded.config.runs:
            return baselines
        sampled = {c.id: replace(c, runs=runs) for c in baselines}
        for cells in (self.cells, self.whole):  # the same cells everywhere they are held (the report folds these)
            cells[:] = [sampled.get(c.id, c) for c in cells]
        return list(sampled.values())

    def _merge_samples(self) -> None:
        for input_id, runs in self.samples.items():
            first = runs.get(0) or runs[min(runs)]
            self.baselines[input_id] = first.with_samples(b for run, b in sorted(runs.items()) if b is not first)

    def then(self, rest: list[Cell]) -> list[Cell]:
        """The rest of the plan with its references, and the explored cells (added to `self.cells`)."""
        self._merge_samples()
        rest = [self._referenced(c) for c in rest]
        if self.spec is None:
            return rest
        config = self.loaded.config
        ordered = [self.baselines[i.id] for i in config.inputs if i.id in self.baselines]
        written = {faults_key(c.faults) for c in rest if c.faults}
        self.plan = self.shared or plan_points(ordered, self.spec, config.seed, deadline=config.agent.timeout,
                                               pinned=lambda point: point_key(point) in written)
        if self.discover is not None:  # discovery: the plan is the product; nothing is explored here
            text = dump_plan(self.plan, self.loaded.digest, config.seed)
            self.discover.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.discover, lambda path: path.write_text(text, encoding="utf-8"))
            return rest
        texts = {i.id: i.shown_text() for i in config.inputs}
        added = cells_for(self.plan.points, config, texts, first_index=len(self.whole))
        self.points = {p.id: p for p in self.plan.points}
        self.whole.extend(added)
        if self.shard is not None:  # every shard planned the same cells: each runs its deal of them
            added = self._dealt(added, config.runs)
        if self.only:  # a reproduce command names explored cells: they exist once the baselines ran
            added = select(added, self.only)
            self.selected = len(added)
        self.cells.extend(added)  # in place: the followups (recover, shrink) hold this list
        if self.on_plan is not None and added:
            self.on_plan(sum(c.runs or config.runs for c in self.cells))
        mine = {c.id for c in added}
        self.deferred = [c for c in added if self._decided_by(c) in mine]
        later = {c.id for c in self.deferred}
        return rest + [c for c in added if c.id not in later]

    def _decided_by(self, cell: Cell) -> str | None:
        point = self.points.get(cell.id)
        return point.sibling if point is not None else None

    def _dealt(self, cells: list[Cell], runs: int) -> list[Cell]:
        """This shard's cells: the plan dealt as `shard_of` deals it, an outage or pair with its sibling,
        so the shard that runs one has the sibling's run to decide by (and drops exactly what one
        process would)."""
        decided = [c for c in cells if self._decided_by(c) is None]
        mine = {c.id for c in shard_of(decided, self.shard[0], self.shard[1], runs)}
        return [c for c in cells if (self._decided_by(c) or c.id) in mine]

    def later(self) -> list[Cell]:
        """The deferred cells whose sibling's run leaves them something new to show; the rest dropped."""
        out = []
        for cell in self.deferred:
            point = self.points[cell.id]
            seen = self.calls.get(point.sibling)
            group, needed = point.needs
            if seen is not None and seen[group] < needed:
                self.dropped[cell.id] = (f"not run: {point.sibling} showed the same next action — the site was not "
                                         f"called again after its fault" if point.persistent else
                                         f"not run: {point.sibling} never reached the second fault's call")
            else:
                out.append(cell)
        return out

    def _referenced(self, cell: Cell) -> Cell:
        base = self.baselines.get(cell.input_id)
        if base is None or not set(cell.invariants) & self.oracle_ids or not (cell.faults or cell.mutation):
            return cell
        kinds = [f.kind for f in cell.faults]
        once = all(f.on_calls is not None and len(f.on_calls) == 1 or f.max_fires == 1 for f in cell.faults)
        texts = " ".join(getattr(f, "text", "") or "" for f in cell.faults)
        canary = CANARY.search(texts)
        ref = base.reference(" + ".join(kinds), once and all(k in TRANSIENT for k in kinds), canary and canary.group(0))
        return replace(cell, reference=ref)


def _read_plan(path: Path, loaded: LoadedConfig) -> ExplorePlan:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--explore-plan {path}: cannot read it ({exc.strerror}); write it with "
                          "`chaos-gate explore --discover FILE`") from None
    return load_plan(text, f"--explore-plan {path}", loaded.digest, loaded.config.seed)


def explore_summary(exploration: Exploration, results) -> ExploreSummary | None:
    """The summary's words for what was explored, with the findings first among them."""
    plan = exploration.plan
    if plan is None:
        return None
    found = findings_for(exploration.points, results, exploration.oracle_ids)  # a shard: its own cells' findings
    pruned = dict(plan.pruned)
    outages = sum(exploration.points[c].persistent for c in exploration.dropped)
    for why, n in ((REPEATS_OUTAGE, outages), (REPEATS_PAIR, len(exploration.dropped) - outages)):
        if n:
            pruned[why] = n
    ran = len(plan.points) if exploration.selected is None else exploration.selected
    return ExploreSummary(sites=plan.sites, planned=plan.planned, run=ran - len(exploration.dropped),
                          pruned=pruned,
                          unfaultable=[f"{u.what}: {u.why}" for u in plan.unfaultable],
                          failed_baselines=plan.failed_baselines, findings=[Finding(**f) for f in found])

