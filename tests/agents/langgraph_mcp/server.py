"""The orders MCP server the LangGraph agent (agent.py) spawns over stdio: two tools on the `mcp` SDK's FastMCP,
written as its quickstart writes a server (`@mcp.tool()`, `mcp.run()`).

  lookup_order   GET  $ORDERS_URL/orders/{id}   (a read)
  refund_order   POST $ORDERS_URL/refunds       (a write, under an Idempotency-Key)

The tools call the orders service (examples/sdk_agent/orders_service.py) over HTTP, so the gate sees those
calls on the wire as well as the MCP calls in the agent's process: two layers, each its own site. A failed
call raises, which FastMCP turns into an `isError` result, as its docs say a tool reports a failure.

Sound, a refund whose answer is lost is retried once under the same key (the service deduplicates it).
$BUGS plants:

  fresh_key_retry   the retry after a client-side timeout or a dropped connection goes under a fresh
                    Idempotency-Key: the service executes the refund twice
"""

import os
import uuid

import httpx
from mcp.server.fastmcp import FastMCP

BUGS = {b for b in os.environ.get("BUGS", "").split(",") if b}
ORDERS = os.environ.get("ORDERS_URL", "http://127.0.0.1:18931")
TIMEOUT = 2.0  # the service's own client gives up here: a held answer ends as a timeout, then a retry

mcp = FastMCP("orders")


@mcp.tool()
def lookup_order(order_id: str) -> str:
    """Look up an order: its status and total."""
    resp = httpx.get(f"{ORDERS}/orders/{order_id}", timeout=TIMEOUT)
    resp.raise_for_status()
    return resp.text


@mcp.tool()
def refund_order(order_id: str, reason: str = "") -> str:
    """Refund an order."""
    body, key = {"order_id": order_id, "reason": reason}, str(uuid.uuid4())
    try:
        return _post_refund(body, key)
    except httpx.TransportError:  # the answer was lost: the refund may have been made, so retry it as one
        if "fresh_key_retry" in BUGS:
            key = str(uuid.uuid4())
        return _post_refund(body, key)


def _post_refund(body: dict, key: str) -> str:
    resp = httpx.post(f"{ORDERS}/refunds", json=body, headers={"Idempotency-Key": key}, timeout=TIMEOUT)
    resp.raise_for_status()
    return resp.text


if __name__ == "__main__":
    mcp.run()  # stdio, the transport the agent spawns it on
