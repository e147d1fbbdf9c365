"""A command agent on the real `openai` SDK whose one tool is a plain local function, run by its own
loop — the shape of the SDK's function-calling guide. No framework, so no seam the gate instruments:
the tool's calls never cross a transport the gate sees, and the reach line must say so.
"""

import json
import sys

from openai import OpenAI

TOOLS = [{"type": "function", "function": {
    "name": "get_order", "description": "Look an order up by id.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}]


def get_order(order_id: str) -> dict:
    return {"order_id": order_id, "status": "shipped"}


client = OpenAI()
messages = [{"role": "user", "content": sys.stdin.read().strip()}]
for _ in range(4):
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    message = reply.choices[0].message
    if not message.tool_calls:
        print(message.content)
        break
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls:
        result = get_order(**json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
