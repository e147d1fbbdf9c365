"""chaos-gate's pytest plugin: chaos tests inside the team's own test suite (docs/pytest.md).

Registered by the package (`pytest11` entry point): installing agent-chaos-gate is all
the configuration there is. It must sit harmlessly in any suite, so it defines only
`chaos_*` names, acts only on tests that use them, and reports a bad marker on its test
alone. This module wires pytest's hooks to the modules that do the work:

    markers.py    the markers, and the check of one test's markers
    fixtures.py   chaos_run, chaos_run_index, chaos_sim, chaos_world, chaos_clock, chaos_trace
    aliases.py    opt-in short names (ini `chaos_aliases`), never over a fixture the project has
    protocol.py   checks before setup, exemption from reruns, async tests without a plugin
    runs.py       what each run's report carries (written where the run ran: an xdist worker)
    judge.py      the pass rate and verdict (computed where every report arrives: the controller)
    text.py       the summary, fitted to the terminal's width
    explore.py    `chaos_explore`: the test as the baseline, re-run once per fault point its calls offer

Options: `--chaos-seed N`, `--chaos-runs N`. Nothing heavy is imported for a test that
uses none of it.
"""

from __future__ import annotations

import pytest

from gate.pytest_plugin import aliases, explore, judge, markers, protocol, runs
from gate.pytest_plugin.fixtures import (GROUPS, PROXIES, RUN, chaos_clock, chaos_run, chaos_run_index,  # noqa: F401
                                         chaos_sim, chaos_trace, chaos_world)

SELECTED = pytest.StashKey[dict]()


def pytest_addoption(parser) -> None:
    group = parser.getgroup("chaos-gate")
    group.addoption("--chaos-seed", type=int, default=None, help="root seed for every chaos test (overrides chaos_seed)")
    group.addoption("--chaos-runs", type=int, default=None, help="runs of every chaos test (overrides chaos_runs)")
    parser.addini(aliases.INI, type="args", default=[],
                  help="short fixture names for the chaos_* fixtures (world clock trace sim chaos); "
                       "a fixture the project defines keeps its name")
    parser.addini(explore.INI, default="marked",
                  help="marked: explore the tests marked chaos_explore; auto: also every chaos test whose config names "
                       "no fault, as `chaos-gate run` explores")


def pytest_configure(config) -> None:
    for text in markers.MARKERS.values():
        config.addinivalue_line("markers", text)
    config.stash[GROUPS] = {}
    config.stash[PROXIES] = {}
    aliases.requested(config)  # a wrong name is a usage error now, not at the first test
    runs_option = config.getoption("chaos_runs")
    if runs_option is not None and runs_option < 1:
        raise pytest.UsageError(f"--chaos-runs {runs_option}: give a whole number of runs >= 1")
    if not hasattr(config, "workerinput"):  # a worker's view is partial: the controller judges
        config.pluginmanager.register(judge.Judge(config), "chaos-gate-judge")


def pytest_unconfigure(config) -> None:
    for proxy in config.stash.get(PROXIES, {}).values():
        try:
            proxy.close()
        except Exception:
            pass


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session) -> None:
    aliases.register(session)  # after every plugin and the initial conftests: theirs come first


def pytest_generate_tests(metafunc) -> None:
    if "chaos_run_index" not in metafunc.fixturenames:
        return
    n = markers.runs_of(metafunc.config, metafunc.definition)
    if n > 1:
        metafunc.parametrize("chaos_run_index", range(n), indirect=True, ids=[f"run{i}" for i in range(n)])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    protocol.exempt_from_reruns(config, items)


def pytest_collection_finish(session) -> None:
    session.config.stash[SELECTED] = runs.selected_counts(session.items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    return protocol.protocol(item, nextitem)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    protocol.setup(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    entry = item.stash.get(RUN, None)
    if entry is not None and report.when == "call":
        selected = item.config.stash.get(SELECTED, {}).get(runs.group_key(item), 1)
        runs.attach(item, report, *entry, selected)
    shapes = getattr(getattr(item, "obj", None), "chaos_shapes", None)
    if shapes is not None and report.when == "call" and report.failed:
        from gate.testing.shapes import FAILED, pin

        key, corpus = shapes
        failed = FAILED.pop(key, None)
        if failed is not None:
            added = pin(corpus, key, *failed)
            report.sections.append(("chaos-gate", f"{'pinned' if added else 'already pinned'}: {failed[0]!r} in "
                                                   f"{corpus.name}: it runs first from now on"))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if explore.wanted(pyfuncitem):
        explore.run(pyfuncitem)
        return True
    return protocol.pyfunc_call(pyfuncitem)
