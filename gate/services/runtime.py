"""Start the configured services before the agents, and stop them on every exit path.

Each service is a command (own process group, own log file, the agent's allow-list
environment) or a container (the agent's Docker placement rules). They start in the
order listed, one after the other, so a service may use an earlier one's URL; each must
be ready (its `ready` URL and/or log line, by default its own URL answering) before the
next starts. A service that fails to start ends the run as an `agent_start` error with
its log tail: the gate could not judge, so the agent is not blamed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from contextlib import contextmanager
from pathlib import Path

from gate.agent import reaper
from gate.agent import dilation
from gate.agent.environment import agent_environment
from gate.agent.process import AgentProcess, AgentStartError, argv_of, free_port
from gate.agent.templates import render
from gate.config.models import ServiceSpec
from gate.services.templates import render_services


class Service:
    """One started service: its process or container, port, host and URL."""

    def __init__(self, spec: ServiceSpec, base_dir: Path, log_dir: Path, time_scale: float = 1.0):
        self.spec, self.base_dir, self.time_scale = spec, base_dir, time_scale
        self.log_path = log_dir / f"service-{spec.name}.log"
        self.process = None
        self.host, self.port = "127.0.0.1", 0

    def _env(self, known: dict, base: bool) -> dict[str, str]:
        spec = self.spec
        gate_set = {spec.port_env: str(self.port)} if spec.port_env else {}
        ctx = {"host": self.host, "port": str(self.port)}
        configured = render_services(render(spec.env, ctx), known)
        env = agent_environment(os.environ, inherit=spec.inherit_env, gate_set=gate_set, configured=configured,
                                base=base)
        library = dilation.library_for(self.time_scale) if base else None  # a container's clock stays real
        return dilation.dilated(env, library, self.time_scale) if library else env

    async def start(self, known: dict[str, dict[str, str]]) -> dict[str, str]:
        """Start, wait until ready; returns {url, host, port}. AgentStartError names the service."""
        try:
            if self.spec.docker is not None:
                await self._spawn_container(known)
            else:
                self._spawn_command(known)
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

    def _spawn_command(self, known: dict) -> None:
        self.port = free_port()
        cwd = (self.base_dir / self.spec.cwd) if self.spec.cwd else self.base_dir
        self.process = AgentProcess(argv_of(self.spec.command), cwd, self._env(known, base=True), self.log_path)
        self.process.spawn()

    async def _spawn_container(self, known: dict) -> None:
        from gate.agent.container import ContainerAgent, docker_client, image_for, placement

        client = await asyncio.to_thread(docker_client)
        where = await asyncio.to_thread(placement, client)
        image = await image_for(client, self.spec.docker, self.base_dir)
        self.port = free_port() if where.mode == "host" else self.spec.docker.port
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
    return known


@contextmanager
def running_services(loaded, log_dir: Path):
    """Yields `loaded` with every `{{services.*}}` resolved, while the services run; stops them after."""
    from gate.runner.loop import run_async
    from gate.services.templates import resolve_config

    specs = loaded.config.services
    if not specs:
        yield loaded
        return
    services = [Service(spec, loaded.base_dir, log_dir, loaded.config.agent.time_scale) for spec in specs]
    try:
        try:
            known = run_async(reaper.interruptible(_start_all(services)))
        except reaper.Interrupted:
            raise KeyboardInterrupt("interrupted while starting services") from None
        yield dataclasses.replace(loaded, config=resolve_config(loaded.config, known))
    finally:
        for service in reversed(services):  # the agents are stopped by then; dependencies last
            service.stop()
