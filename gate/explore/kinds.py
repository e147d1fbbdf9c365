"""Which faults of the catalog a site can see, with the parameters exploration gives them. Pure.

One table, read top to bottom: the order is the order faults are tried at a site, most
telling first (a lost answer after a write, an error, a hang), so a tight budget keeps the
faults that find the most. Each entry says when it applies (writes only, reads only, streamed
LLM calls, LLM calls whose answer carried tool calls) and whether it is transient: one such fault
must leave the outcome the baseline's (`tolerates_transient`).

Hangs hold past the agent's own deadline (HOLD x it): an agent that waits longer never answers in
time. The hold is a bound, not a wait — it ends when the cell does — and it is past the deadline so
the cell's own clock always ends first: under `time_scale` the cell's deadline counts the agent's CPU
at face value while a hold is dilated, and a hold of exactly the deadline would drop the connection
first, turning a missed deadline into a crash (another oracle than at 1x).
"""

from __future__ import annotations

from dataclasses import dataclass

from gate.explore.sites import Site


@dataclass(frozen=True)
class Kind:
    kind: str
    params: tuple = ()  # (key, value) pairs; "deadline" stands for the agent's deadline in seconds
    on: str = "tool"  # llm | tool
    # writes | client_writes | reads | streamed | not_streamed | tool_calls | streamed_tool_calls | (not_)command |
    # later_turn (a conversation's turn 2 on) | (not_)before_last_turn (a conversation's turn with one after it)
    when: str = ""
    transient: bool = False

    def applies(self, site: Site) -> bool:
        if self.on != site.kind:
            return False
        command = site.transport == "command"
        before_last = bool(site.turn) and not site.last_turn
        client = site.transport in ("http", "mcp", "mcp-stdio")
        return {"": True, "writes": site.writes, "client_writes": client and site.writes, "reads": not site.writes, "streamed": site.streamed, "not_streamed": not site.streamed,
                "tool_calls": site.calls_tools, "streamed_tool_calls": site.streamed and site.calls_tools,
                "not_command": not command, "command": command, "later_turn": site.turn >= 2,
                "before_last_turn": before_last, "not_before_last_turn": not before_last}[self.when]

    def fault(self, deadline: float) -> dict:
        hold = min(deadline * HOLD, MAX_HOLD)
        return {"kind": self.kind, **{k: (hold if v == "deadline" else v) for k, v in self.params}}


HOLD = 2  # a hang's bound, in agent deadlines (see above)
MAX_HOLD = 600.0  # the hold faults' own limit (gate/faults): an agent deadline past it is held that long

CATALOG: tuple[Kind, ...] = (
    # tools
    Kind("timeout_after_write", (("seconds", 1.0),), when="writes"),  # the answer lost, the connection dropped
    # the answer lost, the call held until the agent's own client gives up: the timeout most retry loops
    # are written for (a retry under a fresh key), which a dropped connection never shows them. Only where
    # the agent has a client to give up (HTTP, MCP): an in-process function or a command has none, and a
    # hold there is `timeout` over again
    Kind("hang_after_write", (("seconds", "deadline"),), when="client_writes"),
    Kind("error", (("status", 500),), when="not_command", transient=True),
    Kind("exit_code", (("code", 1),), when="command"),
    Kind("timeout", (("seconds", "deadline"),)),
    Kind("rate_limit", (("retry_after", 1.0),), when="not_command", transient=True),
    Kind("reset", (), when="not_command"),
    Kind("malformed", ()),
    Kind("empty", ()),
    Kind("partial", (), when="not_command"),
    Kind("schema_drift", (), when="not_command"),
    Kind("inject", ()),  # any answer the model reads can carry an order, a write's too
    Kind("latency", (("ms", 1500.0),), transient=True),
    # the LLM
    Kind("rate_limit", (("retry_after", 1.0),), on="llm", when="not_before_last_turn", transient=True),
    # a conversation's turn with a turn after it: a Retry-After longer than the turn's own deadline, so the
    # agent must answer this turn without waiting it out — and not stall the sessions beside it doing so
    # (`isolates_sessions`) — then take the next turn as the baseline did (`recovers`)
    Kind("rate_limit", (("retry_after", "deadline"),), on="llm", when="before_last_turn"),
    # a conversation grown past the model's window (only a later turn's prompt can be): trim or answer, not crash
    Kind("context_length", (), on="llm", when="later_turn"),
    Kind("server_error", (("status", 500),), on="llm", transient=True),
    Kind("timeout", (("seconds", "deadline"),), on="llm"),
    Kind("reset", (), on="llm"),
    Kind("bad_tool_args", (), on="llm", when="tool_calls"),
    Kind("wrong_tool_args", (), on="llm", when="tool_calls"),  # parses, and breaks the tool's schema
    Kind("truncate_stream", (("after_events", 3),), on="llm", when="streamed"),
    Kind("cut_content", (), on="llm", when="not_streamed"),  # the same cut, said by a whole answer
    Kind("stall", (("after_events", 2), ("seconds", "deadline")), on="llm", when="streamed"),
    Kind("malformed_json", (), on="llm"),
    Kind("empty", (), on="llm"),
    Kind("duplicate_tool_fragment", (), on="llm", when="streamed_tool_calls"),
    Kind("reorder_tool_fragments", (), on="llm", when="streamed_tool_calls"),
    Kind("latency", (("ms", 1500.0),), on="llm", transient=True),
)

# The order the planner tries kinds in: by what a fault does, the tool's and the model's form of one
# effect side by side (a lost or failed answer, a hang, a cut answer, an injected order, a refusal to
# serve, then the milder garbling), so one effect meets every site before the next effect does.
PRIORITY: tuple[tuple[str, str], ...] = (
    ("timeout_after_write", "tool"), ("hang_after_write", "tool"), ("error", "tool"), ("server_error", "llm"),
    ("context_length", "llm"),
    ("exit_code", "tool"), ("timeout", "tool"), ("timeout", "llm"), ("cut_content", "llm"), ("truncate_stream", "llm"),
    ("inject", "tool"), ("bad_tool_args", "llm"), ("wrong_tool_args", "llm"), ("rate_limit", "tool"),
    ("rate_limit", "llm"), ("empty", "tool"), ("empty", "llm"), ("stall", "llm"), ("reset", "tool"), ("reset", "llm"), ("malformed", "tool"), ("malformed_json", "llm"),
    ("partial", "tool"), ("schema_drift", "tool"), ("duplicate_tool_fragment", "llm"),
    ("reorder_tool_fragments", "llm"), ("latency", "tool"), ("latency", "llm"))


def priority(kind: Kind) -> int:
    return PRIORITY.index((kind.kind, kind.on))


# The outage each kind of site meets when faulted on every call (the persistent form): the single
# fault of the same config on every call, so a run of the single shows whether the outage adds anything
OUTAGE = {"llm": Kind("server_error", (("status", 500),), on="llm"),
          "tool": Kind("error", (("status", 500),)),
          "command": Kind("exit_code", (("code", 1),), when="command")}


def kinds_for(site: Site, allowed: list[str] | None = None) -> list[Kind]:
    """The catalog's kinds this site can see, in the order they are tried."""
    return [k for k in CATALOG if k.applies(site) and (allowed is None or k.kind in allowed)]


def outage_for(site: Site) -> Kind:
    return OUTAGE["command" if site.transport == "command" else site.kind]
