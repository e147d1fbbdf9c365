"""Start the configured services before the agents, and stop them on every exit path.

Each service is a command (own process group, own log file, the agent's allow-list
environment) or a container (the agent's Docker placement rules). They start in the
order listed, one after the other, so a service may use an earlier one's URL; each must
be ready (its `ready` URL and/or log line, by default its own URL answering) before the
next starts. A service that fails to start ends the run as an `agent_start` error with
its log tail: the gate could not judge, so the agent is not blamed.

A stateful service is made fresh before every cell run (`ServiceResets`, one more worker
hook): its `reset` HTTP call, or with `restart: per_cell` a stop and start on the same
port. `{{port}}`, `{{host}}` and earlier services' URLs in its command are expanded at spawn.
A service that fronts a tool or model is watched for requests the agent sends it around the
proxy (gate/services/peers.py, one more worker hook).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from gate.agent import reaper, separation
from gate.agent import dilation
from gate.agent.environment import agent_environment
from gate.agent.ports import free_port
from gate.agent.process import AgentProcess, AgentStartError, argv_of
from gate.templates import render
from gate.config.models import ServiceSpec
from gate.config.service_refs import render_services
from gate.services.peers import PeerLog, PeerWatch, fronted

RUNNING: ContextVar[list | tuple] = ContextVar("chaos_gate_services", default=())  # the services of the run in progress


class Service:
    """One started service: its process or container, port, host and URL."""

    def __init__(self, spec: ServiceSpec, base_dir: Path, log_dir: Path, time_scale: float = 1.0):
        self.spec, self.base_dir, self.time_scale = spec, base_dir, time_scale
        self.log_path = log_dir / f"service-{spec.name}.log"
        self.process = None
        self.host, self.port = "127.0.0.1", 0
        self.known: dict = {}
        self.untouched = False  # started and not used by any cell run yet: no restart needed
        self.restarts = 0  # restarts per cell so far: the proxy keeps MCP sessions across them (proxy/mcp_sessions.py)
        self.fronted = False  # a tool or model upstream names it: watch for requests around the proxy (peers.py)
        self.peer_log: PeerLog | None = None

    def _env(self, known: dict, base: bool) -> dict[str, str]:
        spec = self.spec
        gate_set = {spec.port_env: str(self.port)} if spec.port_env else {}
        ctx = {"host": self.host, "port": str(self.port)}
        configured = render_services(render(spec.env, ctx), known)
        own = [self.base_dir / spec.cwd, self.base_dir] if spec.cwd else [self.base_dir]
        env = agent_environment(os.environ, inherit=spec.inherit_env, gate_set=gate_set, configured=configured,
                                base=base, project=own)
        library = dilation.library_for(self.time_scale) if base else None  # a container's clock stays real
        return dilation.dilated(env, library, self.time_scale) if library else env

    async def start(self, known: dict[str, dict[str, str]], keep_port: bool = False) -> dict[str, str]:
        """Start, wait until ready; returns {url, host, port}. AgentStartError names the service."""
        self.known, self.untouched = known, True
        try:
            if self.spec.docker is not None:
                await self._spawn_container(known, keep_port)
            else:
                self._spawn_command(known, keep_port)
            attrs = self.attrs()
            ready = self.spec.ready
            url = render(ready.url, attrs) if ready.url else (None if ready.log else attrs["url"])
            await self.process.wait_ready(url, ready.log, ready.timeout)
        except AgentStartError as exc:
            raise self._start_error(exc) from None
        return attrs

    def attrs(self) -> dict[str, str]:
        ctx = {"host": self.host, "port": str(self.port)}
        return {**ctx, "url": render(self.spec.url, ctx).rstrip("/")}

    def _spawn_command(self, known: dict, keep_port: bool = False) -> None:
        self.port = self.port if keep_port and self.port else free_port()
        cwd = (self.base_dir / self.spec.cwd) if self.spec.cwd else self.base_dir
        command = render_services(render(self.spec.command, {"host": self.host, "port": str(self.port)}), known)
        self.process = AgentProcess(argv_of(command), cwd, self._env(known, base=True), self.log_path,
                                    user=self.spec.user, configured=frozenset(self.spec.env), what="service",
                                    finish_env=self._watch if self.fronted else None)
        self.process.spawn()

    def _watch(self, who, env: dict[str, str]) -> None:
        self.peer_log = PeerLog.prepare(self.spec.name, who, env)

    async def refresh(self, cell_id: str, run: int) -> None:
        """Fresh state before a cell run: the reset call, or a restart on the same port."""
        from gate.errors import HarnessError

        untouched, self.untouched = self.untouched, False
        if self.spec.restart == "per_cell" and not untouched:
            self.stop()
            self.restarts += 1
            try:
                await self.start(self.known, keep_port=True)
            except AgentStartError as exc:
                raise HarnessError(str(exc)) from None
            self.untouched = False  # this run uses it
        if self.spec.reset is None:
            return
        import httpx

        reset = render(self.spec.reset.model_dump(), {**self.attrs(), "cell_id": cell_id, "run": str(run)})
        try:
            async with httpx.AsyncClient(timeout=self.spec.ready.timeout) as client:
                resp = await client.request(reset["method"], reset["url"], headers=reset["headers"],
                                            json=reset["body"] if reset["body"] is not None else None)
        except httpx.HTTPError as exc:
            raise HarnessError(f"service '{self.spec.name}' reset ({reset['method']} {reset['url']}) failed: "
                               f"{type(exc).__name__}: {exc}") from None
        if resp.status_code >= 400:
            raise HarnessError(f"service '{self.spec.name}' reset ({reset['method']} {reset['url']}) answered "
                               f"{resp.status_code}: {resp.text[:200]!r}")

    async def _spawn_container(self, known: dict, keep_port: bool = False) -> None:
        from gate.agent.container import ContainerAgent, docker_client, image_for, placement

        client = await asyncio.to_thread(docker_client)
        where = await asyncio.to_thread(placement, client)
        image = await image_for(client, self.spec.docker, self.base_dir)
        self.port = (self.port if keep_port and self.port else free_port()) if where.mode == "host" \
            else self.spec.docker.port
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.process = ContainerAgent(client, image, self.spec.docker, self._env(known, base=False), self.port,
                                      where, self.log_path)
        await asyncio.to_thread(self.process.spawn)
        self.host = await asyncio.to_thread(lambda: self.process.host)

    def _start_error(self, exc: AgentStartError) -> AgentStartError:
        # the process layer speaks of "agent"; here it is this service that failed
        first = str(exc).split("\nlast lines of")[0].replace("agent container", "container", 1)
        first = first.replace("agent ", "", 1) if first.startswith("agent ") else first
        return AgentStartError(f"service '{self.spec.name}' did not start: {first}", exc.log_tail)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


async def _start_all(services: list[Service]) -> dict[str, dict[str, str]]:
    known: dict[str, dict[str, str]] = {}
    for service in services:
        known[service.spec.name] = await service.start(known)
        _say_if_unwatched(service)
    return known


def _say_if_unwatched(service: Service) -> None:
    """One line of `run.separation` for a fronted service whose requests around the proxy go unseen."""
    if not service.fronted:
        return
    if service.spec.docker is not None:
        why = "it runs in a container"
    elif getattr(service.process, "identity", None) is None:
        why = "it runs as the gate's own user, so no uid tells the agent's connections from the gate's"
    else:
        why = None if service.peer_log is None else service.peer_log.unwatched_reason()  # None: PeerLog said why
    if why is not None:
        separation.note(f"service '{service.spec.name}' is not watched for requests sent around the proxy: {why}")


@contextmanager
def running_services(loaded, log_dir: Path):
    """Yields `loaded` with every `{{services.*}}` resolved, while the services run; stops them after."""
    from gate.transport.loop import run_async
    from gate.config.service_refs import resolve_config

    specs = loaded.config.services
    if not specs:
        yield loaded
        return
    services = [Service(spec, loaded.base_dir, log_dir, loaded.config.agent.time_scale) for spec in specs]
    watched = fronted(loaded.config)
    for service in services:
        service.fronted = service.spec.name in watched
    try:
        try:
            known = run_async(reaper.interruptible(_start_all(services)))
        except reaper.Interrupted:
            raise KeyboardInterrupt("interrupted while starting services") from None
        token = RUNNING.set(services)
        try:
            yield dataclasses.replace(loaded, config=resolve_config(loaded.config, known))
        finally:
            RUNNING.reset(token)
    finally:
        for service in reversed(services):  # the agents are stopped by then; dependencies last
            service.stop()


class ServiceResets:
    """A worker hook: before every cell run, each service that asks for it is made fresh, in order."""

    def __init__(self, services: list[Service]):
        self.services = services

    def env(self) -> dict[str, str]:
        return {}

    async def start(self) -> None:
        pass

    async def begin(self, cell, run: int) -> None:
        for service in self.services:
            await service.refresh(cell.id, run)

    async def end(self, cell, run: int, obs) -> None:
        pass

    async def stop(self) -> None:
        pass


def with_service_hooks(hook_factory):
    """`hook_factory` plus the running services' worker hooks: ServiceResets when a service resets or
    restarts per cell run (load-time checks keep such a config at concurrency 1: the services are shared
    by every worker), and PeerWatch when a service is watched for requests around the proxy."""
    fresh = [s for s in RUNNING.get() if s.spec.reset is not None or s.spec.restart != "never"]
    logs = [s.peer_log for s in RUNNING.get() if s.peer_log is not None]
    if not fresh and not logs:
        return hook_factory

    def hooks(index: int) -> list:
        extra = ([ServiceResets(fresh)] if fresh else []) + ([PeerWatch(logs)] if logs else [])
        return [*(hook_factory(index) if hook_factory else []), *extra]
    return hooks
