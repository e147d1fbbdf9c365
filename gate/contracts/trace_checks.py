"""Invariants on the trace (what the agent did on the wire) and on state after the cell.

These catch what output checks cannot: a retry storm, a double write, a tool that
should never have been called, a retry that ignored Retry-After.
"""

from __future__ import annotations

import fnmatch
import json
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from gate.contracts.base import InvariantBase, Observation, Regex, Verdict, register
from gate.contracts.meaning import body_meaning
from gate.contracts.writes import call_writes, http_writes

if TYPE_CHECKING:
    import httpx


class _TraceFilter(InvariantBase):
    kind = "trace"
    target: str | None = Field(default=None, description="Upstream name (glob).")
    tool: str | None = Field(default=None, description="Tool name (glob); on MCP, the tools/call name or the "
                                                         "MCP upstream's name.")
    method: str | None = None
    path: Regex | None = Field(default=None, description="Regex searched in the path.")

    def selected(self, obs: Observation, kind: str | None = None, nested: bool = False) -> list:
        """Matching entries; `nested` keeps wire calls made inside an in-process tool call too."""
        out = []
        for e in obs.trace:
            if kind and e.kind != kind:
                continue
            if e.kind == "tool" and not is_tool_call(e):
                continue  # MCP protocol and session traffic is not a tool call
            if e.extra.get("within") is not None and not (self.narrowed or nested):
                continue  # made by an in-process tool call already counted: one call, not two
            if self.target and not fnmatch.fnmatchcase(e.target, self.target):
                continue
            if self.tool and not any(self.names(e, call) for call in calls_of(e)):
                continue
            if self.method and e.method != self.method.upper():
                continue
            if self.path and not re.search(self.path, e.path):
                continue
            out.append(e)
        return out

    @property
    def narrowed(self) -> bool:
        """A filter names what to count: then a wire call made inside a function tool counts on its own."""
        return bool(self.target or self.tool or self.method or self.path)

    def names(self, e, call: dict) -> bool:
        """Does the `tool:` glob (if any) name this call: its tool, or an MCP upstream's name?"""
        if not self.tool:
            return True
        names = [call.get("tool") or ""] + ([e.target] if e.extra.get("mcp_http") else [])
        return any(fnmatch.fnmatchcase(name, self.tool) for name in names)

    def count(self, entries: list) -> int:
        """Tool calls in these entries: a JSON-RPC batch counts each call it holds."""
        return sum(sum(1 for c in calls_of(e) if self.names(e, c)) if e.kind == "tool" else 1 for e in entries)


IN_PROCESS = ("function", "mcp-stdio", "command")  # gate/instrument: the body is {"name", "arguments"}


def is_tool_call(e) -> bool:
    """A tool entry that calls a tool: not MCP protocol traffic (initialize, notifications, tools/list),
    nor an MCP upstream's session traffic (its GET stream, the DELETE that ends it)."""
    if e.rpc_method not in (None, "tools/call"):
        return False
    return e.rpc_method is not None or not e.extra.get("mcp_http")


def calls_of(e) -> list[dict]:
    """The tool calls one trace entry stands for: {"tool", "read_only", "idempotent"}, and for
    MCP and in-process calls "arguments" (canonical JSON). A batch gives its tools/call elements."""
    in_process = e.extra.get("transport") in IN_PROCESS
    if e.extra.get("mcp_http") and e.extra.get("batch"):
        doc = _json(e.body)
        docs = doc if isinstance(doc, list) else []
        return [{**c, "arguments": _arguments(docs[i] if i < len(docs) else None)}
                for i, c in enumerate(e.extra["batch"]) if c.get("method") == "tools/call"]
    call = {"tool": e.tool, "read_only": e.extra.get("read_only"), "idempotent": e.extra.get("idempotent"),
            "writes": e.extra.get("writes")}
    if e.extra.get("mcp_http") or in_process:
        call["arguments"] = _arguments(_json(e.body), in_process=in_process)
    return [call]


