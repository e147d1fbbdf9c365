"""How a chaos test is run: its markers checked first, exempt from reruns, async without an async plugin.

`protocol` runs before pytest's own test protocol (and pytest-rerunfailures', which is not
`tryfirst`). A test whose markers are wrong never sets up a fixture: an unknown `chaos_*`
marker is reported as an error, a wrong value (or a config that is missing or does not
parse) as a failure, each with the one line that markers.py or the spec wrote and no
traceback. Only tests that use the plugin's markers or its `chaos_run` fixture are touched.

Reruns: a run's faults come from (seed, cell, run), so a rerun replays the same faults and
could only hide a flaky agent the pass rate is there to measure; chaos tests get
`flaky(reruns=0)` when pytest-rerunfailures is loaded, and judge.py counts any attempt that
still arrives as a failed run.
"""

from __future__ import annotations

import inspect

import pytest
from _pytest.reports import TestReport

from gate.pytest_plugin import markers
from gate.pytest_plugin.fixtures import SPEC, spec_or_problem

CHECKED = pytest.StashKey[bool]()


def problem(item) -> tuple[str, str] | None:
    """("setup", line) for an unknown marker, ("call", line) for a wrong value; stashes the spec if all is well."""
    item.stash[CHECKED] = True
    line = markers.unknown(item)
    if line:
        return "setup", line
    line = markers.bad_value(item)
    if line is None and "chaos_run" in getattr(item, "fixturenames", ()):
        spec, line = spec_or_problem(item)
        if spec is not None:
            item.stash[SPEC] = spec
    return ("call", line) if line else None


def _report(item, when: str, outcome: str, longrepr=None) -> None:
    report = TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, outcome, longrepr, when,
                        user_properties=list(item.user_properties))
    item.ihook.pytest_runtest_logreport(report=report)


def _teardown(item, nextitem) -> None:
    """Tear down what earlier tests set up and the next does not share, as pytest's own teardown does; not
    through the teardown hooks, which other plugins (pytest-rerunfailures) expect after their own setup."""
    try:
        item.session._setupstate.teardown_exact(nextitem)
    except Exception as exc:  # a fixture's finalizer failed: that is the teardown's error, on this test
        _report(item, "teardown", "failed", f"{item.nodeid}: teardown: {exc!r}")
        return
    _report(item, "teardown", "passed")


def protocol(item, nextitem) -> bool | None:
    if not markers.uses_gate(item):
        return None
    found = problem(item)
    if found is None:
        return None
    when, line = found
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    if when == "setup":
        _report(item, "setup", "failed", line)
    else:
        _report(item, "setup", "passed")
        _report(item, "call", "failed", line)
    _teardown(item, nextitem)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def setup(item) -> None:
    """The same check when another plugin ran the protocol before ours: the test errors with the line."""
    if markers.uses_gate(item) and not item.stash.get(CHECKED, False):
        found = problem(item)
        if found is not None:
            pytest.fail(found[1], pytrace=False)


def exempt_from_reruns(config, items) -> None:
    if not config.pluginmanager.hasplugin("rerunfailures"):
        return
    for item in items:
        if markers.uses_gate(item):
            item.add_marker(pytest.mark.flaky(reruns=0), append=False)


def pyfunc_call(pyfuncitem):
    """Async chaos tests run without an async plugin: each on its own event loop (the proxy has its own).
    Only a test that uses the gate's run: a project's own async tests are left to pytest and its plugins."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj) or "chaos_run" not in pyfuncitem.fixturenames:
        return None
    if any(pyfuncitem.get_closest_marker(m) for m in ("asyncio", "anyio", "trio")):
        return None
    import asyncio

    names = pyfuncitem._fixtureinfo.argnames
    asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
    return True
