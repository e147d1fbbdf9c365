#!/usr/bin/env python3
"""Container entrypoint of the agent-chaos-gate GitHub Action.

GitHub runs it in /github/workspace with INPUT_* variables and the GITHUB_* files;
everything it does lives in gate.github.action, so the CLI and the Action share one engine.
"""

import sys

from gate.agent.accounting import harden
from gate.github.action import run_action

if __name__ == "__main__":
    harden()  # first: not dumpable, the subreaper of the agent's orphans (docs/security.md)
    sys.exit(run_action())
