"""A DSPy agent as its quick-start writes one: `dspy.ReAct("question -> answer", tools=[fn])` on `dspy.LM`.

`issue_refund(order_id)` appends the order to $LEDGER (the write the test counts) and
answers with a refund id. `dspy.LM("openai/gpt-4o-mini")` goes through LiteLLM, which
reads $OPENAI_API_BASE and $OPENAI_API_KEY. Input on stdin, the answer on stdout.

VARIANT=bug: the agent prints the answer with the refund id read out of the program's
own trajectory (`pred.trajectory["observation_0"]["refund_id"]`), as if the tool always
returned its receipt. ReAct turns a tool that raised into an observation *text*
("Execution error in issue_refund: ..."), so a failed refund crashes the agent with a
TypeError instead of an answer.
VARIANT=sound: the receipt is read only when the observation is one (a dict); otherwise
the model's answer (which says the refund failed) is printed alone.
"""

import os
import sys

import dspy

LEDGER = os.environ["LEDGER"]


def issue_refund(order_id: str) -> dict:
    """Refund an order."""
    with open(LEDGER, "a+", encoding="utf-8") as ledger:  # one line per refund written
        ledger.write(order_id + "\n")
        ledger.seek(0)
        return {"refund_id": f"rf_{len(ledger.readlines())}", "status": "refunded"}


dspy.configure(lm=dspy.LM(f"openai/{os.environ.get('MODEL', 'gpt-4o-mini')}"))
react = dspy.ReAct("question -> answer", tools=[issue_refund])

if __name__ == "__main__":
    pred = react(question=sys.stdin.read())
    receipt = pred.trajectory.get("observation_0")
    if os.environ.get("VARIANT") == "sound" and not isinstance(receipt, dict):
        print(pred.answer)
    else:
        print(f"{pred.answer} (refund {receipt['refund_id']})")
