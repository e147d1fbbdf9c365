"""A refund agent whose tools live in a fake world served by the gate, over MCP or HTTP.

POST /chat {"message": "refund order 1234"} -> {"reply": ...}. $TOOLS picks the transport:
`mcp` (the real `mcp` SDK, streamable HTTP, at $SHOP_MCP_URL) or `http` (REST at $SHOP_URL).
$RETRY picks what happens when the refund call times out:
  naive    call refund_order again (a timeout does not mean it did not happen)
  careful  look for the refund first (list_refunds), and only retry if there is none
"""

import asyncio
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

TOOLS = os.environ.get("TOOLS", "mcp")
RETRY = os.environ.get("RETRY", "careful")
TIMEOUT = 2.0


class ToolTimeout(Exception):
    pass


async def call_mcp(name: str, args: dict):
    from datetime import timedelta  # noqa: F401  (some SDK versions take timedelta)

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    try:
        async with streamable_http_client(os.environ["SHOP_MCP_URL"]) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await asyncio.wait_for(session.call_tool(name, args), TIMEOUT)
    except (TimeoutError, asyncio.TimeoutError) as exc:
        raise ToolTimeout(name) from exc
    except Exception as exc:  # transport errors surface as exception groups
        if "timed out" in repr(exc).lower() or "timeout" in repr(exc).lower():
            raise ToolTimeout(name) from exc
        raise
    text = "".join(getattr(c, "text", "") for c in result.content)
    if getattr(result, "is_error", getattr(result, "isError", False)):
        raise RuntimeError(text)
    return json.loads(text)


def call_http(name: str, args: dict):
    base = os.environ["SHOP_URL"]
    try:
        if name == "refund_order":
            resp = httpx.post(f"{base}/refunds", json=args, timeout=TIMEOUT)
        elif name == "list_refunds":
            resp = httpx.get(f"{base}/refunds", params=args, timeout=TIMEOUT)
        else:
            resp = httpx.get(f"{base}/orders/{args['id']}", timeout=TIMEOUT)
    except httpx.TimeoutException as exc:
        raise ToolTimeout(name) from exc
    resp.raise_for_status()
    return resp.json()


def tool(name: str, args: dict):
    if TOOLS == "mcp":
        return asyncio.run(call_mcp(name, args))
    return call_http(name, args)


def refund(order_id: str) -> str:
    order = tool("get_order", {"id": order_id})
    for _attempt in range(3):
        try:
            tool("refund_order", {"order": order_id, "amount": order["total"]})
            return f"Refunded {order['total']} for order {order_id}."
        except ToolTimeout:
            if RETRY == "careful" and tool("list_refunds", {"order": order_id}):
                return f"Refunded {order['total']} for order {order_id}."
    return f"Sorry, I could not refund order {order_id} right now."


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def _send(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(200, {"ok": True})

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}").get("message", "")
        found = re.search(r"\d{3,}", message)
        try:
            reply = refund(found.group(0)) if found else "Which order should I refund?"
            self._send(200, {"reply": reply})
        except Exception as exc:
            print(f"agent: {exc!r}", file=sys.stderr, flush=True)
            self._send(500, {"error": repr(exc)})


if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8080"))
    print(f"world agent ({TOOLS}, {RETRY}) on {port}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
