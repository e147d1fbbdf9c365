"""The support desk on LangGraph, its memory LangGraph's own: `create_react_agent` with an `InMemorySaver`
checkpointer, each customer's conversation a thread (`thread_id` = the session id the client sends), as
LangGraph's memory docs write it; ChatOpenAI, and two async tools over HTTP (lookup_order, cancel_order; the
orders service of ../support_desk). An async app on uvicorn: POST /chat {"session", "message"} -> {"reply"}.

Sound, a failed tool becomes a ToolMessage the model reads (`ToolNode(handle_tool_errors=True)`), and a
`pre_model_hook` answers any tool call the thread left without one (a turn cut at its time bound mid-tool, a
call whose arguments did not parse: LangGraph's INVALID_CHAT_HISTORY), so the history sent is one the provider
takes; it bounds a turn's time, answers a failed model or a prompt refused as too long, and passes no cut
answer on. $BUGS:

  dangling_call   tool errors are not handled in the graph (ToolNode's default re-raises them), nor repaired
                  before the model, and the app answers the exception politely: the checkpoint keeps the
                  model's tool call with no ToolMessage, and every later turn of the thread fails
  no_trim         the provider's context-length error is not caught: the turn answers 500
"""

import asyncio
import os
import sys

import httpx
import openai
import uvicorn
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from httpkit import chat_asgi  # noqa: E402

BUGS = {b for b in os.environ.get("BUGS", "").split(",") if b}
ORDERS = os.environ.get("ORDERS_URL", "http://127.0.0.1:18980")
HTTP = httpx.AsyncClient(timeout=1.0)


async def _orders(method: str, path: str) -> str:
    resp = await HTTP.request(method, f"{ORDERS}{path}", json={} if method == "POST" else None)
    resp.raise_for_status()
    return resp.text


@tool
async def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return await _orders("GET", f"/orders/{order_id}")


@tool
async def cancel_order(order_id: str) -> str:
    """Cancel an order by its id."""
    return await _orders("POST", f"/orders/{order_id}/cancel")


def answered(state) -> dict:
    """The thread's messages with every tool call answered: an error ToolMessage for each left without one."""
    messages, out = state["messages"], []
    for i, message in enumerate(messages):
        out.append(message)
        if not isinstance(message, AIMessage):
            continue
        following = set()
        for later in messages[i + 1:]:
            if not isinstance(later, ToolMessage):
                break
            following.add(later.tool_call_id)
        calls = [c["id"] for c in message.tool_calls] + [c.get("id") for c in message.invalid_tool_calls]
        out += [ToolMessage("Error: this tool call was not run.", tool_call_id=c) for c in calls
                if c and c not in following]
    return {"llm_input_messages": out}


SOUND = "dangling_call" not in BUGS
TOOLS = ToolNode([lookup_order, cancel_order], handle_tool_errors=SOUND)
GRAPH = create_react_agent(ChatOpenAI(model="gpt-4o-mini", max_retries=2, timeout=1.5), TOOLS,
                           prompt="You are the support desk of an online shop.", checkpointer=InMemorySaver(),
                           pre_model_hook=answered if SOUND else None)


async def turn(session: str, message: str) -> str:
    config = {"configurable": {"thread_id": session}}
    try:
        state = await asyncio.wait_for(GRAPH.ainvoke({"messages": [("user", message)]}, config), timeout=2.5)
    except asyncio.TimeoutError:
        return "The assistant is busy right now; please send your message again in a minute."
    except openai.BadRequestError as exc:
        if exc.code == "context_length_exceeded" and "no_trim" not in BUGS:
            return "This conversation has grown too long for me; please start a new one."
        if "dangling_call" in BUGS:
            return "Sorry, something went wrong."
        raise
    except openai.APIError:  # the model failed for good (its client retried)
        return "Sorry, I cannot reach the assistant right now. Please try again later."
    except Exception:
        if "dangling_call" in BUGS:
            return "Sorry, something went wrong."
        raise
    last = state["messages"][-1]
    if last.response_metadata.get("finish_reason") == "length":
        return "Sorry, my answer was cut off. Please ask again."
    return last.content if isinstance(last.content, str) and last.content else "Sorry, I have no answer to that."


async def answer(path: str, doc: dict) -> str:
    return await turn(str(doc.get("session", "")), str(doc.get("message", "")))


app = chat_asgi(answer)


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
