"""A LlamaIndex agent as its starter tutorial writes one: `FunctionAgent(tools=[fn], llm=OpenAI(...))`.

`issue_refund(order_id)` appends the order to $LEDGER (the write the test counts).
`llama_index.llms.openai.OpenAI` reads its base URL from $OPENAI_API_BASE (not
$OPENAI_BASE_URL: the gate sets both) and its key from $OPENAI_API_KEY.

VARIANT=bug: every default. The agent hands the model whatever the function returned,
so text planted in a tool result (an `inject` fault) reaches a model that may obey it,
and the reply relays it.
VARIANT=sound: the tool's `callback` (LlamaIndex's own hook on the tool's output, whose
return replaces what the model reads) withholds a result carrying instruction-like text.
"""

import asyncio
import os
import sys

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI
from refunds import SOUND, SYSTEM, record_refund, withheld


def issue_refund(order_id: str) -> dict:
    """Refund an order by its id."""
    return record_refund(order_id)


tools = [FunctionTool.from_defaults(issue_refund, callback=withheld)] if SOUND else [issue_refund]
agent = FunctionAgent(tools=tools, llm=OpenAI(model=os.environ.get("MODEL", "gpt-4o-mini")),
                      system_prompt=SYSTEM)


async def main(text: str) -> str:
    return str(await agent.run(text))


if __name__ == "__main__":
    print(asyncio.run(main(sys.stdin.read())))
