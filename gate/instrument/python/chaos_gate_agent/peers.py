"""Inside a service the gate started: note every connection that did not come from the gate.

A tool's backend that the gate starts is reached through the gate's proxy, which traces and
faults each call. An agent that sends a request straight to the service's own port (scanned
from /proc/net/tcp, which every uid may read) goes around both, and the trace would say
"1 write" while the service executed 2. Where no network namespace can hold the agent
(a container action has no CAP_SYS_ADMIN), the service itself is the one place that sees
such a request arrive, so the gate loads this into it (`sitecustomize`, when it set
CHAOS_GATE_PEER_LOG) and reads the log after every cell run (gate/services/peers.py).

On each accepted TCP connection the peer's socket is looked up in /proc/net/tcp{,6}, whose
uid column names the process user that owns it. The gate's proxy, the gate's own calls
(readiness, resets, probes) and other services run as the gate's uid or the service's own;
any other uid, or a peer that cannot be found, is appended to the log as one line. The
log lives in the service user's private TMPDIR: the agent's uid can neither read nor write it.

It wraps `socket.socket.accept`, which the standard library's servers and asyncio's own
event loop call; uvloop accepts in C, so a process that imports uvloop says so in the log and
the gate reports that service as not watched. Standard library only: this runs in the
service's own interpreter.
"""

from __future__ import annotations

import importlib.abc
import os
import socket
import sys

HEADER = "watching"
UNWATCHED = "unwatched"
PEER = "peer"
TABLES = ("/proc/net/tcp", "/proc/net/tcp6")


def _hex(ip: str, port: int) -> set[str]:
    """How /proc/net/tcp{,6} spell ip:port ('127.0.0.1', 8080 -> '0100007F:1F90': each 32-bit word
    little-endian), in each table an IPv4 peer may sit in (as itself, or v4-mapped in tcp6)."""
    ip = ip[7:] if ip.startswith("::ffff:") else ip
    forms = []
    if ":" in ip:
        forms.append(socket.inet_pton(socket.AF_INET6, ip))
    else:
        v4 = socket.inet_pton(socket.AF_INET, ip)
        forms += [v4, b"\0" * 10 + b"\xff\xff" + v4]
    words = (b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4)) for raw in forms)
    return {f"{w.hex().upper()}:{port:04X}" for w in words}


def owner(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """The uid owning the socket at `peer` connected to `local`, or None when no table lists it."""
    want_peer, want_local = _hex(*peer), _hex(*local)
    for table in TABLES:
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) > 7 and cols[1] in want_peer and cols[2] in want_local:
                return int(cols[7])
    return None


class _Log:
    def __init__(self, path: str, trusted: set[int]):
        self.path, self.trusted = path, trusted

    def write(self, line: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode())  # one write: lines of several processes never interleave
        finally:
            os.close(fd)

    def note(self, conn: socket.socket, addr) -> None:
        if conn.family not in (socket.AF_INET, socket.AF_INET6) or conn.type != socket.SOCK_STREAM:
            return
        uid = owner(addr[:2], conn.getsockname()[:2])
        if uid is None or uid not in self.trusted:
            self.write(f"{PEER} {'?' if uid is None else uid} {addr[0]}:{addr[1]} {os.getpid()}")


class _NoteUvloop(importlib.abc.MetaPathFinder):
    """Finds nothing; notes once that this process imports uvloop, whose accepts bypass the wrapper."""

    def __init__(self, log: _Log):
        self.log, self.done = log, False

    def find_spec(self, name, path=None, target=None):
        if name == "uvloop" and not self.done:
            self.done = True
            self.log.write(f"{UNWATCHED} uvloop {os.getpid()}")
        return None


def install() -> None:
    path = os.environ.get("CHAOS_GATE_PEER_LOG", "")
    if not path or getattr(socket.socket.accept, "chaos_gate", False):
        return
    trusted = {int(u) for u in os.environ.get("CHAOS_GATE_PEERS_OK", "").split(",") if u.strip().isdigit()}
    log = _Log(path, trusted | {os.getuid()})
    original = socket.socket.accept

    def accept(self):
        conn, addr = original(self)
        try:
            log.note(conn, addr)
        except Exception:  # noqa: BLE001 - never break the service's server
            pass
        return conn, addr

    accept.chaos_gate = True
    socket.socket.accept = accept
    sys.meta_path.insert(0, _NoteUvloop(log))
    log.write(f"{HEADER} {os.getpid()}")
