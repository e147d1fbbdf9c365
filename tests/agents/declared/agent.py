"""A command agent on the real `openai` SDK with its tool in its own module (refund_tools.py), run
by its own loop: the long tail the gate reaches with `kind: function`. IMPORT=from binds the
function by name (`from refund_tools import refund`), IMPORT=module calls it through the module.
VARIANT=bug retries a refund that raised (the double write after a timeout); VARIANT=sound tells
the model the refund failed.
"""

import json
import os
import sys

from openai import OpenAI

if os.environ.get("IMPORT") == "module":
    import refund_tools

    def call_refund(**kwargs):
        return refund_tools.refund(**kwargs)
else:
    from refund_tools import refund as call_refund
    import refund_tools


def run_tool(arguments: dict) -> str:
    try:
        return refund_tools.result_text(call_refund(**arguments))
    except Exception as exc:  # noqa: BLE001 - the agent's own error handling is what is tested
        if os.environ.get("VARIANT") == "bug":
            return refund_tools.result_text(call_refund(**arguments))  # "it must have been a glitch"
        return json.dumps({"error": f"refund failed: {type(exc).__name__}"})


client = OpenAI()
messages = [{"role": "user", "content": sys.stdin.read().strip()}]
for _ in range(4):
    message = client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                             tools=refund_tools.describe()).choices[0].message
    if not message.tool_calls:
        print(message.content)
        break
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": run_tool(json.loads(call.function.arguments))})
