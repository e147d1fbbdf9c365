"""The calls of one run as a test reads them: tool calls, LLM calls, faults, failures, one line.

Built over the proxy's live trace (gate/proxy/trace.py), so it reflects calls as they
happen. MCP session traffic (initialize, tools/list, notifications, the closing DELETE)
and a world's OpenAPI document are left out: what remains is what the agent *did*.

    trace.count(tool="issue_refund")      # 2
    trace.calls_to("issue_refund")        # [{tool, fault, ok, status, error, ...}, ...]
    trace.faults() / trace.failures()
    trace.summary()                       # get_order → issue_refund!timeout_after_write → issue_refund
"""

from __future__ import annotations

import json
import re

WORLD_FAULT = re.compile(r"world fault: (\w+)")


def _mcp_error(shown: bytes) -> str | None:
    """The error text of an MCP tools/call answer that is an `isError` result (JSON or SSE)."""
    text = shown.decode("utf-8", "replace")
    docs = []
    for chunk in [text] if text.lstrip().startswith("{") else [ln[5:] for ln in text.splitlines()
                                                                if ln.startswith("data:")]:
        try:
            docs.append(json.loads(chunk))
        except ValueError:
            continue
    for doc in docs:
        result = doc.get("result") if isinstance(doc, dict) else None
        if isinstance(result, dict) and result.get("isError"):
            return " ".join(c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict)) or "isError"
        if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
            return str(doc["error"].get("message"))
    return None


class Trace:
    def __init__(self, entries: list, worlds: dict | None = None):
        self._entries = entries  # the RunState's list: live while the run goes on
        self._worlds = worlds or {}  # world name (and NAME-mcp) -> WorldUpstream, to name REST calls

    def _name(self, e) -> str:
        if e.kind == "llm":
            return "llm"
        if e.rpc_method == "tools/call" or e.extra.get("transport"):
            return e.tool or e.target
        upstream = self._worlds.get(e.target)  # a world's REST call: the operation it names
        op = upstream.operation_for(e.method, e.path) if upstream is not None else None
        return op or f"{e.target} {e.method} {e.path.split('?')[0]}"

    def _event(self, e) -> dict | None:
        if e.kind == "tool" and e.extra.get("mcp_http") and e.rpc_method != "tools/call":
            return None
        if e.kind == "tool" and e.method == "GET" and e.path.split("?")[0].endswith("/openapi.json"):
            return None
        fault = e.fault if e.fault and e.fault_status != "not_applicable" else None
        world = WORLD_FAULT.search(e.note or "")
        fault = fault or (world.group(1) if world else None)
        shown = e.extra.get("shown", b"")
        error = None
        if e.status is None:
            error = (e.note or "no answer").strip()
        elif e.status >= 400:
            error = f"HTTP {e.status}: {shown[:300].decode('utf-8', 'replace')}"
        elif e.rpc_method == "tools/call":
            error = _mcp_error(shown)
        return {"seq": e.seq, "kind": e.kind, "target": e.target, "tool": self._name(e), "model": e.model,
                "fault": fault, "fault_index": e.fault_index if e.fault_status == "fired" else None,
                "call": e.call, "ok": error is None, "status": e.status, "error": error,
                "forwarded": e.forwarded, "note": e.note,
                "handoff": getattr(e, "handoff", None)}  # an LLM call a handoff brought: "transfer_to_x → X"

    @property
    def events(self) -> list[dict]:
        """Every call the agent made (tools and LLM), in arrival order."""
        return [ev for ev in map(self._event, list(self._entries)) if ev is not None]

    def tool_calls(self) -> list[dict]:
        return [ev for ev in self.events if ev["kind"] == "tool"]

    def llm_calls(self) -> list[dict]:
        return [ev for ev in self.events if ev["kind"] == "llm"]

    def count(self, tool: str | None = None, *, target: str | None = None, ok: bool | None = None) -> int:
        """Tool calls, optionally of one tool (or upstream), optionally only those that (did not) succeed."""
        return len([ev for ev in self.tool_calls() if (tool is None or ev["tool"] == tool)
                    and (target is None or ev["target"] in (target, f"{target}-mcp"))
                    and (ok is None or ev["ok"] == ok)])

    def calls_to(self, tool: str) -> list[dict]:
        return [ev for ev in self.tool_calls() if ev["tool"] == tool]

    def faults(self) -> list[dict]:
        return [ev for ev in self.events if ev["fault"]]

    def failures(self) -> list[dict]:
        return [ev for ev in self.events if not ev["ok"]]

    def firings(self) -> frozenset:
        """The wire faults that fired, as `chaos-gate run --faults` names them: (index, upstream, call)."""
        return frozenset((ev["fault_index"], ev["target"], ev["call"]) for ev in self.events
                         if ev["fault_index"] is not None)

    def summary(self) -> str:
        """One line: the tool calls in order, a fault as `!kind`, a failed call as `!error`; an LLM call
        only when a fault hit it."""
        parts = []
        for ev in self.events:
            if ev["kind"] == "llm" and not ev["fault"]:
                continue
            label = ev["tool"] + (f"!{ev['fault']}" if ev["fault"] else "" if ev["ok"] else "!error")
            parts.append(label)
        return " → ".join(parts) if parts else "(no tool calls)"

    def __len__(self) -> int:
        return len(self.tool_calls())

    def __iter__(self):
        return iter(self.tool_calls())

    def __repr__(self) -> str:  # pytest shows it in a failing test's traceback: the agent's tool names in it
        from gate.testing.shown import shown

        return shown(f"<trace {self.summary()}>")
