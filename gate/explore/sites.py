"""Call sites: every place a fault-free run reached, keyed so a faulted run finds it again. Pure.

Read off a baseline's trace (the proxy's entries and the in-process seams' alike, duck-typed):
an LLM call by its position in the conversation, an HTTP tool call by upstream + method + path
template, an MCP `tools/call` (over HTTP or stdio), an in-process function and a command by
tool name. A site's key is its matcher plus its occurrence among the calls that matcher meets —
Filibuster's execution index: the run before the fault is the baseline's own, so the k-th call
the matcher meets is the same call in the faulted run.

The matcher is exactly the fault config that hits the site (`target`, `method`, `path`, `tool`),
and the occurrence is that fault's `on_calls`: an explored cell and the scenario pinned from it
are the same YAML (gate/explore/findings.py).

A conversation's calls are keyed by their turn as well (`t2:llm:openai#1`, the matcher's `on_turns`):
the first model call of turn 2 is its own site, faulted apart from turn 1's, and a position (first,
later, final) is the call's place within its turn, whose final call makes that turn's answer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from gate.contracts.call_sites import group_of, path_template, template_text, transport_of
from gate.contracts.trace_checks import calls_of, is_tool_call
from gate.contracts.writes import call_writes, http_writes


@dataclass(frozen=True)
class Site:
    key: str  # matcher + occurrence: the same call found again in a faulted run
    group: str  # the matcher alone: every call of the site (a persistent fault, retry counts)
    kind: str  # llm | tool
    transport: str  # llm | http | mcp | mcp-stdio | function | command
    target: str
    occurrence: int  # 1-based, among the calls the matcher meets
    method: str = ""
    path: str = ""  # regex of the path template (HTTP tools)
    tool: str | None = None
    writes: bool = False
    streamed: bool = False
    position: str = ""  # llm: first | later | final;  tools: empty
    calls_tools: bool = False  # llm: a tool call followed it (its answer carried tool calls)
    turn: int = 0  # a conversation's turn (1-based); 0 for a single input
    last_turn: bool = True  # no turn of the conversation came after this one's

    def matcher(self) -> dict:
        """The fault keys that hit this site and nothing else."""
        out: dict = {"target": self.target}
        if self.transport == "http":
            out.update(method=self.method, path=self.path)
        elif self.tool:  # every tool of a server or a seam by name; a command or declared function's is its own
            out["tool"] = self.tool
        if self.turn:
            out["on_turns"] = [self.turn]
        return out

    def describe(self, every: bool = False) -> str:
        """How a person names the site: `POST orders /refunds`, `refund_order (mcp notes)`, `LLM call 2`;
        `every`: the site as a whole (an outage), not one of its calls."""
        at = f" at turn {self.turn}" if self.turn else ""
        if self.kind == "llm":
            return (f"every {self.target} LLM call{at}" if every else
                    f"{self.target} LLM call {self.occurrence}{at} ({self.position})")
        if self.transport == "http":
            return f"{self.method} {self.target} {template_text(self.path)}{at}"
        where = self.transport if self.target == self.transport else f"{self.transport} {self.target}"
        return f"{self.tool or self.target} ({where}){at}"


@dataclass
class Unreached:
    """A call seen in a baseline that cannot be faulted on its own, and why."""

    what: str
    why: str


@dataclass
class Sites:
    found: list[Site] = field(default_factory=list)
    unfaultable: list[Unreached] = field(default_factory=list)


def _writes(entry, transport: str) -> bool:
    if transport == "http":
        return http_writes(entry.method, entry.extra.get("writes"))
    if transport == "command":
        return entry.extra.get("writes") is True  # a command declares no effect (gate/contracts/writes.py)
    call = calls_of(entry)[0]
    return bool(not call.get("idempotent") and call_writes(call.get("tool"), call.get("read_only"),
                                                         call.get("writes")))


def read_sites(entries) -> Sites:
    """The sites of one baseline run, in the order it reached them; a conversation's, turn by turn."""
    turns = sorted({e.turn for e in entries if getattr(e, "turn", None)})
    if not turns:
        return _sites_of(entries, 0)
    out = Sites()
    for turn in turns:
        found = _sites_of([e for e in entries if getattr(e, "turn", None) == turn], turn)
        out.found += [replace(s, last_turn=turn == turns[-1]) for s in found.found]
        out.unfaultable += found.unfaultable
    return out


def _sites_of(entries, turn: int) -> Sites:
    out = Sites()
    seen: Counter = Counter()
    llm = [e for e in entries if e.kind == "llm"]
    prefix = f"t{turn}:" if turn else ""
    for e in entries:
        transport = transport_of(e)
        if e.kind == "tool" and not is_tool_call(e):
            continue  # MCP protocol and session traffic: not a call the agent chose
        if e.kind == "tool" and e.extra.get("batch"):
            out.unfaultable.append(Unreached(f"a JSON-RPC batch to {e.target}",
                                             "a batch is faulted whole, not per call"))
            continue
        group = group_of(e)
        seen[group] += 1
        out.found.append(Site(key=f"{prefix}{group}#{seen[group]}", group=group, occurrence=seen[group],
                              turn=turn, **_site(e, transport, entries, llm)))
    return out


def _site(e, transport: str, entries, llm) -> dict:
    if transport == "llm":
        index = llm.index(e)
        later = entries[entries.index(e) + 1:]
        next_llm = next((n for n in later if n.kind == "llm"), None)
        between = later[:later.index(next_llm)] if next_llm else later
        position = "final" if index == len(llm) - 1 else ("first" if index == 0 else "later")
        # the answer itself says (the proxy read it: gate/proxy/usage.py), even when no traced tool run
        # followed it (a framework callback answered the call); a tool call after it only when unread
        answered = e.extra.get("answer_tool_calls")
        return dict(kind="llm", transport="llm", target=e.target,
                    streamed=bool(e.extra.get("stream")), position=position,
                    calls_tools=answered if isinstance(answered, bool) else any(n.kind == "tool" for n in between))
    if transport == "http":
        return dict(kind="tool", transport="http", target=e.target, method=e.method, path=path_template(e.path),
                    writes=_writes(e, transport))
    return dict(kind="tool", transport=transport, target=e.target, tool=e.tool or e.target,
                writes=_writes(e, transport))
