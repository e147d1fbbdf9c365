"""Read chaos-gate.yaml into a validated Config, with errors a person can act on.

YAML is composed into nodes first so every key path keeps its line number; `${VAR}`
and `${VAR:-default}` are expanded in scalars; pydantic validates. Each problem is
reported as `file:line: key.path: message (did you mean 'x'?)`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from gate.config.models import Config
from gate.config.secrets import Redactor, looks_secret
from gate.errors import ConfigError

ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
Path_ = tuple[Any, ...]


@dataclass
class LoadedConfig:
    """A validated config plus where it came from: lines, digest, secrets."""

    config: Config
    path: Path
    lines: dict[Path_, int] = field(default_factory=dict)
    redactor: Redactor = field(default_factory=Redactor)
    digest: str = ""

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def line_of(self, *key_path: Any) -> int:
        return line_at(self.lines, key_path)


def line_at(lines: dict, loc: Path_) -> int:
    """Line (1-based) of the deepest prefix of `loc` that the YAML has."""
    loc = tuple(loc)
    return next((lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in lines), 1)


def _walk(node: yaml.Node, path: Path_, lines: dict, source: str, secrets: set[str], redactor: Redactor):
    """Node tree -> plain data, recording the line of every key path and expanding ${VAR}."""
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = key_node.value
            lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = _walk(value_node, path + (key,), lines, source, secrets, redactor)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(v, path + (i,), lines, source, secrets, redactor) for i, v in enumerate(node.value)]
    value = yaml.safe_load(yaml.serialize(node)) if node.tag != "tag:yaml.org,2002:str" else node.value
    if isinstance(value, str) and "${" in value:
        return _expand(value, path, lines[path], source, secrets, redactor)
    return value


def _expand(text: str, path: Path_, line: int, source: str, secrets: set[str], redactor: Redactor) -> str:
    def repl(m: re.Match) -> str:
        name, default = m.group(1), m.group(2)
        value = os.environ.get(name)
        if value is None:
            if default is None:
                raise ConfigError(
                    f"{source}:{line}: {_dotted(path)}: environment variable {name} is not set "
                    f"(set it, or give a default with ${{{name}:-value}})")
            value = default
        if name in secrets or looks_secret(name):
            redactor.add(value, name)
        return value

    return ENV_REF.sub(repl, text)


def _dotted(loc: Path_) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


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


def _format_errors(exc: ValidationError, source: str, lines: dict) -> list[str]:
    problems = []
    for err in exc.errors():
        loc = _yaml_loc(err["loc"], lines)
        line = line_at(lines, loc)
        if err["type"] == "extra_forbidden":
            key = err["loc"][-1]
            problems.append(f"{source}:{line}: {_dotted(loc)}: unknown key '{key}'{_suggest(key, tuple(err['loc'][:-1]))}")
            continue
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            message = f"required key '{err['loc'][-1]}' is missing"
            loc = loc if loc != tuple(err["loc"]) else loc[:-1]
        elif err["type"] == "union_tag_invalid":
            message = _unknown_tag(err)
        problems.append(f"{source}:{line}: {_dotted(loc)}: {message}")
    return problems


def _unknown_tag(err: dict) -> str:
    """'unknown fault kind ...' / 'unknown invariant type ...' with the nearest valid name."""
    from gate.contracts import INVARIANTS
    from gate.faults import FAULTS

    field = str(err.get("ctx", {}).get("discriminator", "")).strip("'")
    catalog, what = (FAULTS, "fault kind") if field == "kind" else (INVARIANTS, "invariant type")
    tag = err["input"].get(field) if isinstance(err.get("input"), dict) else None
    close = difflib.get_close_matches(str(tag), list(catalog), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(sorted(catalog))})"
    return f"unknown {what} {tag!r}{hint}"


def parse_yaml(text: str, source: str) -> tuple[Any, dict, Redactor, set[str]]:
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        context = getattr(exc, "context_mark", None)
        began = f" (in the value that starts on line {context.line + 1})" if context else ""
        raise ConfigError(f"{source}:{line}: not valid YAML: {getattr(exc, 'problem', exc)}{began}") from None
    if root is None or not isinstance(root, yaml.MappingNode):
        raise ConfigError(f"{source}:1: the config must be a mapping with at least 'agent' and 'inputs'")
    secret_names = _declared_secrets(root)
    lines: dict = {}
    redactor = Redactor()
    data = _walk(root, (), lines, source, secret_names, redactor)
    return data, lines, redactor, secret_names


def _declared_secrets(root: yaml.MappingNode) -> set[str]:
    for key_node, value_node in root.value:
        if key_node.value == "secrets" and isinstance(value_node, yaml.SequenceNode):
            return {v.value for v in value_node.value if isinstance(v, yaml.ScalarNode)}
    return set()


def load_config(path: str | os.PathLike, overrides: dict[str, Any] | None = None) -> LoadedConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc.strerror}") from None
    data, lines, redactor, _ = parse_yaml(text, str(path))
    for key, value in (overrides or {}).items():
        if value is not None:
            data[key] = value
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = _format_errors(exc, str(path), lines)
        raise ConfigError("invalid config:\n  " + "\n  ".join(problems), problems) from None
    _check_profiles(config, path, lines)
    _check_worlds(config, path, lines)
    # How the run is executed (parallelism, where files go) is not part of what is judged,
    # and the seed is kept apart (reports carry it on its own), so a digest names a shape.
    judged = config.model_dump(mode="json", by_alias=True, exclude={"concurrency", "output", "seed"})
    digest = hashlib.sha256(json.dumps(judged, sort_keys=True).encode()).hexdigest()[:16]
    return LoadedConfig(config=config, path=path.resolve(), lines=lines, redactor=redactor, digest=digest)


def _check_profiles(config: Config, path: Path, lines: dict) -> None:
    """Every named profile exists; an unknown one is reported on the line that names it."""
    from gate.faults.profiles import resolve, search_dirs

    dirs = search_dirs(path.resolve().parent, config.profiles_dir)
    refs = [(("chaos", "profiles", i), name) for i, name in enumerate(config.chaos.profiles)]
    for section, scenarios in (("chaos", config.chaos.scenarios), ("contract", config.contract.scenarios)):
        for i, sc in enumerate(scenarios):
            refs += [((section, "scenarios", i, "profiles", j), name) for j, name in enumerate(sc.profiles)]
    for loc, name in refs:
        line = line_at(lines, loc)
        resolve(name, dirs, f"{path}:{line}: {_dotted(loc)}: ")


def _check_worlds(config: Config, path: Path, lines: dict) -> None:
    from gate.worlds.model import check_world

    problems = []
    for i, world in enumerate(config.worlds):
        for loc, message in check_world(world, ("worlds", i)):
            line = line_at(lines, loc)
            problems.append(f"{path}:{line}: {_dotted(loc)}: {message}")
    if problems:
        raise ConfigError("invalid world:\n  " + "\n  ".join(problems), problems)
