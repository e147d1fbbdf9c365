"""A value as an agent's text protocol wrote it: shared by the DSPy and smolagents readers."""

from __future__ import annotations

import ast
import json
from typing import Any


def literal(text: str) -> Any:
    """A value as a text protocol wrote it: JSON, else a Python literal (DSPy and smolagents write a dict's repr)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
