"""How an agent process is instrumented: its environment, and nothing else.

The seams are reached without changing the agent (DESIGN-reach): the Python bootstrap
goes first on PYTHONPATH, the Node hook into NODE_OPTIONS (`--require`), command
shims first on PATH; CHAOS_GATE_FN_URL tells each of them which worker's proxy to ask.
What the agent's own environment already holds in those variables is kept after ours.
A container agent is not instrumented: these paths do not exist inside its image.
"""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHON_BOOTSTRAP = HERE / "python"
NODE_HOOK = HERE / "node" / "register.cjs"
FN_URL = "CHAOS_GATE_FN_URL"
REAL_PATH = "CHAOS_GATE_REAL_PATH"  # the PATH before the shims: where a shim finds the real command


def _prepend(first: str, rest: str | None, sep: str = os.pathsep) -> str:
    return first + (sep + rest if rest else "")


def _node_quote(path: str) -> str:
    """A path as NODE_OPTIONS reads it: Node splits on spaces and knows double quotes with
    backslash escapes only (a shell's single quotes would become part of the path)."""
    if not any(ch in path for ch in ' \t"\\\''):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def instrumented(env: dict[str, str], shim_dir: Path | None = None) -> dict[str, str]:
    """`env` (which carries FN_URL) with the bootstraps added."""
    env = dict(env)
    env["PYTHONPATH"] = _prepend(str(PYTHON_BOOTSTRAP), env.get("PYTHONPATH"))
    if NODE_HOOK.exists():
        env["NODE_OPTIONS"] = _prepend(f"--require {_node_quote(str(NODE_HOOK))}", env.get("NODE_OPTIONS"), " ")
    if shim_dir is not None:
        env[REAL_PATH] = env.get("PATH", os.defpath)
        env["PATH"] = _prepend(str(shim_dir), env.get("PATH"))
    return env


def plain(env: dict[str, str]) -> dict[str, str]:
    """`agent.instrument: off`: no trace of the instrumentation in the agent's environment."""
    return {k: v for k, v in env.items() if k not in (FN_URL, REAL_PATH)}
