"""Faults only a command-line tool has (`tools: [{name: git, kind: command}]`).

A command fails by its exit code, and hangs by never exiting: neither has an HTTP
equivalent the other faults could stand for. `exit_code` makes the command fail
without running it (the agent's shim writes `stderr` and exits with `code`); `hang`
runs nothing and sleeps past the agent's own timeout, so an agent that runs its tools
without a subprocess timeout hangs with them. Both act on the calls of a command
tool's PATH shim (gate/instrument/commands.py); on any other call they are
not_applicable and the call goes through unchanged. The other tool faults mean the
same on a command as elsewhere, on its stdout: `partial`, `timeout_after_write`,
`inject`, `huge`, `binary`, `error`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gate.faults.base import TOOL, FaultBase, register

NOT_A_COMMAND = "not a command-line tool's call: only a `kind: command` tool exits or hangs"


class _CommandFault(FaultBase):
    applies_to = frozenset({TOOL})

    async def pass_through(self, ex) -> bool:
        """True (after passing the call through) when this call is not a command's."""
        if ex.info.provider == "command" and hasattr(ex, "exit"):
            return False
        ex.not_applicable(NOT_A_COMMAND)
        await ex.pipe(await ex.forward())
        return True


@register
class ExitCode(_CommandFault):
    """The command fails with exit `code` and `stderr`, without running."""

    kind: Literal["exit_code"] = "exit_code"
    code: int = Field(default=1, ge=1, le=255, description="The exit code the agent sees.")
    stderr: str = Field(default="error: failed (injected by chaos-gate)\n", description="What it writes to stderr.")

    async def apply(self, ex):
        if await self.pass_through(ex):
            return
        await ex.exit(self.code, self.stderr)


@register
class Hang(_CommandFault):
    """The command runs nothing and does not exit for `seconds` (then exits 124, as `timeout` does)."""

    kind: Literal["hang"] = "hang"
    seconds: float = Field(default=600.0, gt=0, le=3600, description="How long it hangs: past the agent's timeout.")

    async def apply(self, ex):
        if await self.pass_through(ex):
            return
        await ex.hold(self.seconds)
        await ex.abort("then exited 124")
