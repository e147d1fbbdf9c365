"""An agent on the Anthropic SDK's tool runner (`client.beta.messages.tool_runner`) with a local tool.

`issue_refund` is a `@beta_tool` function whose write is a line in $LEDGER; the gate
reaches the call only in-process (the chaos_gate_agent Anthropic seam).

The planted bug is the runner's default: a tool that raises becomes a `tool_result`
with `is_error: true` and `repr(exc)`, so a model that retries failed calls (sim
`on_error: retry`, as real models do) repeats a refund whose confirmation merely timed
out, and the customer is refunded twice. The sound twin uses the runner's documented
hook (`generate_tool_call_response()` in the loop; the runner sends that same, cached
result): a timed-out write is reported as not known to have failed, with an
instruction not to issue it again, instead of as an error to retry.
"""

import json
import re

import anthropic
from anthropic import beta_tool
from front import MODEL, SOUND, SYSTEM, main, record_refund

CLIENT = anthropic.Anthropic()
TIMED_OUT = re.compile(r"time ?out|timed out", re.I)
PENDING = ("The refund request was sent but its confirmation did not arrive in time, so it may already be done. "
           "Do not issue it again; tell the customer it is being processed.")


@beta_tool
def issue_refund(order_id: str) -> str:
    """Issue a refund for an order.

    Args:
        order_id: the order to refund
    """
    return json.dumps(record_refund(order_id))


def _no_blind_retry(response) -> None:
    for block in (response or {}).get("content", []):
        if block.get("is_error") and TIMED_OUT.search(str(block.get("content"))):
            block.pop("is_error")
            block["content"] = PENDING


def answer(message: str) -> str:
    runner = CLIENT.beta.messages.tool_runner(model=MODEL, max_tokens=1024, system=SYSTEM, tools=[issue_refund],
                                              messages=[{"role": "user", "content": message}])
    if SOUND:
        for _ in runner:
            _no_blind_retry(runner.generate_tool_call_response())
    final = runner.until_done()
    return "".join(block.text for block in final.content if block.type == "text")


if __name__ == "__main__":
    main(answer, "anthropic tool-runner")
