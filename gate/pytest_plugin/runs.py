"""Repeated runs of a chaos test: what each run's report carries, and the pass rate over them.

`chaos_runs(N)` (or `--chaos-runs N`) runs a test N times, run k with the schedule of
(seed, cell, k). The process that ran a run (a pytest-xdist worker, or the only process)
puts what a verdict needs into the report's `user_properties` under PAYLOAD: the group,
N, how many of its runs this session selected, the minimum rate, the run's one-line trace
and its replay commands. The process that sees every report (the xdist controller, or the
only process) folds them into a Group (judge.py): runs of one test may land on different
workers, so nothing here judges.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

PAYLOAD = "chaos-gate"


@dataclass
class Failure:
    run: int
    line: str
    commands: list[str]
    nodeid: str = ""


@dataclass
class Group:
    """The runs of one test seen so far; `whole` when the session selected all N of them."""

    n: int
    min_rate: float | None
    selected: int
    passed: int = 0
    failed: int = 0
    finished: set = field(default_factory=set)
    failures: list[Failure] = field(default_factory=list)
    judged: bool = False

    @property
    def whole(self) -> bool:
        return self.selected >= self.n

    @property
    def done(self) -> int:
        return self.passed + self.failed

    @property
    def rate(self) -> float:
        return self.passed / self.done if self.done else 0.0

    @property
    def ok(self) -> bool:
        if self.min_rate is None:
            return self.failed == 0
        return self.rate >= self.min_rate

    def complete(self) -> bool:
        return self.whole and len(self.finished) >= self.n


def group_key(item) -> str:
    base = item.nodeid.split("[")[0]
    params = getattr(getattr(item, "callspec", None), "params", {})
    others = {k: v for k, v in params.items() if k != "chaos_run_index"}
    return base + (f"[{others}]" if others else "")


def commands(item, spec, run) -> list[str]:
    """The pytest command that replays this run, and the `chaos-gate run` one when a config has its cell.
    Only options the session was given are repeated: the seed and run count otherwise come from the markers."""
    parts = ["python", "-m", "pytest", item.nodeid]
    for option, flag in (("chaos_seed", "--chaos-seed"), ("chaos_runs", "--chaos-runs")):
        value = item.config.getoption(option)
        if value is not None:
            parts += [flag, str(value)]
    out = [shlex.join(parts)]
    if spec.config_path is not None and spec.cell_known:
        try:
            config = str(Path(spec.config_path).relative_to(Path.cwd()))
        except ValueError:
            config = str(spec.config_path)
        cli = ["chaos-gate", "run", "-c", config, "--only", spec.cell_id, "--seed", str(spec.root_seed)]
        if run.run:
            cli += ["--runs", str(run.run + 1)]  # world faults draw from the run index too
        if spec.faults:
            from gate.verdict.evaluate import format_firings

            cli += ["--faults", format_firings(run.trace.firings())]
        out.append(shlex.join(cli))
    return out


def selected_counts(items) -> dict[str, int]:
    """How many runs of each test this session selected (after -k, --lf, node ids): the same in every worker."""
    counts: dict[str, int] = {}
    for item in items:
        if "chaos_run_index" in getattr(item, "fixturenames", ()):
            key = group_key(item)
            counts[key] = counts.get(key, 0) + 1
    return counts


def attach(item, report, spec, run, selected: int) -> None:
    """Put what the judge needs on a finished call's report (a JSON string: it crosses xdist's wire)."""
    from gate.pytest_plugin.markers import min_rate_of, runs_of

    payload = {"group": group_key(item), "n": runs_of(item.config, item), "selected": selected,
               "min": min_rate_of(item), "run": run.run, "nodeid": item.nodeid,
               "line": getattr(run, "explored_line", None) or run.trace.summary(),
               "commands": commands(item, spec, run)}
    report.user_properties.append((PAYLOAD, json.dumps(payload)))


def take(report) -> dict | None:
    """Remove the payload from a report (JUnit and the terminal never see it) and return it."""
    for index, prop in enumerate(report.user_properties):
        if prop[0] == PAYLOAD:
            del report.user_properties[index]
            return json.loads(prop[1])
    return None
