"""Start the agent from a Docker image (or a build context) through the docker SDK.

Reachability is the hard part. On a host (or a container on the host network) the
agent shares the host's loopback: it runs with `network_mode=host` and listens on a
free port. Inside a container on a user-defined network — how GitHub runs container
actions — the agent joins that network, the gate's proxy listens on the gate's own
address there, and the agent is called by its container IP. Containers carry a label
and are removed on every exit path.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from gate.agent import reaper
from gate.agent.process import AgentStartError, answers
from gate.errors import HarnessError
from gate.transport import WireClient

LABEL = "org.agent-chaos-gate.agent"
_build_lock = asyncio.Lock()
_built: dict[str, str] = {}


@dataclass(frozen=True)
class Placement:
    mode: str  # host | network
    network: str | None = None
    own_ip: str | None = None


def docker_client():
    try:
        import docker

        client = docker.from_env()
        client.ping()
        return client
    except Exception as exc:  # docker.errors.DockerException and socket errors alike
        raise HarnessError(f"agent.start.docker needs a Docker engine: {exc}") from None


def placement(client) -> Placement:
    """Where the gate runs, as far as the agent's container is concerned."""
    if not os.path.exists("/.dockerenv"):
        return Placement("host")
    try:
        me = client.containers.get(socket.gethostname())
    except Exception:
        return Placement("host")
    settings = me.attrs["NetworkSettings"]["Networks"]
    if me.attrs["HostConfig"].get("NetworkMode") == "host" or "host" in settings:
        return Placement("host")
    name, net = next(iter(settings.items()))
    return Placement("network", name, net.get("IPAddress"))


async def image_for(client, spec, base_dir: Path) -> str:
    if spec.image:
        return spec.image
    context = (base_dir / spec.build.context).resolve()
    async with _build_lock:
        if str(context) not in _built:
            tag = "chaos-gate-agent:" + re.sub(r"[^a-z0-9]+", "-", context.name.lower()).strip("-")
            try:
                await asyncio.to_thread(client.images.build, path=str(context), dockerfile=spec.build.dockerfile,
                                        tag=tag, rm=True, network_mode="host", buildargs=spec.build.args)
            except Exception as exc:
                raise HarnessError(f"docker build of {context} failed: {exc}") from None
            _built[str(context)] = tag
        return _built[str(context)]


class ContainerAgent:
    """The AgentProcess interface (spawn/alive/is_alive/exit_code/log_tail/wait_ready/stop) for a container."""

    def __init__(self, client, image: str, spec, env: dict[str, str], port: int, where: Placement, log_path: Path):
        self.client, self.image, self.spec, self.env = client, image, spec, env
        self.port, self.where, self.log_path = port, where, log_path
        self.container = None

    def spawn(self) -> None:
        # no setuid escalation inside, and no raw sockets: on the host's network (the placement below) NET_RAW
        # would let the agent sniff the loopback traffic between the gate's proxy and the services
        kwargs = dict(environment=self.env, detach=True, labels={LABEL: "1"}, command=self.spec.command,
                      security_opt=["no-new-privileges:true"], cap_drop=["NET_RAW"])
        if self.where.mode == "host":
            kwargs["network_mode"] = "host"
        else:
            kwargs["network"] = self.where.network
        try:
            self.container = self.client.containers.run(self.image, **kwargs)
        except Exception as exc:
            raise AgentStartError(f"could not start container from {self.image}: {exc}") from None
        reaper.track_cleanup(self.container.id, self._remove)

    @property
    def host(self) -> str:
        if self.where.mode == "host":
            return "127.0.0.1"
        self.container.reload()
        return self.container.attrs["NetworkSettings"]["Networks"][self.where.network]["IPAddress"]

    @property
    def alive(self) -> bool:
        try:
            self.container.reload()
        except Exception:
            return False
        return self.container.status in ("created", "running")

    async def is_alive(self) -> bool:
        """Asks the engine over its socket: off the event loop, since the runner asks before every cell."""
        return await asyncio.to_thread(lambda: self.alive)

    @property
    def exit_code(self) -> int | None:
        try:
            return self.container.attrs["State"]["ExitCode"] if not self.alive else None
        except Exception:
            return None

    def log_tail(self) -> str:
        try:
            text = self.container.logs(tail=60).decode("utf-8", "replace")
        except Exception:
            return ""
        self.log_path.write_text(text, encoding="utf-8")
        return text

    async def wait_ready(self, url: str | None, log_pattern: str | None, timeout: float) -> float:
        started = time.monotonic()
        pattern = re.compile(log_pattern) if log_pattern else None
        client = WireClient(connect_timeout=1.0)
        try:
            while True:
                if not await self.is_alive():
                    raise AgentStartError(f"agent container exited during start-up with code {self.exit_code}",
                                          self.log_tail())
                ok = True
                if pattern is not None:
                    ok = bool(pattern.search(await asyncio.to_thread(self.log_tail)))
                if ok and url is not None:
                    ok = await answers(client, url)
                if ok:
                    return time.monotonic() - started
                if time.monotonic() - started > timeout:
                    raise AgentStartError(f"agent container not ready after {timeout:g}s", self.log_tail())
                await asyncio.sleep(0.1)
        finally:
            await client.aclose()

    def _remove(self) -> None:
        try:
            self.container.remove(force=True)
        except Exception:
            pass

    def stop(self) -> None:
        if self.container is not None:
            self.log_tail()
            self._remove()
            reaper.untrack_cleanup(self.container.id)
