"""The orders MCP server the stdio agents spawn: `mcp`'s MCPServer (FastMCP in mcp 1.x), over stdio.

One tool, `issue_refund(order_id)`, annotated as the write it is (not read-only, not
idempotent). It appends the order to the ledger file named by argv[1] — the write the
tests count — and answers with a structured result.
"""

import sys

from mcp.types import ToolAnnotations

try:
    from mcp.server.mcpserver import MCPServer
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer

LEDGER = sys.argv[1]
server = MCPServer("orders")


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False))
def issue_refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order to refund
    """
    with open(LEDGER, "a", encoding="utf-8") as ledger:
        ledger.write(order_id + "\n")
    with open(LEDGER, encoding="utf-8") as ledger:
        return {"refund_id": f"rf_{len(ledger.readlines())}", "status": "refunded"}


if __name__ == "__main__":
    server.run()
