"""One agent instance as the runner sees it: start, reset, invoke, restart, stop.

A worker owns exactly one instance (and, with chaos, one proxy), so whatever the
agent does during a cell can be attributed to that cell. A crash mid-cell is the
agent's outcome (`agent_crash`, with its log tail); failing to restart is the
gate's (HarnessError), and the runner records it as an error, not a failure.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path

from gate.agent import conversation, dilation, netns, separation
from gate.agent.environment import agent_environment
from gate.agent.invoke import LineSession, RawOutcome, invoke_command, invoke_http, log_size, read_from, send
from gate.report.log_tail import with_log_tail
from gate.agent.ports import free_port
from gate.agent.process import AgentProcess, argv_of
from gate.templates import render
from gate.config.models import AgentConfig
from gate.errors import HarnessError
from gate.transport import WireClient, WireError
from gate.transport.clock import AgentClock


class AgentInstance:
    def __init__(self, agent: AgentConfig, base_dir: Path, index: int, log_dir: Path,
                 extra_env: dict[str, str] | None = None):
        self.spec, self.base_dir, self.index = agent, base_dir, index
        self.log_path = log_dir / f"agent-{index}.log"
        self.extra_env = dict(extra_env or {})
        self.shim_dir: Path | None = None  # PATH shims of `kind: command` tools (set by the pool)
        self.port: int | None = None
        self.host = "127.0.0.1"
        self.process: AgentProcess | None = None
        self.wire = WireClient()  # invocations and resets
        self._http = None  # an httpx.AsyncClient, made for the first state probe
        self.startup_seconds = 0.0
        self.restarts = 0
        self._session: tuple[tuple, str] | None = None  # ((cell_id, run), id): made by a reset, taken by its invoke
        self._sessions = 0  # session ids made so far: each one fresh

    @property
    def base_url(self) -> str:
        if self.spec.url:
            return self.spec.url.rstrip("/")
        return f"http://{self.host}:{self.port}"

    def _ctx(self, **more) -> dict:
        return {"port": str(self.port or ""), "url": self.base_url, **more}

    def _made_session(self, ctx: dict) -> dict:
        """ctx with `{{session}}`: an id fresh for every run of a cell, so an API that keeps a conversation
        per session id (Google ADK's api_server) starts each run afresh, a re-run of the same cell and
        run included (a shrink, a recovery). The reset makes it; the invoke that follows takes the same."""
        self._session = ((ctx.get("cell_id"), ctx.get("run")), self._fresh_session(ctx))
        return {**ctx, "session": self._session[1]}

    def _fresh_session(self, ctx: dict) -> str:
        """A session id no earlier run of this instance used: seeded by the cell, the run, the instance and
        how many it made before (all randomness flows from seeds: a rerun of the gate names the same ids)."""
        self._sessions += 1
        rng = random.Random(f"{ctx.get('cell_id')}:{ctx.get('run')}:{self.index}:{self._sessions}:session")
        return f"{rng.getrandbits(128):032x}"

    def _taken_session(self, ctx: dict) -> dict:
        made, self._session = self._session, None
        if made is not None and made[0] == (ctx.get("cell_id"), ctx.get("run")):
            return {**ctx, "session": made[1]}
        return {**ctx, "session": self._fresh_session(ctx)}  # no reset before it (the reference answer): its own

    def _project(self) -> list[Path]:
        """Where the agent's own virtualenv and node_modules are: the directory it runs in, then the config's."""
        start, command = self.spec.start, self.spec.invoke.command
        own = start.cwd if start is not None else (command.cwd if command is not None else None)
        return [self.base_dir / own, self.base_dir] if own else [self.base_dir]

    def _env(self, base: bool = True, invoke_env: dict[str, str] | None = None) -> dict[str, str]:
        """The allow-listed environment (see gate.agent.environment): never the gate's whole one.
        `invoke_env` (a command invocation's own env) goes in before the instrumentation, so a PATH
        or PYTHONPATH it sets keeps the shims and the bootstrap in front."""
        start = self.spec.start
        gate_set = dict(self.extra_env)
        if start is not None:
            gate_set[start.port_env] = str(self.port)
        env = agent_environment(os.environ, inherit=start.inherit_env if start else (), gate_set=gate_set,
                                configured=render(start.env, self._ctx()) if start else {}, base=base,
                                project=self._project())
        return self._instrument({**env, **(invoke_env or {})}, container=start is not None and start.docker is not None)

    def _instrument(self, env: dict[str, str], container: bool) -> dict[str, str]:
        from gate.instrument import environment

        library = None if container else dilation.library_for(self.spec.time_scale)
        if library is not None:  # the agent's clock at time_scale (verified before the run)
            env = dilation.dilated(env, library, self.spec.time_scale)
        if self.spec.instrument == "off" or container or environment.FN_URL not in env:
            return environment.plain(env)
        return environment.instrumented(env, self.shim_dir)

    def http_client(self):
        """httpx for `state` probes (only they need a general client; invocations use `self.wire`)."""
        if self._http is None:
            from gate.agent.http import async_client

            self._http = async_client()
        return self._http

    async def start(self) -> None:
        if self.spec.start is not None:
            await self._spawn()

    async def _spawn(self) -> None:
        start = self.spec.start
        began = time.monotonic()
        if start.docker is not None:
            await self._spawn_container(start.docker)
        else:
            self.port = free_port()
            cwd = (self.base_dir / start.cwd) if start.cwd else self.base_dir
            # {{port}} and {{url}} in the command, a string or each element of a list alike (a list's
            # elements reach the agent as argv, past any shell that could expand $PORT)
            argv = argv_of(render(start.command, self._ctx()))
            self.process = AgentProcess(argv, cwd, self._env(), self.log_path,
                                        user=self.spec.user, configured=frozenset(start.env),
                                        network=self.spec.network, port=self.port,
                                        proxy_ports=tuple(netns.gate_ports(self.extra_env)), instance=self.index)
            self.process.spawn()
        url = render(start.ready.url, self._ctx()) if start.ready.url else None
        if url is None and start.ready.log is None and self.spec.invoke.http is not None:
            url = self.base_url  # any answer on the port means it is listening
        try:
            await self.process.wait_ready(url, start.ready.log, start.ready.timeout)
        except HarnessError:
            self.process.stop()
            raise
        self.startup_seconds += time.monotonic() - began

    async def _spawn_container(self, spec) -> None:
        from gate.agent.container import ContainerAgent, docker_client, image_for, placement

        if self.spec.network != "host":
            separation.note("agent.network: proxy-only is not applied to a docker agent: it is on docker's network")
        client = await asyncio.to_thread(docker_client)
        where = await asyncio.to_thread(placement, client)
        image = await image_for(client, spec, self.base_dir)
        self.port = free_port() if where.mode == "host" else spec.port
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.process = ContainerAgent(client, image, spec, self._env(base=False), self.port, where, self.log_path)
        await asyncio.to_thread(self.process.spawn)
        self.host = await asyncio.to_thread(lambda: self.process.host)

    async def ensure_alive(self) -> None:
        if self.process is not None and not await self.process.is_alive():
            await self.restart()

    async def restart(self) -> None:
        if self.process is not None:
            await asyncio.to_thread(self.process.stop)
        self.restarts += 1
        await self._spawn()

    async def reset(self, ctx: dict) -> None:
        if self.spec.reset is None:
            return
        try:
            status, body, _ = await send(self.wire, self.spec.reset, self._ctx(**self._made_session(ctx)))
        except WireError as exc:
            raise HarnessError(f"agent reset request failed: {exc}") from None
        if status >= 400:
            raise HarnessError(f"agent reset answered {status}: {body[:200]!r}")

    async def invoke(self, text: str, ctx: dict) -> RawOutcome:
        """One message in the run's session: a conversation of one turn, so `{{turn}}` is 1 there too."""
        return await self._call(text, {**self._taken_session(ctx), "turn": "1", "history": []})

    async def converse(self, turns: tuple[str, ...], history: str, ctx: dict,
                       on_turn=lambda n: None) -> RawOutcome:
        """Every turn of a conversation input in order, in the run's one session; the deadline is per turn.
        A failed turn ends the run (gate/agent/conversation.py says which outcome it ends with); the log
        is the whole conversation's slice, every turn's answer in `turns`. `on_turn(n)` is told before turn
        n is sent (the proxy keys the calls that follow, and the faults meant for that turn, by it)."""
        ctx = self._taken_session(ctx)
        whole_log = self.process is not None or self.spec.invoke.command is not None
        mark = log_size(self.log_path) if whole_log else 0
        transcript: list[dict] = []
        latency = 0.0
        lines = self._line_session(ctx)
        try:
            for n, text in enumerate(turns, 1):
                on_turn(n)
                outcome = await self._call(text, conversation.turn_ctx(ctx, n, history, transcript), history, lines)
                conversation.record(transcript, n, text, outcome)
                latency += outcome.latency_ms
                if outcome.reason != "ok":
                    break
        finally:
            if lines is not None:
                await lines.close()
        if whole_log:
            outcome.log = read_from(self.log_path, mark)
        return conversation.ended(outcome, transcript, len(turns), latency)

    def _line_session(self, ctx: dict) -> LineSession | None:
        """The one process of a `conversation: lines` command for this run (started by its first turn)."""
        cmd = self.spec.invoke.command
        if cmd is None or cmd.conversation != "lines":
            return None
        cwd = (self.base_dir / cmd.cwd) if cmd.cwd else self.base_dir
        env = self._env(invoke_env=render(cmd.env, self._ctx(**{**ctx, "turn": "1", "history": "[]"})))
        return LineSession(cmd, cwd, env, self.log_path, self.spec.user, self.index)

    async def _call(self, text: str, ctx: dict, history: str = "none", lines: LineSession | None = None,
                    ) -> RawOutcome:
        """One request to the agent, `ctx` holding its session and turn; `lines`, the conversation's one
        process of a `conversation: lines` command (a single input's is made here, for its one turn)."""
        deadline = self.spec.timeout
        if self.spec.invoke.command is not None:
            cmd = self.spec.invoke.command
            if self.spec.network != "host":
                separation.note("agent.network: proxy-only is not applied to a command invocation: it shares the "
                                "gate's network")
            if cmd.conversation == "lines":
                return await self._line_turn(text, ctx, lines)
            cwd = (self.base_dir / cmd.cwd) if cmd.cwd else self.base_dir
            rendered = render(cmd.env, self._ctx(**{**ctx, "history": conversation.history_json(ctx)}))
            env = self._env(invoke_env={**rendered, **conversation.command_env(ctx, history)})
            return await invoke_command(cmd, text, cwd, env, self.log_path, deadline, self.clock(), self.spec.user,
                                        self.index)
        mark = log_size(self.log_path) if self.process is not None else 0
        outcome = await invoke_http(self.wire, self.spec.invoke.http, self._ctx(input=text, **ctx), deadline,
                                    self.clock())
        if self.process is None:
            return outcome
        if outcome.reason != "ok":
            outcome = await self._check_crash(outcome)
        outcome.log = read_from(self.log_path, mark)  # the cell's own slice: one instance per worker
        return outcome

    async def _line_turn(self, text: str, ctx: dict, lines: LineSession | None) -> RawOutcome:
        if lines is not None:
            return await lines.ask(text, self.spec.timeout, self.clock())
        single = self._line_session(ctx)  # a single input to a `conversation: lines` command: one turn
        try:
            return await single.ask(text, self.spec.timeout, self.clock())
        finally:
            await single.close()

    def clock(self) -> AgentClock:
        """The agent's time base for a cell (gate/agent/dilation.py): real time unless dilated."""
        return AgentClock(self.spec.time_scale, self.pid)

    def pid(self) -> int | None:
        proc = getattr(self.process, "proc", None)  # a process agent (a container has no pid here)
        return proc.pid if proc is not None else None

    def uid(self) -> int | None:
        """The uid the agent's process runs as (gate/agent/separation.py): the gate's own when it was not
        separated; None for a command or container agent, or before it started."""
        who = getattr(self.process, "identity", None)
        if who is not None:
            return who.uid
        return os.geteuid() if hasattr(self.process, "proc") else None

    async def _check_crash(self, outcome: RawOutcome) -> RawOutcome:
        """A dead process turns a failed call (`invoke` asks only for those) into `agent_crash`,
        and gets restarted."""
        if outcome.reason == "connection_error":
            # the socket closes a moment before the kernel reports the exit
            for _ in range(25):
                if not await self.process.is_alive():
                    break
                await asyncio.sleep(0.02)
        if await self.process.is_alive():
            return outcome
        code, log = await asyncio.to_thread(lambda: (self.process.exit_code, self.process.log_tail()))
        outcome = RawOutcome(None, "agent_crash", outcome.status, outcome.latency_ms,
                             with_log_tail(f"agent exited with code {code} during the cell", log))
        if self.spec.restart_on_crash:
            await self.restart()
        return outcome

    async def stop(self) -> None:
        if self.process is not None:
            # SIGTERM and the wait run in a thread so the workers' agents stop in parallel
            await asyncio.to_thread(self.process.stop)
        if self._http is not None:
            await self._http.aclose()
        await self.wire.aclose()
