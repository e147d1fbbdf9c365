"""A support desk that keeps each customer's conversation on its server: an async app on uvicorn (the shape
FastAPI and ADK's api_server give), the `openai` SDK's AsyncOpenAI with a tool loop as its guide writes one,
and two tools over HTTP: lookup_order (GET) and cancel_order (POST). POST /chat {"session", "message"} ->
{"reply"}; the session's messages live in SESSIONS, keyed by the id the client sends. POST /chat_client
{"history", "message"} is the same desk for a client that keeps the conversation and sends it each turn.

Sound, it keeps every history the provider will take (a failed tool gets its tool message, saying so),
trims a conversation the model refuses as too long, waits out only a short Retry-After (and without
blocking), and answers a longer one with "busy" at once. $BUGS plants one mistake each, each of which shows
only across turns or across sessions (tests/test_conversation_explore.py finds them by exploring):

  dangling_call   a failed tool leaves the model's tool call in the history with no result: every later
                  turn of that session is refused by the provider
  no_trim         the provider's context-length error is not handled: the turn crashes
  blocking_sleep  a rate limit is waited out with time.sleep inside the async handler: every session stalls
  global_flag     a failed tool sets a module-level "degraded" flag: every session after it, every later
                  turn, is told the system is down, the model never asked
"""

import asyncio
import json
import os
import sys
import time

import httpx
import openai
import uvicorn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from httpkit import chat_asgi  # noqa: E402

BUGS = {b for b in os.environ.get("BUGS", "").split(",") if b}
ORDERS = os.environ.get("ORDERS_URL", "http://127.0.0.1:18980")
SYSTEM = "You are the support desk of an online shop. Use the tools to look orders up and cancel them."
TOOLS = [
    {"type": "function", "function": {"name": "lookup_order", "description": "Look an order up by its id.",
                                      "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                                     "required": ["order_id"]}}},
    {"type": "function", "function": {"name": "cancel_order", "description": "Cancel an order by its id.",
                                      "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                                     "required": ["order_id"]}}},
]
SESSIONS: dict[str, list] = {}
DEGRADED = {"on": False}
CLIENT = openai.AsyncOpenAI(max_retries=0, timeout=2.0)  # its own retries below
TOOLS_HTTP = httpx.AsyncClient(timeout=1.0)


class Busy(Exception):
    pass


async def call_tool(name: str, args: dict) -> str:
    order = str(args.get("order_id", ""))
    for attempt in range(2):
        if name == "lookup_order":
            resp = await TOOLS_HTTP.get(f"{ORDERS}/orders/{order}")
        else:
            resp = await TOOLS_HTTP.post(f"{ORDERS}/orders/{order}/cancel", json={})
        wait = float(resp.headers.get("retry-after", "0") or 0)
        if resp.status_code == 429 and attempt == 0 and wait <= 1.5:
            await asyncio.sleep(wait)  # a short rate limit: waited out, then once more
            continue
        resp.raise_for_status()
        return resp.text
    resp.raise_for_status()
    return resp.text


async def ask(messages: list):
    """One model call, retried on a transient failure; a long Retry-After is not waited out."""
    for attempt in range(3):
        try:
            return await CLIENT.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        except openai.RateLimitError as exc:
            wait = float(exc.response.headers.get("retry-after", "1"))
            if "blocking_sleep" in BUGS:
                time.sleep(wait)  # the planted bug: the whole event loop sleeps
                continue
            if wait > 1.5 or attempt == 2:
                raise Busy() from None
            await asyncio.sleep(wait)
        except (openai.APITimeoutError, openai.APIConnectionError, openai.InternalServerError):
            if attempt == 2:
                raise
            await asyncio.sleep(0.2)
        except openai.BadRequestError as exc:
            if exc.code != "context_length_exceeded" or "no_trim" in BUGS or len(messages) <= 2:
                raise
            messages[1:-1] = []  # keep the system prompt and the customer's last message
    raise Busy()


async def turn(session: str, message: str, sent: list | None = None) -> str:
    """One turn: of the session kept here, or (`sent`) of the conversation the client sent."""
    if DEGRADED["on"]:
        return "Our order system is down right now, please try again later."
    if sent is None:
        history = SESSIONS.setdefault(session, [{"role": "system", "content": SYSTEM}])
    else:
        history = [{"role": "system", "content": SYSTEM}] + [
            {"role": m["role"], "content": str(m.get("content") or "")} for m in sent
            if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    history.append({"role": "user", "content": message})
    for _ in range(6):
        try:
            reply = await ask(history)
        except Busy:
            return "The assistant is busy right now; please send your message again in a minute."
        except (openai.APIError, ValueError) as exc:  # the model failed for good, or answered nothing readable
            if "no_trim" in BUGS and getattr(exc, "code", None) == "context_length_exceeded":
                raise
            return "Sorry, I cannot reach the assistant right now. Please try again later."
        said = reply.choices[0].message
        if reply.choices[0].finish_reason == "length":
            return "Sorry, my answer was cut off. Please ask again."
        if not said.tool_calls:
            history.append({"role": "assistant", "content": said.content or ""})
            return said.content or "Sorry, I have no answer to that."
        history.append(said.model_dump(exclude_none=True))
        for call in said.tool_calls:
            try:
                result = await call_tool(call.function.name, json.loads(call.function.arguments or "{}"))
            except (httpx.HTTPError, ValueError) as exc:
                if "global_flag" in BUGS:
                    DEGRADED["on"] = True
                if "dangling_call" in BUGS:
                    return "Sorry, the order system did not answer."  # the tool call stays unanswered
                result = f"Error: {call.function.name} failed ({type(exc).__name__})"
            history.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "Sorry, I could not finish that."


async def answer(path: str, doc: dict) -> str:
    sent = doc.get("history") if path == "/chat_client" else None
    return await turn(str(doc.get("session", "")), str(doc.get("message", "")), sent if isinstance(sent, list) else None)


app = chat_asgi(answer)


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
