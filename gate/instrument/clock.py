"""The dilation check on the agent itself: did its own clock speed up?

`agent.time_scale: N` is verified before the run on a probe process (gate/agent/dilation.py),
which shows that libfaketime works in the agent's environment, not that the agent kept it:
a launcher that clears LD_PRELOAD or re-execs with a clean environment leaves the agent on
real time, and the gate would judge it on deadlines N times too short. The bootstrap inside
each instrumented Python or Node process (chaos_gate_agent/clock.py, node/install.cjs) posts
its monotonic clock twice, a fixed span of its own time apart, to `/fn/clock`; this module
times the two posts on the gate's clock. Their ratio is that process's clock rate. A rate
far below N means the agent runs undilated, and the runner refuses the run with this
module's reason (gate/runner/pool.py) rather than judge it.

Processes without the bootstrap (`agent.instrument: off`, a binary that is neither Python
nor Node) report nothing; the probe is then the only check, and the report says so.
"""

from __future__ import annotations

import time

MAX_PROCESSES = 1000
MIN_SPAN = 0.005  # real seconds: shorter spans are too coarse to judge (the posts' own latency)


def slowest_dilated(scale: float) -> float:
    """The lowest clock rate that counts as sped up at `scale`: sqrt(N), halfway between 1x and N on a
    log scale, so neither a loaded event loop (which delays the posts and can only lower a dilated
    rate a little) nor an undilated clock's jitter lands on the wrong side."""
    return scale ** 0.5


class ClockReadings:
    """Per agent process: its first reading, then its clock rate once the second arrives."""

    def __init__(self):
        self.first: dict[int, tuple[float, float]] = {}  # pid -> (gate time, agent time)
        self.rates: dict[int, float] = {}

    def note(self, doc: dict, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        try:
            pid, n, at = int(doc["pid"]), int(doc["n"]), float(doc["at"])
        except (KeyError, TypeError, ValueError, OverflowError):
            return  # not a reading: the agent's bytes never break the proxy
        if n == 0:
            if len(self.first) < MAX_PROCESSES:  # pids come from the agent: bounded, whatever it sends
                self.first.setdefault(pid, (now, at))
            return
        began = self.first.get(pid)
        if began is None or pid in self.rates:
            return
        real = now - began[0]
        if real >= MIN_SPAN:
            self.rates[pid] = (at - began[1]) / real

    def pending(self) -> bool:
        """A process sent its first reading and not yet its second."""
        return any(pid not in self.rates for pid in self.first)

    def undilated(self, scale: float) -> str | None:
        """Why the run cannot be judged at `scale`, or None while every measured clock sped up."""
        slow = sorted((pid, rate) for pid, rate in self.rates.items() if rate < slowest_dilated(scale))
        if not slow:
            return None
        pid, rate = slow[0]
        return (f"agent.time_scale {scale:g}: the agent's own clock did not speed up (process {pid} ran at "
                f"{rate:.1f}x, measured inside it), so its timeouts and backoff run in real time while the gate "
                f"waits {scale:g} times less; a verdict on that would be wrong. Its start command or launcher "
                "probably clears LD_PRELOAD or FAKETIME (keep them in the environment it passes on), or set "
                "agent.time_scale: 1")
