"""Start an agent command in its own process group, wait until it is ready, stop it.

Output goes straight to a per-instance log file (never through a pipe the gate
must drain), so an agent that floods stdout can't block or bloat the gate.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

from gate.agent import netns, reaper, separation
from gate.errors import HarnessError
from gate.transport import WireClient, WireError

LOG_TAIL_BYTES = 4000
SHOWN_TAIL = 900


class AgentStartError(HarnessError):
    """The agent did not start or never became ready; carries its log tail for the report."""

    def __init__(self, message: str, log_tail: str = ""):
        # the end of the log says why; keep it short enough to survive the comment's code block
        shown = log_tail if len(log_tail) <= SHOWN_TAIL else "…" + log_tail[-SHOWN_TAIL:]
        super().__init__(message + (f"\nlast lines of the agent's log:\n{shown}" if log_tail else ""))
        self.log_tail = log_tail


def argv_of(command: str | list[str]) -> list[str]:
    return ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)


def tail(path: Path, limit: int = LOG_TAIL_BYTES) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return ("…" if size > limit else "") + text


async def answers(client: WireClient, url: str) -> bool:
    """Does `url` answer a GET with a status below 500 within a second? The body is not read:
    a ready endpoint may stream forever. The gate's own lean client, not httpx: polling every
    50 ms while each worker's agent starts is on the path of every run."""
    try:
        async with asyncio.timeout(1.0):
            status, _, _, close = await client.request("GET", url, [], b"")
            await close()
    except (WireError, TimeoutError, ValueError):
        return False
    return status < 500


class AgentProcess:
    """One started agent: its process group, port, log file. `user` is agent.user (gate/agent/separation.py):
    the process runs as that user when the gate can; `configured` names the variables the config set itself."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], log_path: Path,
                 user: str = "off", configured: frozenset[str] = frozenset(), what: str = "agent",
                 network: str = "host", proxy_ports: tuple[int, ...] = (), port: int | None = None,
                 instance: int = 0, finish_env=None):
        self.argv, self.cwd, self.env, self.log_path = argv, cwd, env, log_path
        self.finish_env = finish_env  # (identity, env) -> None: what the environment needs once the user is known
        self.instance = instance  # which agent instance: each its own uid (gate/agent/separation.py)
        self.user, self.configured, self.what = user, configured, what
        self.network, self.proxy_ports, self.port = network, proxy_ports, port
        self.identity: separation.Identity | None = None
        self.proc: subprocess.Popen | None = None
        self.namespace: netns.Namespace | None = None

    def _separate(self) -> dict[str, str]:
        """The environment to start with, as the user agent.user names (AgentStartError if it cannot)."""
        try:
            self.identity = separation.choose(self.user, self.argv, self.cwd, self.env, self.what, self.configured,
                                              self.instance)
        except separation.Unreachable as exc:
            raise AgentStartError(str(exc)) from None
        return separation.as_user(self.env, self.identity, dict.fromkeys(self.configured, ""))

    def _isolated(self) -> tuple[list[str], dict, tuple[int, ...]]:
        """(argv, Popen's user arguments, descriptors to pass): in a namespace of its own under proxy-only."""
        user = self.identity.popen() if self.identity else {}
        if self.network != "proxy-only":
            return self.argv, user, ()
        try:
            self.namespace = netns.Namespace(list(self.proxy_ports), self.port)
            drop = self.identity.setpriv() if self.identity else []
        except (netns.Unavailable, separation.Unreachable) as exc:
            if self.namespace is not None:
                self.namespace.close()
                self.namespace = None
            separation.note(str(exc))
            return self.argv, user, ()
        separation.note(f"{self.what}s run in a network namespace of their own where only the gate's proxy is "
                        "reachable", enforced=True)  # no port in it: one line for every worker
        if self.identity is None:
            separation.note(f"agent.network: proxy-only does not hold: the {self.what} runs as the gate's own user "
                            "(root), which can leave its network namespace")
        argv, fds = self.namespace.wrap([*drop, *self.argv])
        return argv, {}, fds

    def spawn(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = self._separate()
        if self.finish_env is not None:
            self.finish_env(self.identity, env)
        argv, user, fds = self._isolated()
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child's stdout: handed to Popen, closed in `finally`
        try:
            self.proc = subprocess.Popen(
                argv, cwd=self.cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, pass_fds=fds, **user)
        except OSError as exc:
            raise AgentStartError(f"agent command {shlex.join(self.argv)!r} could not start: {exc}"
                                  f"{separation.explain(str(exc), self.identity)}") from None
        finally:
            log.close()
        reaper.track(self.proc.pid, self.proc)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    async def is_alive(self) -> bool:
        return self.alive  # a waitpid: cheap enough to ask before every cell

    @property
    def exit_code(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def log_tail(self) -> str:
        return tail(self.log_path)

    async def wait_ready(self, url: str | None, log_pattern: str | None, timeout: float) -> float:
        """Seconds until ready; HarnessError with the log tail if it dies or the deadline passes."""
        started = time.monotonic()
        pattern = re.compile(log_pattern) if log_pattern else None
        client = WireClient(connect_timeout=1.0)
        try:
            while True:
                if not self.alive:
                    log = self.log_tail()
                    raise AgentStartError(f"agent exited during start-up with code {self.exit_code} "
                                          f"(log: {self.log_path}){separation.explain(log, self.identity)}", log)
                if await self._is_ready(client, url, pattern):
                    return time.monotonic() - started
                if time.monotonic() - started > timeout:
                    raise AgentStartError(
                        f"agent not ready after {timeout:g}s (waiting for "
                        f"{url or ''}{' and ' if url and pattern else ''}{log_pattern or ''}; "
                        f"log: {self.log_path})", self.log_tail())
                await asyncio.sleep(0.05)
        finally:
            await client.aclose()

    async def _is_ready(self, client: WireClient, url: str | None, pattern) -> bool:
        if pattern is not None and not pattern.search(tail(self.log_path, 64_000)):
            return False
        return url is None or await answers(client, url)

    def stop(self) -> None:
        if self.proc is not None:
            reaper.kill_group(self.proc.pid)
        if self.namespace is not None:
            self.namespace.close()
            self.namespace = None
