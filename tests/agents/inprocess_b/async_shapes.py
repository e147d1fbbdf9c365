"""The async paths of the google-genai and Anthropic seams (tests/test_instrument_python_b.py).

`python async_shapes.py genai-async`: `client.aio.models.generate_content` with an
async function (the SDK awaits it); `genai-thread`: the same with a sync function,
which the SDK runs on a thread; `anthropic-async`: `AsyncAnthropic` with a
`@beta_async_tool` under the async tool runner. Each prints the reply; the write is a
line in $LEDGER.
"""

import asyncio
import json
import sys

from front import MODEL, SYSTEM, record_refund

PROMPT = "Please refund order 1234, it arrived damaged."


async def genai(use_async: bool) -> str:
    from google import genai
    from google.genai import types

    async def issue_refund(order_id: str) -> dict:
        """Issue a refund for an order."""
        return record_refund(order_id)

    def issue_refund_sync(order_id: str) -> dict:
        """Issue a refund for an order."""
        return record_refund(order_id)

    issue_refund_sync.__name__ = "issue_refund"
    fn = issue_refund if use_async else issue_refund_sync
    config = types.GenerateContentConfig(system_instruction=SYSTEM, tools=[fn])
    response = await genai.Client().aio.models.generate_content(model=MODEL, contents=PROMPT, config=config)
    return response.text or ""


async def anthropic_async() -> str:
    import anthropic
    from anthropic import beta_async_tool

    @beta_async_tool
    async def issue_refund(order_id: str) -> str:
        """Issue a refund for an order."""
        return json.dumps(record_refund(order_id))

    runner = anthropic.AsyncAnthropic().beta.messages.tool_runner(
        model=MODEL, max_tokens=1024, system=SYSTEM, tools=[issue_refund],
        messages=[{"role": "user", "content": PROMPT}])
    final = await runner.until_done()
    return "".join(block.text for block in final.content if block.type == "text")


if __name__ == "__main__":
    mode = sys.argv[1]
    run = {"genai-async": lambda: genai(True), "genai-thread": lambda: genai(False),
           "anthropic-async": anthropic_async}[mode]
    print(json.dumps({"reply": asyncio.run(run())}))
