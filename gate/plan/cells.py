"""Expand a config into the ordered list of cells the runner executes. Pure.

A cell is (stage, input, variant) with a stable id such as
`mutation/refund/typo-2` or `contract/refund/baseline`, a derived seed, and the
ids of the invariants that apply to it (`when` is evaluated here, per cell).
Sharding, `--only` and pinning are all just selections from this list.

Every cell has a scenario, the name `when: {scenario: ...}` matches: `baseline` (the
fault-free contract row), a contract or chaos scenario or profile name, `custom`
(chaos.faults), `replay`, and `mutation` for mutation cells — fault-free like the
baseline, but with a perturbed input, so a `when` aimed at the baseline never
silently applies to them too.

A conversation input (`turns:`) has contract and chaos cells like any input, each run sending every
turn in one session; it has no mutation cells yet (docs/conversations.md).

A profile runs one cell per fault (`chaos/<input>/<profile>/<fault kind>`, see
gate/config/profiles.split); its cells share the profile's name as their scenario and
carry the whole profile in `scenario_faults`, so coverage shows each fault on its row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gate.config.models import Config
from gate.contracts import InvariantBase
from gate.contracts.outcome_checks import Completes, StaysUp
from gate.contracts.trace_checks import ReplayMatches
from gate.mutation import Preserve, mutate
from gate.plan.oracles import BASELINE, explore_spec, oracles
from gate.plan.seeds import derive_seed
from gate.plan.turn_checks import turn_checks

MUTATION = "mutation"  # the scenario of every mutation cell: no faults, a perturbed input


@dataclass(frozen=True)
class Cell:
    id: str
    index: int
    stage: str
    input_id: str
    text: str
    original_text: str
    seed: int
    mutation: str | None = None
    scenario: str = BASELINE
    invariants: tuple[str, ...] = ()
    faults: tuple = field(default=(), compare=False, hash=False, repr=False)
    session: object = field(default=None, compare=False, hash=False, repr=False)
    # set by shrinking and --faults: the exact firings allowed, {(fault index, upstream, call)}
    firings: frozenset | None = field(default=None, compare=False, hash=False, repr=False)
    # a re-run made by the gate itself (shrinking): never recorded over the run it re-examines
    rerun: bool = field(default=False, compare=False, hash=False, repr=False)
    # one cell of a profile split per fault: all the profile's faults, and where this cell's are among them
    scenario_faults: tuple | None = field(default=None, compare=False, hash=False, repr=False)
    fault_offset: int = field(default=0, compare=False, hash=False, repr=False)
    # the fault-free run its oracles compare with (gate/contracts/universal.py): set once the baselines ran
    reference: object = field(default=None, compare=False, hash=False, repr=False)
    # runs of this cell when not the config's `runs` (an explored input's baseline, sampled for its variance)
    runs: int | None = field(default=None, compare=False, hash=False, repr=False)
    # a conversation input's turns, sent in order in one session (`text` shows them one per line), and
    # whether each turn is handed the previous ones (`history: messages`): gate/agent/conversation.py
    turns: tuple[str, ...] | None = field(default=None, compare=False, hash=False, repr=False)
    history: str = field(default="none", compare=False, hash=False, repr=False)
    # a probe session run beside this cell (input id, turns, history): gate/runner/session_probe.py
    probe: tuple | None = field(default=None, compare=False, hash=False, repr=False)

    def __hash__(self) -> int:
        # Ids are unique within a plan and equal cells have equal ids; hashing the id alone keeps
        # the runner's per-run dicts (keyed by cell and run) from re-hashing every field each time.
        return hash(self.id)

    def facts(self) -> dict[str, str | None]:
        """What `when` conditions match against."""
        return {"stage": self.stage, "input": self.input_id, "mutation": self.mutation, "scenario": self.scenario}


def invariants_of(config: Config) -> list[InvariantBase]:
    """The configured invariants, plus an implicit high-severity `completes` when none is
    declared: an agent that crashes or hangs must never score 100 by default; and for an
    agent process the gate starts (`agent.start.command`), an implicit critical `stays_up`:
    a process that dies is an outage, and fails the gate by default. A conversation turn's own checks
    (`expect`) follow the declared ones (gate/plan/turn_checks.py)."""
    declared = list(config.contract.invariants)
    if not any(inv.type == "completes" for inv in declared):
        declared.append(Completes(id="completes", severity="high"))
    start = config.agent.start
    if start is not None and start.command is not None and \
            not any(inv.type == "stays_up" or inv.id == "stays_up" for inv in declared):
        declared.append(StaysUp(id="stays_up", severity="critical"))
    if config.replay.sessions and not config.replay.allow_unexpected:
        declared.append(ReplayMatches(id="replay-matches", severity="critical", when={"stage": "replay"}))
    for contract in config.replay.contracts.values():
        declared.extend(contract)
    return declared + turn_checks(config) + oracles(config)


def _contract_ids(config: Config) -> set[str]:
    return {inv.id for invs in config.replay.contracts.values() for inv in invs}


def _applicable(config: Config, facts: dict, session=None, declared=None, named=None) -> tuple[str, ...]:
    """Invariants whose `when` matches; a replay contract only for the sessions that name it.
    `declared`/`named` are passed in by build_plan, which computes them once for every cell."""
    own = {inv.id for inv in config.replay.contracts.get(getattr(session, "contract", None) or "", [])}
    named = _contract_ids(config) if named is None else named
    return tuple(inv.id for inv in (invariants_of(config) if declared is None else declared)
                 if inv.applies_to(facts) and (inv.id not in named or inv.id in own))


def applicable_ids(config: Config, facts: dict) -> tuple[str, ...]:
    """The invariants an explored cell checks. The implicit `completes` and `stays_up` stay beside the
    oracles: a run that crashed where its fault never fired is no pass (the oracles judge nothing
    there), and its failure is what lets the runner find the cell that left the agent broken."""
    return _applicable(config, facts)


def _per_fault(name: str, faults: tuple) -> list[dict]:
    """A profile's cells: one per fault (gate/config/profiles.split), or one for a single fault."""
    from gate.config.profiles import split

    parts = split(faults)
    if len(parts) <= 1:
        return [dict(scenario=name, faults=faults, suffix="")]
    return [dict(scenario=name, faults=(fault,), suffix=f"/{suffix}", scenario_faults=faults, fault_offset=n)
            for n, (suffix, fault) in enumerate(parts)]


