"""`agent.network: proxy-only`: the agent in a network namespace where only the gate's proxy answers.

Separation by uid hides a service's port from the agent, but not the port itself: an agent that
guesses or scans it can send a write straight to the service, around the proxy, and the trace never
sees it. In a network namespace of its own, with nothing but a loopback interface, such a write is
refused by the kernel instead of going unseen.

Shape, chosen to need nothing but root and util-linux's nsenter (no veth, no routes, no iptables,
and no change to the proxy, which keeps listening on the host's 127.0.0.1):

- a helper thread of the gate unshares a new network namespace (a thread's own; the gate's other
  threads stay where they are), brings its loopback up and keeps a descriptor of it; every socket
  the gate needs inside is made by that thread, and a socket keeps its namespace for life;
- on the namespace's 127.0.0.1 the gate listens on the proxy's ports (those in the variables the
  gate's own hooks hand the agent) and relays each connection to the same port on the host: the base
  URLs the agent was given work unchanged, and nothing else is there;
- on the host's 127.0.0.1 it listens on the agent's port and relays each connection into the
  namespace, so the gate's invocations and readiness checks reach the agent as before;
- the agent is started as `nsenter --net=/proc/self/fd/N -- setpriv --reuid … -- argv`: root enters
  the namespace, then drops to the separated user, who holds no capability to leave it.

Relays are plain threads with blocking sockets: independent of the event loop that starts and stops
agents from other threads, and cheap next to an agent's own work. Linux and root only; where it
cannot be set up, `Unavailable` says why in one line and the run reports it.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import shutil
import socket
import struct
import threading
from concurrent.futures import ThreadPoolExecutor

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
LOOPBACK = re.compile(r"(?:127\.0\.0\.1|localhost):(\d{2,5})\b")


class Unavailable(Exception):
    """proxy-only cannot be set up here; the message is the report's line."""


def gate_ports(env: dict[str, str]) -> list[int]:
    """The loopback ports named in the variables the gate's own hooks set for the agent (its proxy)."""
    return sorted({int(p) for value in env.values() for p in LOOPBACK.findall(value)})


def _enter_new_namespace() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:  # lo starts down, without 127.0.0.1
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, struct.pack("16sH", b"lo", 0))[:18])[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    finally:
        src.close()  # each socket is closed by the thread that reads it


def _relay(client: socket.socket, connect) -> None:
    try:
        upstream = connect()
    except OSError:
        client.close()  # refused: the client sees the connection end, as it would at a closed port
        return
    threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
    _pipe(client, upstream)


class Namespace:
    """One agent process's network namespace and the relays in and out of it."""

    def __init__(self, proxy_ports: list[int], agent_port: int | None):
        if not hasattr(os, "unshare") and not os.path.exists("/proc/self/ns/net"):
            raise Unavailable("agent.network: proxy-only needs Linux network namespaces; the agent shares the "
                              "gate's network and can reach any port")
        if os.geteuid() != 0:
            raise Unavailable(f"agent.network: proxy-only needs root (the gate runs as uid {os.geteuid()}); the "
                              "agent shares the gate's network and can reach any port")
        self.nsenter = shutil.which("nsenter")
        if self.nsenter is None:
            raise Unavailable("agent.network: proxy-only needs nsenter (util-linux); the agent shares the gate's "
                              "network and can reach any port")
        self.inside = ThreadPoolExecutor(1, thread_name_prefix="chaos-gate-netns")
        self.listeners: list[socket.socket] = []
        self.closed = False
        try:
            self.inside.submit(_enter_new_namespace).result()
            self.fd = self.inside.submit(os.open, "/proc/thread-self/ns/net", os.O_RDONLY).result()
            for port in proxy_ports:
                self._listen(self.inside.submit(self._bound, port).result(), self._to_host(port))
            if agent_port is not None:
                self._listen(self._bound(agent_port), self._into(agent_port))
        except OSError as exc:
            self.close()
            raise Unavailable(f"agent.network: proxy-only could not make a network namespace ({exc}); the agent "
                              "shares the gate's network and can reach any port") from None

    @staticmethod
    def _bound(port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(64)
        return sock

    @staticmethod
    def _to_host(port: int):
        return lambda: socket.create_connection(("127.0.0.1", port), timeout=5)

    def _into(self, port: int):
        def connect() -> socket.socket:
            sock = self.inside.submit(socket.socket, socket.AF_INET, socket.SOCK_STREAM).result()
            sock.connect(("127.0.0.1", port))  # a socket keeps the namespace it was made in
            return sock
        return connect

    def _listen(self, listener: socket.socket, connect) -> None:
        self.listeners.append(listener)

        def accept() -> None:
            while True:
                try:
                    client, _ = listener.accept()
                except OSError:
                    return
                client.settimeout(None)
                threading.Thread(target=_relay, args=(client, connect), daemon=True).start()

        threading.Thread(target=accept, daemon=True, name="chaos-gate-relay").start()

    def wrap(self, argv: list[str]) -> tuple[list[str], tuple[int, ...]]:
        """argv that runs in the namespace (the rest of the prefix drops root), and the descriptor to pass."""
        return [self.nsenter, f"--net=/proc/self/fd/{self.fd}", "--", *argv], (self.fd,)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for listener in self.listeners:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        if getattr(self, "fd", None) is not None:
            os.close(self.fd)
        self.inside.shutdown(wait=False)
