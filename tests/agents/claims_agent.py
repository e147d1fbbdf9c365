"""A support agent on the real `openai` SDK that can tell the user what did not happen.

POST /chat {"message"} -> {"reply"}. Two HTTP tools on $ORDERS_URL: get_order (GET
/orders/<id>) and refund_order (POST /refunds). The model decides; the agent runs the
tool and hands the model the answer. $AGENT_BUGS plants the mistakes that make an agent
claim what failed (comma-separated, `all` for every one):

  swallow_errors  the tool wrapper turns any failure into {"status": "ok"}
  canned_success  when the LLM call fails, it answers a hard-coded success
  stale_cache     a get_order that fails answers the last status it saw (any earlier cell's)
  accept_empty    an empty or cut answer is parsed leniently, a missing status filled in
  trust_status    a refund answered 2xx is a refund, whatever the body says

Without bugs it is the sound twin: every failure reaches the model as an error object,
so the model can say it failed.
"""

import json
import os
import sys

import httpx
import openai

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import AgentHandler, serve_agent  # noqa: E402  (tests/httpkit.py: the shared JSON handler)

BUGS = set(os.environ.get("AGENT_BUGS", "").split(",")) - {""}
ALL = {"swallow_errors", "canned_success", "stale_cache", "accept_empty", "trust_status"}
BUGS = ALL if "all" in BUGS else BUGS
ORDERS = os.environ.get("ORDERS_URL", "")
TOOLS = [{"type": "function", "function": {"name": name, "description": text, "parameters": {
    "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}
    for name, text in (("get_order", "Look an order up"), ("refund_order", "Refund an order"))]
CACHE: dict[str, str] = {}


def get_order(order_id: str) -> str:
    try:
        resp = httpx.get(f"{ORDERS}/orders/{order_id}", timeout=2.0)
        resp.raise_for_status()
        CACHE[order_id] = resp.text
        return resp.text
    except httpx.HTTPError as exc:
        if "stale_cache" in BUGS and order_id in CACHE:
            return CACHE[order_id]  # the last status seen, stated as now
        return json.dumps({"error": f"order lookup failed: {type(exc).__name__}"})


def refund_order(order_id: str) -> str:
    resp = httpx.post(f"{ORDERS}/refunds", json={"order_id": order_id}, timeout=2.0)
    if "trust_status" in BUGS and resp.is_success:
        return json.dumps({"order_id": order_id, "status": "refunded"})  # the body is never read
    resp.raise_for_status()
    if "accept_empty" in BUGS:
        try:
            doc = resp.json()
        except ValueError:
            doc = {}
        return json.dumps({"order_id": order_id, "status": doc.get("status", "refunded")})
    return resp.text


def run_tool(name: str, args: dict) -> str:
    tool = {"get_order": get_order, "refund_order": refund_order}[name]
    try:
        return tool(str(args.get("order_id")))
    except Exception as exc:  # noqa: BLE001 - a tool failure is the model's to report
        if "swallow_errors" in BUGS:
            return json.dumps({"status": "ok"})
        return json.dumps({"error": f"{name} failed: {type(exc).__name__}"})


def answer(message: str) -> str:
    client = openai.OpenAI(max_retries=1, timeout=10)
    messages = [{"role": "user", "content": message}]
    for _ in range(4):
        try:
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        except openai.OpenAIError as exc:
            print(f"agent: LLM call failed: {exc!r}", file=sys.stderr, flush=True)
            if "canned_success" in BUGS:
                return "Your refund has been processed."
            return "Sorry, I cannot reach our assistant right now. Nothing was changed."
        choice = reply.choices[0].message
        if not choice.tool_calls:
            return choice.content or ""
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in choice.tool_calls]})
        for call in choice.tool_calls:
            try:
                args = json.loads(call.function.arguments or "{}")
            except ValueError:
                args = {}
            messages.append({"role": "tool", "tool_call_id": call.id, "content": run_tool(call.function.name, args)})
    return "Sorry, I could not finish that."


class Handler(AgentHandler):
    def do_POST(self):
        self.reply(200, {"reply": answer(self.json_body().get("message", ""))})


if __name__ == "__main__":
    serve_agent(Handler)
