"""Which upstream a proxied path belongs to, and what the request is (model, tool, stream).

Paths are `/llm/<name>/...` and `/tool/<name>/...`; the rest of the path is appended
to the upstream's base URL, so the agent's env var is the only change it sees.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gate.proxy.bodies import json_of
from gate.proxy.exchange import RequestInfo


@dataclass
class Route:
    kind: str  # llm | tool
    name: str
    provider: str  # openai | anthropic | generic | http | mcp
    upstream: object  # HttpUpstream | SimUpstream

    def describe(self, method: str, path: str, body: bytes) -> RequestInfo:
        info = RequestInfo(kind=self.kind, name=self.name, provider=self.provider, method=method, path=path)
        doc = info.doc = json_of(body)
        if self.kind == "llm":
            _describe_llm(info, doc)
        elif self.provider == "mcp":
            _describe_rpc(info, doc)
        elif self.kind == "tool":
            info.tool = self.name
        return info

    def faultable(self, info: RequestInfo) -> bool:
        """MCP: only tools/call gets faults; protocol traffic passes through."""
        return self.provider != "mcp" or info.rpc_method == "tools/call"


def _rpc_call(msg) -> dict:
    """Method, tool and id of one JSON-RPC message; whatever is not well formed reads as None
    (a `params` that is a list, a string or null: passed through and traced, never an error here)."""
    if not isinstance(msg, dict):
        return {"method": None, "tool": None, "id": None}
    method = msg.get("method") if isinstance(msg.get("method"), str) else None
    params = msg.get("params")
    name = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
    return {"method": method, "tool": name if isinstance(name, str) else None, "id": msg.get("id")}


def _describe_rpc(info: RequestInfo, doc) -> None:
    """MCP: the JSON-RPC method and, for tools/call, the tool. A batch (a JSON array, MCP
    2025-03-26) lists each call in `info.batch`; it reads as a tools/call (of its first
    tool) when it holds one, so faults decide on the batch as a whole: per-element
    faulting would mean splitting the batch upstream and merging the answers."""
    if isinstance(doc, list):
        info.batch = tuple(_rpc_call(m) for m in doc)
        calls = [c for c in info.batch if c["method"] == "tools/call"]
        info.rpc_method = "tools/call" if calls else next((c["method"] for c in info.batch if c["method"]), None)
        info.tool = calls[0]["tool"] if calls else None
        return
    call = _rpc_call(doc)
    info.rpc_method, info.tool, info.rpc_id = call["method"], call["tool"], call["id"]


def _describe_llm(info: RequestInfo, doc) -> None:
    """Dialect, operation, model and stream flag: from the body, or the path where the dialect puts them there
    (Gemini's model, Azure's deployment: the path wins, as it does at the provider)."""
    found = _dialects().find(info.provider, info.method, info.path)
    model = doc.get("model") if isinstance(doc, dict) and isinstance(doc.get("model"), str) else None
    if found is None:
        info.model, info.stream = model, isinstance(doc, dict) and bool(doc.get("stream"))
        return
    dialect, info.operation = found
    info.dialect = dialect.name
    info.model = dialect.model_in_path(info.path) or model
    info.stream = dialect.wants_stream(info.path, doc)


@functools.cache
def _dialects():
    """gate.dialects, imported on the first LLM request (not on every one: it is this module's hot path)."""
    from gate import dialects

    return dialects


def split_path(path: str) -> tuple[str, str, str] | None:
    """'/llm/openai/chat/completions' -> ('llm', 'openai', '/chat/completions')."""
    parts = path.split("/", 3)
    if len(parts) < 3 or parts[1] not in ("llm", "tool"):
        return None
    rest = "/" + parts[3] if len(parts) > 3 else ""
    return parts[1], parts[2], rest
