"""Every run ends in a report: the exit paths of `run_gate`, gathered in one place.

- The agent does not start or never becomes ready -> `agent_start`, with its log tail.
- The gate cannot run (a HarnessError) or fails unexpectedly -> `harness`, redacted.
- SIGINT/SIGTERM while cells run -> the pool is cancelled (agents stopped by its
  own finally, then every tracked process group killed), the finished cells are
  reported and the verdict is `interrupted`. A signal outside the event loop
  arrives as KeyboardInterrupt and ends the same way, without cells.
On every path the agents' logs are scrubbed and capped before anyone reads them.
Config errors are not caught here: they are the user's to fix and have their own message.
"""

from __future__ import annotations

import traceback
from datetime import datetime, UTC
from pathlib import Path
from collections.abc import Callable

from gate.agent import reaper
from gate.agent.logs import scrub_dir
from gate.agent.process import AgentStartError
from gate.errors import ConfigError, HarnessError
from gate.report.failure import failure_report, mark_error
from gate.report.model import Report
from gate.transport.loop import run_async


def run_pool_interruptible(make_pool, empty) -> tuple[object, reaper.Interrupted | None]:
    """(pool result, None), or (what finished before the signal, Interrupted)."""
    try:
        return run_async(reaper.interruptible(make_pool(empty))), None
    except reaper.Interrupted as exc:
        reaper.kill_all()  # workers interrupted while starting were never stopped by the pool
        return empty, exc


def finished_cells(cells: list, pool, runs: int) -> list:
    """The cells all of whose runs completed (an interrupted cell is not reported half-judged)."""
    done: dict[str, int] = {}
    for item in pool.runs:
        done[item.cell.id] = done.get(item.cell.id, 0) + 1
    return [c for c in cells if done.get(c.id, 0) >= runs]


def end_interrupted(report: Report, loaded, exc: reaper.Interrupted, finished: int, planned: int) -> Report:
    return mark_error(report, loaded, "interrupted",
                      f"{exc}: partial report of the {finished} of {planned} cells that finished; "
                      "every agent process was stopped")


def run_guarded(loaded, out_dir: Path, label: str, run: Callable[[], Report]) -> Report:
    """`run()`, or the error report of how it failed; the logs are scrubbed either way."""
    started = datetime.now(UTC)
    try:
        return run()
    except ConfigError:
        raise
    except AgentStartError as exc:
        return failure_report(loaded, "agent_start", str(exc), label, started)
    except HarnessError as exc:
        return failure_report(loaded, "harness", str(exc), label, started)
    except KeyboardInterrupt:
        reaper.kill_all()
        return failure_report(loaded, "interrupted", "interrupted before any cell finished; "
                              "every agent process was stopped", label, started)
    except Exception as exc:  # a gate bug still ends in a report, never in a bare traceback
        detail = "".join(traceback.format_exception(exc, limit=6))
        return failure_report(loaded, "harness", f"the gate itself failed: {exc!r}\n{detail}", label, started)
    finally:
        scrub_dir(Path(out_dir) / "logs", loaded.redactor, loaded.config.agent.log_max_bytes)
