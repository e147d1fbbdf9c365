"""Command-line tools (`tools: [{name: git, kind: command}]`): the PATH shims, and their exchange.

An agent that runs `git` or `kubectl` through a subprocess never crosses the proxy, and
its code must not change. So the gate writes, once per gate run, a directory holding an
executable named like each command tool; environment.instrumented() puts it first on
the agent's PATH and keeps the real PATH in CHAOS_GATE_REAL_PATH. A shim is a two-line
sh script that execs the gate's own interpreter in isolated mode without site-packages
(`-I -S`: the agent's PYTHONPATH and virtualenv never leak into it, and it starts fast:
it runs on every call) on chaos_gate_agent/command.py (standard library only), which
relays the invocation through the worker's /fn/ endpoints like any in-process call and
runs the real command (found on the PATH minus the shims, never the shim itself). sh
rather than a `#!python -I` line because a shebang breaks on an interpreter path with
spaces or over the kernel's length limit; `exec` keeps the shim's pid, signals and code.

The proxy side is CommandExchange: the in-process FunctionExchange (so every tool fault
acts unchanged on the command's stdout as text), plus what only a process has: an exit
code without running it (`exit_code`, gate/faults/commands.py), bytes that stay bytes,
and the real command's exit code in the trace.
"""

from __future__ import annotations

import atexit
import base64
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gate.instrument.environment import PYTHON_BOOTSTRAP
from gate.instrument.exchange import FunctionExchange

AGENT_MAIN = PYTHON_BOOTSTRAP / "chaos_gate_agent" / "command.py"


def command_tools(config) -> list[str]:
    return [t.name for t in config.tools if t.kind == "command"]


def shim_text(name: str, shim_dir: Path) -> str:
    argv = [sys.executable, "-I", "-S", str(AGENT_MAIN), name, str(shim_dir)]
    return f"#!/bin/sh\n# chaos-gate shim for `{name}` (kind: command); the real one is on $CHAOS_GATE_REAL_PATH\n" \
           f"exec {shlex.join(argv)} \"$@\"\n"


def write_shims(names: list[str], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        path = directory / name
        path.write_text(shim_text(name, directory))
        path.chmod(0o755)
    return directory


def shim_dir_for(config) -> Path | None:
    """This gate run's shim directory (removed when the gate exits), or None without command tools."""
    names = command_tools(config)
    if not names:
        return None
    directory = Path(tempfile.mkdtemp(prefix="chaos-gate-shims-"))
    directory.chmod(0o755)  # an agent run as another user (gate/agent/separation.py) runs the shims, never writes them
    atexit.register(shutil.rmtree, directory, True)
    return write_shims(names, directory)


class CommandExchange(FunctionExchange):
    """One command invocation: the shim runs it where FunctionExchange would run the function."""

    async def forward(self):
        resp = await super().forward()
        code = self.call.result.result().get("exit") if self.call.result.done() else None
        if isinstance(code, int):
            self.entry.extra["exit_code"] = code  # what the real command said, before any fault
        return resp

    async def exit(self, code: int, stderr: str) -> None:
        """The command fails with `code` without running (the agent's shim writes `stderr`)."""
        self.entry.extra["exit_code"] = code
        self.note(f"exit {code} without running")
        self._instruct({"action": "exit", "code": code, "stderr": stderr})

    def _decode(self) -> dict:
        """Bytes a fault answers (`binary`) reach the command's stdout as those bytes, not as text."""
        media = next((v for k, v in self.answer["headers"] if k.lower() == "content-type"), "")
        status = self.answer["status"] or 200
        if status < 400 and media.startswith("application/octet-stream") \
                and not self._unchanged(status, b"".join(self.answer["body"])):
            return {"action": "return", "value": base64.b64encode(b"".join(self.answer["body"])).decode(),
                    "as": "bytes"}
        return super()._decode()


@dataclass
class CommandRoute:
    """The route of one command tool's calls: target = the tool's name (faults: `target: git`)."""

    name: str
    kind: str = "tool"
    provider: str = "command"
    upstream: object = None
    exchange = CommandExchange

    def faultable(self, info) -> bool:
        return True
