"""What a user's message names, put where a tool's parameters take it: the keyless walk's arguments. Pure.

A model filling a tool's arguments takes them from the conversation: the number after "order" goes to
`order_id`, an email to the email parameter, a quoted phrase or a salient word to a query or a name,
and an identifier the agent's instructions give (`"customer_id": "123"` in its system prompt) where the
message names none — never a filler word of the message ("customer_id: hm"). gate/sim/walk.py draws
arguments from the schema, then fills them here; each fill is kept only if the whole still validates.
Split from the walk so that each reads as one thing: which tools, and what goes in them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import jsonschema

_STOPWORDS = """
a about after all also am an and any are as at be been but by can could did do does for from get give got had
has have he her him his how i if in into is it its just let me more my need no not now of off on one or our out
please set she so some than that the their them then there these they this those to up us use want was we were
what when where which who why will with would you your
"""
STOPWORDS = frozenset(_STOPWORDS.split())
# parameter-name words that say what goes in it
ID_HINTS = frozenset({"id", "ids", "order", "number", "num", "no", "ref", "reference", "code", "account", "invoice",
                      "ticket", "booking", "sku", "item", "amount", "count", "quantity", "qty"})
EMAIL_HINTS = frozenset({"email", "mail", "e-mail"})
TEXT_HINTS = frozenset({"query", "q", "search", "term", "terms", "text", "question", "keyword", "keywords", "prompt",
                        "message", "topic"})
NAME_HINTS = frozenset({"name", "city", "location", "place", "country", "user", "customer", "username", "title",
                        "product", "destination", "origin"})
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?![\w]|\.\d)")
QUOTED = re.compile(r"\"([^\"]+)\"|(?<!\w)'([^']+)'(?!\w)|“([^”]+)”")
WORD = re.compile(r"[A-Za-z][A-Za-z-]*")


def split_words(text: str) -> list[str]:
    """Lowercase words of a name or a sentence: `lookupOrder`, `lookup_order` -> lookup, order."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text or "")
    return re.findall(r"[a-z]+", spaced.lower())


def words(text: str) -> set[str]:
    """What a text is about: its words, stopwords aside, a plural read as its singular."""
    out = set()
    for word in split_words(text):
        if word not in STOPWORDS and len(word) > 1:
            out.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return out


def given_values(schema: dict, instructions: str) -> dict:
    """Values the instructions give an identifier parameter by its name (`"customer_id": "123"`,
    `customer_id: 123`, `customer id is 123`)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    out = {}
    for name in props if isinstance(props, dict) and instructions else ():
        if not set(split_words(name)) & ID_HINTS:
            continue
        spelled = r"[\s_-]*".join(map(re.escape, split_words(name)))
        found = re.search(rf"[\"']?{spelled}[\"']?\s*(?::|=|is)\s*[\"']?([A-Za-z0-9][\w.-]{{0,63}})", instructions,
                          re.IGNORECASE)
        if found:
            out[name] = found.group(1)
    return out


def valid(value: Any, schema: dict) -> bool:
    try:
        cls = jsonschema.validators.validator_for(schema or {}, default=jsonschema.Draft202012Validator)
        return cls(schema or {}).is_valid(value)
    except Exception:  # noqa: BLE001 - a bad schema or one whose $ref cannot be resolved: nothing validates
        return False


# -- what the input names -------------------------------------------------------------------------
@dataclass
class Named:
    """What the input names, each used once: numbers (with the word before each), emails, quoted
    phrases, salient words."""

    numbers: list[tuple[str, str]]
    emails: list[str]
    phrases: list[str]
    salient: list[str]

    @classmethod
    def of(cls, text: str, skip: set[str]) -> Named:
        emails = EMAIL.findall(text)
        rest = EMAIL.sub(" ", text)
        phrases = [next(g for g in m.groups() if g) for m in QUOTED.finditer(rest)]
        numbers = [(m.group(1), (split_words(rest[:m.start()]) or [""])[-1]) for m in NUMBER.finditer(rest)]
        plain = [w for w in WORD.findall(QUOTED.sub(" ", rest)) if words(w) and not words(w) & skip]
        proper = [w for i, w in enumerate(plain) if w[0].isupper() and i > 0]  # a name, not the first word
        return cls(numbers, emails, phrases, list(dict.fromkeys(proper + plain)))


def _kind(schema: Any) -> str:
    """The JSON type a parameter takes (the first non-null of a union)."""
    if not isinstance(schema, dict):
        return ""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "")
    if not kind:
        option = next((o for o in schema.get("anyOf") or schema.get("oneOf") or []
                       if isinstance(o, dict) and o.get("type") != "null"), None)
        return _kind(option) if option else ""
    return kind


def _number(named: Named, hints: set[str], kind: str) -> Any:
    """The input's number for a parameter: the one after a word of its name ("order 4417" for
    `order_id`), else the first; an integer parameter takes whole numbers only."""
    fits = [(n, before) for n, before in named.numbers if kind != "integer" or "." not in n]
    pick = next((p for p in fits if p[1] in hints), fits[0] if fits else None)
    if pick is None:
        return None
    named.numbers.remove(pick)
    return pick[0] if kind == "string" else int(pick[0]) if kind == "integer" else float(pick[0])


def _pop(pool: list[str]) -> str | None:
    return pool.pop(0) if pool else None


def _for(name: str, prop: dict, named: Named) -> Any:
    """What the input names for a parameter, by its name's hints and its type; None: nothing fits."""
    hints, kind = set(split_words(name)), _kind(prop)
    enum = prop.get("enum") if isinstance(prop, dict) else None
    if enum:  # an option the input says
        said = {w.casefold() for w in named.salient} | {p.casefold() for p in named.phrases}
        return next((o for o in enum if isinstance(o, str) and o.casefold() in said), None)
    if kind in ("integer", "number"):
        return _number(named, hints, kind)
    if kind != "string":
        return None
    if hints & EMAIL_HINTS or prop.get("format") == "email":
        return _pop(named.emails)
    if hints & ID_HINTS:
        return _number(named, hints, kind) or _pop(named.phrases)
    if hints & TEXT_HINTS:
        return _pop(named.phrases) or (" ".join(named.salient) if named.salient else None)
    if hints & NAME_HINTS:
        return _pop(named.phrases) or _pop(named.salient)
    return None


def filled(drawn: dict, schema: dict, text: str, about: set[str] = frozenset(), given: dict | None = None) -> dict:
    """The drawn arguments with what the input names put in the parameters it fits (hinted ones
    first, then the first plain string that is no identifier), else what the instructions give
    (`given`), each fill kept only if the whole still validates."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return drawn
    named = Named.of(text, skip=set(about) | words(" ".join(props)))
    out = dict(drawn)
    hinted = set()
    for name, prop in props.items():
        value = _for(name, prop if isinstance(prop, dict) else {}, named)
        if value is None:
            value = (given or {}).get(name)
        if value is not None and valid({**out, name: value}, schema):
            out[name] = value
            hinted.add(name)
    # an identifier is never filled with a salient word of the input ("customer_id: hm")
    plain = next((n for n, p in props.items() if n in out and n not in hinted and _kind(p) == "string"
                  and not set(split_words(n)) & ID_HINTS and not (isinstance(p, dict) and p.get("enum"))), None)
    value = _pop(named.phrases) or _pop(named.salient) or _pop(named.emails)
    if plain is not None and value is not None and valid({**out, plain: value}, schema):
        out[plain] = value
    return out
