"""An agent service that opens its MCP session once, at start-up, and keeps it for the life of the process.

The `openai` SDK for the model and the `mcp` SDK's own client in its session-holding mode
(`initialize`, an Mcp-Session-Id on every later request) for the tools at $SHOP_MCP_URL, as
a long-running support service writes it: the session is opened before the first request and
reused by every one after. POST /chat {message} -> {reply}; GET /health. A tool call that
fails (an MCPError) fails the request: the agent cannot answer without its tools.
"""

import asyncio
import json
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from httpkit import AgentHandler, serve_agent  # noqa: E402
from mcp import Client  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

loop = asyncio.new_event_loop()
llm = AsyncOpenAI()
session: dict = {}


async def _hold_session(ready: threading.Event) -> None:
    async with Client(os.environ["SHOP_MCP_URL"], mode="legacy", read_timeout_seconds=20) as client:
        listed = await client.list_tools()
        session["client"] = client
        session["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                              "parameters": t.input_schema}} for t in listed.tools]
        ready.set()
        await asyncio.Event().wait()


async def answer(message: str) -> str:
    messages = [{"role": "system", "content": "You are a shop's support agent."}, {"role": "user", "content": message}]
    for _ in range(5):
        reply = (await llm.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                                   tools=session["tools"])).choices[0].message
        if not reply.tool_calls:
            return reply.content or ""
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            result = await session["client"].call_tool(call.function.name, json.loads(call.function.arguments))
            text = "".join(getattr(c, "text", "") for c in result.content) or json.dumps(result.structured_content)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    return "I could not finish."


class Handler(AgentHandler):
    def do_POST(self):
        message = self.json_body()["message"]
        try:
            self.reply(200, {"reply": asyncio.run_coroutine_threadsafe(answer(message), loop).result(timeout=60)})
        except Exception as exc:  # the gate sees a failed run, with why
            self.reply(500, {"error": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    threading.Thread(target=loop.run_forever, daemon=True).start()
    opened = threading.Event()
    asyncio.run_coroutine_threadsafe(_hold_session(opened), loop)
    opened.wait(30)  # ready (GET answers) only once the session is open
    serve_agent(Handler)
