"""A Strands agent as its OpenAI quickstart writes one: `Agent(model=OpenAIModel(...), tools=[fn])`.

`issue_refund(order_id)` appends the order to $LEDGER (the write the test counts).
OpenAIModel's `client_args` carry the key only, so the `openai` client reads
$OPENAI_BASE_URL. `callback_handler=None`: the reply is printed once, not streamed too.

VARIANT=bug: every default. Strands sends a tool's exception to the model as an error
result ("Error: <Type> - <message>"), and a model told so calls it again: a refund that
timed out after it was written is written twice.
VARIANT=sound: a BeforeToolCallEvent hook (Strands' own, run before the tool) lets each
order through once per conversation; a repeat is cancelled instead of refunding again.
"""

import os
import sys

from strands import Agent, tool
from strands.hooks import BeforeToolCallEvent
from strands.models.openai import OpenAIModel
from refunds import SOUND, SYSTEM, Once, record_refund

once = Once()


@tool
def issue_refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order to refund
    """
    return record_refund(order_id)


def once_per_order(event: BeforeToolCallEvent) -> None:
    order = (event.tool_use.get("input") or {}).get("order_id")
    if not once.first(order):
        event.cancel_tool = once.refusal(order)


model = OpenAIModel(client_args={"api_key": os.environ["OPENAI_API_KEY"]},
                    model_id=os.environ.get("MODEL", "gpt-4o"))
agent = Agent(model=model, tools=[issue_refund], callback_handler=None,
              system_prompt=SYSTEM,
              hooks=[once_per_order] if SOUND else None)

if __name__ == "__main__":
    print(str(agent(sys.stdin.read())).strip())
