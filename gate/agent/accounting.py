"""Every process the agent started is accounted for before a verdict is written.

Killing an agent's process group misses what left it: a `setsid` or double-forked daemon can
outlive the run and rewrite the reports after the gate wrote them. So the gate is a child
subreaper (PR_SET_CHILD_SUBREAPER): every orphan of the agent's tree is reparented to it
instead of to init, and stays its descendant. After the agents and services stop, whatever
descends from the gate and was not there when the run began is frozen, killed and reaped;
its command lines go into the report (`run.left_running`, and a warning of the verdict).

The gate also makes itself non-dumpable (PR_SET_DUMPABLE 0) at start, so no other user
reads its /proc environ, memory or descriptors, or ptraces it. Both are Linux prctl calls
through libc; elsewhere they do nothing. A snapshot of /proc, not a cgroup: it needs no
privilege and no mounted cgroup filesystem, and the subreaper keeps every orphan in view.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from gate.agent import separation

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
SHOWN_CHARS = 160
ROUNDS = 20  # a daemon that forks while it is killed: rounds of freeze-and-kill before giving up


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux, or no prctl in this libc
        return False


def _is_subreaper() -> bool:
    flag = ctypes.c_int(0)
    try:
        ctypes.CDLL(None).prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return bool(flag.value)


def harden() -> None:
    """The gate's own process: not dumpable, and the subreaper of everything it starts."""
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def _stat(pid: str) -> tuple[int, str, str] | None:
    """(parent pid, state, start time) from /proc/PID/stat, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            rest = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(rest[1]), rest[0].decode(), rest[19].decode()


def descendants(root: int) -> dict[int, tuple[str, str]]:
    """pid -> (state, start time) of every live descendant of `root`."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return {}
    children: dict[int, list[int]] = {}
    info: dict[int, tuple[str, str]] = {}
    for pid in pids:
        found = _stat(pid)
        if found is not None:
            children.setdefault(found[0], []).append(int(pid))
            info[int(pid)] = found[1:]
    out, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        out[pid] = info[pid]
        todo += children.get(pid, [])
    return out


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            text = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def _signal_all(pids, sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _reap(pids) -> None:
    """Collect the exit of those that are the gate's own children now (reparented orphans)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def _uid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            return int(next(line for line in fh if line.startswith(b"Uid:")).split()[1])
    except (OSError, StopIteration, ValueError):
        return None


def _new(before: dict[int, tuple[str, str]], uids: frozenset[int] | None) -> dict[int, tuple[str, str]]:
    """Descendants that were not there (same pid, same start time) when the run began, zombies aside;
    only those of `uids` when given."""
    return {pid: st for pid, st in descendants(os.getpid()).items()
            if before.get(pid) != st and st[0] not in ("Z", "X") and (uids is None or _uid(pid) in uids)}


def sweep(before: dict[int, tuple[str, str]], uids: frozenset[int] | None = None) -> list[str]:
    """Freeze, kill and reap every new descendant (of `uids`); their command lines, first seen first."""
    killed: dict[int, str] = {}
    for _ in range(ROUNDS):
        alive = _new(before, uids)
        if not alive:
            break
        _signal_all(alive, signal.SIGSTOP)  # frozen first: none forks or writes while the others die
        for pid in alive:
            killed.setdefault(pid, command_line(pid))
        _signal_all(alive, signal.SIGKILL)
        time.sleep(0.01)
        _reap(alive)
    _reap([*killed, *(pid for pid, st in descendants(os.getpid()).items() if st[0] == "Z" and pid not in before)])
    return [cmd or f"pid {pid}" for pid, cmd in killed.items()]


@dataclass
class Account:
    """A run's accounting: what was running before it, and what had to be killed after."""

    before: dict[int, tuple[str, str]] = field(default_factory=dict)
    left_running: list[str] = field(default_factory=list)
    separation: str | None = None

    uids: frozenset[int] = frozenset()  # the separated users of the run: all a later check may kill

    def finish(self, final: bool = False) -> list[str]:
        """Sweep; `final`, the check before anything is published, kills only processes of the run's
        separated users: anything else the gate's own process started since is not the agent's."""
        if not final or self.uids:
            self.left_running += sweep(self.before, self.uids if final else None)
        return self.left_running

    def stamp(self, report) -> None:
        """The report's `run.separation` and `run.left_running`, and a warning when anything was left."""
        report.run.separation = self.separation
        report.run.left_running = list(self.left_running)
        if self.left_running:
            report.verdict.warnings.append(
                f"{len(self.left_running)} process(es) the agent started were still running after it stopped "
                f"and were killed: {'; '.join(self.left_running[:5])}")


CURRENT: list[Account] = []  # the command's run, for the final check before publishing


def forget() -> None:
    """A command begins: no earlier command's run (in the same process: tests) is its to check or stamp."""
    CURRENT.clear()


@contextmanager
def accounted_run():
    """Around a run: the gate as subreaper (as before, after), the private directories of the agents' user,
    and the sweep."""
    was_subreaper = _is_subreaper()  # the CLI's always is; a test process calling run_gate gets it back unset
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    separation.begin_run()
    account = Account(before=descendants(os.getpid()))
    CURRENT[:] = [account]
    try:
        yield account
    finally:
        account.finish()
        account.separation, account.uids = separation.summary(), separation.uids()
        separation.end_run()
        if not was_subreaper:
            _prctl(PR_SET_CHILD_SUBREAPER, 0)


def final_check(report=None) -> list[str]:
    """Right before the reports or GitHub's files are written: kill whatever of the last run is still
    alive; `report` then lists it too."""
    if not CURRENT:
        return []
    account = CURRENT[-1]
    account.finish(final=True)
    if report is not None:  # also a report the run never returned (a start-up error's, made by the guard)
        report.verdict.warnings[:] = [w for w in report.verdict.warnings if "were still running after" not in w]
        account.stamp(report)
    return account.left_running
