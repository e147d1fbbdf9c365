"""`{{name}}` templates in URLs, headers and JSON bodies, and a small JSON path picker.

The input is inserted into the *parsed* body structure and serialised afterwards,
so quotes, newlines and Unicode in a mutated input can never break the JSON. A value that is
itself structured (a conversation's `{{history}}`, a list of messages) goes in as that structure
when its placeholder is the whole string, and as its JSON text inside a longer one.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


def render(value: Any, ctx: dict[str, str]) -> Any:
    if isinstance(value, str):
        if "{{" not in value:  # most strings of a request (header values, keys) hold no placeholder
            return value
        pieces, tail = _pieces(value)
        if len(pieces) == 1 and not pieces[0][0] and not tail:
            return _whole(ctx.get(pieces[0][1], pieces[0][2]))
        # a name the context lacks stays as written
        return "".join([text + _text(ctx.get(name, raw)) for text, name, raw in pieces]) + tail
    if isinstance(value, dict):
        return {render(k, ctx): render(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, ctx) for v in value]
    return value


def filler(value: Any):
    """`render` of `value` made once: a function of the context, or None when `value` holds no
    placeholder (then it is its own rendering). A request template is filled for every cell.
    What it returns shares the parts that hold no placeholder with `value`: read it, never change it."""
    if isinstance(value, str):
        if "{{" not in value:
            return None
        pieces, tail = _pieces(value)
        if len(pieces) == 1 and not pieces[0][0] and not tail:
            _, name, raw = pieces[0]
            return lambda ctx: _whole(ctx.get(name, raw))
        return lambda ctx: "".join([text + _text(ctx.get(name, raw)) for text, name, raw in pieces]) + tail
    if isinstance(value, dict):
        parts = [(k, filler(k), v, filler(v)) for k, v in value.items()]
        if all(fk is None and fv is None for _, fk, _, fv in parts):
            return None
        return lambda ctx: {(k if fk is None else fk(ctx)): (v if fv is None else fv(ctx)) for k, fk, v, fv in parts}
    if isinstance(value, list):
        items = [(v, filler(v)) for v in value]
        if all(f is None for _, f in items):
            return None
        return lambda ctx: [v if f is None else f(ctx) for v, f in items]
    return None


def _whole(value: Any) -> Any:
    """A placeholder that is the whole string: a list or mapping goes in as itself (a JSON body carries
    `{{history}}` as the array it is, never as a string holding JSON); anything else as text."""
    return value if isinstance(value, (list, dict)) else str(value)


def _text(value: Any) -> str:
    """A placeholder inside a longer string: a list or mapping as its JSON text (never Python's repr)."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else str(value)


def filling(value: Any):
    """`filler`, with a value that holds no placeholder filled by itself: always a function of the context."""
    made = filler(value)
    return made if made is not None else (lambda ctx: value)


@functools.lru_cache(maxsize=1024)
def _pieces(value: str) -> tuple[tuple[tuple[str, str, str], ...], str]:
    """((text before, name, placeholder as written), ...) and the text after the last one: a
    template is parsed once, then filled for every cell."""
    pieces, last = [], 0
    for m in PLACEHOLDER.finditer(value):
        pieces.append((value[last:m.start()], m.group(1), m.group(0)))
        last = m.end()
    return tuple(pieces), value[last:]


# `[-1]` counts from the end, as in Python: ADK's `/run` answers a list of events, the last one the reply
PATH_TOKEN = re.compile(r"\.([A-Za-z_][\w-]*)|\[(-?\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


class PathError(ValueError):
    pass


@functools.lru_cache(maxsize=256)
def parse_path(path: str) -> tuple[str | int, ...]:
    """The steps of `path`, parsed once per distinct path (the agent's output path is asked every cell)."""
    if not path.startswith("$"):
        raise PathError(f"JSON path must start with '$': {path!r}")
    parts: list[str | int] = []
    pos = 1
    while pos < len(path):
        m = PATH_TOKEN.match(path, pos)
        if not m:
            raise PathError(f"cannot parse JSON path {path!r} at {path[pos:]!r}")
        name, idx, q1, q2 = m.groups()
        parts.append(int(idx) if idx is not None else (name or q1 or q2))
        pos = m.end()
    return tuple(parts)


def pick(doc: Any, path: str) -> Any:
    """Value at `path`; raises PathError naming the first missing step."""
    current = doc
    for part in parse_path(path):
        try:
            current = current[part]
        except (KeyError, IndexError, TypeError):
            raise PathError(f"{path}: no {part!r} in the response") from None
    return current
