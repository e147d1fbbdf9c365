"""The MCP docs' client agent (mcp_client_refund.py) on an `mcp` whose exceptions module no longer holds
the name the gate's seam builds its error with (`MCPError` moved away, as a release may move it).

The agent and the SDK bound the name when they were imported, so they run as before; only the
seam, which looks it up when a fault makes a call fail, would break. It must fall back to the
untouched call and say it failed: a harness error, never the agent's failure.
"""

import asyncio
import importlib.util
import os
import sys

import mcp.shared.exceptions

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("mcp_client_refund", os.path.join(HERE, "mcp_client_refund.py"))
agent = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agent)  # binds MCPError, as the agent and the SDK have it

del mcp.shared.exceptions.MCPError

if __name__ == "__main__":
    print(asyncio.run(agent.main(sys.stdin.read())))
