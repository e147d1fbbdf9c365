"""An Azure OpenAI chat agent as the Azure quickstarts write it: `AsyncAzureOpenAI` built from the
environment (AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY, OPENAI_API_VERSION) and the deployment it
was given, and one local tool it runs when the model calls it. The `model` it passes is the base
model's name, which Azure ignores: the deployment in the path is what answers.

Input on stdin; the final answer on stdout. `lookup_order(order_id)` answers from a dict: the
round trip is the model's call, the tool's answer sent back, the model's final text. The SDK's
own retries (max_retries=2) are the agent's only defence against a failing model call.
"""

import asyncio
import json
import os
import sys

from openai import AsyncAzureOpenAI

DEPLOYMENT = os.environ.get("AZURE_OPENAI_DEPLOYMENT", "prod-4o")
TOOLS = [{"type": "function", "function": {
    "name": "lookup_order", "description": "Look an order up by its id.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}]


def lookup_order(order_id: str) -> dict:
    return {"order_id": order_id, "status": "shipped"}


async def main(question: str) -> str:
    client = AsyncAzureOpenAI(azure_deployment=DEPLOYMENT, max_retries=2)  # endpoint, key, api-version: the env
    messages = [{"role": "system", "content": "You look orders up."}, {"role": "user", "content": question}]
    for _ in range(4):
        reply = await client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = lookup_order(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    return "I could not finish."


if __name__ == "__main__":
    print(asyncio.run(main(sys.stdin.read())))
