"""What the proxy learns from an MCP upstream's own answers, per worker, and marks on its calls.

An MCP server says in `tools/list` which tools only read (`annotations.readOnlyHint`) or
may be repeated safely (`idempotentHint`); side_effect_once without a `tool:` filter
skips those calls, so a retried lookup is not a repeated write. The proxy reads each
`tools/list` answer as it passes to the agent (JSON or SSE, a batch's array too) and
remembers the hints per upstream for the life of the worker: agents often list tools
once at start-up, outside any cell. It also notes whether the upstream answers its
requests as SSE, so a fault that answers in its place can answer in the same shape.

Every later MCP trace entry gets `extra["mcp_http"] = True` (the trace checks tell its
session traffic, a GET stream or the closing DELETE, from tool calls by it; `transport`
stays the in-process calls' own, gate/instrument),
a batch its `extra["batch"]`, and a `tools/call` `extra["read_only"]` /
`extra["idempotent"]` when its tool was so annotated.
"""

from __future__ import annotations

import json

from gate.dialects import sse

MAX_ANSWER = 8 << 20  # a tools/list answer is read up to this size; past it, what it said is not learned


class McpTools:
    def __init__(self):
        self.hints: dict[str, dict[str, dict]] = {}  # upstream -> tool -> {"read_only": True, ...}
        self.sse: dict[str, bool] = {}  # upstream -> its last protocol answer was an event stream

    def flags(self, target: str, tool) -> dict:
        return dict(self.hints.get(target, {}).get(tool, {})) if isinstance(tool, str) else {}

    def mark(self, entry, info) -> None:
        """Marks on a fresh trace entry of an MCP-over-HTTP upstream (in-process calls, method
        CALL, are marked by gate/instrument)."""
        if info.provider != "mcp" or info.method == "CALL":
            return
        entry.extra["mcp_http"] = True
        if info.batch:
            entry.extra["batch"] = [{**call, **(self.flags(info.name, call["tool"])
                                                if call["method"] == "tools/call" else {})} for call in info.batch]
        elif info.rpc_method == "tools/call":
            entry.extra.update(self.flags(info.name, info.tool))
        if self.sse.get(info.name):
            entry.extra["upstream_sse"] = True

    def watch(self, info, send):
        """`send`, or a stand-in that reads a protocol answer on its way to the agent (what the
        agent was told is what it acts on, replayed or not). tools/call answers are not read:
        faults rewrite them."""
        if info.provider != "mcp" or info.method != "POST" or info.rpc_method == "tools/call":
            return send
        if info.rpc_id is None and not info.batch:
            return send  # a notification: answered 202, nothing to learn
        return _Tap(self, info.name, send).send

    def learn(self, target: str, status: int, content_type: str, body: bytes) -> None:
        if status != 200 or not body:
            return
        is_sse = "text/event-stream" in content_type
        self.sse[target] = is_sse
        known = self.hints.setdefault(target, {})
        for doc in messages(body, is_sse):
            result = doc.get("result")
            tools = result.get("tools") if isinstance(result, dict) else None
            for tool in tools if isinstance(tools, list) else ():
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    known[tool["name"]] = hints_of(tool.get("annotations"))


def hints_of(annotations) -> dict:
    if not isinstance(annotations, dict):
        return {}
    out = {}
    if isinstance(annotations.get("readOnlyHint"), bool):  # false is said too: a write named like a read
        out["read_only"] = annotations["readOnlyHint"]
    if annotations.get("idempotentHint") is True:
        out["idempotent"] = True
    return out


def messages(body: bytes, is_sse: bool) -> list[dict]:
    """The JSON-RPC messages of an answer: a JSON object or array, or each SSE event's data."""
    if is_sse:
        docs = [sse.data_of(event) for event in sse.split(body)]
    else:
        try:
            docs = [json.loads(body)]
        except ValueError:
            return []
    out = []
    for doc in docs:
        out += [d for d in (doc if isinstance(doc, list) else [doc]) if isinstance(d, dict)]
    return out


class _Tap:
    """Passes every ASGI message on unchanged and keeps the answer's bytes; learns at its end."""

    def __init__(self, owner: McpTools, target: str, send):
        self.owner, self.target, self._send = owner, target, send
        self.status, self.content_type, self.body, self.over = 0, "", bytearray(), False

    @property
    def transport(self):  # Exchange.abort drops the connection through `send.__self__.transport`
        return getattr(getattr(self._send, "__self__", None), "transport", None)

    async def send(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.content_type = next((v.decode("latin-1") for k, v in message.get("headers", [])
                                      if k.lower() == b"content-type"), "")
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            self.over = self.over or len(self.body) + len(chunk) > MAX_ANSWER
            if not self.over:
                self.body += chunk
            if not message.get("more_body") and not self.over:
                self.owner.learn(self.target, self.status, self.content_type, bytes(self.body))
        await self._send(message)
