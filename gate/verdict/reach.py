"""What the gate reached of the agent's calls, and what it could not. Pure.

Promise 4: say plainly what was not reached — and only that. The workers' proxies report the
upstreams that saw calls, the framework seams the agent's processes patched (gate/instrument)
and the tool names the agent offered its model; this module turns that into the report's
`reach` section, per cell into what its runs reached (`CellReach`, kept in every report row),
and into the sentences that tell a user how to reach the rest.

A note says "not reached" only where something was: a fault or an invariant names a tool that
no transport saw a call to, or a tool upstream the config declares received none. An agent
whose tools all live on the wire, all reached, gets no note (loading no framework seam is not
a failure when there was nothing in-process to reach).

Shards: `merge_reach` takes the union of the shards' sections and writes the notes again, so
a merged report says what the unsharded run would have said.
"""

from __future__ import annotations

from gate.config.references import why_unreached
from gate.report.model import CellReach, Reach

def _frameworks() -> str:
    """Every framework the gate instruments, by language, from the seam table (gate/report/frameworks.py)."""
    from gate.report.frameworks import FRAMEWORKS as TABLE

    names = {lang: ", ".join(f.name.replace("`", "") for f in TABLE if f.language == lang) for lang in ("python", "node")}
    return f"Python: {names['python']}; Node: {names['node']}"


FRAMEWORKS = _frameworks()
WAY_FORWARD = ("to fault its tools, give them an HTTP or MCP upstream under `tools:`, declare command-line tools "
               "with `kind: command`, name a Python or Node function with `kind: function`, or run the agent as a "
               "process on a framework the gate instruments")


def build_reach(seen: list[dict]) -> Reach:
    """`seen`: per worker, {"targets": {kind:name: calls}, "seams": {name: detail}, "offered": set,
    "called": set, "handoffs": {name: agent or ""}}. The notes are written later, by `with_notes`, once the
    coverage is known."""
    wire = sorted({t for w in seen for t, n in w.get("targets", {}).items()
                   if n and not t.startswith(("tool:functions", "tool:mcp-stdio"))})
    seams = {name: detail for w in seen for name, detail in w.get("seams", {}).items()}
    used = {f for w in seen for f in w.get("frameworks", ())}
    # a seam says its framework; one whose framework made no call was loaded by a library the agent imports
    # (the Agents SDK imports mcp), not used by it: neither reached nor unreached
    idle = sorted(n for n, d in seams.items() if not n.endswith(":failed") and d.get("framework")
                  and d["framework"] not in used)
    ok = sorted(n for n in seams if not n.endswith(":failed") and n not in idle)
    failed = sorted(f"{n[:-7]}: {d.get('error', '')}" for n, d in seams.items() if n.endswith(":failed"))
    offered = sorted({name for w in seen for name in w.get("offered", ())})
    called = sorted({name for w in seen for name in w.get("called", ())})
    handed: dict[str, str] = {}
    for w in seen:
        for name, agent in w.get("handoffs", {}).items():
            handed[name] = handed.get(name) or agent
    handoffs = _handoff_lines([f"{n} → {a}" if a else n for n, a in handed.items()])
    died = {cmd: _died(cmd, d) for w in seen for cmd, d in w.get("start_failures", {}).items()}
    return Reach(wire=wire, in_process=ok, idle=idle, failed=failed, offered=offered, called=called,
                 handoffs=handoffs, died=sorted(died.values()))


def _died(command: str, failure: dict) -> str:
    """A tool server that died as it started, in one line: its command, its stderr's end, what the client saw."""
    said = _last_lines(failure.get("tail", ""))
    return (f"`{command}`: " + (f"its stderr ends: {said} " if said else "")
            + f"(the agent's client saw {failure.get('error', '') or 'it end'})")


