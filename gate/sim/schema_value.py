"""A deterministic JSON value that satisfies a JSON Schema, for structured output.

When an agent asks for structured output (a `response_format` / `text.format` schema,
or a tool-mode output type) and the sim's rule gives no `output` object, the sim
answers with the simplest value valid against the schema that lets the pipeline
proceed: the first enum value (or the one that reads as a pass: `allow`, `safe`,
`approved`…), the minimum of a range (else 0), a string of the minimum length, every
required property — and for a boolean, `true` only when its name reads as a permission
or a pass (`is_relevant`, `is_safe`, `allowed`, `valid`…), else `false`. So a guardrail
or classifier nobody scripted lets the input through, as it would for the benign inputs
a config lists, while a flag the agent acts on (`block_card`, `escalate`, `is_harmful`)
is never raised by a value nobody scripted. The report warns on every such answer
(gate/verdict/sim_fallbacks.py). The same schema always gives the same value, so runs
stay reproducible.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 12
# a boolean so named says "may proceed": relevant, safe, allowed, valid, passed (with or without is_/was_…)
PROCEED = re.compile(r"^(is|was|are|has|input|output|content|request|message|query)?_?(relevant|safe|allowed|allow|"
                     r"valid|approved|passed|pass|ok|okay|appropriate|on_?topic|compliant|permitted|acceptable|"
                     r"legitimate|benign|in_?scope|supported|answerable|grounded|success(ful)?)$", re.IGNORECASE)
PASSING = re.compile(r"^(allow(ed)?|safe|pass(ed)?|approved?|ok(ay)?|yes|valid|relevant|compliant|benign|none|"
                     r"clean|accept(ed)?|in_?scope|on_?topic)$", re.IGNORECASE)


def value_for(schema: Any, root: dict | None = None, depth: int = 0, name: str = "") -> Any:
    """`name`: the property this value is for, which decides a boolean and an enum (PROCEED, PASSING)."""
    root = root if root is not None else (schema if isinstance(schema, dict) else {})
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    if "$ref" in schema:
        return value_for(_resolve(schema["$ref"], root), root, depth + 1, name)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return next((v for v in schema["enum"] if isinstance(v, str) and PASSING.match(v)), schema["enum"][0])
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, dict) and o.get("type") != "null"]
        if options:
            return value_for(options[0], root, depth + 1, name)
    if schema.get("allOf"):
        merged: dict = {}
        for part in schema["allOf"]:
            merged.update(_resolve(part["$ref"], root) if "$ref" in part else part)
        return value_for(merged, root, depth + 1, name)
    return _by_type(schema, root, depth, name)


def _by_type(schema: dict, root: dict, depth: int, name: str) -> Any:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {key: value_for(props.get(key, {}), root, depth + 1, key) for key in required}
    if kind == "array":
        count = int(schema.get("minItems") or 1)
        return [value_for(schema.get("items") or {}, root, depth + 1, name) for _ in range(count)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = low + (1 if "exclusiveMinimum" in schema else 0) if low is not None else 0
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return bool(PROCEED.match(name))
    if kind == "null":
        return None
    return _string(schema)


def _string(schema: dict) -> str:
    fmt = schema.get("format")
    samples = {"date": "2026-01-01", "date-time": "2026-01-01T00:00:00Z", "email": "user@example.com",
               "uri": "https://example.com/", "uuid": "00000000-0000-4000-8000-000000000000"}
    text = samples.get(fmt, "sim")
    minimum = int(schema.get("minLength") or 0)
    if len(text) < minimum:
        text = text + "x" * (minimum - len(text))
    maximum = schema.get("maxLength")
    return text[: int(maximum)] if maximum is not None else text


def _resolve(ref: str, root: dict) -> dict:
    node: Any = root
    for part in ref.lstrip("#/").split("/"):
        if not part:
            continue
        node = node.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}
