"""faultbench world files, read as they are: `services.<svc>.records.<type>`, `seed.count`, operations
with `kind` / `record` / `filter` / `handler: module.func`, and the `faults:` block.

The file becomes a gate world (gate/worlds/model.py) — records by type name, faultbench's
sequential ids ("1", "2", …), its `seed:` seeding the generated data, its handlers imported
from the file's directory (and its parent), `service.operation` fault keys — so its rule
modules run unchanged (`func(world, clock, **args)`, gate/worlds/custom.py). Every problem
is reported against the faultbench file's own key path, e.g.
`services.orders.operations.create_return.handler`.
"""

from __future__ import annotations

import difflib
import re

ENUM = re.compile(r"^enum\[(.*)\]$")
REF = re.compile(r"^ref\[([\w.]+)\]$")
TOP = ("name", "seed", "services", "faults", "description")
SERVICE = ("records", "seed", "operations", "description")
OPERATION = ("kind", "record", "filter", "handler", "description")


def is_faultbench(doc) -> bool:
    return isinstance(doc, dict) and "services" in doc and "types" not in doc and "operations" not in doc


def _unknown(body: dict, known: tuple, loc: tuple) -> list[tuple[tuple, str]]:
    out = []
    for key in body:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            out.append((loc + (key,), f"unknown key '{key}'" + (f" (did you mean '{close[0]}'?)" if close else
                                                                f" (known: {', '.join(known)})")))
    return out


def field_type(raw, loc: tuple) -> tuple[object, list]:
    if not isinstance(raw, str):
        return "str", [(loc, f"a faultbench field type is a string (str, int, float, bool, datetime, enum[a, b], "
                             f"ref[service.record]), not {raw!r}")]
    raw = raw.strip()
    if match := ENUM.match(raw):
        members = [m.strip() for m in match.group(1).split(",") if m.strip()]
        return ({"enum": members}, []) if members else ("str", [(loc, f"enum type has no members: {raw!r}")])
    if match := REF.match(raw):
        return {"ref": match.group(1).split(".")[-1]}, []
    return raw, []  # a scalar, or a wrong name the world checks report with a 'did you mean'


def convert(doc: dict) -> tuple[dict, list[tuple[tuple, str]], dict[tuple, tuple]]:
    """(a gate world's data, problems at faultbench key paths, gate key path -> faultbench key path)."""
    problems = _unknown(doc, TOP, ())
    where: dict[tuple, tuple] = {("name",): ("name",), ("data_seed",): ("seed",), ("faults",): ("faults",)}
    types: dict = {}
    generate: dict = {}
    operations: dict = {}
    owner: dict[str, str] = {}
    services = doc.get("services")
    if not isinstance(services, dict):
        return {}, [(("services",), "'services' must be a mapping of service name -> service")], where
    for svc, body in services.items():
        at = ("services", svc)
        if not isinstance(body, dict):
            problems.append((at, "a service is a mapping with records, seed and operations"))
            continue
        problems += _unknown(body, SERVICE, at)
        for rname, fields in (body.get("records") or {}).items():
            rat = at + ("records", rname)
            if rname in owner:
                problems.append((rat, f"record name '{rname}' is also defined in service '{owner[rname]}': "
                                      "record names are unique across the world"))
            owner[rname] = svc
            if not isinstance(fields, dict):
                problems.append((rat, "a record is a mapping of field -> type"))
                continue
            converted = {}
            for fname, raw in fields.items():
                converted[fname], more = field_type(raw, rat + (fname,))
                problems += more
                where[("types", rname, "fields", fname)] = rat + (fname,)
            types[rname] = {"fields": converted, "ids": "sequential"}
            where[("types", rname)] = rat
            count = (body.get("seed") or {}).get("count", 0) if isinstance(body.get("seed"), dict) else 0
            if count:
                generate[rname] = count
                where[("seed", "generate", rname)] = at + ("seed", "count")
        for oname, op in (body.get("operations") or {}).items():
            oat = at + ("operations", oname)
            if not isinstance(op, dict):
                problems.append((oat, "an operation is a mapping with kind, record, filter or handler"))
                continue
            problems += _unknown(op, OPERATION, oat)
            native = {"op": op.get("kind"), "service": svc}
            for ours, theirs in (("op", "kind"), ("type", "record"), ("filters", "filter"), ("function", "handler"),
                                 ("description", "description")):
                where[("operations", oname, ours)] = oat + (theirs,)
            if op.get("record") is not None:
                native["type"] = op["record"]
            if op.get("filter"):
                native["filters"] = op["filter"]
            if op.get("handler") is not None:
                native["function"] = op["handler"]
            if op.get("description") is not None:
                native["description"] = op["description"]
            if op.get("kind") == "custom" and not op.get("handler"):
                problems.append((oat, f"custom operation '{oname}' needs a handler: module.func"))
            if op.get("kind") != "custom" and not op.get("record"):
                problems.append((oat, f"operation '{oname}' ({op.get('kind')}) needs a record"))
            if oname in operations:
                problems.append((oat, f"operation '{oname}' is also defined in another service"))
            operations[oname] = native
            where[("operations", oname)] = oat
    world = {"name": doc.get("name"), "types": types, "seed": {"generate": generate}, "operations": operations,
             "allow_code": True, "faults": doc.get("faults") or {}}
    if doc.get("seed") is not None:
        world["data_seed"] = doc["seed"]
    if doc.get("name") is None:
        problems.append(((), "a faultbench world file needs a top-level 'name'"))
    return world, problems, where


def their_loc(loc: tuple, where: dict[tuple, tuple]) -> tuple:
    """A gate key path in faultbench's terms: the longest mapped prefix, then the rest as it is."""
    for n in range(len(loc), 0, -1):
        if loc[:n] in where:
            return where[loc[:n]] + tuple(loc[n:])
    return loc
