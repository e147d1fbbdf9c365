"""The in-house tool module of tests/agents/declared/agent.py: plain functions, no framework.
`refund` appends to the LEDGER file, so a test counts the writes outside the gate."""

import json
import os


def refund(order_id: str, reason: str = "damaged") -> dict:
    with open(os.environ["LEDGER"], "a") as ledger:
        ledger.write(f"{order_id}\n")
    return {"order_id": order_id, "status": "refunded", "reason": reason}


def describe() -> list[dict]:
    """The tool as the agent offers it to its model."""
    return [{"type": "function", "function": {
        "name": "refund", "description": "Refund an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
                       "required": ["order_id"]}}}]


def result_text(value) -> str:
    return json.dumps(value)
