"""An app that starts its MCP server over stdio as plain `python` and carries on without it if it dies.

As the data-analysis app of issue 40 did: the server's start failure is swallowed, the app
answers with no tools, and only the server's stderr says why. SERVER=broken starts a server
that dies on import (a package its interpreter lacks); SERVER=ok one that answers.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from openai import OpenAI

HERE = os.path.dirname(os.path.abspath(__file__))


async def tool_names() -> list[str]:
    server = "server_broken.py" if os.environ.get("SERVER") == "broken" else "server_ok.py"
    params = StdioServerParameters(command="python", args=[os.path.join(HERE, server)])
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [tool.name for tool in (await session.list_tools()).tools]
    except Exception:  # noqa: BLE001 - the planted swallow: no tools, and on we go
        return []


def main() -> None:
    names = asyncio.run(tool_names())
    question = sys.stdin.read()
    reply = OpenAI().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": question}],
        tools=[{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names] or None)
    print(reply.choices[0].message.content or "")


if __name__ == "__main__":
    main()
