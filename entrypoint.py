#!/usr/bin/env python3
"""Container entrypoint of the agent-chaos-gate GitHub Action.

GitHub runs it in /github/workspace with INPUT_* variables and the GITHUB_* files;
everything it does lives in gate.github.action, so the CLI and the Action share one engine.
"""

import sys

from gate.github.action import run_action

if __name__ == "__main__":
    sys.exit(run_action())
