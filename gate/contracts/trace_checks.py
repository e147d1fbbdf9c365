"""Invariants on the trace (what the agent did on the wire) and on state after the cell.

These catch what output checks cannot: a retry storm, a double write, a tool that
should never have been called, a retry that ignored Retry-After.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections import Counter
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from gate.contracts.base import InvariantBase, Observation, Regex, Verdict, register

if TYPE_CHECKING:
    import httpx


class _TraceFilter(InvariantBase):
    kind = "trace"
    target: str | None = Field(default=None, description="Upstream name (glob).")
    tool: str | None = Field(default=None, description="Tool name (glob).")
    method: str | None = None
    path: Regex | None = Field(default=None, description="Regex searched in the path.")

    def selected(self, obs: Observation, kind: str | None = None) -> list:
        out = []
        for e in obs.trace:
            if kind and e.kind != kind:
                continue
            if e.kind == "tool" and e.rpc_method not in (None, "tools/call"):
                continue  # MCP protocol traffic is not a tool call
            if self.target and not fnmatch.fnmatchcase(e.target, self.target):
                continue
            if self.tool and not fnmatch.fnmatchcase(e.tool or "", self.tool):
                continue
            if self.method and e.method != self.method.upper():
                continue
            if self.path and not re.search(self.path, e.path):
                continue
            out.append(e)
        return out


@register
class LlmCallsMax(_TraceFilter):
    type: Literal["llm_calls_max"] = "llm_calls_max"
    max: int = Field(ge=0)

    def check(self, obs):
        n = len(self.selected(obs, "llm"))
        return Verdict(n <= self.max, f"{n} LLM call(s) (max {self.max})")


@register
class ToolCallsMax(_TraceFilter):
    type: Literal["tool_calls_max"] = "tool_calls_max"
    max: int = Field(ge=0)

    def check(self, obs):
        n = len(self.selected(obs, "tool"))
        return Verdict(n <= self.max, f"{n} tool call(s) matching (max {self.max})")


@register
class ToolCalled(_TraceFilter):
    type: Literal["tool_called"] = "tool_called"
    min: int = Field(default=1, ge=1)

    def check(self, obs):
        n = len(self.selected(obs, "tool"))
        return Verdict(n >= self.min, f"tool called {n} time(s) (min {self.min})")


@register
class ToolNotCalled(_TraceFilter):
    type: Literal["tool_not_called"] = "tool_not_called"

    def check(self, obs):
        hits = self.selected(obs, "tool")
        if hits:
            return Verdict(False, f"forbidden tool call: {hits[0].describe()}")
        return Verdict(True, "forbidden tool not called")


@register
class SideEffectOnce(_TraceFilter):
    """A non-idempotent request reaches the upstream at most once per cell.

    Requests are the same when target, method, path and body (minus volatile fields)
    match; with `honor_idempotency_key`, repeats that carry the same Idempotency-Key
    header count once, since the upstream can deduplicate them.
    """

    type: Literal["side_effect_once"] = "side_effect_once"
    methods: list[str] = Field(default_factory=lambda: ["POST", "PUT", "PATCH", "DELETE"])
    honor_idempotency_key: bool = True

    def check(self, obs):
        # on replay, a recorded request that reached the upstream counts as reaching it
        reached = [e for e in self.selected(obs, "tool") if e.forwarded or e.extra.get("forwarded_as_recorded")]
        writes = [e for e in reached if e.method in self.methods]
        keys = Counter()
        for e in writes:
            if self.honor_idempotency_key and e.idempotency_key:
                keys[(e.target, "idem", e.idempotency_key)] = 1
            else:
                keys[(e.target, e.method, e.path, e.tool, e.body_digest)] += 1
        repeated = [(k, n) for k, n in keys.items() if n > 1]
        if repeated:
            (target, method, path, tool, _), n = repeated[0]
            what = f"{tool} " if tool and tool != target else ""
            return Verdict(False, f"side effect repeated: {what}{method} {target}{path} reached the upstream {n} times")
        return Verdict(True, f"{len(writes)} write(s), none repeated")


@register
class HonorsRetryAfter(_TraceFilter):
    """No call to an upstream before the Retry-After it sent has passed."""

    type: Literal["honors_retry_after"] = "honors_retry_after"
    tolerance_ms: float = Field(default=50.0, ge=0)

    def check(self, obs):
        entries = [e for e in obs.trace if not self.target or fnmatch.fnmatchcase(e.target, self.target)]
        for i, e in enumerate(entries):
            if e.retry_after is None or e.end_ms is None:
                continue
            ready = e.end_ms + e.retry_after * 1000 - self.tolerance_ms
            early = next((n for n in entries[i + 1:] if n.target == e.target and n.start_ms < ready), None)
            if early is not None:
                return Verdict(False, f"called {e.target} again (call {early.call}) before its "
                                      f"Retry-After of {e.retry_after:g}s had passed")
        return Verdict(True, "every Retry-After was honoured")


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
        from gate.agent.templates import PathError, pick

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
