"""Tool-call arguments that are well-formed JSON and break the tool's schema the way real models do. Pure.

A model with tools that are not strict does not send garbage; it sends an object that parses and is
wrong: a required field left out, a number where the schema says string ("amount": 50 for "50.00")
or a string where it says number, a value outside the schema's enum ("Express" for "express") or
range. Agent code that trusts the schema it offered crashes on exactly these (`None <= 5`,
`"Paid " + 50`), and no unparsable argument ever shows it.

`break_arguments` picks one such change for one top-level field, seeded by the caller's RNG (the
cell's, so a run and its reproduction break the same field the same way), and says what it did.
Every candidate is checked with `jsonschema` against the schema it must break: a change the schema
would still accept (a union type, a loose enum) is never offered.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

VARIANTS = ("missing", "wrong_type", "outside")  # the families, in the order a seeded draw sees them
JSON_TYPE = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object",
             type(None): "null"}


@dataclass(frozen=True)
class Broken:
    arguments: dict
    field: str
    variant: str  # missing | wrong_type | outside
    why: str  # in words: "'amount' is the number 50 where the schema says string"


def break_arguments(schema: dict | None, arguments: dict, rng: random.Random, variant: str = "any") -> Broken | None:
    """One seeded change of `arguments` that `schema` rejects; None when the schema offers nothing to break
    (no schema, no required or typed field, or a `variant` with no candidate)."""
    if not isinstance(schema, dict) or not isinstance(arguments, dict):
        return None
    found = {name: _present([c for c in make(schema, arguments) if _rejected(schema, c.arguments)], arguments)
             for name, make in (("missing", _missing), ("wrong_type", _wrong_types), ("outside", _outside))}
    families = [v for v in VARIANTS if found[v] and variant in ("any", v)]
    if not families:
        return None
    return rng.choice(found[rng.choice(families)])


def _present(candidates: list[Broken], arguments: dict) -> list[Broken]:
    """A field the model did send is the one it gets wrong; an optional one it left out, only failing that."""
    return [c for c in candidates if c.field in arguments] or candidates


def _properties(schema: dict) -> dict[str, dict]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return {}
    return {name: _resolve(sub, schema) for name, sub in props.items() if isinstance(sub, dict)}


def _resolve(sub: dict, root: dict, depth: int = 0) -> dict:
    """A property's schema with a local `$ref` followed (pydantic puts enums under `$defs`)."""
    ref = sub.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/") or depth > 8:
        return sub
    target = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, dict) else None
    return _resolve(target, root, depth + 1) if isinstance(target, dict) else sub


def _types(sub: dict, root: dict) -> set[str]:
    """The JSON types a property allows; empty when the schema does not say."""
    kind = sub.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    out: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for member in sub.get(key) or []:
            if isinstance(member, dict):
                out |= _types(_resolve(member, root), root) or {"any"}
    if "enum" in sub and isinstance(sub["enum"], list):
        out |= {JSON_TYPE.get(type(v), "any") for v in sub["enum"]}
    return set() if "any" in out else out


def _missing(schema: dict, args: dict) -> list[Broken]:
    required = [r for r in schema.get("required") or [] if isinstance(r, str) and r in args]
    return [Broken({k: v for k, v in args.items() if k != name}, name, "missing", f"required '{name}' is missing")
            for name in required]


def _wrong_types(schema: dict, args: dict) -> list[Broken]:
    out = []
    for name, sub in _properties(schema).items():
        allowed = _types(sub, schema)
        value = _mistyped(allowed, args.get(name))
        if allowed and value is not _NONE:
            said, kind = " or ".join(sorted(allowed)), JSON_TYPE.get(type(value), "value")
            what = "null" if value is None else f"{json.dumps(value)} (a{'n' * (kind[0] in 'aeiou')} {kind})"
            out.append(Broken({**args, name: value}, name, "wrong_type",
                              f"'{name}' is {what} where the schema says {said}"))
    return out


_NONE = object()


def _mistyped(allowed: set[str], value):
    """The value as a model mistypes it: a number for a string (its digits when it has them), the
    string of a number or boolean, a list or object sent as its JSON text; _NONE when none fits."""
    core = allowed - {"null"}  # an optional field (`anyOf: [{type: string}, {type: null}]`) is mistyped alike
    numeric = core & {"number", "integer"}
    if "string" in core and not numeric:
        return _as_number(value)
    if numeric and "string" not in core:
        return str(value if isinstance(value, (int, float)) and not isinstance(value, bool) else 10)
    if core == {"boolean"}:
        return "true" if value is not False else "false"
    if core == {"array"}:
        return ", ".join(str(v) for v in value) if isinstance(value, list) and value else "[]"
    if core == {"object"}:
        return json.dumps(value if isinstance(value, dict) else {})
    return None if core and "null" not in allowed else _NONE  # a mix of types: null is none of them


def _as_number(value):
    text = value.strip() if isinstance(value, str) else ""
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            continue
    return 1


def _outside(schema: dict, args: dict) -> list[Broken]:
    out = []
    for name, sub in _properties(schema).items():
        enum = sub.get("enum")
        if isinstance(enum, list) and enum:
            value = _off_enum(enum, args.get(name, enum[0]))
            if value is not None:
                out.append(Broken({**args, name: value}, name, "outside",
                                  f"'{name}' is {json.dumps(value)}, not one of {json.dumps(enum)}"))
        for value, why in _off_range(sub, args.get(name)):
            out.append(Broken({**args, name: value}, name, "outside", f"'{name}' is {value}, {why}"))
    return out


def _off_enum(enum: list, current):
    """A near miss, as models make them: the value in another case, else a number past the enum's."""
    if isinstance(current, str):
        for near in (current.upper(), current.capitalize(), current.lower(), current.replace("_", " "), current + "s"):
            if near not in enum:
                return near
    numbers = [v for v in enum if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return max(numbers) + 1 if numbers else None


def _off_range(sub: dict, current) -> list[tuple]:
    integer = "integer" in _types(sub, sub) or isinstance(current, int)
    step = 1 if integer else 0.5
    out = []
    for key, sign, words in (("minimum", -1, "below its minimum"), ("exclusiveMinimum", 0, "not above its minimum"),
                             ("maximum", 1, "above its maximum"), ("exclusiveMaximum", 0, "not below its maximum")):
        bound = sub.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            out.append((bound + sign * step, f"{words} {bound}"))
    return out


def _rejected(schema: dict, arguments: dict) -> bool:
    """Does the schema reject these arguments? A schema jsonschema cannot read is trusted to, as built."""
    import jsonschema  # not at import: every config loads the fault catalog, few run this fault

    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        return not cls(schema).is_valid(arguments)
    except Exception:  # noqa: BLE001 - the agent's own schema: a remote $ref, a bad pattern, ...
        return True
