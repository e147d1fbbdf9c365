"""Error answers shaped as the upstream's clients expect them, so each SDK reacts as in production.

LLM upstreams answer in their wire dialect's own error shape (gate/dialects: OpenAI's
`{"error": {message, type, param, code}}`, Anthropic's `{"type": "error", ...}`,
Google's `{"error": {code, message, status}}`); tools over HTTP get a plain JSON error
and MCP gets JSON-RPC shapes. Nothing here branches on a provider's name: the
request's dialect (or, outside any dialect route, its upstream's family) decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # gate.dialects (every dialect) is loaded when a fault first answers, not when configs load
    from gate.dialects import Dialect

MESSAGES = {401: "Invalid API key (injected by chaos-gate)", 404: "Not found (injected by chaos-gate)",
            429: "Rate limit reached (injected by chaos-gate)", 500: "Internal server error (injected by chaos-gate)",
            502: "Bad gateway (injected by chaos-gate)", 503: "Service unavailable (injected by chaos-gate)",
            529: "Overloaded (injected by chaos-gate)"}


def dialect_of(info) -> Dialect | None:
    """The dialect of an LLM request, or its upstream family's for paths outside any route."""
    if info.kind != "llm":
        return None
    from gate import dialects

    return dialects.DIALECTS.get(info.dialect or "") or dialects.family(info.provider)


def error_for(info, status: int, message: str | None = None) -> dict:
    message = message or MESSAGES.get(status, f"HTTP {status} (injected by chaos-gate)")
    dialect = dialect_of(info)
    if dialect is not None:
        return dialect.error(status, message)
    return {"error": message, "status": status}


def error_headers(info, retry_after: float | None = None, should_retry: bool | None = None) -> dict:
    dialect = dialect_of(info)
    name = dialect.request_id_header if dialect is not None else "x-request-id"
    headers = {name: f"req_chaos_{'0' * 12}"}  # uuid.UUID(int=0).hex[:12], without importing uuid
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
        headers["retry-after-ms"] = str(int(retry_after * 1000))
    if should_retry is not None:
        headers["x-should-retry"] = "true" if should_retry else "false"
    return headers


def mcp_error_result(rpc_id, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": rpc_id, "result": {"content": [{"type": "text", "text": message}], "isError": True}}


def mcp_rpc_error(rpc_id, message: str, code: int = -32603) -> dict:
    return {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": message}}
