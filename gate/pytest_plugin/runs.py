"""Repeated runs of a chaos test: a pass rate per test, a one-line trace and replay commands per failing run.

`chaos_runs(N)` (or `--chaos-runs N`) runs a test N times, run k with the schedule of
(seed, cell, k): different faults on different runs, the same on every rerun. Without
`chaos_min_pass_rate`, every run must pass; with it, a failing run counts against the
rate instead of failing on its own, and the run that completes the set fails when the rate
is under the minimum (a set cut short by -k or -x fails the session instead).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass
class Failure:
    run: int
    line: str
    commands: list[str]

    def text(self) -> str:
        return "\n".join([f"run{self.run}: {self.line}", *(f"  replay: {c}" for c in self.commands)])


@dataclass
class Group:
    n: int
    min_rate: float | None
    passed: int = 0
    failed: int = 0
    failures: list[Failure] = field(default_factory=list)

    @property
    def done(self) -> int:
        return self.passed + self.failed

    @property
    def rate(self) -> float:
        return self.passed / self.done if self.done else 0.0

    def verdict(self) -> str:
        line = f"{self.passed}/{self.done} passed ({self.rate:.0%})"
        if self.min_rate is not None:
            line += f"  min_pass_rate {self.min_rate:.0%} -> {'PASS' if self.rate >= self.min_rate else 'FAIL'}"
        return line


def group_key(item) -> str:
    base = item.nodeid.split("[")[0]
    params = getattr(getattr(item, "callspec", None), "params", {})
    others = {k: v for k, v in params.items() if k != "chaos_run"}
    return base + (f"[{others}]" if others else "")


def commands(item, spec, run) -> list[str]:
    """The pytest command that replays this run, and the `chaos-gate run` one when a config has its cell."""
    out = [shlex.join(["python", "-m", "pytest", item.nodeid, "--chaos-seed", str(spec.root_seed)])]
    if spec.config_path is not None and spec.cell_known:
        try:
            config = str(Path(spec.config_path).relative_to(Path.cwd()))
        except ValueError:
            config = str(spec.config_path)
        parts = ["chaos-gate", "run", "-c", config, "--only", spec.cell_id, "--seed", str(spec.root_seed)]
        if run.run:
            parts += ["--runs", str(run.run + 1)]  # world faults draw from the run index too
        if spec.faults:
            from gate.verdict.evaluate import format_firings

            parts += ["--faults", format_firings(run.trace.firings())]
        out.append(shlex.join(parts))
    return out


def record(item, report, groups: dict, entry) -> None:
    """Count a finished call of a chaos test; adjust its report for the pass-rate rule."""
    spec, run = entry
    key = group_key(item)
    group = groups.get(key)
    if group is None:
        marker = item.get_closest_marker("chaos_min_pass_rate")
        option = item.config.getoption("chaos_runs")
        runs = item.get_closest_marker("chaos_runs")
        n = option or (int(runs.args[0]) if runs and runs.args else 1)
        group = groups[key] = Group(n, float(marker.args[0]) if marker and marker.args else None)
    if report.passed:
        group.passed += 1
    elif report.failed:
        group.failed += 1
        failure = Failure(run.run, run.trace.summary(), commands(item, spec, run))
        group.failures.append(failure)
        report.sections.append(("chaos-gate", failure.text()))
        if group.min_rate is not None:  # the rate decides, not this run alone
            report.sections.append((f"chaos-gate: run{run.run} failed (counted in the pass rate)",
                                    str(report.longrepr)))
            report.outcome, report.longrepr = "passed", None
    if group.min_rate is not None and group.done == group.n and group.rate < group.min_rate:
        lines = [f"{key}: {group.verdict()}", *(f.text() for f in group.failures[:10])]
        report.outcome, report.longrepr = "failed", "\n".join(lines)


def summary(terminalreporter, groups: dict) -> None:
    shown = {k: g for k, g in groups.items() if g.done}
    if not shown:
        return
    tr = terminalreporter
    tr.write_sep("=", "chaos-gate: pass rate over runs")
    for key, group in shown.items():
        tr.write_line(f"{key}: {group.verdict()}")
        for failure in group.failures[:10]:
            tr.write_line("    " + failure.text().replace("\n", "\n    "))
        if len(group.failures) > 10:
            tr.write_line(f"    ... and {len(group.failures) - 10} more failing runs")


def short_of_rate(groups: dict) -> bool:
    return any(g.min_rate is not None and g.done and g.done < g.n and g.rate < g.min_rate for g in groups.values())


def runs_of(config, definition) -> int:
    option = config.getoption("chaos_runs")
    if option:
        return option
    marker = definition.get_closest_marker("chaos_runs")
    if marker is None:
        return 1
    if not marker.args or not isinstance(marker.args[0], int) or marker.args[0] < 1:
        raise pytest.UsageError(f"{definition.nodeid}: @pytest.mark.chaos_runs(N) needs a whole number N >= 1")
    return marker.args[0]

