"""One config problem, its `file:line: key.path: message` form, and the error that carries many.

Every checker (YAML walk, pydantic, cross-references) returns Problems instead of
raising, so a user sees all of them at once, each once, sorted by line. The first
line of the error is a problem in full, so a reader of only that line (a CI log
summary, a terminal cut short) still learns what is wrong and where.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gate.errors import ConfigError

Loc = tuple[Any, ...]


@dataclass(frozen=True)
class Problem:
    loc: Loc
    message: str
    line: int | None = None  # when the line is known directly (YAML level), not looked up by loc
    vacuous: bool = False  # a reference that tests nothing: an error unless gate.allow_vacuous


def line_at(lines: dict, loc: Loc) -> int:
    """Line (1-based) of the deepest prefix of `loc` that the YAML has."""
    loc = tuple(loc)
    return next((lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in lines), 1)


def dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def located(source: str, lines: dict, problem: Problem) -> tuple[int, str]:
    line = problem.line if problem.line is not None else line_at(lines, problem.loc)
    return line, f"{source}:{line}: {dotted(problem.loc)}: {problem.message}"


def format_all(source: str, lines: dict, problems: list[Problem]) -> list[str]:
    """Located messages, sorted by line, each distinct one once."""
    placed = sorted((located(source, lines, p) for p in problems), key=lambda pair: pair[0])
    return list(dict.fromkeys(text for _, text in placed))


def config_error(messages: list[str]) -> ConfigError:
    """A ConfigError whose first line is the first problem, whole."""
    first = messages[0]
    if len(messages) > 1:
        more = len(messages) - 1
        first += f" (and {more} more problem{'s' if more > 1 else ''})"
    return ConfigError("\n  ".join([first, *messages[1:]]), messages)
