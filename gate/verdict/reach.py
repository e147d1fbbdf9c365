"""What the gate reached of the agent's calls, and what it could not. Pure.

Promise 4: say plainly what was not reached. The workers' proxies report the upstreams
that saw calls, the framework seams the agent's processes patched (gate/instrument)
and the tool names the agent offered its model; this module turns that into the
report's `reach` section and the sentences that tell a user how to reach the rest.
"""

from __future__ import annotations

from gate.config.references import why_unreached

FRAMEWORKS = ("Python: the OpenAI Agents SDK, pydantic-ai, LangChain/LangGraph, google-genai, the Anthropic "
              "tool runner, the mcp client over stdio; Node: npm openai runTools, @modelcontextprotocol/sdk over stdio")
WAY_FORWARD = ("to fault its tools, give them an HTTP or MCP upstream under `tools:`, declare command-line tools "
               "with `kind: command`, or run the agent as a process on a framework the gate instruments")


def build_reach(config, seen: list[dict]):
    """`seen`: per worker, {"targets": {kind:name: calls}, "seams": {name: detail}, "offered": set}."""
    from gate.report.model import Reach

    wire = sorted({t for w in seen for t, n in w.get("targets", {}).items()
                   if n and not t.startswith(("tool:functions", "tool:mcp-stdio"))})
    seams = {name: detail for w in seen for name, detail in w.get("seams", {}).items()}
    ok = sorted(n for n in seams if not n.endswith(":failed"))
    failed = sorted(f"{n[:-7]}: {d.get('error', '')}" for n, d in seams.items() if n.endswith(":failed"))
    offered = sorted({name for w in seen for name in w.get("offered", ())})
    notes = []
    reason = why_unreached(config)
    if reason is not None:
        notes.append(f"in-process tools not reached: {reason}; {WAY_FORWARD}")
    elif not ok:
        notes.append("in-process tools not reached: the agent loaded none of the frameworks the gate instruments, "
                     "so only its calls on the wire were faulted and traced (README: What the gate reaches)")
    for tool in config.tools:
        kind = "tool"
        if not any(t == f"{kind}:{tool.name}" for t in wire):
            notes.append(f"tool upstream '{tool.name}' received no call")
    return Reach(wire=wire, in_process=ok, failed=failed, offered=offered, notes=notes)


def unmatched_reason(fault, offered: list[str], reach: Reach | None) -> str:
    """Why a tool fault never matched a call: the names the agent did offer, and how to reach more."""
    parts = []
    if getattr(fault, "tool", None):
        names = ", ".join(offered[:20]) + (" …" if len(offered) > 20 else "") if offered else "none seen"
        parts.append(f"no tool called matches '{fault.tool}' (the agent offered: {names})")
    if reach is not None and not reach.in_process:
        parts.append(f"no in-process seam was loaded (the gate instruments {FRAMEWORKS}); {WAY_FORWARD}")
    return "; ".join(parts)
