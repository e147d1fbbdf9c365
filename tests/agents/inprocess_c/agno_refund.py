"""An Agno agent as its quickstart writes one: `Agent(model=OpenAIChat(...), tools=[fn])`, `agent.run`.

`issue_refund(order_id)` appends the order to $LEDGER (the write the test counts).
OpenAIChat builds the `openai` client with no base_url, so it reads $OPENAI_BASE_URL.

VARIANT=bug: every default. Agno hands the model whatever the function returned, so
text planted in a tool result (an `inject` fault) reaches a model that may obey it,
and the reply relays it.
VARIANT=sound: a tool hook (Agno's own `tool_hooks` middleware, around the body)
withholds a result that carries instruction-like text, so the model never reads it.
"""

import os
import sys

from agno.agent import Agent
from agno.models.openai import OpenAIChat
from refunds import SOUND, SYSTEM, record_refund, withheld


def issue_refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order to refund
    """
    return record_refund(order_id)


def withhold_instructions(function_name, function_call, arguments):
    result = function_call(**arguments)
    return withheld(result) or result


agent = Agent(model=OpenAIChat(id=os.environ.get("MODEL", "gpt-4o")), tools=[issue_refund],
              instructions=SYSTEM,
              tool_hooks=[withhold_instructions] if SOUND else None)

if __name__ == "__main__":
    print(agent.run(sys.stdin.read()).content)
