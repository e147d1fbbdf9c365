"""The world clock: fake time that moves only when told — by the test, the config or a fault.

It starts at the world's `clock.start` (2026-01-01T00:00:00Z unless set) and moves by
`advance()` / `set()` (a test, or a custom operation), by `clock.per_call` after every
operation (the config), and by latency faults (the proxy's run offset, and a world's
`latency_ms`). Return windows, sync lag, `not_found_if_newer_than` and `rate_limit`
windows are all measured on it, so a test of them never waits.

`now()` is an aware UTC datetime; a naive datetime given to `set()` is taken as UTC.
"""

from __future__ import annotations

from datetime import datetime, timedelta, UTC
from collections.abc import Callable

from gate.worlds.model import EPOCH


class WorldClock:
    def __init__(self, start: datetime = EPOCH, offset: Callable[[], float] = lambda: 0.0):
        self.start = start if start.tzinfo else start.replace(tzinfo=UTC)
        self._offset = offset  # seconds added from outside (the proxy's latency faults)
        self._moved = 0.0

    def seconds(self) -> float:
        """Seconds since the start."""
        return self._moved + self._offset()

    def __call__(self) -> float:
        return self.seconds()

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.seconds())

    def advance(self, seconds: float | timedelta = 0.0, **units: float) -> datetime:
        """Move forward: `advance(90)`, `advance(timedelta(days=31))`, `advance(hours=2)`."""
        step = seconds.total_seconds() if isinstance(seconds, timedelta) else float(seconds)
        step += timedelta(**units).total_seconds() if units else 0.0
        if step < 0:
            raise ValueError("the clock only moves forward; use set() to go back")
        self._moved += step
        return self.now()

    def set(self, when: datetime) -> datetime:
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        self._moved = (when - self.start).total_seconds() - self._offset()
        return self.now()

    def __repr__(self) -> str:
        return f"WorldClock({self.now().isoformat()})"
