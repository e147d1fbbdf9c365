"""What one chaos test runs against: a config (from a chaos-gate.yaml, or built from markers), and its cell.

The cell is named and seeded exactly as `chaos-gate run` names and seeds it
(gate/plan/cells.py): `contract/<input>/<scenario>` for a contract scenario,
`chaos/<input>/<scenario>` for a chaos scenario or profile, `chaos/<input>/custom` for
inline faults, `contract/<input>/baseline` without faults; its seed is
`derive_seed(root seed, cell id)` and the schedule draws from (seed, cell, run). So a
test's failing run, given its config, input and seed, gets the same faults in
`chaos-gate run --only <cell> --seed <seed>`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from gate.plan.seeds import derive_seed

SIM_LLMS = [{"name": "openai", "provider": "openai", "upstream": "sim"},
            {"name": "anthropic", "provider": "anthropic", "upstream": "sim"},
            {"name": "gemini", "provider": "gemini", "upstream": "sim"},
            {"name": "azure", "provider": "azure", "upstream": "sim"}]


class SpecError(ValueError):
    """A marker or fixture asked for something that does not exist; the message says what does."""


@dataclass
class PluginCell:
    """The cell a test run plays, as ProxyHook.begin reads one."""

    id: str
    seed: int
    faults: tuple = ()
    scenario: str = "baseline"
    stage: str = "contract"
    input_id: str = "test"
    firings: frozenset | None = None


@dataclass
class RunSpec:
    config: Any  # gate.config.models.Config
    root_seed: int
    input_id: str
    scenario: str = "baseline"
    stage: str = "contract"
    faults: tuple = ()
    forced: dict = field(default_factory=dict)  # world name -> world faults on/off (None: by faults_apply)
    config_path: Path | None = None
    digest: str | None = None
    cell_known: bool = False  # the config really has this input and scenario: `chaos-gate run` can replay it

    @property
    def cell_id(self) -> str:
        return f"{self.stage}/{self.input_id}/{self.scenario}"

    def cell(self, firings: frozenset | None = None) -> PluginCell:
        return PluginCell(self.cell_id, derive_seed(self.root_seed, self.cell_id), self.faults, self.scenario,
                          self.stage, self.input_id, firings)

    def key(self) -> str:
        """Which running proxy can serve this spec (one per distinct config and world-fault switch)."""
        doc = {"config": self.config.model_dump(mode="json", by_alias=True), "forced": self.forced,
               "code": [w.code_dir for w in self.config.worlds]}
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def input_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "test"


def _sim_config(sim, base_dir: Path):
    from gate.config.sim import SimConfig

    if sim is None:
        return None
    if isinstance(sim, SimConfig):
        return sim
    if isinstance(sim, (str, Path)):
        from gate.config.world_files import read_world_data

        doc, _ = read_world_data(Path(base_dir) / sim)
        sim = doc.get("sim", doc) if isinstance(doc, dict) else doc
    try:
        return SimConfig.model_validate(sim)
    except ValidationError as exc:
        raise SpecError(f"chaos_sim: {exc}") from None


def _world(source, options: dict, base_dir: Path):
    from gate.errors import ConfigError
    from gate.config.world_files import load_world_file, world_problems
    from gate.worlds.model import World, WorldFaultRule, env_name

    overrides = {k: options.get(k) for k in ("name", "env", "mcp_env")}
    try:
        if isinstance(source, World):
            world = source.model_copy(deep=True)
        elif isinstance(source, dict):
            world = World.model_validate({**source, **{k: v for k, v in overrides.items() if v}})

            class _Holder:
                worlds = [world]
            problems = world_problems(_Holder, base_dir)
            if problems:
                raise SpecError("chaos_world: " + "; ".join(f"{'.'.join(map(str, p.loc))}: {p.message}"
                                                            for p in problems))
            world = _Holder.worlds[0]
        else:
            world = load_world_file(Path(base_dir) / source, overrides)
    except (ConfigError, ValidationError) as exc:
        raise SpecError(f"chaos_world({source!r}): {exc}") from None
    faults = options.get("faults")
    if isinstance(faults, dict):
        world.faults = {k: WorldFaultRule.model_validate(v or {}) for k, v in faults.items()}
    if world.mcp_env is None:
        world.mcp_env = env_name(world.name, "_MCP_URL")
    return world, (True if isinstance(faults, dict) else faults)


def build_spec(*, base_dir: Path, config: str | Path | None = None, worlds=(), sim=None, faults=None,
               scenario: str | None = None, seed: int | None = None, input_id: str = "test") -> RunSpec:
    """A RunSpec from what a test asked for: `worlds` is [(source, options)], `faults` gate fault dicts."""
    from gate.config.chaos import Fault
    from gate.config.models import Config

    base_dir = Path(base_dir)
    loaded = None
    if config is not None:
        from gate.plan import load_config

        loaded = load_config(Path(base_dir) / config)
        cfg = loaded.config
    else:
        cfg = Config.model_validate({"agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}"}}},
                                     "inputs": [{"id": input_id, "text": "(pytest)"}], "llm": SIM_LLMS,
                                     "mutation": {"enabled": False}})
    update: dict = {}
    forced: dict = {}
    extra = []
    for source, options in worlds:
        world, on = _world(source, options, base_dir)
        forced[world.name] = bool(on)
        extra.append(world)
    if extra:
        names = [w.name for w in cfg.worlds] + [w.name for w in extra]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SpecError(f"chaos_world: world name(s) {', '.join(dupes)} used twice (pass name=...)")
        update["worlds"] = list(cfg.worlds) + extra
    own = [w.model_copy(update={"mcp_env": w.mcp_env or f"{w.env.removesuffix('_URL')}_MCP_URL"})
           for w in update.get("worlds", cfg.worlds)]
    update["worlds"] = own
    if not cfg.llm:
        from gate.config.chaos import LlmUpstream

        update["llm"] = [LlmUpstream.model_validate(u) for u in SIM_LLMS]
    sim_config = _sim_config(sim, base_dir)
    if sim_config is not None:
        update["sim"] = sim_config
    cfg = cfg.model_copy(update=update)
    if scenario is not None and faults:
        raise SpecError("use chaos_scenario or chaos_faults, not both: the cell is one or the other")
    stage, name, chosen = "contract", "baseline", ()
    if faults:
        try:
            chosen = tuple(TypeAdapter(Fault).validate_python(f) for f in faults)
        except ValidationError as exc:
            raise SpecError(f"chaos_faults: {exc}") from None
        stage, name = "chaos", "custom"
    elif scenario is not None:
        stage, name, chosen = _scenario(cfg, scenario, base_dir if loaded is None else loaded.base_dir)
    known = loaded is not None and any(i.id == input_id for i in cfg.inputs) and not faults \
        and (scenario is not None or cfg.contract.baseline)
    root = seed if seed is not None else cfg.seed
    return RunSpec(cfg, root, input_id, name, stage, chosen, forced, loaded.path if loaded else None,
                   loaded.digest if loaded else None, known)


def _scenario(cfg, name: str, base_dir: Path) -> tuple[str, str, tuple]:
    from gate.errors import ConfigError
    from gate.plan.cells import scenario_resolver

    resolve = scenario_resolver(cfg, base_dir)
    for stage, scenarios in (("contract", cfg.contract.scenarios), ("chaos", cfg.chaos.scenarios)):
        for sc in scenarios:
            if sc.name == name:
                return stage, name, resolve(sc)
    try:
        return "chaos", name, resolve(name)
    except ConfigError:
        known = [s.name for s in [*cfg.contract.scenarios, *cfg.chaos.scenarios]]
        raise SpecError(f"chaos_scenario({name!r}): no scenario or profile of that name"
                        + (f" (the config's scenarios: {', '.join(known)})" if known else "")) from None
