"""A smolagents agent as its guided tour writes one: `ToolCallingAgent(tools=[@tool fn], model=OpenAIServerModel(...))`.

AGENT=code: the same as a `CodeAgent` (the model writes Python that calls the tool).

`issue_refund(order_id)` appends the order to $LEDGER (the write the test counts).
`OpenAIServerModel` builds the `openai` client; given no `api_base` it reads
$OPENAI_BASE_URL and $OPENAI_API_KEY. Input on stdin, the final answer on stdout.

VARIANT=bug: every default. smolagents shows the model a tool that raised as
"Error: Error executing tool ... Now let's retry", and a model told so calls it again: a
refund that timed out after it was written is written twice.
VARIANT=sound: a step callback (smolagents' own `step_callbacks`, run on each step before
the model reads it) rewrites a step whose refund timed out: the model is told the
refund may have gone through and must not be issued again, instead of an error to retry.
(A failed ToolCallingAgent step keeps no record of its call, so the callback puts the
model's call back beside the observation: the model reads what it did and what came of it.)
"""

import os
import sys

from smolagents import CodeAgent, OpenAIServerModel, ToolCallingAgent, tool
from smolagents.memory import ActionStep, ToolCall
from smolagents.utils import AgentExecutionError

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


def timed_out(error) -> bool:
    """The step failed because a tool timed out (the TimeoutError is the cause, or the cause's cause)."""
    while error is not None and not isinstance(error, TimeoutError):
        error = error.__cause__ or error.__context__
    return error is not None


def no_retry_after_timeout(step, agent=None):
    """A refund that timed out may have been written: say so, rather than an error the model retries."""
    if isinstance(step.error, AgentExecutionError) and timed_out(step.error):
        step.error = None
        step.observations = ("The refund request timed out: it may have gone through. Do not issue it again; "
                             "tell the customer the refund is being processed.")
        if not step.tool_calls:
            step.tool_calls = [ToolCall(name=c.function.name, arguments=c.function.arguments, id=c.id)
                               for c in step.model_output_message.tool_calls or []]


callbacks = {ActionStep: [no_retry_after_timeout]} if os.environ.get("VARIANT") == "sound" else None
model = OpenAIServerModel(model_id=os.environ.get("MODEL", "gpt-4o-mini"))
kind = CodeAgent if os.environ.get("AGENT") == "code" else ToolCallingAgent
agent = kind(tools=[issue_refund], model=model, step_callbacks=callbacks, verbosity_level=0)

if __name__ == "__main__":
    print(agent.run(sys.stdin.read()))
