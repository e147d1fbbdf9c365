"""The short-name aliases beside a team's own fixtures, on the pinned pytest and on the newest 9.x.

With `chaos_aliases = world clock trace sim chaos` every name a team defines stays the team's —
a fixture plugin loaded through `pytest_plugins` or `-p`, a conftest in the rootdir or in a
subdirectory (collected from the root, or named on the command line so pytest loads it
first), a `chaos` fixture sync or async under pytest-asyncio, faultbench's `world`, `clock`
and `trace` — and a name no fixture has still gets the alias. The team's tests also check
that the gate's `chaos_run` is not in their closure: an alias that won would pull it in.

pytest 9.2 rewrote fixture lookup (the `_arg2fixturedefs` dict the plugin once read is gone)
and 9.1 started parsing conftests only when their directory is collected; the project pins
9.0.3 and users run the newest. So `test_the_same_tests_pass_on_the_newest_pytest` runs
this file again on the newest 9.x, in a virtualenv built once with uv and cached like the
framework environments (tests/framework_envs.py): NEWEST plus this checkout installed
editable, with the suite's pins of pytest-asyncio, faultbench and pytest-timeout. It skips,
saying so, only when the registry cannot be reached to build it. Bump NEWEST when pytest
releases a newer 9.x (`pip index versions pytest`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from framework_envs import CACHE, _uv
from test_pytest_coexist import SHOP, TEAMFIX, _run

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parent.parent
NEWEST = "9.2.0"  # the newest pytest 9.x on PyPI when this was written
INNER = "CHAOS_GATE_ALIASES_INNER"  # set in the run on the newest pytest, which must not start another
ALL = "[pytest]\nchaos_aliases = world clock trace sim chaos\nasyncio_default_fixture_loop_scope = function\n"

# the team's tests for the names it owns; CHAOS is what its `chaos` fixture returns
TEAM_TESTS = '''
import pytest


def test_world(world, request):
    assert world == "team-world" and "chaos_run" not in request.fixturenames

def test_clock(clock, request):
    assert clock == "team-clock" and "chaos_run" not in request.fixturenames

def test_trace(trace, request):
    assert trace == "team-trace" and "chaos_run" not in request.fixturenames

def test_sim(sim, request):
    assert sim == "team-sim" and "chaos_run" not in request.fixturenames

def test_chaos(chaos, request):
    assert chaos == "CHAOS" and "chaos_run" not in request.fixturenames

@pytest.mark.asyncio
async def test_async_with_their_chaos(chaos, request):
    assert chaos == "CHAOS" and "chaos_run" not in request.fixturenames
'''

# a team conftest whose `chaos` is an async fixture (pytest-asyncio's)
TEAM_CONFTEST = TEAMFIX.replace('''@pytest.fixture
def chaos():
    return "team-chaos"''', '''@pytest_asyncio.fixture
async def chaos():
    await asyncio.sleep(0)
    return "team-async-chaos"''').replace("import pytest\n", "import asyncio\nimport pytest\nimport pytest_asyncio\n")

# where the team defines nothing: faultbench's names are faultbench's, the rest are the gate's
BESIDE_FAULTBENCH = '''
import pytest


@pytest.mark.world("worlds/shop.yaml")
def test_faultbench_keeps_its_names(world, clock, trace, request):
    assert all(type(v).__module__.startswith("faultbench") for v in (world, clock, trace))
    assert "chaos_run" not in request.fixturenames

@pytest.mark.chaos_world("worlds/shop.yaml")
def test_the_names_no_one_has_are_the_gates(sim, chaos, chaos_sim, chaos_run):
    assert sim is chaos_sim and chaos is chaos_run
'''

EVERY_NAME_FREE = '''
import pytest


@pytest.mark.chaos_world("worlds/shop.yaml")
def test_every_alias(world, clock, trace, sim, chaos, chaos_world, chaos_clock, chaos_trace, chaos_sim, chaos_run):
    assert (world, clock, trace, sim, chaos) == (chaos_world, chaos_clock, chaos_trace, chaos_sim, chaos_run)
    assert len(world.orders) == 50
'''


@pytest.fixture
def team(pytester):
    shutil.copytree(SHOP, pytester.path, dirs_exist_ok=True)
    pytester.makeini(ALL)  # every alias asked for
    return pytester


def _with_faultbench(pytester, *args):
    """An inner run with every installed plugin autoloaded, faultbench too."""
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-q", *args)


def _team_tests(chaos: str) -> str:
    return TEAM_TESTS.replace("CHAOS", chaos)


@pytest.mark.parametrize("how", ["pytest_plugins", "-p"])
def test_a_team_fixture_plugin_keeps_its_names(team, how):
    (team.path / "teamfix.py").write_text(TEAMFIX)
    team.makepyfile(test_team=_team_tests("team-chaos"))
    if how == "pytest_plugins":
        team.makeconftest('pytest_plugins = ["teamfix"]\n')
        result = _run(team)  # faultbench off: which of two plugins' `world` wins is their registration order
    else:
        team.syspathinsert()
        result = _run(team, "-p", "teamfix")
    result.assert_outcomes(passed=6)


def test_the_root_conftest_keeps_its_names_beside_faultbench(team):
    team.makeconftest(TEAM_CONFTEST)
    team.makepyfile(test_team=_team_tests("team-async-chaos"))
    _with_faultbench(team).assert_outcomes(passed=6)


@pytest.mark.parametrize("args", [(), ("team", "test_beside.py")], ids=["collected-from-root", "named-first"])
def test_a_subdirectory_conftest_keeps_its_names_and_elsewhere_the_aliases_are_there(team, args):
    """`pytest team ...` makes team/conftest.py an initial conftest (9.0 registers it before the session
    starts); collected from the root, it arrives during collection (9.1+ parses it only then)."""
    sub = team.mkdir("team")
    (sub / "conftest.py").write_text(TEAM_CONFTEST)
    (sub / "test_team.py").write_text(_team_tests("team-async-chaos"))
    team.makepyfile(test_beside=BESIDE_FAULTBENCH)
    _with_faultbench(team, *args).assert_outcomes(passed=8)


def test_a_name_no_fixture_has_gets_the_alias(team):
    team.makepyfile(test_free=EVERY_NAME_FREE)
    _run(team).assert_outcomes(passed=1)


BROKEN_LOOKUP = '''
import pytest
from _pytest.fixtures import FixtureManager


@pytest.hookimpl(wrapper=True)
def pytest_sessionstart(session):
    real = FixtureManager.getfixturedefs
    FixtureManager.getfixturedefs = lambda self, name, node: None  # "no one has any name", even chaos_run
    try:
        return (yield)
    finally:
        FixtureManager.getfixturedefs = real
'''


def test_a_lookup_that_finds_nothing_adds_no_alias_and_says_why(team):
    """The failure behind issue 42: a lookup for which every name looks free. The plugin's self-check
    (its own chaos_run must be found) catches it: no alias, a warning, and the chaos_* names still work."""
    team.makeconftest(BROKEN_LOOKUP)
    team.makepyfile(test_lookup='''
import pytest

@pytest.mark.chaos_world("worlds/shop.yaml")
def test_the_chaos_names_work(chaos_world):
    assert len(chaos_world.orders) == 50

def test_a_short_name(sim):
    pass
''')
    result = _run(team)
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "fixture 'sim' not found" in out
    assert ("chaos-gate: no alias for world, clock, trace, sim, chaos (chaos_aliases): session._fixturemanager."
            "getfixturedefs does not find the plugin's own chaos_run") in re.sub(r"\s+", " ", out)


def test_no_lookup_at_all_means_no_alias():
    """A pytest without the query (or with another meaning for it): every name counts as taken."""
    from gate.pytest_plugin import aliases

    class Session:
        _fixturemanager = object()

    assert aliases.taken(Session(), ["world", "sim"]) == ([], ["world", "sim"],
                                                          "this pytest has no session._fixturemanager.getfixturedefs")

    class Raising:
        def getfixturedefs(self, name, node):
            if name == "sim":
                raise TypeError("nodeid expected")
            return ["a def"] if name in ("chaos_run", "world") else None

    Session._fixturemanager = Raising()
    owned, unknown, why = aliases.taken(Session(), ["world", "sim", "chaos"])
    assert (owned, unknown) == (["world"], ["sim"]) and "raised" in why


# --- the same file on the newest pytest 9.x --------------------------------------------------------------


def _pins() -> list[str]:
    """NEWEST, and the suite's own pins of the plugins these tests run beside (pyproject.toml's test extra)."""
    test = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    wanted = ("pytest-asyncio==", "faultbench==", "pytest-timeout==")
    return [f"pytest=={NEWEST}", *sorted(p for p in test if p.startswith(wanted))]


UNREACHABLE = re.compile(r"(?i)failed to fetch|error sending request|dns error|connect|timed out|network is unreachable")


def _newest_python() -> Path:
    """The cached virtualenv's interpreter, built on first use (a lock keeps parallel builders apart). Its
    folder is named by the pins, this checkout's path and the package's dependencies: a change rebuilds it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = _pins()
    digest = hashlib.sha256("\n".join([*pins, str(ROOT), *sorted(project)]).encode()).hexdigest()[:12]
    folder = CACHE / f"pytest-newest-{digest}"
    python = folder / "bin" / "python"
    if (folder / ".complete").exists():
        return python
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "pytest-newest.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / ".complete").exists():
            return python
        shutil.rmtree(folder, ignore_errors=True)
        uv = _uv()
        for step in ([uv, "venv", "-q", "-p", sys.executable, str(folder)],
                     [uv, "pip", "install", "-q", "-p", str(python), "-e", str(ROOT), *pins]):
            done = subprocess.run(step, capture_output=True, text=True, timeout=900)
            if done.returncode:
                why = f"could not build {folder.name} ({' '.join(step[:3])}): {done.stderr[-2000:]}"
                if UNREACHABLE.search(done.stderr):
                    pytest.skip(f"the package registry cannot be reached: {why}")
                pytest.fail(why)
        (folder / ".complete").write_text("\n".join(pins))
    return python


