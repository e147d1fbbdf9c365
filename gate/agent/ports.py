"""Ports for the agents and services the gate starts: free now, and still free when they bind.

The gate picks a port, hands it to the agent (`$PORT`), and the agent binds it a moment later.
Asking the kernel for one (`bind(0)`) draws from the ephemeral range, the same range every
outgoing connection's local port comes from; a run makes thousands of short connections (the
proxy to a service that closes each one, the gate to its agents), so in that moment one of them
may take the port, the agent fails to bind, and under parallel runs the gate's readiness check
could even reach another agent on it. So the port comes from below the ephemeral range, where no
connection is given a port, drawn at random (two gates on one machine rarely draw the same one) and
checked free. The draw is seeded by a string of this process's id: a port never reaches a verdict.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

SPAN = 16000  # how far below the ephemeral range ports are drawn from
_draw = random.Random(f"free-ports:{os.getpid()}")


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range for local ports of outgoing connections (Linux's default elsewhere)."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    low, _ = ephemeral_range()
    first = max(1024, low - SPAN)
    if low - first >= 1000:  # a range left below the ephemeral one (a machine that moved it down has none)
        for _ in range(64):
            port = _draw.randrange(first, low)
            if _bindable(port):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
