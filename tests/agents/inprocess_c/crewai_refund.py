"""A CrewAI crew as its quickstart writes one: an Agent with a `@tool`, a Task, `Crew.kickoff`.

`issue_refund(order_id)` appends the order to $LEDGER (the write the test counts). The
model is CrewAI's default (`gpt-4.1-mini`, its native OpenAI client, which reads
$OPENAI_BASE_URL); native function calling, so the tool's JSON schema is what the model sees.

VARIANT=bug: every default. CrewAI tells the model "Error executing tool: ..." for a
tool that raised, and a model told so calls it again: a refund that timed out after it
was written is written twice.
VARIANT=sound: a `before_tool_call` hook (CrewAI's own, run before the body) lets each
order through once per run; a repeat is blocked instead of refunding again.
"""

import sys

from crewai import Agent, Crew, Task
from crewai.hooks import before_tool_call
from crewai.tools import tool
from refunds import SOUND, SYSTEM, Once, record_refund

once = Once()


@tool
def issue_refund(order_id: str) -> dict:
    """Refund an order by its id."""
    return record_refund(order_id)


if SOUND:
    @before_tool_call(tools=["issue_refund"])
    def once_per_order(context):
        # False blocks the call: CrewAI tells the model it was not run
        return None if once.first(context.tool_input.get("order_id")) else False


support = Agent(role="Support agent", goal="Resolve the customer's request",
                backstory=SYSTEM, tools=[issue_refund])
request = Task(description="{request}", expected_output="A short reply to the customer", agent=support)

if __name__ == "__main__":
    print(Crew(agents=[support], tasks=[request]).kickoff(inputs={"request": sys.stdin.read()}).raw)
