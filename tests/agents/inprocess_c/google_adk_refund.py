"""A Google ADK agent as its quickstart writes one: `Agent(model="gemini-...", tools=[fn])`, a Runner.

`issue_refund(order_id)` appends the order to $LEDGER (the write the test counts). The
model is ADK's default route, Gemini through google-genai, which reads
$GOOGLE_GEMINI_BASE_URL (the gate's `provider: gemini`) and $GEMINI_API_KEY.

VARIANT=bug: every default. An exception from a tool leaves ADK's tool caller unless an
`on_tool_error_callback` answers it: one failed refund call fails the whole run.
VARIANT=sound: the agent's `on_tool_error_callback` (ADK's own hook) turns the failure
into an error response for the model, which may call the tool again.
"""

import asyncio
import os
import sys

from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types
from refunds import SOUND, SYSTEM, record_refund


def issue_refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order to refund
    """
    return record_refund(order_id)


def report_tool_error(tool, args, tool_context, error):
    return {"error": f"{tool.name} failed: {error}"}


root_agent = Agent(name="support", model=os.environ.get("MODEL", "gemini-2.5-flash"),
                   instruction=SYSTEM,
                   tools=[issue_refund],
                   on_tool_error_callback=report_tool_error if SOUND else None)


async def main(text: str) -> str:
    runner = InMemoryRunner(agent=root_agent, app_name="support")
    session = await runner.session_service.create_session(app_name="support", user_id="customer")
    reply = ""
    async for event in runner.run_async(user_id="customer", session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text=text)])):
        if event.is_final_response() and event.content and event.content.parts:
            reply = "".join(part.text or "" for part in event.content.parts)
    return reply


if __name__ == "__main__":
    print(asyncio.run(main(sys.stdin.read())))
