"""Property-based shapes: hypothesis strategies of valid-but-wrong-shaped LLM answers, per dialect.

A `Shape` is a few edits of the real answer (the sim's or the upstream's), made on the
wire by the proxy: a key dropped, nulled, emptied, retyped, renamed or wrapped in a list,
a list item duplicated, a finish reason the SDK never heard of — still valid JSON, so the
agent's parser takes it and its own code meets the wrong shape.

    from gate.testing.shapes import given_shapes

    @given_shapes("openai_chat")                 # hypothesis: @given(shape=...), derandomized
    def test_agent_survives_odd_answers(shape, chaos_run):
        with chaos_run.fresh(shape):                 # a fresh run whose LLM answers carry the edits
            reply = my_agent("Where is order 5?")
        assert reply is None or isinstance(reply, str)

When such a test fails, hypothesis shrinks to a minimal shape and the plugin pins it in
`chaos-gate.shapes.yaml` beside the test (as `chaos-gate pin` pins a failing seed): from
then on that shape runs first, as an explicit example, every time, until the pin is
deleted. `wrong_shapes(dialect)` is the bare strategy, for a test's own `@given`.
"""

from __future__ import annotations

import copy
import functools
import inspect
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import Any, Literal

import yaml

from gate.faults.base import LLM, FaultBase

PINS = "chaos-gate.shapes.yaml"
OPS = ("drop", "null", "empty", "retype", "rename", "wrap", "duplicate", "unknown")
PATHS: dict[str, list[tuple]] = {
    "openai_chat": [("choices",), ("choices", 0), ("choices", 0, "message"), ("choices", 0, "message", "content"),
                    ("choices", 0, "message", "role"), ("choices", 0, "message", "tool_calls"),
                    ("choices", 0, "message", "tool_calls", "*", "function", "arguments"),
                    ("choices", 0, "message", "tool_calls", "*", "function", "name"),
                    ("choices", 0, "message", "tool_calls", "*", "id"), ("choices", 0, "finish_reason"),
                    ("choices", "*", "delta", "content"), ("usage",), ("model",), ("id",)],
    "openai_responses": [("output",), ("output", 0), ("output", "*", "content"), ("output", "*", "content", 0, "text"),
                         ("output", "*", "arguments"), ("output", "*", "name"), ("output", "*", "call_id"),
                         ("output", "*", "type"), ("status",), ("usage",), ("id",)],
    "anthropic_messages": [("content",), ("content", 0), ("content", "*", "text"), ("content", "*", "input"),
                           ("content", "*", "name"), ("content", "*", "id"), ("content", "*", "type"),
                           ("stop_reason",), ("usage",), ("role",), ("delta", "text"), ("delta", "partial_json")],
    "gemini": [("candidates",), ("candidates", 0, "content"), ("candidates", 0, "content", "parts"),
               ("candidates", 0, "content", "parts", "*", "text"),
               ("candidates", 0, "content", "parts", "*", "functionCall", "args"),
               ("candidates", 0, "content", "parts", "*", "functionCall", "name"),
               ("candidates", 0, "finishReason"), ("usageMetadata",)],
}
ENUMS = {"finish_reason", "stop_reason", "finishReason", "status", "type", "role"}
RETYPED = (0, 1.5, "", "text", True, [], {}, None)


@dataclass(frozen=True)
class Edit:
    path: tuple
    op: str
    value: Any = None  # retype: the value put in place

    def describe(self) -> str:
        where = ".".join(str(p) for p in self.path)
        return f"{self.op} {where}" + (f" = {self.value!r}" if self.op == "retype" else "")


def _apply(doc, path: tuple, edit: Edit) -> bool:
    """Apply one edit at `path` inside `doc` (in place); whether anything changed."""
    head, rest = path[0], path[1:]
    keys = (range(len(doc)) if isinstance(doc, list) else []) if head == "*" else [head]
    changed = False
    for key in list(keys):
        if isinstance(doc, dict) and key in doc or isinstance(doc, list) and isinstance(key, int) and key < len(doc):
            if rest:
                changed |= _apply(doc[key], rest, edit) if isinstance(doc[key], (dict, list)) else False
            else:
                changed |= _change(doc, key, edit)
    return changed


def _change(holder, key, edit: Edit) -> bool:
    value = holder[key]
    if edit.op == "drop":
        if isinstance(holder, list):
            holder.pop(key)
        else:
            del holder[key]
        return True
    if edit.op == "rename" and isinstance(holder, dict):
        holder[f"{key}_v2"] = holder.pop(key)
        return True
    new = {"null": None, "empty": type(value)() if isinstance(value, (str, list, dict)) else None,
           "retype": edit.value, "wrap": [value], "unknown": "chaos_unknown_value",
           "duplicate": value + value[:1] if isinstance(value, list) else value}.get(edit.op, value)
    holder[key] = new
    return new != value or type(new) is not type(value)


