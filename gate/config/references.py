"""Cross-references: every name the config uses must name something that exists.

A `when` that matches no cell of the plan, a fault whose target is no upstream, a
trace invariant on a tool nobody serves: each would make a run pass while testing
nothing, so each is a problem on the line of the offending value, with the nearest
valid name. Those that merely test nothing are marked `vacuous` (an error unless
`gate.allow_vacuous: true`, then a warning); those that cannot mean anything (a
stage that does not exist, a duplicate id) are plain errors.

Pure functions of the validated Config (and, for `when`, of its plan) returning
Problems, so the loader reports every one of them together.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from gate.config.models import Config
from gate.config.problems import Loc, Problem
from gate.config.value_checks import all_faults, all_invariants, hint
from gate.errors import ConfigError

RESERVED_SCENARIOS = ("mutation", "replay")  # the scenarios of mutation and replay cells


def reference_problems(config: Config, base_dir: Path) -> list[Problem]:
    """Problems of cross-references (those of `when`, which need the plan, are gate/plan/load.py's)."""
    from gate.config.pricing import pricing_problems

    return [*duplicate_problems(config), *fault_target_problems(config, base_dir), *trace_target_problems(config),
            *world_state_problems(config), *session_problems(config, base_dir), *pricing_problems(config),
            *command_tool_problems(config)]


def vacuous(loc: Loc, message: str) -> Problem:
    return Problem(loc, f"vacuous: {message}", vacuous=True)


# --- unique ids and names -------------------------------------------------------------------

def _duplicates(named: Iterable[tuple[Loc, str]], what: str, why: str = "") -> list[Problem]:
    """Each repeat reported at its own loc, naming where the name was first used."""
    first: dict[str, Loc] = {}
    out = []
    for loc, name in named:
        if name in first:
            out.append(Problem(loc, f"duplicate {what} '{name}' (already used by {_path(first[name])}){why}"))
        else:
            first[name] = loc
    return out


def _path(loc: Loc) -> str:
    from gate.config.problems import dotted

    return dotted(loc[:-1]) if loc and loc[-1] in ("id", "name") else dotted(loc)


def duplicate_problems(config: Config) -> list[Problem]:
    out = _duplicates(((("inputs", i, "id"), inp.id) for i, inp in enumerate(config.inputs)), "input id")
    out += _duplicates(((loc + ("id",), inv.id) for loc, inv in all_invariants(config)), "invariant id")
    out += _duplicates(_upstream_names(config), "upstream name")
    out += _duplicates(((("contract", "scenarios", i, "name"), s.name)
                        for i, s in enumerate(config.contract.scenarios)), "contract scenario name")
    chaos = [(("chaos", "profiles", i), name) for i, name in enumerate(config.chaos.profiles)]
    chaos += [(("chaos", "scenarios", i, "name"), s.name) for i, s in enumerate(config.chaos.scenarios)]
    out += _duplicates(chaos, "chaos scenario name", ": their cell ids would clash")
    return out + _reserved_name_problems(config)


def _upstream_names(config: Config) -> list[tuple[Loc, str]]:
    names = [(("llm", i, "name"), u.name) for i, u in enumerate(config.llm)]
    names += [(("tools", i, "name"), t.name) for i, t in enumerate(config.tools)]
    for i, world in enumerate(config.worlds):
        names.append((("worlds", i, "name"), world.name))
        if world.mcp_env:
            names.append((("worlds", i, "name"), f"{world.name}-mcp"))
    return names


def _reserved_name_problems(config: Config) -> list[Problem]:
    """Names the plan gives its own cells: reusing one would merge two rows of the matrix."""
    out = []
    contract_reserved = RESERVED_SCENARIOS + (("baseline",) if config.contract.baseline else ())
    chaos_reserved = RESERVED_SCENARIOS + (("custom",) if config.chaos.faults else ())
    for section, scenarios, reserved in (("contract", config.contract.scenarios, contract_reserved),
                                         ("chaos", config.chaos.scenarios, chaos_reserved)):
        for i, sc in enumerate(scenarios):
            if sc.name in reserved:
                out.append(Problem((section, "scenarios", i, "name"),
                                   f"scenario name '{sc.name}' is reserved: the plan already names its "
                                   f"{_reserved_for(sc.name)} cells so; choose another name"))
    return out


def _reserved_for(name: str) -> str:
    return {"baseline": "fault-free contract", "custom": "chaos.faults", "mutation": "mutation",
            "replay": "replay"}[name]


# --- upstream references ----------------------------------------------------------------------

def upstream_kinds(config: Config) -> dict[str, str]:
    """Every upstream name the proxy routes -> 'llm' or 'tool'."""
    kinds = {u.name: "llm" for u in config.llm}
    kinds.update({t.name: "tool" for t in config.tools})
    if in_process_reachable(config):  # the agent's own function tools and stdio MCP tools (gate/instrument)
        kinds.update({"functions": "tool", "mcp-stdio": "tool"})
    for world in config.worlds:
        kinds[world.name] = "tool"
        if world.mcp_env:
            kinds[f"{world.name}-mcp"] = "tool"
    return kinds


def why_unreached(config) -> str | None:
    """Why in-process tools cannot be reached at all under this config, or None."""
    start = config.agent.start
    if config.agent.instrument == "off":
        return "agent.instrument is off"
    if start is not None and start.docker is not None:
        return "the agent runs in a container, where the gate's instrumentation is not installed"
    if start is None and config.agent.invoke.command is None:
        return "the agent is already running at agent.url, so the gate did not start it and set nothing in its process"
    return None


def in_process_reachable(config: Config) -> bool:
    """Can the gate instrument the agent's process (so its tool names are known only at run time)?"""
    return bool(config.llm or config.tools or config.worlds) and why_unreached(config) is None


def command_tool_problems(config: Config) -> list[Problem]:
    """A `kind: command` tool is reached through a shim on the agent's PATH: where the gate sets
    nothing in the agent's process, its calls are never seen and its faults never fire."""
    reason = why_unreached(config)
    if reason is None:
        return []
    how = {"command": "its shim is never on the agent's PATH", "function": "its function is never wrapped"}
    return [vacuous(("tools", i, "kind"), f"'{t.name}' is a `kind: {t.kind}` tool, but {reason}: {how[t.kind]}, "
                                          f"so nothing reaches it")
            for i, t in enumerate(config.tools) if t.kind in how]


def _selected_kinds(target: str, kinds: dict[str, str]) -> set[str]:
    if target == "*":
        return set(kinds.values())
    if target == "llm":
        return {"llm"} & set(kinds.values())
    if target == "tools":
        return {"tool"} & set(kinds.values())
    return {kinds[target]} if target in kinds else set()


def _fault_problem(fault: Any, loc: Loc, kinds: dict[str, str]) -> Problem | None:
    target = fault.target
    if target not in ("*", "llm", "tools") and target not in kinds:
        return vacuous(loc + ("target",), f"fault target '{target}' names no upstream, so "
                                          f"'{fault.kind}' never fires{hint(target, ['*', 'llm', 'tools', *kinds])}")
    fits = _selected_kinds(target, kinds) & set(fault.applies_to)
    if fits:
        return None
    wants = " or ".join(sorted("LLM" if k == "llm" else "tool" for k in fault.applies_to))
    return vacuous(loc + ("target",), f"fault '{fault.kind}' acts on {wants} upstreams, and target "
                                      f"'{target}' selects none, so it never fires")


def fault_target_problems(config: Config, base_dir: Path) -> list[Problem]:
    kinds = upstream_kinds(config)
    found = (_fault_problem(fault, loc, kinds) for loc, fault in all_faults(config))
    return [p for p in found if p is not None] + _profile_target_problems(config, kinds, base_dir)


def _profile_target_problems(config: Config, kinds: dict[str, str], base_dir: Path) -> list[Problem]:
    """A profile none of whose faults can reach any upstream of this config tests nothing."""
    from gate.config.profiles import resolve, search_dirs

    dirs = search_dirs(base_dir, config.profiles_dir)
    refs = [(("chaos", "profiles", i), name) for i, name in enumerate(config.chaos.profiles)]
    for section, scenarios in (("chaos", config.chaos.scenarios), ("contract", config.contract.scenarios)):
        for i, sc in enumerate(scenarios):
            refs += [((section, "scenarios", i, "profiles", j), name) for j, name in enumerate(sc.profiles)]
    out = []
    for loc, name in refs:
        try:
            faults = resolve(name, dirs)
        except ConfigError:
            continue  # the loader's profile check reports it
        if faults and all(_fault_problem(f, (), kinds) is not None for f in faults):
            out.append(vacuous(loc, f"profile '{name}' has no fault that reaches an upstream of this config "
                                    f"(upstreams: {', '.join(sorted(kinds)) or 'none'})"))
    return out


def trace_target_problems(config: Config) -> list[Problem]:
    kinds = upstream_kinds(config)
    tool_names = _tool_names(config)
    out = []
    for loc, inv in all_invariants(config):
        target = getattr(inv, "target", None)
        if isinstance(target, str) and not fnmatch.filter(kinds, target):
            out.append(vacuous(loc + ("target",), f"target '{target}' matches no upstream, so '{inv.id}' checks "
                                                  f"nothing{hint(target, kinds)}"))
        tool = getattr(inv, "tool", None) if "tool" in type(inv).model_fields else None
        if isinstance(tool, str) and tool_names is not None and not fnmatch.filter(tool_names, tool):
            out.append(vacuous(loc + ("tool",), f"tool '{tool}' matches no tool the agent can reach, so "
                                                f"'{inv.id}' checks nothing{hint(tool, tool_names)}"))
    return out


def _tool_names(config: Config) -> set[str] | None:
    """Names a `tool:` glob can match; None when an MCP server's own tool names are unknowable
    (its upstream name always matches its calls: gate/contracts/trace_checks.py)."""
    if any(t.kind == "mcp" for t in config.tools) or in_process_reachable(config):
        return None  # in-process tools are named only when the agent runs: coverage reports them then
    return wire_tool_names(config)


def wire_tool_names(config: Config) -> set[str]:
    """The tool names calls on the wire carry: tool upstreams, worlds, their MCP operations."""
    names = {t.name for t in config.tools}
    for world in config.worlds:
        names.add(world.name)
        if world.mcp_env:  # its MCP tools, and its MCP upstream's name (`tool:` matches every call to it)
            names.update(world.operations)
            names.add(f"{world.name}-mcp")
    return names


def tool_names_unknowable(config: Config) -> bool:
    """Are some tool names known only at run time (in-process tools, an MCP server's own tools)?"""
    return _tool_names(config) is None


def world_state_problems(config: Config) -> list[Problem]:
    worlds = {w.name: w for w in config.worlds}
    out = []
    for loc, inv in all_invariants(config):
        if getattr(inv, "type", None) != "world_state":
            continue
        world = worlds.get(inv.world)
        if world is None:
            out.append(Problem(loc + ("world",), f"no world named '{inv.world}'{hint(inv.world, worlds)}"))
        elif inv.record not in world.types:
            out.append(Problem(loc + ("record",), f"world '{inv.world}' has no record type "
                                                  f"'{inv.record}'{hint(inv.record, world.types)}"))
    return out


def session_problems(config: Config, base_dir: Path) -> list[Problem]:
    out = []
    for i, pattern in enumerate(config.replay.sessions):
        joined = str(base_dir / pattern)
        found = Path(joined).exists() if not any(ch in pattern for ch in "*?[") else bool(_glob(joined))
        if not found:
            out.append(Problem(("replay", "sessions", i), f"'{pattern}' matches no session file under {base_dir}"))
    return out


def _glob(pattern: str) -> list[str]:
    import glob

    return glob.glob(pattern, recursive=True)
