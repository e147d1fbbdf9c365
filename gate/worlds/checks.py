"""Load-time checks of a world: what pydantic cannot see, each on the line of the key at fault.

Type names, refs, seed ids and fields, filters, fault keys, and custom operations: a
custom operation's module is imported here, relative to the config (or the faultbench
world file), so a missing module or function is a config error on its own line, never a
surprise at the first call.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from gate.worlds.model import COMPOUND, SCALARS, World


def _suggest(word: str, options) -> str:
    options = list(options)
    close = difflib.get_close_matches(str(word), options, n=1)
    return f" (did you mean '{close[0]}'?)" if close else (f" (use one of: {', '.join(options)})" if options else "")


def field_problems(spec, types: dict, loc: tuple) -> list[tuple[tuple, str]]:
    if isinstance(spec, str):
        return [] if spec in SCALARS else [(loc, f"unknown field type '{spec}'{_suggest(spec, SCALARS)}")]
    if isinstance(spec, dict) and len(spec) == 1:
        (kind, arg), = spec.items()
        if kind == "enum":
            return [] if isinstance(arg, list) and arg else [(loc + ("enum",), "enum needs a non-empty list")]
        if kind == "ref":
            return [] if arg in types else [(loc + ("ref",), f"ref to unknown record type '{arg}'"
                                                               f"{_suggest(arg, types)}")]
        if kind == "object" and isinstance(arg, dict):
            return [p for name, sub in arg.items() for p in field_problems(sub, types, loc + ("object", name))]
        if kind == "list":
            return field_problems(arg, types, loc + ("list",))
        return [(loc, f"unknown field type '{kind}'{_suggest(kind, COMPOUND)}")]
    return [(loc, f"a field type is a name ({', '.join(SCALARS)}) or one of {{enum|ref|object|list: ...}}")]


def check_world(world: World, loc: tuple, base_dir: Path | None = None) -> list[tuple[tuple, str]]:
    """(key path, message) for every problem; `base_dir` set: custom operations are imported too."""
    problems = []
    for tname, rtype in world.types.items():
        for fname, spec in rtype.fields.items():
            problems += field_problems(spec, world.types, loc + ("types", tname, "fields", fname))
        if rtype.age_field is not None and rtype.fields.get(rtype.age_field) != "datetime":
            problems.append((loc + ("types", tname, "age_field"), f"age_field '{rtype.age_field}' is not a datetime "
                                                                  f"field of {tname}"))
    problems += _seed_problems(world, loc)
    for oname, op in world.operations.items():
        at = loc + ("operations", oname)
        if op.op != "custom" and op.type not in world.types:
            problems.append((at + ("type",), f"operation on unknown type '{op.type}'{_suggest(op.type, world.types)}"))
            continue
        if op.op == "list":
            fields = world.types[op.type].fields
            problems += [(at + ("filters", i), f"no field '{f}' in {op.type}{_suggest(f, fields)}")
                         for i, f in enumerate(op.filters) if f not in fields and f != world.types[op.type].key]
        if op.op == "custom":
            problems += _custom_problems(world, op, at, base_dir)
    problems += _fault_key_problems(world, loc)
    return problems


def _seed_problems(world: World, loc: tuple) -> list[tuple[tuple, str]]:
    from gate.worlds.values import datetime_problem

    problems = []
    for tname, rows in world.seed.rows.items():
        if tname not in world.types:
            problems.append((loc + ("seed", "rows", tname), f"seed rows for unknown type '{tname}'"
                                                           f"{_suggest(tname, world.types)}"))
            continue
        rtype = world.types[tname]
        key, seen = rtype.key, set()
        for n, row in enumerate(rows):
            rid = row.get(key)
            if rid is None:
                problems.append((loc + ("seed", "rows", tname, n), f"seed row has no '{key}'"))
            elif rid in seen:
                problems.append((loc + ("seed", "rows", tname, n), f"duplicate {tname} id {rid!r}: ids must be unique"))
            seen.add(rid)
            for field, value in row.items():
                if field not in rtype.fields and field != key:
                    problems.append((loc + ("seed", "rows", tname, n, field),
                                     f"unknown field '{field}' of {tname}{_suggest(field, rtype.fields)}"))
                elif rtype.fields.get(field) == "datetime" and (why := datetime_problem(value)):
                    problems.append((loc + ("seed", "rows", tname, n, field), why))
    for tname in world.seed.generate:
        if tname not in world.types:
            problems.append((loc + ("seed", "generate", tname), f"cannot generate unknown type '{tname}'"
                                                               f"{_suggest(tname, world.types)}"))
    return problems


def _custom_problems(world: World, op, at: tuple, base_dir: Path | None) -> list[tuple[tuple, str]]:
    if not world.allow_code:
        return [(at, "custom operations run Python: set allow_code: true")]
    if not op.function:
        return [(at, "custom operation needs function: 'module:function'")]
    if base_dir is None:
        return []
    from gate.worlds.custom import CodeError, resolve

    try:
        resolve(op.function, code_dir(world, base_dir))
    except CodeError as exc:
        return [(at + ("function",), str(exc))]
    return []


def code_dir(world: World, base_dir: Path) -> Path:
    return (Path(base_dir) / world.code_dir) if world.code_dir else Path(base_dir)


def _fault_key_problems(world: World, loc: tuple) -> list[tuple[tuple, str]]:
    keys = {"default", *world.operations}
    keys |= {f"{op.service}.{name}" for name, op in world.operations.items() if op.service}
    return [(loc + ("faults", key), f"no operation '{key}' to fault{_suggest(key, sorted(keys))}")
            for key in world.faults if key not in keys]
