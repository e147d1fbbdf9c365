"""Every child process group the gate started, so none outlives the gate.

Agents run in their own process group (so their children die with them); this
registry kills the groups on normal exit, Ctrl-C, SIGTERM and atexit alike.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import time

_groups: dict[int, subprocess.Popen | None] = {}


def track(pgid: int, proc: subprocess.Popen | None = None) -> None:
    _groups[pgid] = proc


def untrack(pgid: int) -> None:
    _groups.pop(pgid, None)


def kill_group(pgid: int, grace: float = 2.0) -> None:
    """SIGTERM the group, wait up to `grace`, then SIGKILL whatever is left."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        untrack(pgid)
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        proc = _groups.get(pgid)
        if proc is not None and proc.poll() is None:
            time.sleep(0.02)
            continue
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc = _groups.get(pgid)
    if proc is not None:
        try:
            proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
    untrack(pgid)


_cleanups: dict[str, object] = {}


def track_cleanup(key: str, fn) -> None:
    """Something other than a process group to undo on exit (a container, ...)."""
    _cleanups[key] = fn


def untrack_cleanup(key: str) -> None:
    _cleanups.pop(key, None)


def kill_all() -> None:
    for pgid in list(_groups):
        kill_group(pgid, grace=1.0)
    for key, fn in list(_cleanups.items()):
        fn()
        _cleanups.pop(key, None)


atexit.register(kill_all)


def install_signal_handlers() -> None:
    """Turn SIGTERM into KeyboardInterrupt so the same cleanup path runs for both."""

    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
