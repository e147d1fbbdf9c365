"""World files on their own (`chaos-gate world serve FILE`, the pytest plugin's `chaos_world(FILE)`)
and `worlds: [{faultbench: FILE}]` in a config: read, converted, checked, with `file:line` errors.

A world file is a gate world (the mapping one `worlds:` entry holds) or a faultbench world
file (gate/worlds/faultbench.py). Custom operations are imported from the file's
directory at load, so a missing module is an error on its own line.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from pydantic import ValidationError

from gate.config.problems import Problem, config_error, format_all
from gate.errors import ConfigError
from gate.worlds import faultbench
from gate.worlds.checks import check_world
from gate.worlds.model import World, env_name

OVERRIDES = ("name", "env", "mcp_env", "faults_apply")


def _pydantic_problems(exc: ValidationError) -> list[tuple[tuple, str]]:
    out = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))
        if err["type"] == "extra_forbidden":
            from gate.config.schema_walk import model_for_path

            model = model_for_path(World, loc[:-1])
            names = list(model.model_fields) if model is not None else []
            close = difflib.get_close_matches(str(loc[-1]), names, n=1)
            out.append((loc, f"unknown key '{loc[-1]}'" + (f" (did you mean '{close[0]}'?)" if close else "")))
        elif err["type"] == "missing":
            out.append((loc[:-1], f"required key '{loc[-1]}' is missing"))
        else:
            out.append((loc, err["msg"].removeprefix("Value error, ")))
    return out


def read_world_data(path: Path) -> tuple[object, dict]:
    from gate.config.source import read_config_text
    from gate.config.yaml_nodes import Walk, compose

    text = read_config_text(path)
    root = compose(text, str(path))
    walk = Walk(set())
    data = walk.value(root, ()) if root is not None else None
    if walk.problems:
        raise config_error(format_all(str(path), walk.lines, walk.problems))
    return data, walk.lines


def load_world_file(path: str | Path, overrides: dict | None = None) -> World:
    """The world a file describes, checked and ready to serve; a ConfigError with every problem."""
    path = Path(path).resolve()
    if not path.is_file():
        raise ConfigError(f"{path}: no such world file")
    data, lines = read_world_data(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: a world file is a mapping (a gate world, or a faultbench world with services:)")
    where: dict = {}
    problems: list[tuple[tuple, str]] = []
    if faultbench.is_faultbench(data):
        data, problems, where = faultbench.convert(data)
        data["source"] = str(path)
    data = {**data, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    data.setdefault("code_dir", str(path.parent))
    world = None
    if not problems:
        try:
            world = World.model_validate(data)
        except ValidationError as exc:
            problems += _pydantic_problems(exc)
    if world is not None and not problems:
        problems += check_world(world, (), base_dir=path.parent)
    if problems:
        located = [Problem(faultbench.their_loc(loc, where) if where else loc, message) for loc, message in problems]
        raise config_error(format_all(str(path), lines, located))
    if world.source and world.mcp_env is None:  # a faultbench world is an MCP server first
        world.mcp_env = env_name(world.name, "_MCP_URL")
    return world


def world_problems(config, base_dir: Path) -> list[Problem]:
    """Expand `worlds: [{faultbench: FILE}]` in place, anchor code to the config's directory, and check
    every world (custom operations imported); problems on the config's lines."""
    out: list[Problem] = []
    base_dir = Path(base_dir).resolve()
    for i, world in enumerate(config.worlds):
        loc = ("worlds", i)
        if world.faultbench is not None:
            try:
                overrides = {k: getattr(world, k) for k in OVERRIDES if k in world.model_fields_set}
                config.worlds[i] = load_world_file(base_dir / world.faultbench, overrides)
            except ConfigError as exc:
                out.append(Problem(loc + ("faultbench",), str(exc)))
            continue
        world.code_dir = str(base_dir / world.code_dir) if world.code_dir else str(base_dir)
        out += [Problem(at, message) for at, message in check_world(world, loc, base_dir=base_dir)]
    return out
