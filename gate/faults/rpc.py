"""`rpc_error`: an MCP tools/call answered with a JSON-RPC `error` object, never forwarded.

Not the same failure as `error`, which answers a tool result with `isError: true` (the
model reads it as the tool's answer): a JSON-RPC error is a protocol failure, which
client SDKs raise (the `mcp` SDK's MCPError, fastmcp's McpError) and agents must catch.
The answer carries the request's id and comes in the shape the client gets from this
upstream: an SSE `event: message` when the request accepts an event stream and the
upstream was seen answering so (gate/proxy/mcp_tools.py), JSON otherwise; a batch gets
one error per request in it. On anything but an MCP tools/call it is not applicable.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gate.faults.base import TOOL, FaultBase, register
from gate.faults.shapes import mcp_rpc_error


@register
class RpcError(FaultBase):
    """An MCP tools/call answered with a JSON-RPC error (`code`, `message`) instead of a result."""

    kind: Literal["rpc_error"] = "rpc_error"
    applies_to = frozenset({TOOL})
    code: int = Field(default=-32603, description="JSON-RPC error code (-32603: internal error).")
    message: str = "internal error (injected by chaos-gate)"

    async def apply(self, ex):
        from gate.dialects import sse  # not at import: gate.dialects loads every dialect (gate/faults/shapes.py)
        info = ex.info
        if info.provider != "mcp" or info.rpc_method != "tools/call":
            ex.not_applicable("not an MCP tools/call: JSON-RPC errors exist only on MCP upstreams")
            return await ex.pipe(await ex.forward())
        ids = [c["id"] for c in info.batch if c["method"] and c["id"] is not None] if info.batch else [info.rpc_id]
        docs = [mcp_rpc_error(rid, self.message, self.code) for rid in ids if rid is not None]
        if not docs:
            ex.not_applicable("a notification, with no id to answer")
            return await ex.pipe(await ex.forward())
        ex.note(f"JSON-RPC error {self.code}")
        answer = docs if info.batch else docs[0]
        if _answers_sse(ex):
            await ex.respond(200, sse.encode(answer, "message"), content_type="text/event-stream")
        else:
            await ex.respond_json(200, answer)


def _answers_sse(ex) -> bool:
    accept = next((v for k, v in ex.headers if k.lower() == "accept"), "")
    return "text/event-stream" in accept and bool(ex.entry.extra.get("upstream_sse"))