@pytest.mark.skipif(bool(os.environ.get(INNER)), reason="this is the run on the newest pytest")
def test_the_same_tests_pass_on_the_newest_pytest():
    python = _newest_python()
    found = subprocess.run([str(python), "-c", "import gate, pytest; print(pytest.__version__, gate.__file__)"],
                           capture_output=True, text=True, timeout=120)
    version, where = found.stdout.split()
    assert version == NEWEST and Path(where).is_relative_to(ROOT), found.stdout + found.stderr  # this checkout
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_ADDOPTS"))}
    env[INNER] = "1"
    me = Path(__file__).relative_to(ROOT)
    args = ["-m", "pytest", str(me), "-q", "-p", "no:cacheprovider",
            "--deselect", f"{me}::test_the_same_tests_pass_on_the_newest_pytest"]
    # the tests the pinned pytest finds here, to hold the newest one's run to all of them
    listed = subprocess.run([sys.executable, *args, "--collect-only"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    expected = len([line for line in listed.stdout.splitlines() if line.startswith(f"{me}::")])
    assert expected >= 8, listed.stdout + listed.stderr
    done = subprocess.run([str(python), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", summary.split(" in ")[0])}
    assert done.returncode == 0 and counts.get("passed") == expected and \
        set(counts) <= {"passed", "deselected", "warning", "warnings"}, \
        f"pytest {NEWEST}: {summary} (of {expected})\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