def _json(body: bytes):
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def _arguments(doc, in_process: bool = False) -> str:
    """A call's arguments as canonical JSON: never the JSON-RPC id, never `params._meta`
    (the fastmcp client puts a fresh progress token there on every call)."""
    params = doc if in_process else doc.get("params") if isinstance(doc, dict) else None
    args = params.get("arguments") if isinstance(params, dict) else params
    return json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)


@register
class LlmCallsMax(_TraceFilter):
    """At most `max` LLM calls in the run (catches retry storms)."""

    type: Literal["llm_calls_max"] = "llm_calls_max"
    max: int = Field(ge=0)

    def check(self, obs):
        n = len(self.selected(obs, "llm"))
        return Verdict(n <= self.max, f"{n} LLM call(s) (max {self.max})")


@register
class ToolCallsMax(_TraceFilter):
    """At most `max` tool calls matching `tool` / `method` / `path`."""

    type: Literal["tool_calls_max"] = "tool_calls_max"
    max: int = Field(ge=0)

    def check(self, obs):
        n = self.count(self.selected(obs, "tool"))
        return Verdict(n <= self.max, f"{n} tool call(s) matching (max {self.max})")


@register
class ToolCalled(_TraceFilter):
    """The tool was called (at least `min` times)."""

    type: Literal["tool_called"] = "tool_called"
    min: int = Field(default=1, ge=1)

    def check(self, obs):
        n = self.count(self.selected(obs, "tool"))
        return Verdict(n >= self.min, f"tool called {n} time(s) (min {self.min})")


@register
class ToolNotCalled(_TraceFilter):
    """The tool was never called."""

    type: Literal["tool_not_called"] = "tool_not_called"

    def check(self, obs):
        hits = self.selected(obs, "tool")
        if hits:
            return Verdict(False, f"forbidden tool call: {hits[0].describe()}")
        return Verdict(True, "forbidden tool not called")


@register
class SideEffectOnce(_TraceFilter):
    """A non-idempotent request reaches the upstream at most once per cell.

    HTTP requests are the same when target, method, path and body (minus volatile fields)
    match; with `honor_idempotency_key`, repeats that carry the same Idempotency-Key
    header count once, since the upstream can deduplicate them. An MCP `tools/call` and
    an in-process tool call are the same when tool and arguments match (never the
    JSON-RPC id, nor `params._meta`), whatever their method; without a `tool:` filter, reads
    (`tools[].writes: false`, the server's readOnlyHint, else a name like get_/list_/lookup_...:
    gate/contracts/writes.py) and tools annotated idempotent are not counted (a filter names the write).
    """

    type: Literal["side_effect_once"] = "side_effect_once"
    methods: list[str] | None = Field(default=None,
                                      description="HTTP methods that write; by default every method but GET, HEAD and "
                                                  "OPTIONS (MCP and in-process tool calls are read or write by their "
                                                  "server's hint, else their name: gate/contracts/writes.py).")
    honor_idempotency_key: bool = True
    idempotent: list[str] = Field(
        default_factory=list, description="Globs of tools that deduplicate repeated calls themselves (by their "
                                          "arguments): their repeats are not counted.")

    def check(self, obs):
        # on replay, a recorded request that reached the upstream counts as reaching it
        reached = [e for e in self.selected(obs, "tool", nested=True)
                   if e.forwarded or e.extra.get("forwarded_as_recorded")]
        # a function tool that wrote over the wire: its wire calls (with their idempotency keys) are the side effect
        parents = {e.extra["within"] for e in reached if e.extra.get("within") is not None}
        reached = [e for e in reached if e.seq not in parents
                   and not any(fnmatch.fnmatchcase(e.tool or "", g) for g in self.idempotent)]
        sends: dict = {}  # write -> the idempotency keys it went out under (None: a send with none)
        shown, writes = {}, 0
        for e in reached:
            for key, what in self._writes(e):
                writes += 1
                sends.setdefault(key, []).append(e.idempotency_key if self.honor_idempotency_key else None)
                shown.setdefault(key, what)
        # a retry under the same key is one execution the server can deduplicate; a fresh key is a new one
        executed = {k: len({x for x in keys if x}) + sum(1 for x in keys if not x) for k, keys in sends.items()}
        repeated = [(k, n) for k, n in executed.items() if n > 1]
        if repeated:
            key, n = repeated[0]
            return Verdict(False, f"side effect repeated: {shown[key]} reached the upstream {n} times")
        return Verdict(True, f"{writes} write(s), none repeated")

    def _writes(self, e):
        """(key, description) of each write this entry made."""
        if not e.extra.get("mcp_http") and e.extra.get("transport") not in IN_PROCESS:  # plain HTTP
            declared = e.extra.get("writes")
            if self.methods is not None and declared is None:
                declared = e.method in self.methods
            if not http_writes(e.method, declared):
                return
            what = f"{e.tool} " if e.tool and e.tool != e.target else ""
            # judged on meaning: ids, keys, UUIDs and timestamps that differ between two sends are not the write
            yield (e.target, e.method, e.path, e.tool, body_meaning(e.body) if e.body else e.body_digest), \
                f"{what}{e.method} {e.target}{e.path}"
            return
        if e.extra.get("transport") == "command" and not self.tool and e.extra.get("writes") is not True:
            return  # a command declares no effect (`git status` twice is no double write): name it or say `writes`
        for call in calls_of(e):
            named = bool(self.tool) and fnmatch.fnmatchcase(call.get("tool") or "", self.tool)
            if not named and (call.get("idempotent") or not call_writes(call.get("tool"), call.get("read_only"),
                                                                        call.get("writes"))):
                continue  # a read, or the tool says a repeat does no harm (gate/contracts/writes.py); a filter
                #           that names the tool itself (not its MCP upstream) names the write
            if self.names(e, call):
                args = call["arguments"]
                yield ((e.target, "call", call.get("tool"), args),
                       f"{call.get('tool')}({args if len(args) <= 80 else args[:77] + '...'}) on {e.target}")


