"""Provider-shaped error bodies and headers, so each SDK reacts as it does in production.

OpenAI: {"error": {"message", "type", "param", "code"}}.
Anthropic: {"type": "error", "error": {"type", "message"}} and, mid-stream, an SSE
`event: error`. Tools over HTTP get a plain JSON error; MCP gets JSON-RPC shapes.
"""

from __future__ import annotations

import uuid

OPENAI_TYPES = {401: ("invalid_api_key", "authentication_error"), 404: ("not_found", "invalid_request_error"),
                429: ("rate_limit_exceeded", "requests"), 500: ("server_error", "server_error"),
                502: ("bad_gateway", "server_error"), 503: ("service_unavailable", "server_error"),
                529: ("overloaded", "server_error")}
ANTHROPIC_TYPES = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error",
                   500: "api_error", 502: "api_error", 503: "api_error", 529: "overloaded_error"}
MESSAGES = {401: "Invalid API key (injected by chaos-gate)", 404: "Not found (injected by chaos-gate)",
            429: "Rate limit reached (injected by chaos-gate)", 500: "Internal server error (injected by chaos-gate)",
            502: "Bad gateway (injected by chaos-gate)", 503: "Service unavailable (injected by chaos-gate)",
            529: "Overloaded (injected by chaos-gate)"}


def error_body(provider: str, status: int, message: str | None = None) -> dict:
    message = message or MESSAGES.get(status, f"HTTP {status} (injected by chaos-gate)")
    if provider == "anthropic":
        return {"type": "error", "error": {"type": ANTHROPIC_TYPES.get(status, "api_error"), "message": message}}
    if provider == "openai":
        code, kind = OPENAI_TYPES.get(status, ("error", "server_error"))
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return {"error": message, "status": status}


def error_headers(provider: str, retry_after: float | None = None, should_retry: bool | None = None) -> dict:
    headers = {"x-request-id": f"req_chaos_{uuid.UUID(int=0).hex[:12]}"}
    if provider == "anthropic":
        headers["request-id"] = headers.pop("x-request-id")
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
        headers["retry-after-ms"] = str(int(retry_after * 1000))
    if should_retry is not None:
        headers["x-should-retry"] = "true" if should_retry else "false"
    return headers


def anthropic_stream_error(kind: str = "overloaded_error", message: str = "Overloaded (injected by chaos-gate)") -> bytes:
    import json

    return f"event: error\ndata: {json.dumps({'type': 'error', 'error': {'type': kind, 'message': message}})}\n\n".encode()


def mcp_error_result(rpc_id, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": rpc_id, "result": {"content": [{"type": "text", "text": message}], "isError": True}}


def mcp_rpc_error(rpc_id, message: str, code: int = -32603) -> dict:
    return {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": message}}
