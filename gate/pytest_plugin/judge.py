"""The pass-rate verdict, computed where every run's report arrives: the xdist controller, or the only process.

`logreport` runs first among `pytest_runtest_logreport` hooks, so the terminal, JUnit, the
last-failed cache and xdist's failure count all see the report as judged. The rule:

- a whole set with `chaos_min_pass_rate`: a failing run counts against the rate instead of
  failing alone, and the report that completes the set fails when the rate is short;
- any other run (no minimum, or a subset: `-k`, `--lf`, a replayed node id) fails alone,
  so a replay command reproduces a failure, not a pass;
- every attempt counts: a `rerun` report (pytest-rerunfailures) is a failed run, so a
  rerun can never lift a rate. (Chaos tests are exempt from reruns anyway: protocol.py.)

Each failing run carries its trace line and replay command as JUnit properties, and the
run that completes a set carries the rate; pytest's JUnit writer reads a test's properties
from its teardown report, so they wait for it.
"""

from __future__ import annotations

import pytest

from gate.pytest_plugin import runs, text
from gate.pytest_plugin.fixtures import GROUPS
from gate.testing.shown import shown

PENDING = pytest.StashKey[dict]()  # node id -> JUnit properties, waiting for the test's teardown report


def _group(config, payload) -> runs.Group:
    groups = config.stash.setdefault(GROUPS, {})
    key = payload["group"]
    if key not in groups:
        groups[key] = runs.Group(payload["n"], payload["min"], payload["selected"])
    return groups[key]


def logreport(config, report) -> None:
    pending = config.stash.setdefault(PENDING, {})
    if report.when == "teardown" and report.nodeid in pending:  # JUnit reads a test's properties from it
        report.user_properties.extend(pending.pop(report.nodeid))
    payload = runs.take(report)
    if payload is None or report.skipped:
        return
    group = _group(config, payload)
    props = pending.setdefault(report.nodeid, [])
    if report.passed:
        group.passed += 1
    else:
        _failed(group, payload, report, props)
    if report.outcome != "rerun":
        group.finished.add(payload["run"])
    if group.min_rate is not None and group.complete() and not group.judged:
        _complete(group, payload["group"], report, props)


def _failed(group, payload, report, props: list) -> None:
    failure = runs.Failure(payload["run"], payload["line"], payload["commands"], payload["nodeid"])
    group.failed += 1
    group.failures.append(failure)
    props.append(("chaos_trace", f"run{failure.run}: {failure.line}"))
    props.extend(("chaos_replay", line) for line in failure.commands)
    report.sections.append(("chaos-gate", shown("\n".join(text.failure_lines(failure, "")))))
    if report.failed and group.min_rate is not None and group.whole:  # the rate decides, not this run alone
        report.sections.append((f"chaos-gate: run{failure.run} failed (counted in the pass rate)",
                                shown(report.longreprtext)))  # its text without colour, PY_COLORS or not
        report.outcome, report.longrepr = "passed", None


def _complete(group, key: str, report, props: list) -> None:
    group.judged = True
    props.append(("chaos_pass_rate", text.verdict(group)))
    if not group.ok:
        report.outcome, report.longrepr = "failed", shown(text.verdict_repr(key, group))


def remember_failures(config) -> None:
    """Put every failing run of a failed set in the last-failed cache, so `--lf` replays the failures."""
    lf = config.pluginmanager.get_plugin("lfplugin")
    store = getattr(lf, "lastfailed", None)
    if store is None:
        return
    for group in config.stash.get(GROUPS, {}).values():
        if group.judged and not group.ok:
            for failure in group.failures:
                store[failure.nodeid] = True


def summary(terminalreporter, config) -> None:
    # a test of one run that passed has no rate worth a line; one that failed gets its replay command here
    listed = {k: g for k, g in sorted(config.stash.get(GROUPS, {}).items()) if g.done and (g.n > 1 or g.failed)}
    if not listed:
        return
    tr = terminalreporter
    width = min(getattr(getattr(tr, "_tw", None), "fullwidth", text.WIDTH), 120)
    tr.write_sep("=", "chaos-gate: pass rate over runs")
    for key, group in listed.items():
        for line in shown("\n".join(text.group_lines(key, group, width))).split("\n"):  # its line breaks only
            tr.write_line(line)
    if config.getoption("force_reruns", None):
        lines = text.note("--force-reruns reran chaos tests: every attempt counts as a run, so a rerun never "
                          "lifts a rate", width)
    elif config.getoption("reruns", None):
        lines = text.note("--reruns leaves chaos tests alone: a rerun replays the same faults, and the pass "
                          "rate already counts every run", width)
    else:
        lines = []
    for line in lines:
        tr.write_line(line)


def short_of_rate(config) -> bool:
    """A set that did not complete and is under its minimum fails the session (its runs passed alone)."""
    return any(g.min_rate is not None and g.done and not g.judged and not g.ok
               for g in config.stash.get(GROUPS, {}).values())


class Judge:
    """The hooks of the process that sees every report; registered only where `config.workerinput` is absent,
    and late, so it comes first among the `tryfirst` report hooks."""

    def __init__(self, config):
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report) -> None:
        logreport(self.config, report)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        summary(terminalreporter, self.config)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session) -> None:
        if short_of_rate(self.config):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        remember_failures(self.config)