DILATION_JITTER_MS = 15.0  # real ms of jitter (timestamps, CPU overlapping a wait) allowed per extra unit of time_scale


@register
class HonorsRetryAfter(_TraceFilter):
    """No call to an upstream before the Retry-After it sent has passed."""

    type: Literal["honors_retry_after"] = "honors_retry_after"
    tolerance_ms: float = Field(default=50.0, ge=0)
    model_retries: bool = Field(default=True, description="Count a tool call the model asked for again (a model "
                                                          "call between the limited call and its repeat); "
                                                          "`bounded_retries` does not: the model chose it.")

    def check(self, obs):
        entries = [e for e in obs.trace if not self.target or fnmatch.fnmatchcase(e.target, self.target)]
        # Under dilation the proxy's own timestamp jitter (a few real ms) is magnified N-fold in agent time
        tolerance = self.tolerance_ms + DILATION_JITTER_MS * (obs.state.get("time_scale", 1) - 1)
        for i, e in enumerate(entries):
            if e.retry_after is None or e.end_ms is None:
                continue
            ready = e.end_ms + e.retry_after * 1000 - tolerance
            early = next((n for n in entries[i + 1:] if _again(n, e) and n.start_ms < ready
                          and (self.model_retries or not _model_between(obs.trace, e, n))), None)
            if early is not None:
                return Verdict(False, f"called {e.target} again (call {early.call}) before its "
                                      f"Retry-After of {e.retry_after:g}s had passed")
        return Verdict(True, "every Retry-After was honoured")


def _model_between(trace, limited, later) -> bool:
    """A model call answered between a tool call and its repeat: the model asked for the repeat."""
    return limited.kind == "tool" and any(e.kind == "llm" and limited.seq < e.seq < later.seq for e in trace)


def _again(later, limited) -> bool:
    """Is `later` the rate-limited request sent again? On the same upstream, the same request: an LLM
    call with the same body (its volatile fields aside), a tool call to the same method and path. An
    agent's other conversations (a guardrail agent running beside the main one) are not retries."""
    if later.target != limited.target:
        return False
    if limited.kind == "llm":
        return later.body_digest == limited.body_digest
    return (later.method, later.path) == (limited.method, limited.path)


