"""A tiny command-line tool for the command-tool tests: `ledger add <order>`, `ledger show`.

A stand-in for `git` or `kubectl`: a real executable the agent runs, with a side effect
(a line appended to $LEDGER_FILE) that the tests count directly, so a repeated write
is seen on disk as well as in the gate's trace. `ledger add` answers one JSON line;
`ledger echo` copies stdin to stdout (the shim must pass stdin through).
"""

import json
import os
import sys


def main(args: list[str]) -> int:
    path = os.environ.get("LEDGER_FILE", "ledger.txt")
    if args[:1] == ["add"] and len(args) == 2:
        with open(path, "a") as f:
            f.write(args[1] + "\n")
        with open(path) as f:
            entry = sum(1 for _ in f)
        print(json.dumps({"entry": entry, "order": args[1], "status": "recorded"}))
        return 0
    if args[:1] == ["show"]:
        if os.path.exists(path):
            with open(path) as f:
                sys.stdout.write(f.read())
        return 0
    if args[:1] == ["echo"]:
        sys.stdout.buffer.write(sys.stdin.buffer.read())
        return 0
    if args[:1] == ["fail"]:
        print("half an answer")
        print("ledger: no such ledger", file=sys.stderr)
        return 3
    print(f"usage: ledger add <order> | show | echo | fail (got {args})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
