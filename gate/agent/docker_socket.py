"""Keep the Docker engine's socket out of the separated agent's reach.

GitHub mounts the runner's docker socket into a container action, and whoever can connect to it
is root on the runner host (`docker run --privileged -v /:/host`). Running the agent as another
uid keeps it away from the socket only as long as the socket's mode says so; it does not when the
socket is world-writable (some self-hosted and docker-in-docker setups) or when its group's id on
the host happens to be the agent user's group id inside the image (`useradd --system` picks 999,
which is also where a fresh host's `docker` group often lands).

So before the first agent starts, the gate checks whether the separated user could `connect()` to
any socket it knows of (`DOCKER_HOST`'s `unix://` path, /var/run/docker.sock, /run/docker.sock):
write permission on the socket and search permission on every directory to it. Where it could:

- inside a container, when the socket is a bind mount and its directory belongs to the container's
  own file system (the image's /run), that directory loses its group and other permissions: the
  agent cannot reach the path, the gate (root) still talks to the engine for a docker agent, and
  nothing of the host changes (a chmod of the socket itself would change the host's socket);
- anywhere else (a host, a socket directory mounted from the host), the gate changes nothing and the
  report's separation line says that the agent can drive the engine and how to close it.

A TCP `DOCKER_HOST` is a network address, not a path: `agent.network: proxy-only` is what keeps an
agent from it, or TLS whose client key the agent's user cannot read (`DOCKER_TLS_VERIFY` with
`DOCKER_CERT_PATH`). Without either the report says so in one line (`tcp_note`). Mount namespaces would
hide the socket better, but a container action gets no CAP_SYS_ADMIN to make one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CANDIDATES = ("/var/run/docker.sock", "/run/docker.sock")
CONTAINER_FILESYSTEMS = ("overlay", "tmpfs")


def sockets(env=os.environ) -> list[str]:
    """The real paths of the docker sockets that exist here (DOCKER_HOST's first)."""
    host = env.get("DOCKER_HOST", "")
    paths = [host.removeprefix("unix://")] if host.startswith("unix://") else []
    found = []
    for path in [*paths, *CANDIDATES]:
        real = os.path.realpath(path)
        try:
            if stat.S_ISSOCK(os.stat(real).st_mode) and real not in found:
                found.append(real)
        except OSError:
            continue
    return found


def _allows(st: os.stat_result, uid: int, gid: int, bits: int) -> bool:
    shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
    return (st.st_mode >> shift) & bits == bits


def connectable(path: str, uid: int, gid: int) -> bool:
    """Could uid:gid (no supplementary group) connect() to the socket at `path`?"""
    target = Path(path)
    try:
        if not all(_allows(os.stat(d), uid, gid, 1) for d in reversed(target.parents)):
            return False
        return _allows(os.stat(target), uid, gid, 2)
    except OSError:
        return False


def _mounts() -> list[tuple[str, str]]:
    """(mount point, file system type) of this process's mounts, in mount order."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) > 4 and right:
            out.append((fields[4].replace("\\040", " "), right.split()[0]))
    return out


def _container_owned(directory: str, mounts: list[tuple[str, str]]) -> bool:
    """Is `directory` on the container's own file system (not a mount of the host's)?"""
    best = max((m for m in mounts if directory == m[0] or directory.startswith(m[0].rstrip("/") + "/")),
               key=lambda m: len(m[0]), default=None)
    return best is not None and best[1] in CONTAINER_FILESYSTEMS


def tcp_note(name: str, uid: int, gid: int, env=os.environ) -> str | None:
    """A line for the report when DOCKER_HOST is a TCP address the user could talk to: no TLS, or TLS whose
    client key it can read. Whether it reaches the address depends on its network: proxy-only closes it."""
    host = env.get("DOCKER_HOST", "")
    if not host.startswith("tcp://"):
        return None
    if env.get("DOCKER_TLS_VERIFY"):
        key = Path(env.get("DOCKER_CERT_PATH") or Path(env.get("HOME", "/root")) / ".docker") / "key.pem"
        try:
            readable = all(_allows(os.stat(d), uid, gid, 1) for d in reversed(key.parents)) and \
                _allows(os.stat(key), uid, gid, 4)
        except OSError:
            readable = False
        if not readable:
            return None
    return (f"DOCKER_HOST is {host}: {name} (uid {uid}) can drive that docker engine over the network, which is "
            "root on its machine, unless agent.network: proxy-only holds; use a unix socket, or TLS "
            "(DOCKER_TLS_VERIFY) with a client key that user cannot read")


def guard(name: str, uid: int, gid: int, env=os.environ) -> str | None:
    """Take every docker socket out of reach of `name` (uid:gid) where that changes nothing of the host;
    a line for the report when one stays in reach, else None."""
    mounts = _mounts()
    left = []
    for path in sockets(env):
        if not connectable(path, uid, gid):
            continue
        parent = os.path.dirname(path)
        if any(m[0] == path for m in mounts) and _container_owned(parent, mounts):
            try:
                os.chmod(parent, os.stat(parent).st_mode & ~0o077)
            except OSError:
                pass
        if connectable(path, uid, gid):
            left.append(path)
    if not left:
        return None
    return (f"the docker socket {', '.join(left)} is in reach of {name} (uid {uid}): the agent can drive the "
            "docker engine, which is root on this machine; take it away (chmod o-rw, and a docker group whose id "
            "is not that user's group)")