@register
class State(InvariantBase):
    """After the cell: GET `url`, pick `json_path`, and assert on it."""

    kind = "state"
    type: Literal["state"] = "state"
    url: str
    json_path: str = "$"
    equals: Any = None
    count: int | None = Field(default=None, description="The picked value is a list of this length.")
    contains: str | None = None

    async def probe(self, client: httpx.AsyncClient) -> dict:
        import httpx  # lazy: `validate` and `plan` never probe, and httpx costs ~35 ms to import

        try:
            resp = await client.get(self.url, timeout=10)
            return {"status": resp.status_code, "body": resp.text[:100_000]}
        except httpx.HTTPError as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}

    def check(self, obs):
        from gate.templates import PathError, pick

        got = obs.state.get(self.id)
        if got is None or "error" in got:
            return Verdict(False, f"state probe failed: {(got or {}).get('error', 'not run')}")
        try:
            value = pick(json.loads(got["body"]), self.json_path)
        except (ValueError, PathError) as exc:
            return Verdict(False, f"state probe: {exc}")
        if self.count is not None:
            n = len(value) if isinstance(value, list) else -1
            return Verdict(n == self.count, f"{self.json_path} has {n} item(s) (expected {self.count})")
        if self.contains is not None:
            ok = self.contains in json.dumps(value)
            return Verdict(ok, f"{self.json_path} {'contains' if ok else 'lacks'} {self.contains!r}")
        ok = value == self.equals
        return Verdict(ok, f"{self.json_path} is {json.dumps(value)[:80]} (expected {json.dumps(self.equals)[:80]})")


@register
class ReplayMatches(InvariantBase):
    """Every request of a replayed session was in its recording (added to replay cells)."""

    kind = "trace"
    type: Literal["replay_matches"] = "replay_matches"

    def check(self, obs):
        misses = [e for e in obs.trace if e.fault == "replay_miss" or "replay_miss" in e.extra]
        if misses:
            e = misses[0]
            diff = e.extra.get("diff") or e.extra.get("replay_miss", "")
            return Verdict(False, f"unexpected request {e.describe()}: {diff}"[:1500])
        book = obs.state.get("replay") or {}
        if book.get("used", 0) < book.get("recorded", 0):  # a replay passes only when it was followed
            left = "; ".join(book.get("unused", []))
            return Verdict(False, f"agent stopped after {book['used']} of {book['recorded']} recorded calls "
                                  f"(never asked: {left})"[:1500])
        return Verdict(True, "every request was in the recording, and every recorded call was made")


@register
class WorldState(InvariantBase):
    """After the cell: the world's records of a type, filtered by `where`, satisfy the check."""

    kind = "state"
    type: Literal["world_state"] = "world_state"
    world: str
    record: str = Field(description="Record type.")
    where: dict[str, Any] = Field(default_factory=dict, description="Field values the records must have.")
    count: int | None = None
    equals: dict[str, Any] | None = Field(default=None, description="Every matching record has these values.")
    none: bool = Field(default=False, description="No record matches.")

    def check(self, obs):
        tables = obs.state.get(f"world:{self.world}")
        if tables is None:
            return Verdict(False, f"no world named {self.world!r} in this run")
        rows = [r for r in (tables.get(self.record) or {}).values()
                if all(str(r.get(k)) == str(v) for k, v in self.where.items())]
        what = f"{self.record} where {self.where}" if self.where else self.record
        if self.none:
            return Verdict(not rows, f"{len(rows)} {what} record(s) (expected none)")
        if self.count is not None:
            return Verdict(len(rows) == self.count, f"{len(rows)} {what} record(s) (expected {self.count})")
        if self.equals is not None:
            bad = [r for r in rows if any(str(r.get(k)) != str(v) for k, v in self.equals.items())]
            return Verdict(bool(rows) and not bad,
                           f"{len(bad)} of {len(rows)} {what} record(s) differ from {self.equals}")
        return Verdict(bool(rows), f"{len(rows)} {what} record(s)")
