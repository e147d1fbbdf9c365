"""A support app shaped like the published ones: a streaming endpoint, a guardrail agent, function tools.

Starlette (what FastAPI is built on) serves `POST /chat` as server-sent events: the
OpenAI Agents SDK's own stream, each text delta sent on as a Responses-style
`response.output_text.delta` event. An input guardrail — a second agent with structured
output `RelevanceOutput` and no tools — refuses questions that are not about orders. The
support agent has two function tools, `order_status` and `cancel_order`, each with a
time limit. The model is a name; the client the SDK uses by default is set once, with a
timeout, and reads OPENAI_BASE_URL: under the gate, the keyless sim.

APP_BUG=error_event plants the bug found in a published airline demo: every failure of
the model or a tool (a malformed or cut answer, a timeout) becomes a generic error event
inside the 200, so the customer gets nothing. The sound app apologises in words instead.
"""

import json
import os

import uvicorn
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from openai import AsyncOpenAI

from agents import (Agent, GuardrailFunctionOutput, InputGuardrailTripwireTriggered, Runner, function_tool,
                    input_guardrail, set_default_openai_client)

# a stalled model call is cut after 4 s and tried again (the SDK's default waits ten minutes)
set_default_openai_client(AsyncOpenAI(timeout=4.0, max_retries=2))

ORDERS = {"1234": "shipped", "5678": "processing"}
CANCELLED: set[str] = set()


class RelevanceOutput(BaseModel):
    reasoning: str
    is_relevant: bool


guard = Agent(name="Relevance guardrail", model="gpt-4o-mini", output_type=RelevanceOutput,
              instructions="Decide whether the customer's message is about their orders (status, delivery, "
                           "cancellation). Unrelated requests are not relevant.")


@input_guardrail
async def relevance(ctx, agent, message):
    verdict = await Runner.run(guard, message, context=ctx.context)
    return GuardrailFunctionOutput(output_info=verdict.final_output,
                                   tripwire_triggered=not verdict.final_output.is_relevant)


@function_tool(timeout=3.0)
async def order_status(order_id: str) -> str:
    """Look up the status of an order.

    Args:
        order_id: the order number
    """
    return json.dumps({"order_id": order_id, "status": ORDERS.get(order_id, "unknown")})


@function_tool(timeout=3.0)
async def cancel_order(order_id: str) -> str:
    """Cancel an order that has not shipped.

    Args:
        order_id: the order number
    """
    CANCELLED.add(order_id)
    return json.dumps({"order_id": order_id, "status": "cancelled"})


support = Agent(name="Support", model="gpt-4o-mini", tools=[order_status, cancel_order],
                instructions="You help customers with their orders. Use the tools; never guess a status.",
                input_guardrails=[relevance])


def sse(doc: dict) -> str:
    return f"data: {json.dumps(doc)}\n\n"


async def chat(request: Request):
    message = (await request.json())["message"]

    async def events():
        try:
            run = Runner.run_streamed(support, message)
            async for event in run.stream_events():
                if event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
                    yield sse({"type": "response.output_text.delta", "delta": event.data.delta})
        except InputGuardrailTripwireTriggered:
            yield sse({"type": "response.output_text.delta", "delta": "Sorry, I can only help with your orders."})
        except Exception as exc:  # noqa: BLE001 - the customer gets an answer whatever failed
            print(f"chat failed: {type(exc).__name__}: {exc}", flush=True)
            if os.environ.get("APP_BUG") == "error_event":
                yield sse({"type": "error", "message": "An error occurred"})
            else:
                yield sse({"type": "response.output_text.delta",
                           "delta": "Sorry, something went wrong on our side. Please try again in a moment."})
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def health(request: Request):
    return JSONResponse({"ok": True})


app = Starlette(routes=[Route("/chat", chat, methods=["POST"]), Route("/health", health)])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")), log_level="warning")
