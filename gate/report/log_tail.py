"""A failed run's detail: a one-line summary, then the tail of the agent's log after a mark.

The agent layer writes it (a command's stderr, a process's log at a crash) and the verdict
and the renderings read it, so the shape lives here, below all of them: the report shows
why the agent died (a `ModuleNotFoundError`), not only that it did.
"""

from __future__ import annotations


LOG_MARK = "\nthe agent's log ends:\n"  # separates a crash's summary from its log tail in `detail`
LOG_TAIL_CHARS = 1500
CRASH_REASONS = frozenset({"agent_crash", "exit_nonzero"})  # outcomes whose detail may carry a log tail


def with_log_tail(summary: str, log: str) -> str:
    """`summary` plus the last LOG_TAIL_CHARS of `log` (if any), split by LOG_MARK."""
    log = log.rstrip("\n")
    if not log.strip():
        return summary
    shown = log if len(log) <= LOG_TAIL_CHARS else "…" + log[-LOG_TAIL_CHARS:]
    return summary + LOG_MARK + shown


def log_tail_of(detail: str) -> str | None:
    """The log tail `with_log_tail` put into a detail, or None."""
    return detail.split(LOG_MARK, 1)[1] if LOG_MARK in detail else None
