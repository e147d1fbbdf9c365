"""YAML text to data with the line of every key, and pydantic's errors worded for a person.

The first passes of loading (gate/config/loader.py), apart because profiles
(gate/config/profiles.py) and world files are read the same way: a bounded node tree
with the line of every key path, then each validation error as `key.path: message`
with the nearest valid key or catalog name. Nothing here knows what the config means.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from gate.config.models import Config
from gate.config.problems import Problem, config_error, format_all
from gate.config.secrets import Redactor
from gate.config.yaml_nodes import Walk, compose, declared_secrets
from gate.errors import ConfigError

Path_ = tuple[Any, ...]


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


def format_errors(exc: ValidationError, source: str, lines: dict) -> list[str]:
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
    data, lines, redactor, secret_names, problems, _ = parse_text(text, source)
    if problems:
        raise config_error(format_all(source, lines, problems))
    return data, lines, redactor, secret_names


def parse_text(text: str, source: str):
    """Data, lines, redactor, secret names, YAML-level problems and the environment variables used."""
    root = compose(text, source)
    if root is None or not isinstance(root, yaml.MappingNode):
        raise ConfigError(f"{source}:1: the config must be a mapping with at least 'agent' and 'inputs'")
    secret_names = declared_secrets(root)
    # every secret of the gate's environment, whether or not the config references it
    redactor = Redactor.for_environment(os.environ, secret_names)
    walk = Walk(secret_names, redactor=redactor)
    data = walk.value(root, ())
    return data, walk.lines, redactor, secret_names, walk.problems, walk.env_used
