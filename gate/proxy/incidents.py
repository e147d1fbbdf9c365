"""What went wrong at the proxy's edge, counted, and told once per kind per cell.

An agent that hangs up mid-stream, sends garbage, or opens more connections than the process
has descriptors for does it again and again: a line per occurrence is how a CI log grows to
100,000 lines (asyncio logged one per write after a peer dropped). So the server counts each
kind of incident and says it once, with its count, when the cell it happened in ends (the
run's `over` event); incidents outside any cell are told after a short window. Never a
traceback, never the agent's bytes: a kind is a fixed phrase of the gate's own.
"""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger("gate.proxy")

WINDOW = 5.0  # seconds: how long incidents outside any cell are gathered before they are told

# kind -> (level, what is told before the count); the count ends the line
KINDS = {
    "hung_up": (logging.INFO, "agent connections closed before their answer was complete"),
    "malformed": (logging.WARNING, "malformed requests refused (400/431)"),
    "descriptors": (logging.WARNING, "accepts deferred: the process is out of file descriptors; "
                                     "agent connections wait in the backlog"),
}


class Incidents:
    """Counts per kind for the cell in progress; `cell()` is that cell's run (or None)."""

    def __init__(self, cell=lambda: None, label=lambda: None):
        self._cell, self._label = cell, label
        self._run = self._unset = object()
        self._name = None
        self._pending = None  # the task or timer that tells the current run's counts
        self.counts: dict[str, int] = {}

    def note(self, kind: str) -> None:
        run = self._cell()
        if run is not self._run:
            self.flush()
            self._run, self._name = run, (self._label() if run is not None else None)  # between cells: no cell named
            self._told_later(run)
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def _told_later(self, run) -> None:
        loop = asyncio.get_running_loop()
        over = getattr(run, "over", None)
        if isinstance(over, asyncio.Event):
            self._pending = loop.create_task(self._at_end(run, over))
        else:
            self._pending = loop.call_later(WINDOW, self._flush_if, run)

    async def _at_end(self, run, over: asyncio.Event) -> None:
        await over.wait()
        self._flush_if(run)

    def _flush_if(self, run) -> None:
        if run is self._run:
            self.flush()

    def flush(self) -> None:
        """Tell what was counted, one line per kind; start afresh."""
        counts, self.counts = self.counts, {}
        self._run = self._unset
        pending, self._pending = self._pending, None
        if pending is not None and pending is not asyncio.current_task():
            pending.cancel()  # a task or a timer: either is dropped once its counts are told
        where = f" in cell {self._name}" if self._name else ""
        for kind, count in counts.items():
            level, what = KINDS[kind]
            log.log(level, "chaos-gate proxy: %s%s: %d", what, where, count)
