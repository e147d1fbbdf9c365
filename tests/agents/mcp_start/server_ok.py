"""A one-tool MCP server over stdio."""

try:
    from mcp.server.mcpserver import MCPServer
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer

server = MCPServer("orders")


@server.tool()
def order_status(order_id: str) -> str:
    """The status of an order."""
    return f"order {order_id}: shipped"


if __name__ == "__main__":
    server.run()