def _last_lines(text: str, count: int = 2, limit: int = 300) -> str:
    """The last lines of a stderr tail, joined (a traceback's last line names the error; its caret lines
    say nothing in one line)."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip().strip("^~ ")]
    joined = " | ".join(lines[-count:])
    return joined if len(joined) <= limit else "…" + joined[-limit:]


def _handoff_lines(lines) -> list[str]:
    """'NAME → AGENT' for a handoff taken, 'NAME' for one only offered; a name taken anywhere is taken."""
    taken = {line.split(" → ", 1)[0] for line in lines if " → " in line}
    return sorted({line for line in lines if " → " in line or line not in taken})


def handoff_names(reach: Reach) -> set[str]:
    return {line.split(" → ", 1)[0] for line in reach.handoffs}


def merge_reach(parts: list[Reach | None]) -> Reach | None:
    """The union of the shards' reach sections (notes are written afterwards, by `with_notes`)."""
    have = [r for r in parts if r is not None]
    if not have:
        return None

    def union(field: str) -> list[str]:
        return sorted({item for r in have for item in getattr(r, field)})

    used = union("in_process")
    return Reach(wire=union("wire"), in_process=used, idle=[n for n in union("idle") if n not in used],
                 failed=union("failed"), offered=union("offered"), called=union("called"),
                 handoffs=_handoff_lines(union("handoffs")), died=union("died"))


def with_notes(config, reach: Reach | None, coverage, unmatched_tools: list[str], tools_seen=()) -> Reach | None:
    """`reach` with its notes: what was not reached, and the way to reach it. `coverage`: the run's
    scenario coverage (a tool fault that matched no call); `unmatched_tools`: `tool:` globs of
    invariants that met no call (gate/verdict/coverage.py); `tools_seen`: every tool name a
    transport saw a call to (the cells' `reached`)."""
    if reach is None:
        return None
    notes = [f"a tool server the agent started died before it answered, so its tools were never offered: {line}"
             for line in reach.died]
    unseen = called_not_reached(reach, tools_seen)
    if unseen and reach.in_process:  # a seam saw the agent's other tools run, and not these
        notes.append(f"refused by the app: the model called {', '.join(unseen)} and the agent sent a result back, "
                     f"but the tool never ran through {', '.join(reach.in_process)}, which saw its other tools run: "
                     "the app answered the call itself (a callback or a guard refused it), so there was nothing to "
                     "fault — or it ran the tool outside its framework's tools")
    elif unseen:
        notes.append(f"called, not reached: the model called {', '.join(unseen)} and the agent sent a result back, but "
                     "no transport saw the call: the tool ran outside every seam the gate instruments, so no fault "
                     f"reached it; {WAY_FORWARD}")
    missed = [name for name in _missed_tools(coverage, unmatched_tools) if name not in unseen]
    if missed:
        reason = why_unreached(config) or (
            "the agent loaded none of the frameworks the gate instruments" if not reach.in_process + reach.idle else
            "no instrumented seam saw a call to it")
        notes.append(f"tools not reached: {', '.join(missed)} (named by a fault or an invariant, and no transport saw "
                     f"a call to it): {reason}; {WAY_FORWARD}")
    for tool in config.tools:
        if tool.kind == "function":
            notes += _declared_note(tool, reach)
        elif f"tool:{tool.name}" not in reach.wire:
            notes.append(f"tool upstream '{tool.name}' received no call")
    return reach.model_copy(update={"notes": notes})


def _declared_note(tool, reach: Reach) -> list[str]:
    """A `kind: function` tool whose function no agent process wrapped: it never imported the module."""
    module, attr = (tool.module, tool.export) if tool.module else tool.function.partition(":")[::2]
    seam = f"function:{module}:{attr}"
    if seam in reach.in_process:
        return []
    failed = next((f for f in reach.failed if f.startswith(seam + ":")), None)
    if failed is not None:
        return [f"function tool '{tool.name}' not reached: {tool.declared} could not be wrapped "
                f"({failed[len(seam) + 2:]})"]
    if tool.module:
        return [f"function tool '{tool.name}' not reached: no Node process of the agent loaded {module}, so its "
                f"export {attr} was never wrapped — check that `module` resolves, from the agent's working "
                "directory, to the file the agent loads"]
    return [f"function tool '{tool.name}' not reached: no agent process imported {module}, so {tool.function} was "
            "never wrapped — check that MODULE is the name the agent imports it by (a script run as __main__ is not)"]


