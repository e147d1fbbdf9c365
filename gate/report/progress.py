"""Progress while cells run: cells done / total, failures so far, elapsed time and ETA.

A terminal gets a live bar (gate.report.terminal); a CI log gets one plain line every few
seconds instead (a redrawn bar there is thousands of lines of noise), written to stderr so
that stdout stays the run's result. The Action wraps these lines in a `::group::`.
`CHAOS_GATE_PROGRESS_SECONDS` sets the interval between plain lines (default 5).

A phase after the cells (shrinking failing cells, gate/runner/shrink.py) says so with
`on_plan(total, phase="shrinking")` and is counted on its own, with its own ETA, so no stretch of
the run is silent.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO
from collections.abc import Callable

DEFAULT_INTERVAL = 5.0


def run_failed(run) -> bool:
    """A run counts as failing when the gate could not judge it or any judged invariant broke."""
    if run is None:
        return False
    return run.error is not None or any(not c.passed and c.judged for c in run.checks)


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class PlainProgress:
    """on_plan / on_progress callbacks that print `chaos-gate: 12/40 cells · 2 failing · 0:14 elapsed · ETA 0:33`."""

    def __init__(self, out: TextIO | None = None, interval: float | None = None,
                 now: Callable[[], float] = time.monotonic):
        self.out = out or sys.stderr
        env = os.environ.get("CHAOS_GATE_PROGRESS_SECONDS")
        self.interval = interval if interval is not None else float(env) if env else DEFAULT_INTERVAL
        self.now = now
        self.total = self.done = self.failures = 0
        self.started = self.last = 0.0
        self.phase: str | None = None  # after the cells: what runs now (its items are failing cells)
        self._uncounted: list = []  # runs since the last line: judged only when a line is written

    def on_plan(self, total: int, phase: str | None = None) -> None:
        if phase is not None:  # a phase of its own after the cells: counted from zero
            self.phase, self.total, self.done = phase, total, 0
            self.started = self.last = self.now()
            self._write(f"chaos-gate: {phase} {total} failing cell(s)")
            return
        if self.total:  # called again: exploration planned more after the baselines
            self._write(f"chaos-gate: exploring: {total - self.total} more cell run(s)")
            self.total = total
            return
        self.total, self.started = total, self.now()
        self.last = self.started
        self._write(f"chaos-gate: running {total} cell run(s)")

    def on_progress(self, run=None) -> None:
        """`run` may be the pool's not-yet-judged run (gate/runner/pool.py `Finished`): asking it whether
        it failed judges it, so that waits until a line is due, and the runs in between are judged
        in one go."""
        self.done += 1
        self._uncounted.append(run)
        at = self.now()
        if at - self.last >= self.interval or self.done == self.total:
            self.failures += sum(run_failed(r) for r in self._uncounted)
            self._uncounted.clear()
            self.last = at
            self._write(self.line(at))

    def line(self, at: float) -> str:
        elapsed = at - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else None
        if self.phase is not None:
            return (f"chaos-gate: {self.phase} {self.done}/{self.total} failing cells · {clock(elapsed)} elapsed · "
                    f"ETA {clock(eta)}")
        return (f"chaos-gate: {self.done}/{self.total} cells · {self.failures} failing · "
                f"{clock(elapsed)} elapsed · ETA {clock(eta)}")

    def _write(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()
