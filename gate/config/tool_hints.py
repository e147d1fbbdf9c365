"""Warnings for `tool:` names that look guessed: what `validate` can say before a run.

Where the gate instruments the agent's process, its function tools are named only
when the agent runs, so a `tool:` naming nothing the config knows is not an error
(gate/config/references.py lets it through; coverage reports it after the run). A
misspelt name still deserves a word ahead of the run, so each such name becomes a
warning, with the nearest known name: the run goes on, `validate` exits 0.

What the config knows: its tool upstreams (HTTP, MCP, worlds and their operations),
the names a `tool_map` or a replay session's recorded requests use, and the tools
the sim's rules call. A sim rule is itself how a config names the agent's tools
(the scripted model calls what the agent offers), so a rule's tool is only flagged
when it is a near miss of another known name, never for being new.
"""

from __future__ import annotations

import difflib
import fnmatch
from typing import Any
from collections.abc import Iterable

from gate.config.problems import Loc, Problem

CUTOFF = 0.6  # as the config's other "did you mean" hints


def guessed_tool_problems(config: Any, offered: set[str] | None = None) -> list[Problem]:
    """One warning per invariant, fault or sim-rule `tool:` that names no upstream or declared tool."""
    from gate.config.references import tool_names_unknowable, wire_tool_names
    from gate.config.sim import rule_tools

    rules = rule_tools(config.sim)
    wire = wire_tool_names(config) | set(offered or ()) | set(config.replay.tool_map) \
        | set(config.replay.tool_map.values())
    declared = {tool for _, tool in rules}
    named = _fault_tools(config)
    if tool_names_unknowable(config):  # else references.py already reports an unmatched invariant tool
        named = _invariant_tools(config) + named
    out = [_warning(loc, tool, wire, declared) for loc, tool in named]
    out += [_near_miss(loc, tool, wire) for loc, tool in rules]
    return [p for p in out if p is not None]


def message(tool: str, close: str | None) -> str:
    hint = f" (did you mean `{close}`?)" if close else ""
    return (f"`{tool}` names no upstream or declared tool; if it is an in-process tool it is checked at run "
            f"time{hint}")


def _warning(loc: Loc, tool: str, wire: set[str], declared: set[str]) -> Problem | None:
    if fnmatch.filter(wire | declared, tool):
        return None
    return Problem(loc, message(tool, _closest(tool, wire) or _closest(tool, declared)))  # upstreams first


def _near_miss(loc: Loc, tool: str, wire: set[str]) -> Problem | None:
    close = _closest(tool, wire)
    return None if tool in wire or close is None else Problem(loc, message(tool, close))


def _closest(tool: str, known: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(tool, sorted(known), n=1, cutoff=CUTOFF)
    return close[0] if close else None


def _invariant_tools(config: Any) -> list[tuple[Loc, str]]:
    from gate.config.value_checks import all_invariants

    return [(loc + ("tool",), inv.tool) for loc, inv in all_invariants(config)
            if "tool" in type(inv).model_fields and isinstance(getattr(inv, "tool", None), str)]


def _fault_tools(config: Any) -> list[tuple[Loc, str]]:
    from gate.config.value_checks import all_faults

    return [(loc + ("tool",), fault.tool) for loc, fault in all_faults(config) if fault.tool]
