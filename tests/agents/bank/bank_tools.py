"""The bank agent's in-process tool: a function the gate wraps where the agent looks it up
(`kind: function`, `function: bank_tools:send_receipt`), so its calls are traced and faulted
with no wire in between."""

import os

OUTBOX = os.environ.get("OUTBOX", os.devnull)


def send_receipt(account: str, text: str) -> dict:
    """Send the customer a receipt for a transfer."""
    with open(OUTBOX, "a") as out:
        out.write(f"{account}: {text}\n")
    return {"sent": True, "account": account}