def called_not_reached(reach: Reach, tools_seen) -> list[str]:
    """Tools the model called that no transport saw. Only said when the gate saw no tool call on the wire
    either: a wire tool's upstream name need not be the function's name, so a run with wire tool calls
    may have reached it there, and the gate would rather stay silent than cry wolf."""
    if any(t.startswith("tool:") for t in reach.wire):
        return []
    seen = set(tools_seen) | handoff_names(reach)  # a handoff runs no tool: the SDK switches agents
    return [name for name in reach.called if name not in seen]


def _missed_tools(coverage, unmatched_tools: list[str]) -> list[str]:
    """The tool names (or globs) that faults or invariants aimed at and no transport saw."""
    names = [row.tool for sc in coverage for row in sc.faults if row.status == "never_matched" and row.tool]
    return list(dict.fromkeys(names + unmatched_tools))


NOTHING_REACHED = ("reached nothing: none of its runs made an LLM or tool call the gate saw, so no fault could act "
                   "on it and no trace invariant judged it")


def tools_called(cells) -> list[str]:
    """Every tool name the cells called: from each row's `reached`, else (a row built without it) its traces."""
    return sorted({name for c in cells for name in (c.reached or cell_reach(c.runs)).tools})


def cell_reach(runs) -> CellReach:
    """What one cell's runs reached: how many calls the gate saw, which tools were called, whether a
    fault acted, and a digest of the first run's answer."""
    import hashlib

    tools = {name for run in runs for step in run.trace if step.kind == "tool"
             for name in (step.tool, step.target) if name}
    faulted = any(step.fault_status == "fired" for run in runs for step in run.trace)
    first = runs[0].output if runs else None
    answer = hashlib.sha256(first.encode("utf-8", "replace")).hexdigest()[:16] if first is not None else None
    answered = [step for step in (runs[0].trace if runs else []) if step.kind == "llm" and step.status is not None
                and step.status < 400]
    fallbacks = [f"{step.target} #{step.call}: {step.sim_fallback}" for step in answered if step.sim_fallback]
    return CellReach(calls=sum(len(run.trace) for run in runs), tools=sorted(tools), faulted=faulted, answer=answer,
                     llm_answers=len(answered), fallbacks=fallbacks)


def mark_reached(result, runs) -> None:
    """Record on the cell what its runs reached; a cell that answered without one call says so."""
    result.reached = cell_reach(runs)
    if result.reached.calls == 0 and result.status != "error" and result.note is None:
        result.note = NOTHING_REACHED


def _http_only(fault) -> str:
    """What of a fault only an HTTP call can have (a method other than MCP's POST, a path), in words; ""
    when nothing (an in-process call has method CALL and no path, so no seam would help it match)."""
    method = (getattr(fault, "method", None) or "").upper()
    path = getattr(fault, "path", None)
    verb = f"a {method}" if method and method not in ("POST", "CALL") else ""
    if not path:
        return verb
    return f"{verb or 'a request'} to a path matching /{path}/"


def unmatched_reason(fault, offered: list[str], reach: Reach | None) -> str:
    """Why a tool fault never matched a call: the names the agent did offer, and how to reach more."""
    parts = []
    if getattr(fault, "tool", None):
        names = ", ".join(offered[:20]) + (" …" if len(offered) > 20 else "") if offered else "none seen"
        parts.append(f"no tool called matches '{fault.tool}' (the agent offered: {names})")
    wire_tools = [t for t in (reach.wire if reach is not None else []) if t.startswith("tool:")]
    http_only = _http_only(fault)
    if http_only and wire_tools:  # the tools were reached; no call had that method or path
        parts.append(f"its tools were reached over HTTP ({', '.join(wire_tools)}) and never received {http_only}")
        return "; ".join(parts)
    if reach is not None and not reach.in_process:
        failed = "; ".join(reach.failed[:3])
        parts.append(f"the agent's framework was found, but its seam could not patch it ({failed}): the tools ran "
                     "untouched — check the installed version against the seam table (docs/reach.md)" if failed else
                     f"no in-process seam was loaded (the gate instruments {FRAMEWORKS}); {WAY_FORWARD}")
    return "; ".join(parts)
