"""A smolagents agent as its guided tour writes one: `ToolCallingAgent(tools=[@tool fn], model=OpenAIServerModel(...))`.

`issue_refund(order_id)` appends the order to $LEDGER (the write the test counts).
`OpenAIServerModel` builds the `openai` client; given no `api_base` it reads
$OPENAI_BASE_URL and $OPENAI_API_KEY. Input on stdin, the final answer on stdout.

VARIANT=bug: every default. smolagents shows the model a tool that raised as
"Error: Error executing tool ... Now let's retry", and a model told so calls it again: a
refund that timed out after it was written is written twice.
VARIANT=sound: a step callback (smolagents' own `step_callbacks`, run on each step before
the model reads it) rewrites a step whose refund timed out: the model is told the
refund may have gone through and must not be issued again, instead of an error to retry.
(A failed step keeps no record of its call, so the callback puts the model's call back
beside the observation: the model reads what it did and what came of it.)
"""

import os
import sys

from smolagents import OpenAIServerModel, ToolCallingAgent, tool
from smolagents.memory import ActionStep, ToolCall
from smolagents.utils import AgentToolExecutionError

LEDGER = os.environ["LEDGER"]


@tool
def issue_refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order to refund
    """
    with open(LEDGER, "a+", encoding="utf-8") as ledger:  # one line per refund written
        ledger.write(order_id + "\n")
        ledger.seek(0)
        return {"refund_id": f"rf_{len(ledger.readlines())}", "status": "refunded"}


def no_retry_after_timeout(step, agent=None):
    """A refund that timed out may have been written: say so, rather than an error the model retries."""
    error = getattr(step, "error", None)
    if isinstance(error, AgentToolExecutionError) and isinstance(error.__cause__, TimeoutError):
        step.error = None
        step.tool_calls = [ToolCall(name=c.function.name, arguments=c.function.arguments, id=c.id)
                           for c in step.model_output_message.tool_calls or []]
        step.observations = ("The refund request timed out: it may have gone through. Do not issue it again; "
                             "tell the customer the refund is being processed.")


callbacks = {ActionStep: [no_retry_after_timeout]} if os.environ.get("VARIANT") == "sound" else None
model = OpenAIServerModel(model_id=os.environ.get("MODEL", "gpt-4o-mini"))
agent = ToolCallingAgent(tools=[issue_refund], model=model, step_callbacks=callbacks, verbosity_level=0)

if __name__ == "__main__":
    print(agent.run(sys.stdin.read()))
