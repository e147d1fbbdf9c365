"""An OpenAI Agents SDK app with an input guardrail, written the way the SDK's guardrail docs write one.

A guardrail agent (structured output `RelevanceOutput`, no tools) decides whether the
question is about the shop's orders; the support agent has one function tool,
`lookup_order(order_id)`. Input on stdin, the final output on stdout; a tripped guardrail
prints a refusal. The model is a name, so the SDK's default client (Responses API) reads
$OPENAI_BASE_URL.
"""

import sys

from pydantic import BaseModel

from agents import (Agent, GuardrailFunctionOutput, InputGuardrailTripwireTriggered, Runner, function_tool,
                    input_guardrail)


class RelevanceOutput(BaseModel):
    reasoning: str
    is_relevant: bool


guardrail_agent = Agent(
    name="Relevance guardrail",
    model="gpt-4o-mini",
    instructions="Determine if the user's message is about the shop's orders (status, refunds, delivery).",
    output_type=RelevanceOutput,
)


@input_guardrail
async def relevance_guardrail(ctx, agent, user_input):
    result = await Runner.run(guardrail_agent, user_input, context=ctx.context)
    return GuardrailFunctionOutput(output_info=result.final_output,
                                   tripwire_triggered=not result.final_output.is_relevant)


@function_tool
def lookup_order(order_id: str) -> str:
    """Look up an order's status.

    Args:
        order_id: the order number
    """
    return f"order {order_id}: shipped"


support = Agent(name="Support", model="gpt-4o-mini", instructions="You help customers with their orders.",
                tools=[lookup_order], input_guardrails=[relevance_guardrail])

if __name__ == "__main__":
    try:
        print(Runner.run_sync(support, sys.stdin.read()).final_output)
    except InputGuardrailTripwireTriggered:
        print("Sorry, I can only help with questions about your orders.")
