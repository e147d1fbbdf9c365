"""The plugin inside a team's own suite, beside the plugins teams run (all really installed and autoloaded):
pytest-asyncio, pytest-httpx, respx, pytest-timeout, pytest-xdist, pytest-randomly, faultbench.

A team fixture plugin's `world`, `clock`, `trace`, `sim` and `chaos` stay the team's, loaded
through `pytest_plugins`, `-p` or the root conftest, even with every alias asked for; an async test of theirs with
a fixture named `chaos` is not run by the gate; each bad marker fails only its own test, with
one line naming it; docs/pytest.md's pass-through recipes for pytest-httpx and respx let the
gate's traffic through while the rest stays mocked.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from test_docs_pytest import DOC

pytest_plugins = ["pytester"]
SHOP = Path(__file__).parent / "fixtures" / "faultbench_shop"

TEAMFIX = '''
import pytest


@pytest.fixture
def world():
    return "team-world"

@pytest.fixture
def clock():
    return "team-clock"

@pytest.fixture
def trace():
    return "team-trace"

@pytest.fixture
def sim():
    return "team-sim"

@pytest.fixture
def chaos():
    return "team-chaos"
'''

TEAM_TESTS = '''
import pytest


def test_world(world):
    assert world == "team-world"

def test_clock(clock):
    assert clock == "team-clock"

def test_trace(trace):
    assert trace == "team-trace"

def test_sim(sim):
    assert sim == "team-sim"

def test_chaos(chaos):
    assert chaos == "team-chaos"

async def test_async_with_their_chaos(chaos):
    assert chaos == "team-chaos"

@pytest.mark.chaos_world("worlds/shop.yaml")
def test_the_gate_beside_them(chaos_world, chaos_trace):
    assert len(chaos_world.orders) == 50 and chaos_trace.summary() == "(no tool calls)"
'''


@pytest.fixture
def shop(pytester):
    shutil.copytree(SHOP, pytester.path, dirs_exist_ok=True)
    pytester.makeini("[pytest]\nchaos_aliases = world clock trace sim chaos\n")  # every alias asked for
    (pytester.path / "teamfix.py").write_text(TEAMFIX)
    pytester.makepyfile(test_team=TEAM_TESTS)
    return pytester


def _run(pytester, *args):
    # faultbench defines world/clock/trace too: its registration order against a -p plugin is its own business
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:faultbench", "-p", "no:randomly",
                                         "-q", *args)


@pytest.mark.parametrize("how", ["pytest_plugins", "-p", "conftest"])
def test_a_team_fixture_plugin_keeps_its_names(shop, how):
    if how == "pytest_plugins":
        shop.makeconftest('pytest_plugins = ["teamfix"]\n')
        result = _run(shop)
    elif how == "conftest":
        shop.makeconftest(TEAMFIX)
        result = _run(shop)
    else:
        shop.syspathinsert()
        result = _run(shop, "-p", "teamfix")
    result.assert_outcomes(passed=6, failed=1)
    out = result.stdout.str()
    # their async test is pytest's to refuse (no async plugin claims it), not the gate's to run
    assert "FAILED test_team.py::test_async_with_their_chaos" in out and "async def functions" in out


# test name: (its markers, what the one line must say)
BAD = {
    "test_typo": ("chaos_rnus(5)", "unknown marker @pytest.mark.chaos_rnus on {id}: did you mean "
                                   "@pytest.mark.chaos_runs?"),
    "test_zero_runs": ("chaos_runs(0)", "@pytest.mark.chaos_runs(0) on {id} expects a whole number of runs >= 1, "
                                        "e.g. @pytest.mark.chaos_runs(20)"),
    "test_negative_runs": ("chaos_runs(-1)", "@pytest.mark.chaos_runs(-1) on {id} expects a whole number of runs"),
    "test_rate_above_one": ("chaos_min_pass_rate(1.5)", "@pytest.mark.chaos_min_pass_rate(1.5) on {id} expects a "
                            "fraction of runs in (0, 1], e.g. @pytest.mark.chaos_min_pass_rate(0.95)"),
    "test_rate_not_a_number": ("chaos_min_pass_rate('most')",
                               "@pytest.mark.chaos_min_pass_rate('most') on {id} expects a fraction of runs"),
    "test_missing_config": ("chaos_config('missing.yaml')", "@pytest.mark.chaos_config('missing.yaml') on {id}: "
                                                            "no such file"),
    "test_broken_config": ("chaos_config('broken.yaml')", "broken.yaml"),
    "test_unknown_scenario": ("chaos_world('worlds/shop.yaml') chaos_scenario('nope')",
                              "chaos_scenario('nope'): no scenario or profile of that name"),
    "test_no_world_file": ("chaos_world('worlds/nowhere.yaml')", "chaos_world('worlds/nowhere.yaml'): "),
}
GOOD = '''
@pytest.mark.chaos_world("worlds/shop.yaml")
def test_good(chaos_world):
    assert len(chaos_world.orders) == 50
'''


def bad_suite() -> str:
    tests = ["".join(f"@pytest.mark.{m}\n" for m in marks.split()) + f"def {name}(chaos_run):\n    pass\n"
             for name, (marks, _) in BAD.items()]
    return "import pytest\n\n" + "\n".join(tests) + GOOD


def test_each_bad_marker_fails_only_its_test_with_one_line(pytester):
    shutil.copytree(SHOP, pytester.path, dirs_exist_ok=True)
    (pytester.path / "broken.yaml").write_text("agent: [unclosed\n")
    pytester.makepyfile(test_bad=bad_suite())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-q")
    result.assert_outcomes(passed=1, failed=8, errors=1)
    assert result.ret == 1  # not interrupted (2), not an internal error (3)
    out = result.stdout.str()
    for banned in ("INTERNALERROR", "Interrupted", "Traceback", "During handling", "_pytest/", "site-packages"):
        assert banned not in out, banned
    failures = out.split("= FAILURES =")[1].split("short test summary info")[0]
    assert out.count("= ERRORS =") == 1 and "ERROR test_bad.py::test_typo" in out
    for test, (_, message) in BAD.items():
        block = re.search(rf"(?:_|of) {test} _+\n(.*?)(?=\n_{{3,}} |\n=)", out, re.S)
        assert block and f"test_bad.py::{test}" in block.group(1), (test, out)  # names the test
        assert message.format(id=f"test_bad.py::{test}") in block.group(1), (test, block.group(1))
        assert len(block.group(1).splitlines()) <= 2, block.group(1)  # one message, no traceback
    assert failures.count("no such file") == 1  # the missing config, said once


def _recipe(start: str) -> str:
    """A python block of docs/pytest.md's HTTP mocking section, by its first line."""
    blocks = re.findall(r"```python\n(.*?)\n```", DOC.read_text(encoding="utf-8"), re.S)
    return next(b for b in blocks if b.startswith(start))


