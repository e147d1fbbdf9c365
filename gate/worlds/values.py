"""Values of a world's fields: what a write may store, datetimes (absolute or relative to the clock), fakes.

A write is checked field by field against the record type before anything is stored:
`total: "not-a-number"` on a float, `status: "bogus"` on an enum, an id a `ref` does
not find, are all named in one clear tool error, and the table is left as it was.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta, UTC

from gate.worlds.model import seconds_of

WORDS = ["alpha", "blue", "cedar", "delta", "ember", "fjord", "gale", "harbor"]
RELATIVE = re.compile(r"^\s*(now)?\s*([+-])\s*(.+)$|^\s*now\s*$")
SEED_WINDOW = 20 * 86400  # generated datetimes fall in the 20 days before the clock's start


def parse_datetime(value, start: datetime | None = None) -> datetime:
    """An ISO-8601 string (a `Z` or no zone means UTC), a datetime, or relative to `start`:
    `now`, `-2h`, `now-30d`, `+15m`."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        raise ValueError(f"expected an ISO-8601 datetime string, got {type(value).__name__} {value!r}")
    rel = RELATIVE.match(value)
    if rel and (rel.group(2) or value.strip() == "now"):
        base = start or datetime.now(UTC)
        if not rel.group(2):
            return base
        delta = timedelta(seconds=seconds_of(rel.group(3)))
        return base + delta if rel.group(2) == "+" else base - delta
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO-8601 datetime (e.g. 2026-01-01T09:30:00Z), nor relative "
                         "to the clock (now, -2h, -30d)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def datetime_problem(value) -> str | None:
    try:
        parse_datetime(value, datetime(2000, 1, 1, tzinfo=UTC))
    except ValueError as exc:
        return str(exc)
    return None


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _type_name(value) -> str:
    return "null" if value is None else {bool: "boolean", int: "integer", float: "number", str: "string",
                                         list: "list", dict: "object"}.get(type(value), type(value).__name__)


def value_problems(spec, value, name: str, refs) -> list[str]:
    """Why `value` cannot be stored in a field of type `spec`; `refs(type, id)` says whether a ref exists."""
    if value is None:
        return []  # an unset field
    if isinstance(spec, str):
        ok = {"str": isinstance(value, str), "bool": isinstance(value, bool),
              "int": isinstance(value, int) and not isinstance(value, bool),
              "float": isinstance(value, (int, float)) and not isinstance(value, bool)}.get(spec)
        if spec == "datetime":
            why = datetime_problem(value)
            return [f"{name}: {why}"] if why else []
        return [] if ok else [f"{name}: expected {spec}, got {_type_name(value)} {value!r}"]
    (kind, arg), = spec.items()
    if kind == "enum":
        return [] if value in arg else [f"{name}: {value!r} is not one of {', '.join(map(str, arg))}"]
    if kind == "ref":
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            return [f"{name}: expected the id of a {arg}, got {_type_name(value)} {value!r}"]
        return [] if refs(arg, str(value)) else [f"{name}: no {arg} with id {str(value)!r}"]
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{name}: expected an object, got {_type_name(value)} {value!r}"]
        unknown = [f"{name}.{k}: unknown field (known: {', '.join(arg)})" for k in value if k not in arg]
        return unknown + [p for k, sub in arg.items() for p in value_problems(sub, value.get(k), f"{name}.{k}", refs)]
    if not isinstance(value, list):
        return [f"{name}: expected a list, got {_type_name(value)} {value!r}"]
    return [p for i, item in enumerate(value) for p in value_problems(arg, item, f"{name}[{i}]", refs)]


def stored(spec, value, start: datetime):
    """The value as stored: datetimes normalised to UTC ISO strings, the rest as given."""
    if value is None:
        return None
    if spec == "datetime":
        return iso(parse_datetime(value, start))
    if isinstance(spec, dict) and "object" in spec and isinstance(value, dict):
        return {k: stored(spec["object"].get(k), v, start) for k, v in value.items()}
    if isinstance(spec, dict) and "list" in spec and isinstance(value, list):
        return [stored(spec["list"], v, start) for v in value]
    return value


def fake_value(spec, rng: random.Random, start: datetime):
    if spec == "str":
        return f"{rng.choice(WORDS)}-{rng.randrange(1000)}"
    if spec == "int":
        return rng.randrange(1, 1000)
    if spec == "float":
        return round(rng.uniform(1, 500), 2)
    if spec == "bool":
        return rng.random() < 0.5
    if spec == "datetime":
        return iso(start - timedelta(seconds=rng.randrange(3600, SEED_WINDOW)))
    (kind, arg), = spec.items()
    if kind == "enum":
        return rng.choice(arg)
    if kind == "ref":
        return None  # filled in after every table exists
    if kind == "object":
        return {k: fake_value(v, rng, start) for k, v in arg.items()}
    return [fake_value(arg, rng, start) for _ in range(rng.randrange(1, 3))]