def _scenario_cells(config: Config, stage: str, scenarios: list[tuple[str, tuple]],
                    profiles: frozenset = frozenset()) -> list[dict]:
    """Every scenario on every input; a scenario named in `profiles` is split into one cell per fault."""
    out = []
    for name, faults in scenarios:
        parts = _per_fault(name, faults) if name in profiles else [dict(scenario=name, faults=faults, suffix="")]
        for part in parts:
            suffix = part.pop("suffix")
            out.extend(dict(stage=stage, input_id=inp.id, id=f"{stage}/{inp.id}/{name}{suffix}",
                            **input_fields(inp), **part) for inp in config.inputs)
    return out


def _contract_cells(config: Config, resolve) -> list[dict]:
    explores = explore_spec(config) is not None  # exploration plans its faults from the baselines
    scenarios = [(BASELINE, ())] if config.contract.baseline or explores else []
    scenarios += [(s.name, resolve(s)) for s in config.contract.scenarios]
    return _scenario_cells(config, "contract", scenarios)


def _chaos_cells(config: Config, resolve) -> list[dict]:
    chaos = config.chaos
    if not chaos.enabled:
        return []
    scenarios = [(name, resolve(name)) for name in chaos.profiles]
    scenarios += [(s.name, resolve(s)) for s in chaos.scenarios]
    if chaos.faults:
        scenarios.append(("custom", tuple(chaos.faults)))
    named = {s.name for s in chaos.scenarios}
    split = frozenset(n for n, faults in scenarios[:len(chaos.profiles)]
                      if n not in named and not getattr(faults, "cascade", False))  # a cascade stays one cell
    return _scenario_cells(config, "chaos", scenarios, split)


def input_fields(inp) -> dict:
    """A cell's fields from its input: the text it shows, and a conversation's turns."""
    text = inp.shown_text()
    if inp.turns is None:
        return dict(text=text, original_text=text)
    return dict(text=text, original_text=text, turns=inp.turn_texts(), history=inp.history)


def _mutation_cells(config: Config, extra_mutators: dict | None) -> list[dict]:
    spec = config.mutation
    if not spec.enabled or spec.count == 0:
        return []
    preserve = Preserve(spec.preserve.numbers, spec.preserve.quoted, tuple(spec.preserve.terms))
    cells = []
    for inp in config.inputs:
        if inp.turns is not None:  # not yet: which turn a mutation perturbs is for later (docs/conversations.md)
            continue
        for m in mutate(inp.id, inp.text, seed=config.seed, count=spec.count,
                        weights=spec.weights(), preserve=preserve, extra=extra_mutators):
            cells.append(dict(stage="mutation", input_id=inp.id, text=m.text, original_text=inp.text,
                              mutation=m.kind, scenario=MUTATION, id=f"mutation/{inp.id}/{m.kind}-{m.index}"))
    return cells