MOCKED = '''
import asyncio, httpx, pytest

{httpx_recipe}

{respx_recipe}

@pytest.mark.asyncio
@pytest.mark.chaos_world("worlds/shop.yaml")
async def test_under_pytest_asyncio(chaos_run, chaos_world):
    async with httpx.AsyncClient() as client:
        assert (await client.post(chaos_run.env["SHOP_URL"] + "/ops/get_order", json={{"id": "1"}})).status_code == 200

@pytest.mark.chaos_world("worlds/shop.yaml")
async def test_async_without_a_marker(chaos_run):
    await asyncio.sleep(0)
    assert chaos_run.trace.summary() == "(no tool calls)"
'''
BODY = '''    order = chaos_world.orders.pick()
    shop = httpx.post(os.environ["SHOP_URL"] + "/ops/get_order", json={"id": order.id})  # through the gate
    assert shop.status_code == 200 and shop.json()["id"] == order.id
    assert httpx.post("https://hooks.example.com/notify").json() == {"ok": True}  # still mocked'''


def test_the_docs_pass_through_recipes_and_async_plugins(pytester):
    shutil.copytree(SHOP, pytester.path, dirs_exist_ok=True)
    httpx_recipe = _recipe("@pytest.mark.httpx_mock").replace("    ...", BODY)
    respx_recipe = _recipe("@pytest.mark.chaos_world").replace("    ...", BODY).replace(
        "def test_refund_and_notify", "def test_refund_and_notify_respx")
    source = "import os\n" + MOCKED.format(httpx_recipe=httpx_recipe, respx_recipe=respx_recipe)
    pytester.makepyfile(test_mocked=source)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--timeout", "120", "-p", "randomly")
    result.assert_outcomes(passed=4)
