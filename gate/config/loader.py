"""Read chaos-gate.yaml into a validated Config, with errors a person can act on.

Four passes, each collecting problems rather than stopping at the first: the bytes
become text (gate/config/source.py), the text a bounded node tree and then data
with the line of every key path (gate/config/yaml_nodes.py), pydantic validates the
shape, and the cross-reference checks (gate/config/references.py,
gate/config/value_checks.py) resolve every name, pattern and template against the
config and its plan. Each problem is `file:line: key.path: message (did you mean 'x'?)`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from gate.config.models import Config
from gate.config.problems import Problem, config_error, dotted, format_all, line_at
from gate.config.secrets import Redactor
from gate.config.source import read_config_text
from gate.config.yaml_nodes import Walk, compose, declared_secrets
from gate.errors import ConfigError

Path_ = tuple[Any, ...]
_dotted = dotted  # older name, used by the profile loader


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
    # the plan built while checking references; `plan_for` reuses it instead of building it again
    plan: list | None = field(default=None, repr=False)

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def line_of(self, *key_path: Any) -> int:
        return line_at(self.lines, key_path)


def _model_at(loc: Path_) -> type[BaseModel] | None:
    """The model class that owns the last key of loc, for suggestions."""
    from gate.config.schema_walk import model_for_path

    return model_for_path(Config, loc)


def _suggest(key: str, loc: Path_) -> str:
    model = _model_at(loc)
    if model is None:
        return ""
    names = [f.alias or n for n, f in model.model_fields.items()]
    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f" (valid keys: {', '.join(sorted(names))})"


def _yaml_loc(loc: Path_, lines: dict) -> Path_:
    """Drop pydantic's union tags ('contains', 'function-after', ...) that are not YAML keys."""
    out: list[Any] = []
    for part in loc:
        if tuple(out) + (part,) in lines:
            out.append(part)
    return tuple(out)


def validation_problems(exc: ValidationError, lines: dict) -> list[Problem]:
    problems = []
    errors = exc.errors()
    misspelt = _misspelt_required(errors)
    for err in errors:
        if err["type"] == "missing" and tuple(err["loc"]) in misspelt:
            continue  # the unknown key's 'did you mean' already says it: one message per mistake
        loc = _yaml_loc(err["loc"], lines)
        if err["type"] == "extra_forbidden":
            key = err["loc"][-1]
            problems.append(Problem(loc, f"unknown key '{key}'{_suggest(key, tuple(err['loc'][:-1]))}"))
            continue
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            message = f"required key '{err['loc'][-1]}' is missing"
            loc = loc if loc != tuple(err["loc"]) else loc[:-1]
        elif err["type"] == "union_tag_invalid":
            message = _unknown_tag(err)
            tag_loc = loc + (str(err.get("ctx", {}).get("discriminator", "")).strip("'"),)
            loc = tag_loc if tag_loc in lines else loc  # the line of `kind:` / `type:` itself
        problems.append(Problem(loc, message))
    return problems


def _misspelt_required(errors: list[dict]) -> set[tuple]:
    """Locs of missing keys that an unknown key beside them is a near spelling of."""
    unknown: dict[tuple, list[str]] = {}
    for err in errors:
        if err["type"] == "extra_forbidden":
            unknown.setdefault(tuple(err["loc"][:-1]), []).append(str(err["loc"][-1]))
    return {tuple(err["loc"]) for err in errors if err["type"] == "missing"
            and difflib.get_close_matches(str(err["loc"][-1]), unknown.get(tuple(err["loc"][:-1]), []), n=1,
                                          cutoff=0.6)}


def _format_errors(exc: ValidationError, source: str, lines: dict) -> list[str]:
    return format_all(source, lines, validation_problems(exc, lines))


def _unknown_tag(err: dict) -> str:
    """'unknown fault kind ...' / 'unknown invariant type ...' with the nearest valid name."""
    from gate.contracts import INVARIANTS
    from gate.faults import FAULTS

    field_name = str(err.get("ctx", {}).get("discriminator", "")).strip("'")
    catalog, what = (FAULTS, "fault kind") if field_name == "kind" else (INVARIANTS, "invariant type")
    tag = err["input"].get(field_name) if isinstance(err.get("input"), dict) else None
    close = difflib.get_close_matches(str(tag), list(catalog), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(sorted(catalog))})"
    return f"unknown {what} {tag!r}{hint}"


def parse_yaml(text: str, source: str) -> tuple[Any, dict, Redactor, set[str]]:
    """Data, lines, redactor and declared secret names; a ConfigError for any YAML-level problem."""
    data, lines, redactor, secret_names, problems, _ = _parse(text, source)
    if problems:
        raise config_error(format_all(source, lines, problems))
    return data, lines, redactor, secret_names


def _parse(text: str, source: str):
    root = compose(text, source)
    if root is None or not isinstance(root, yaml.MappingNode):
        raise ConfigError(f"{source}:1: the config must be a mapping with at least 'agent' and 'inputs'")
    secret_names = declared_secrets(root)
    # every secret of the gate's environment, whether or not the config references it
    redactor = Redactor.for_environment(os.environ, secret_names)
    walk = Walk(secret_names, redactor=redactor)
    data = walk.value(root, ())
    return data, walk.lines, redactor, secret_names, walk.problems, walk.env_used


def load_config(path: str | os.PathLike, overrides: dict[str, Any] | None = None) -> LoadedConfig:
    path = Path(path)
    source = str(path)
    data, lines, redactor, _, yaml_problems, env_used = _parse(read_config_text(path), source)
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
    plan: list = []
    if config is not None and not problems:
        problems += _semantic_problems(config, path, plan)
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
                        warnings=warnings, env_used=env_used, plan=plan[0] if plan else None)


def _semantic_problems(config: Config, path: Path, keep_plan: list) -> list[Problem]:
    """Everything pydantic cannot see: profiles, worlds, then references that need the plan."""
    from gate.config.references import reference_problems
    from gate.config.value_checks import value_problems

    problems = _profile_problems(config, path) + _world_problems(config, path) + value_problems(config)
    if problems:  # the plan needs resolvable profiles and sound values
        return problems
    return reference_problems(config, path.resolve().parent, keep_plan)


def _profile_problems(config: Config, path: Path) -> list[Problem]:
    """Every named profile exists; an unknown one is reported on the line that names it."""
    from gate.faults.profiles import resolve, search_dirs

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
    from gate.worlds.files import world_problems

    return world_problems(config, path.resolve().parent)
