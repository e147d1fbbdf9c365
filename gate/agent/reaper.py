"""Every child process group the gate started, so none outlives the gate.

Agents run in their own process group (so their children die with them); this
registry kills the groups on normal exit, Ctrl-C, SIGTERM and atexit alike. Inside
the event loop, SIGINT and SIGTERM cancel the run instead (`interruptible`).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import subprocess
import time
from contextlib import contextmanager

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
        _reap_zombies(pgid)  # the leader is gone: its orphans are the gate's (a subreaper) once they exit
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


def _reap_zombies(pgid: int) -> None:
    """Collect the group's exited members that are the gate's children: the gate is a child subreaper
    (gate/agent/accounting.py), so a shell's child outliving the shell is reparented to it, and its zombie
    would count as the group still alive until the grace ran out."""
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


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
    """Outside the event loop, turn SIGTERM into KeyboardInterrupt so one cleanup path serves both."""

    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived while cells ran: the run ends with a partial report."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


async def interruptible(coro):
    """Await `coro`; on SIGINT/SIGTERM cancel it (its finally blocks stop the agents) and raise Interrupted.

    A KeyboardInterrupt raised at an arbitrary point inside the event loop can skip
    the cleanup of whatever was running; cancelling the task at an await cannot.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    got: list[int] = []
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def on_signal(signum: int) -> None:
        if not got:  # a second signal changes nothing: teardown is already bounded
            got.append(signum)
            task.cancel()

    installed = []
    for sig in previous:
        try:
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
            pass
    try:
        return await coro
    except asyncio.CancelledError:
        if got:
            raise Interrupted(got[0]) from None
        raise
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
            # remove_signal_handler leaves SIG_DFL behind; put back what was there
            signal.signal(sig, previous[sig] if previous[sig] is not None else signal.SIG_DFL)


@contextmanager
def deferred_signals():
    """Hold SIGINT/SIGTERM while reports are written, so no file is left half-written.

    Yields a list that holds the signal numbers that arrived meanwhile."""
    got: list[int] = []
    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda signum, frame: got.append(signum))
    except ValueError:  # not the main thread: nothing to defer
        pass
    try:
        yield got
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
