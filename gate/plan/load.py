"""Loading a config to run: the file read and validated, its plan built, every `when` checked on that plan.

A `when` names cells (`stage`, `input`, `mutation`, `scenario`), and only the plan knows
which cells exist, so this check runs here, after the config layer has read and validated
everything else (gate/config/loader.py) and the plan is built. A `when` that matches no
cell would make its invariant test nothing: a problem on its own line (`vacuous`, a warning
under `gate.allow_vacuous: true`). The plan built for the check is kept on the LoadedConfig,
so a run never builds a big plan twice.
"""

from __future__ import annotations

import fnmatch
import os
from typing import Any

from gate.config import STAGES, Config, LoadedConfig, read_config
from gate.config.problems import Loc, Problem, config_error, format_all
from gate.config.references import vacuous
from gate.config.value_checks import all_invariants, hint
from gate.plan.cells import build_plan

WHEN_FIELDS = ("stage", "input", "mutation", "scenario")


def load_config(path: str | os.PathLike, overrides: dict[str, Any] | None = None) -> LoadedConfig:
    """Load and validate a chaos-gate.yaml file; raises ConfigError with file:line on bad input."""
    loaded = read_config(path, overrides)
    plan = build_plan(loaded.config, base_dir=loaded.base_dir)
    problems = when_problems(loaded.config, [cell.facts() for cell in plan])
    source = loaded.source or str(loaded.path)
    if loaded.config.gate.allow_vacuous:
        loaded.warnings += format_all(source, loaded.lines, [p for p in problems if p.vacuous])
        problems = [p for p in problems if not p.vacuous]
    if problems:
        raise config_error(list(dict.fromkeys(format_all(source, loaded.lines, problems))))
    loaded.plan = plan
    return loaded


# --- `when`: every pattern must select at least one cell of the plan --------------------------

def _patterns(wanted: str | list[str], loc: Loc) -> list[tuple[Loc, str]]:
    if isinstance(wanted, str):
        return [(loc, wanted)]
    return [(loc + (k,), p) for k, p in enumerate(wanted)]


def _field_problem(field: str, pattern: str, loc: Loc, facts: list[dict]) -> Problem | None:
    values = sorted({f[field] for f in facts if f[field] is not None})
    if field == "stage" and not fnmatch.filter(STAGES, pattern):
        return Problem(loc, f"unknown stage '{pattern}'{hint(pattern, STAGES)}")
    if fnmatch.filter(values, pattern):
        return None
    if field == "stage":
        return vacuous(loc, f"the plan has no {pattern} cells, so this `when` applies to no cell")
    return vacuous(loc, f"when.{field} '{pattern}' matches no cell of the plan{hint(pattern, values)}")


def when_problems(config: Config, facts: list[dict]) -> list[Problem]:
    out = []
    for loc, inv in all_invariants(config):
        when = inv.when
        if when is None:
            continue
        found = [_field_problem(field, pattern, at, facts)
                 for field in WHEN_FIELDS if getattr(when, field) is not None
                 for at, pattern in _patterns(getattr(when, field), loc + ("when", field))]
        found = [p for p in found if p is not None]
        if not found and not any(when.matches(f) for f in facts):
            found.append(vacuous(loc + ("when",), f"no cell of the plan matches every condition of this `when`, so "
                                                  f"'{inv.id}' is never checked"))
        out += found
    return out
