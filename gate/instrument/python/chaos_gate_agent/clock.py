"""The agent's own clock, read from inside its interpreter, for the gate's dilation check.

`agent.time_scale: N` preloads libfaketime; the gate's probe process shows the library
works in the agent's environment, but not that the agent itself kept it: a launcher
that clears LD_PRELOAD, or a re-exec with a clean environment, leaves the agent on real
time while the gate judges it on dilated deadlines. So, when the gate set
CHAOS_GATE_TIME_SCALE, a daemon thread reports `time.monotonic()` twice, TICK seconds
of this process's time apart; the gate times the two reports on its own clock and
refuses the run if this process's clock did not speed up (gate/instrument/clock.py).
One short-lived thread, two loopback POSTs, nothing else.
"""

from __future__ import annotations

import os
import threading
import time

TICK = 0.5  # seconds of the agent's time between the two readings (50 ms real at 10x)


def report_rate() -> None:
    if not os.environ.get("CHAOS_GATE_TIME_SCALE"):
        return
    threading.Thread(target=_tick, name="chaos-gate-clock", daemon=True).start()


def _tick() -> None:
    from chaos_gate_agent import client

    if not client.enabled():
        return
    pid = os.getpid()
    client._post("/clock", {"pid": pid, "n": 0, "at": time.monotonic()}, timeout=5.0)
    time.sleep(TICK)
    client._post("/clock", {"pid": pid, "n": 1, "at": time.monotonic()}, timeout=5.0)
