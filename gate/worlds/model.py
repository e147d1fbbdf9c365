"""World files: record types, seed data and operations of a fake, stateful tool service.

Field types are `str`, `int`, `float`, `bool`, `datetime`, `{enum: [...]}`, `{ref: type}`,
`{object: {field: type}}` and `{list: type}`. `check_world` validates what pydantic cannot
(type names, refs, seed ids) and reports the exact line with a fix.
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import Field

from gate.contracts.base import StrictModel

SCALARS = ("str", "int", "float", "bool", "datetime")
COMPOUND = ("enum", "ref", "object", "list")


class RecordType(StrictModel):
    fields: dict[str, Any] = Field(description="field name -> type (str, int, float, bool, datetime, "
                                               "{enum: [...]}, {ref: type}, {object: {...}}, {list: type})")
    key: str = "id"
    sync_lag: float = Field(default=0.0, ge=0, description="Seconds before a new record shows up in lists.")


class Operation(StrictModel):
    op: Literal["get", "list", "create", "update", "delete", "custom"]
    type: str | None = None
    filters: list[str] = Field(default_factory=list)
    function: str | None = Field(default=None, description="custom: 'module:function' (runs code; needs allow_code)")
    description: str | None = None


class SeedData(StrictModel):
    rows: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    generate: dict[str, int] = Field(default_factory=dict, description="type -> how many seeded random rows")


class World(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    env: str = Field(description="Env var the agent reads the world's HTTP base URL from.")
    mcp_env: str | None = Field(default=None, description="Env var for its MCP (streamable HTTP) endpoint.")
    types: dict[str, RecordType]
    seed: SeedData = Field(default_factory=SeedData)
    operations: dict[str, Operation]
    allow_code: bool = Field(default=False, description="Allow custom operations (they execute Python).")


def _suggest(word: str, options) -> str:
    close = difflib.get_close_matches(str(word), list(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else f" (use one of: {', '.join(options)})"


def field_problems(spec: Any, types: dict, loc: tuple) -> list[tuple[tuple, str]]:
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


def check_world(world: World, loc: tuple) -> list[tuple[tuple, str]]:
    problems = []
    for tname, rtype in world.types.items():
        for fname, spec in rtype.fields.items():
            problems += field_problems(spec, world.types, loc + ("types", tname, "fields", fname))
    for tname, rows in world.seed.rows.items():
        if tname not in world.types:
            problems.append((loc + ("seed", "rows", tname), f"seed rows for unknown type '{tname}'"
                                                           f"{_suggest(tname, world.types)}"))
            continue
        key, seen = world.types[tname].key, set()
        for n, row in enumerate(rows):
            rid = row.get(key)
            if rid is None:
                problems.append((loc + ("seed", "rows", tname, n), f"seed row has no '{key}'"))
            elif rid in seen:
                problems.append((loc + ("seed", "rows", tname, n), f"duplicate {tname} id {rid!r}: ids must be unique"))
            seen.add(rid)
            for field in row:
                if field not in world.types[tname].fields and field != key:
                    problems.append((loc + ("seed", "rows", tname, n, field),
                                     f"unknown field '{field}' of {tname}{_suggest(field, world.types[tname].fields)}"))
    for oname, op in world.operations.items():
        if op.op != "custom" and op.type not in world.types:
            problems.append((loc + ("operations", oname, "type"), f"operation on unknown type '{op.type}'"
                                                                  f"{_suggest(op.type, world.types)}"))
        if op.op == "custom" and not world.allow_code:
            problems.append((loc + ("operations", oname), "custom operations run Python: set allow_code: true"))
        if op.op == "custom" and not op.function:
            problems.append((loc + ("operations", oname), "custom operation needs function: 'module:function'"))
    return problems
