"""A command agent whose one tool is a command-line program: `ledger add <order>`.

Reads a request on stdin ("refund order 1234"), runs `ledger` found on its PATH the
way agents run `git`, and prints one line. AGENT_BUGS plants the mistakes agents make
with subprocesses (comma-separated; none: the sound twin):

- no_timeout: runs the tool without a timeout, so a tool that hangs hangs the agent;
- trust_stdout: never looks at the exit code and parses whatever stdout held;
- retry_on_timeout: runs `ledger add` again when it timed out (exit 124), although the
  first run may have written: a double write.

The sound agent gives the tool 2 s, checks the exit code before reading stdout, reads stdout
guarded (an exit 0 may still come with nothing, or half a line), and never repeats a write whose
outcome it does not know.
"""

import json
import os
import re
import subprocess
import sys

BUGS = set(filter(None, os.environ.get("AGENT_BUGS", "").split(",")))
TIMEOUT_EXIT = 124


def ledger(*args: str) -> subprocess.CompletedProcess:
    timeout = None if "no_timeout" in BUGS else 2.0
    try:
        return subprocess.run(["ledger", *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(["ledger", *args], TIMEOUT_EXIT, "", "ledger did not answer in time")


def refund(order: str) -> str:
    done = ledger("add", order)
    if done.returncode == TIMEOUT_EXIT and "retry_on_timeout" in BUGS:
        done = ledger("add", order)
    if done.returncode != 0 and "trust_stdout" not in BUGS:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return f"I could not confirm the refund for order {order}: {why[0]}."
    if "trust_stdout" in BUGS:
        entry = json.loads(done.stdout)  # whatever arrived, complete or not
        return f"Refund for order {order} recorded as ledger entry {entry['entry']}."
    try:  # exit 0 is no promise of a whole answer (found by exploring it: empty and garbled stdout)
        entry = json.loads(done.stdout)["entry"]
    except (ValueError, KeyError, TypeError):
        return f"I could not confirm the refund for order {order}: the ledger's answer was unreadable."
    return f"Refund for order {order} recorded as ledger entry {entry}."


def main() -> int:
    text = sys.stdin.read()
    m = re.search(r"refund.*?(\d{3,})", text, re.I)
    print(refund(m.group(1)) if m else "I can help with refunds.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
