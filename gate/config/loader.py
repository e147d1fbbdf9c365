"""Read chaos-gate.yaml into a validated Config, with errors a person can act on.

Four passes, each collecting problems rather than stopping at the first: the bytes
become text (gate/config/source.py), the text a bounded node tree and then data
with the line of every key path (gate/config/yaml_nodes.py), pydantic validates the
shape, and the cross-reference checks (gate/config/references.py,
gate/config/value_checks.py) resolve every name, pattern and template against the
config. The plan is not built here: `when` conditions, which name its cells, are checked
by gate/plan/load.py once it exists (the config layer sits below the plan). Each problem is `file:line: key.path: message (did you mean 'x'?)`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gate.config.models import Config
from gate.config.problems import Problem, config_error, format_all, line_at
from gate.config.reading import Path_, parse_text, validation_problems
from gate.config.secrets import Redactor
from gate.config.source import read_config_text
from gate.errors import ConfigError


@dataclass
class LoadedConfig:
    """A validated config plus where it came from: lines, digest, secrets, warnings."""

    config: Config
    path: Path
    lines: dict[Path_, int] = field(default_factory=dict)
    redactor: Redactor = field(default_factory=Redactor)
    digest: str = ""
    # vacuous references let through by gate.allow_vacuous, as `file:line: key: vacuous ...`
    warnings: list[str] = field(default_factory=list)
    # non-secret ${VAR}s the config took from the environment, for reproduce commands
    env_used: dict[str, str] = field(default_factory=dict)
    # the plan built while checking `when` (gate/plan/load.py); `plan_for` reuses it instead of building it again
    plan: list | None = field(default=None, repr=False)
    source: str = ""  # the path as it was given, for `file:line` messages

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def line_of(self, *key_path: Any) -> int:
        return line_at(self.lines, key_path)


def read_config(path: str | os.PathLike, overrides: dict[str, Any] | None = None) -> LoadedConfig:
    """The file read and validated: shape, values, names, files it refers to. `when` conditions are
    checked against the plan's cells by gate/plan/load.py, once the plan exists."""
    path = Path(path)
    source = str(path)
    data, lines, redactor, _, yaml_problems, env_used = parse_text(read_config_text(path), source)
    problems: list[Problem] = []
    for key, value in (overrides or {}).items():
        if value is not None:  # "agent.time_scale": a nested key
            *parents, leaf = key.split(".")
            holder = data
            for part in parents:
                holder = holder.setdefault(part, {})
            if isinstance(holder, dict):  # else the config's own shape error is reported as it is
                holder[leaf] = value
    config = None
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems += validation_problems(exc, lines)
    warnings: list[str] = []
    if config is not None and not problems:
        problems += _semantic_problems(config, path)
        vacuous = [p for p in problems if p.vacuous]
        if vacuous and config.gate.allow_vacuous:
            warnings = format_all(source, lines, vacuous)
            problems = [p for p in problems if not p.vacuous]
    if config is not None and not problems and not yaml_problems:  # sim rules naming tools never offered
        from gate.config.sim import recorded_offers, tool_warnings
        uses_sim = any(u.upstream == "sim" for u in config.llm) and config.replay.sessions
        offered = recorded_offers(config.replay.sessions, path.resolve().parent) if uses_sim else None
        warnings += format_all(source, lines, [Problem(loc, m) for loc, m in tool_warnings(config.sim, offered)])
        from gate.config.tool_hints import guessed_tool_problems  # `tool:` names that look misspelt
        warnings += format_all(source, lines, guessed_tool_problems(config, offered))
    if yaml_problems or problems:
        # YAML-level problems first: the shape errors that follow are often their consequence
        messages = format_all(source, lines, yaml_problems) + format_all(source, lines, problems)
        raise config_error(list(dict.fromkeys(messages)))
    # How the run is executed (parallelism, where files go) is not part of what is judged,
    # and the seed is kept apart (reports carry it on its own), so a digest names a shape.
    # agent.time_scale changes how fast time passes, never what is judged (gate/agent/dilation.py).
    judged = config.model_dump(mode="json", by_alias=True,
                               exclude={"concurrency": True, "output": True, "seed": True, "agent": {"time_scale"}})
    digest = hashlib.sha256(json.dumps(judged, sort_keys=True).encode()).hexdigest()[:16]
    return LoadedConfig(config=config, path=path.resolve(), lines=lines, redactor=redactor, digest=digest,
                        warnings=warnings, env_used=env_used, source=source)


def _semantic_problems(config: Config, path: Path) -> list[Problem]:
    """Everything pydantic cannot see: profiles, worlds, values, then the names they refer to."""
    from gate.config.references import reference_problems
    from gate.config.service_refs import service_problems  # {{services.NAME.url}}
    from gate.config.value_checks import value_problems

    problems = (_profile_problems(config, path) + _world_problems(config, path) + value_problems(config)
                + service_problems(config))
    if problems:  # the plan needs resolvable profiles and sound values
        return problems
    return reference_problems(config, path.resolve().parent)


def _profile_problems(config: Config, path: Path) -> list[Problem]:
    """Every named profile exists; an unknown one is reported on the line that names it."""
    from gate.config.profiles import resolve, search_dirs

    dirs = search_dirs(path.resolve().parent, config.profiles_dir)
    refs = [(("chaos", "profiles", i), name) for i, name in enumerate(config.chaos.profiles)]
    for section, scenarios in (("chaos", config.chaos.scenarios), ("contract", config.contract.scenarios)):
        for i, sc in enumerate(scenarios):
            refs += [((section, "scenarios", i, "profiles", j), name) for j, name in enumerate(sc.profiles)]
    problems = []
    for loc, name in refs:
        try:
            resolve(name, dirs)
        except ConfigError as exc:
            problems.append(Problem(loc, str(exc)))
    return problems


def _world_problems(config: Config, path: Path) -> list[Problem]:
    """Worlds checked (custom operations imported) and `{faultbench: FILE}` worlds loaded, in place."""
    if not config.worlds:
        return []
    from gate.config.world_files import world_problems

    return world_problems(config, path.resolve().parent)
