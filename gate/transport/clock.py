"""The run's one time base: the seconds the run would have taken at 1x, however fast the agent's clock runs.

Under `agent.time_scale` (gate/agent/dilation.py) the agent's waits pass N times fast; the
proxy (fault waits, latencies, trace timings) and the agent layer (invocation deadlines)
must then measure time the same way, so the clock sits here, below both.
"""

from __future__ import annotations

import os
import time


# -- the one time base --------------------------------------------------------------------
# Under dilation the agent's waits pass N times fast but its CPU work does not, so "real x N"
# would count every millisecond the agent computes as N. The gate's time base is the time the
# run would have taken at 1x: real time spent waiting counts N-fold, the agent's own CPU time
# (the busiest thread of its process tree: its time on a CPU or waiting for one, from /proc) at face value. Deadlines, latencies and trace timings all
# use it, so a verdict does not change with N (an agent that spins through a retry storm is
# still seen calling again at once).

def thread_busy(pid: int) -> dict[tuple[int, int], float]:
    """Per thread of `pid` and of every process below it: seconds spent running or ready to run
    (on a CPU, or in the run queue: a loaded machine's waits for a core are not the agent's waits),
    from /proc/*/task/*/schedstat; empty when the process is gone."""
    out, stack, seen = {}, [pid], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/schedstat", "rb") as fh:
                    on_cpu, queued = fh.read().split()[:2]
                out[(current, int(task))] = (int(on_cpu) + int(queued)) / 1e9
                with open(f"/proc/{current}/task/{task}/children", "rb") as fh:
                    stack += [int(c) for c in fh.read().split()]
            except (OSError, ValueError):
                continue
    return out


def _no_pid() -> None:
    return None


class AgentClock:
    """1x-equivalent seconds since `start()`: waiting at `scale`x, CPU at face value."""

    def __init__(self, scale: float = 1.0, pid_of=None):
        self.scale, self.pid_of = scale, pid_of or _no_pid
        self.dilated = scale > 1  # an attribute, not a property: asked several times in every cell
        self.real0 = self.last = 0.0
        self.base: dict = {}
        self.start()

    def _busy(self) -> float:
        """The busiest thread's running-or-ready seconds since start(): a thread that computes is not
        waiting, while threads busy side by side (or a sleeping thread's idle siblings) must not add up.
        A process that exited keeps its last reading (it is gone from /proc)."""
        pid = self.pid_of() if self.dilated else None
        now = thread_busy(pid) if pid else {}
        busiest = max((v - self.base.get(k, 0.0) for k, v in now.items()), default=0.0)
        self.last = max(self.last, busiest)
        return self.last

    def start(self) -> None:
        self.last = 0.0
        pid = self.pid_of() if self.dilated else None
        self.base = thread_busy(pid) if pid else {}
        self.real0 = time.monotonic()

    def elapsed(self) -> float:
        real = time.monotonic() - self.real0
        if not self.dilated:
            return real
        busy = min(self._busy(), real)
        return (real - busy) * self.scale + busy

    def within(self, awaitable, deadline: float):
        """Awaitable: `awaitable`'s result, or TimeoutError once `deadline` agent seconds have passed.
        Real time is one timer (`by_deadline`, returned as it is: no task, no polling, no frame)."""
        if not self.dilated:
            return by_deadline(awaitable, deadline)
        return self._within_dilated(awaitable, deadline)

    async def _within_dilated(self, awaitable, deadline: float):
        import asyncio

        task = asyncio.ensure_future(awaitable)
        try:
            while True:
                left = deadline - self.elapsed()
                if left <= 0:
                    raise TimeoutError()
                # short slices: each samples the CPU of processes that may exit soon
                slice_ = min(left / self.scale, 0.05)
                done, _ = await asyncio.wait({task}, timeout=slice_)
                if done:
                    return task.result()
        finally:
            if not task.done():
                task.cancel()
                try:
                    await task
                except BaseException:  # noqa: BLE001 - a cancelled invocation: only its absence matters
                    pass


async def by_deadline(awaitable, seconds: float):
    """`await awaitable`, or TimeoutError once `seconds` have passed: asyncio.timeout's meaning for
    the one shape the gate needs (it is on every cell's path, and its general form costs three times
    as much). A cancellation from outside stays a cancellation, even when the deadline passed too."""
    import asyncio

    task = asyncio.current_task()
    expired = []

    def expire():
        expired.append(True)
        task.cancel()

    timer = task.get_loop().call_later(seconds, expire)  # not get_running_loop(): a getpid() each on 3.11
    try:
        return await awaitable
    except asyncio.CancelledError:
        if expired and task.uncancel() == 0:
            raise TimeoutError() from None
        raise
    finally:
        timer.cancel()