@dataclass(frozen=True)
class Shape:
    dialect: str
    edits: tuple[Edit, ...]
    first_only: bool = False  # only the run's first LLM answer is bent (a retry then gets a sound one)

    def apply(self, doc):
        out = copy.deepcopy(doc)
        for edit in self.edits:
            _apply(out, edit.path, edit)
        return out

    def fault(self) -> ShapeFault:
        return ShapeFault(shape=self.to_dict(), on_calls=[1] if self.first_only else None)

    def to_dict(self) -> dict:
        return {"dialect": self.dialect, "first_only": self.first_only,
                "edits": [{"path": list(e.path), "op": e.op, **({"value": e.value} if e.op == "retype" else {})}
                          for e in self.edits]}

    @classmethod
    def from_dict(cls, doc: dict) -> Shape:
        return cls(doc["dialect"], tuple(Edit(tuple(e["path"]), e["op"], e.get("value")) for e in doc["edits"]),
                   bool(doc.get("first_only")))

    def __repr__(self) -> str:
        edits = "; ".join(e.describe() for e in self.edits)
        return f"Shape({self.dialect}{', first answer only' if self.first_only else ''}: {edits})"


class ShapeFault(FaultBase):
    """The answer of an LLM call bent by a Shape (not in the config catalog: tests hand it to the proxy)."""

    kind: Literal["shape"] = "shape"
    shape: dict
    applies_to = frozenset({LLM})

    async def apply(self, ex):
        from gate.faults.llm import _rewrite_json

        shape = Shape.from_dict(self.shape)
        if ex.info.dialect != shape.dialect:
            ex.not_applicable(f"a {shape.dialect} shape met a {ex.info.dialect} answer")

        def bend(dialect, doc, streaming):
            if ex.info.dialect == shape.dialect:
                for edit in shape.edits:
                    _apply(doc, edit.path, edit)
        ex.note(repr(shape))
        await _rewrite_json(ex, bend)


def wrong_shapes(dialect: str, max_edits: int = 3):
    """A hypothesis strategy of Shapes for one dialect (openai_chat, openai_responses, anthropic_messages, gemini)."""
    from hypothesis import strategies as st

    if dialect not in PATHS:
        raise ValueError(f"no shapes for dialect {dialect!r} (known: {', '.join(PATHS)})")

    def edit_for(path):
        ops = [op for op in OPS if op != "unknown" or path[-1] in ENUMS]
        return st.builds(Edit, st.just(path), st.sampled_from(ops), st.sampled_from(RETYPED))
    edit = st.sampled_from(PATHS[dialect]).flatmap(edit_for)
    normal = st.builds(lambda e: Edit(e.path, e.op, e.value if e.op == "retype" else None), edit)
    return st.builds(Shape, st.just(dialect), st.lists(normal, min_size=1, max_size=max_edits).map(tuple),
                     st.booleans())


# --- pinning ----------------------------------------------------------------------------------

FAILED: dict[str, tuple[Shape, str]] = {}  # test key -> the last shape that failed it (hypothesis ends on the minimal)


def shape_key(func) -> str:
    return f"{Path(inspect.getfile(func)).name}::{func.__qualname__}"


def read_pins(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("pins", [])


def pin(path: Path, key: str, shape: Shape, reason: str) -> bool:
    """Add a failing shape to the corpus; False when it was pinned already."""
    pins = read_pins(path)
    entry = {"test": key, **shape.to_dict()}
    if any({k: p.get(k) for k in entry} == entry for p in pins):
        return False
    pins.append({**entry, "reason": reason[:300],
                 "pinned_at": datetime.now(UTC).isoformat(timespec="seconds")})
    path.write_text("# chaos-gate shape corpus: failing LLM answer shapes, run first by their tests.\n"
                    + yaml.safe_dump({"pins": pins}, sort_keys=False), encoding="utf-8")
    return True


def given_shapes(dialect: str, *, max_edits: int = 3, pins: str = PINS, max_examples: int = 25, **settings):
    """`@given(shape=wrong_shapes(dialect))`, the pinned shapes as explicit examples first, derandomized
    (the same examples on every run), and a failing shape pinned by the pytest plugin."""
    from hypothesis import HealthCheck, Phase, example, given
    from hypothesis import settings as hsettings

    def decorate(func):
        key, corpus = shape_key(func), Path(inspect.getfile(func)).parent / pins

        @functools.wraps(func)
        def wrapper(*args, shape, **kwargs):
            try:
                return func(*args, shape=shape, **kwargs)
            except Exception as exc:
                FAILED[key] = (shape, f"{type(exc).__name__}: {exc}".splitlines()[0])
                raise
        test = given(shape=wrong_shapes(dialect, max_edits))(wrapper)
        for entry in read_pins(corpus):
            if entry.get("test") == key and entry.get("dialect") == dialect:
                test = example(shape=Shape.from_dict(entry))(test)
        options = {"max_examples": max_examples, "derandomize": True, "deadline": None, "database": None,
                   "phases": [Phase.explicit, Phase.generate, Phase.shrink],
                   "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow], **settings}
        test = hsettings(**options)(test)
        test.chaos_shapes = (key, corpus)
        return test
    return decorate