def _replay_scenarios(config: Config, resolve) -> list[tuple[str, tuple]]:
    """`replay.scenarios`: contract or chaos scenarios by name, else profiles, to run on every session."""
    named = {s.name: s for s in [*config.contract.scenarios, *config.chaos.scenarios]}
    return [(name, resolve(named.get(name, name))) for name in config.replay.scenarios]


def _replay_cells(config: Config, base_dir, resolve=None) -> list[dict]:
    from pathlib import Path

    base = Path(base_dir or ".")
    paths = []
    for pattern in config.replay.sessions:
        import glob

        joined = str(base / pattern)  # an absolute pattern stays absolute
        found = [Path(p) for p in sorted(glob.glob(joined, recursive=True))] if any(ch in pattern for ch in "*?[") \
            else ([Path(joined)] if Path(joined).exists() else [])
        if not found:
            from gate.errors import ConfigError
            raise ConfigError(f"replay.sessions: {pattern!r} matches no session file under {base}")
        paths.extend(p for p in found if p not in paths)
    cells = []
    scenarios = _replay_scenarios(config, resolve) if resolve else []
    named = {s.name for s in [*config.contract.scenarios, *config.chaos.scenarios]}
    if not paths:
        return cells
    from gate.replay.session import cell_fields, read_session  # only where there are sessions: validate skips it

    for path in paths:
        session = read_session(path)
        same = dict(stage="replay", input_id=session.input_id, session=session, **cell_fields(session))
        cells.append(dict(same, scenario="replay", id=f"replay/{session.id}"))
        # chaos on top of the recording: its answers, the scenario's faults (gate.proxy.replayed.ReplayUpstream)
        for name, faults in scenarios:
            parts = [dict(scenario=name, faults=faults, suffix="")] if name in named else _per_fault(name, faults)
            for part in parts:
                suffix = part.pop("suffix")
                cells.append(dict(same, id=f"replay/{session.id}/{name}{suffix}", **part))
    return cells


def scenario_resolver(config: Config, base_dir=None):
    """name or Scenario -> its faults (profiles expanded), for the plan."""
    from gate.config.profiles import resolve, search_dirs

    dirs = search_dirs(base_dir, config.profiles_dir)

    def faults_of(item) -> tuple:
        if isinstance(item, str):
            return resolve(item, dirs)
        out = []
        for name in item.profiles:
            out.extend(resolve(name, dirs, f"scenario {item.name}: "))
        return tuple(out) + tuple(item.faults)
    return faults_of


def build_plan(config: Config, *, extra_mutators: dict | None = None, stage_builders: dict | None = None,
               base_dir=None) -> list[Cell]:
    """All cells in a stable order: contract cells first (they hold the baselines)."""
    resolve = scenario_resolver(config, base_dir)
    builders = {"contract": lambda c: _contract_cells(c, resolve),
                "mutation": lambda c: _mutation_cells(c, extra_mutators),
                "chaos": lambda c: _chaos_cells(c, resolve),
                "replay": lambda c: _replay_cells(c, base_dir, resolve), **(stage_builders or {})}
    raw: list[dict] = []
    for stage in ("contract", "mutation", "chaos", "replay"):
        if stage in builders:
            raw.extend(builders[stage](config))
    declared, named = invariants_of(config), _contract_ids(config)
    applicable: dict[tuple, tuple[str, ...]] = {}  # the facts decide it: a few hundred cells share each answer
    cells = []
    for index, spec in enumerate(raw):
        session = spec.get("session")
        key = (spec["stage"], spec["input_id"], spec.get("mutation"), spec.get("scenario", BASELINE),
               getattr(session, "contract", None))
        invariants = applicable.get(key)
        if invariants is None:
            facts = dict(zip(("stage", "input", "mutation", "scenario"), key, strict=False))  # as Cell.facts() has them
            invariants = applicable[key] = _applicable(config, facts, session, declared, named)
        cells.append(Cell(index=index, seed=derive_seed(config.seed, spec["id"]), invariants=invariants, **spec))
    return cells


def select(cells: list[Cell], only: list[str] | None) -> list[Cell]:
    """Cells whose id matches one of `only` exactly or as a glob."""
    if not only:
        return cells
    import fnmatch

    return [c for c in cells if any(c.id == o or fnmatch.fnmatchcase(c.id, o) for o in only)]
