"""Two OpenAI Agents SDK agents and a handoff, as the SDK's quickstart writes them: a triage
agent that hands billing questions to a billing agent, which answers with its own function tool.

The SDK offers the handoff to the model as a tool named `transfer_to_billing_agent`; when the
model calls it the runner switches agents in-process (no function body runs, nothing reaches a
transport). Input on stdin; the final output and the last agent's name on stdout.
NEST=1 runs with `nest_handoff_history`: the billing agent gets the history as one summary message,
and the transfer call no longer appears in what it sends its model.
"""

import os
import sys

from agents import Agent, RunConfig, Runner, function_tool


@function_tool
def refund_status(order_id: str) -> str:
    """The state of an order's refund.

    Args:
        order_id: the order
    """
    return f"refund for {order_id}: approved"


model = os.environ.get("MODEL", "gpt-4o-mini")
billing = Agent(name="Billing agent", handoff_description="Refunds and invoices.", model=model,
                instructions="You answer billing questions.", tools=[refund_status])
triage = Agent(name="Triage agent", model=model, instructions="Hand billing questions to the billing agent.",
               handoffs=[billing])

if __name__ == "__main__":
    config = RunConfig(nest_handoff_history=os.environ.get("NEST") == "1")
    result = Runner.run_sync(triage, sys.stdin.read(), run_config=config)
    print(f"{result.final_output} [{result.last_agent.name}]")
