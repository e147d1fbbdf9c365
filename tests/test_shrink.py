"""Shrinking a failing cell to its minimal fault set, and replaying exactly that set."""

import asyncio
import shlex

import pytest

from conftest import load_report
from gate.cli import main
from gate.errors import ConfigError
from gate.faults import Schedule
from gate.proxy.exchange import RequestInfo
from gate.report.insight_model import Firing
from gate.report.model import CheckResult, RunResult
from gate.verdict.evaluate import format_firings
from gate.runner.insights import parse_firings
from gate.runner.shrink import ShrinkJob, ddmin, shrink_one
from sdk_config import sdk_config, set_agent

SIX = "\n    - {name: six, profiles: [six_faults]}"


@pytest.fixture
def orders_env(orders, monkeypatch):
    monkeypatch.setenv("ORDERS_URL", orders)
    return monkeypatch


def test_finds_the_one_planted_fault_among_six_and_its_command_reproduces_it(orders_env, tmp_path):
    set_agent(orders_env, bugs="double_write")
    config = sdk_config(tmp_path, scenarios=SIX)
    assert main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet"]) == 1
    cell = next(c for c in load_report(tmp_path / "out")["verdict"]["cells"] if c["id"] == "contract/refund/six")
    assert len(cell["shrink"]["fired"]) == 6  # every fault of the profile fired in the failing run
    assert cell["minimal_faults"] == [{"index": 4, "target": "orders", "call": 1, "fault": "timeout_after_write"}]
    assert cell["shrink"]["status"] == "shrunk" and cell["shrink"]["invariant"] == "refund-once"
    assert cell["shrink"]["reruns"] <= 32
    argv = shlex.split(cell["shrink"]["command"])
    argv = argv[argv.index("chaos-gate") + 1:]
    assert argv[argv.index("--faults") + 1] == "4:orders:1"
    assert main(argv + ["-o", str(tmp_path / "replay"), "--quiet"]) == 1
    again = load_report(tmp_path / "replay")["verdict"]["cells"][0]
    assert [b["id"] for b in again["invariants"] if b["breached"]] == ["refund-once"]
    assert [s["fault"] for s in again["runs"][0]["trace"] if s["fault"]] == ["timeout_after_write"]


def test_the_sound_twin_is_not_shrunk(orders_env, tmp_path):
    set_agent(orders_env)
    config = sdk_config(tmp_path, scenarios=SIX)
    assert main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet"]) == 0
    assert all(c["shrink"] is None for c in load_report(tmp_path / "out")["verdict"]["cells"])


def _run(broke: bool) -> RunResult:
    return RunResult(run=0, reason="ok", checks=[CheckResult(invariant="x", severity="high", passed=not broke,
                                                             message="")])


def _job(n: int) -> ShrinkJob:
    return ShrinkJob(cell=object(), run=0, invariant="x",
                     fired=[Firing(index=i, target="openai", call=i + 1) for i in range(n)])


def test_ddmin_finds_a_pair_of_faults_that_only_break_together():
    async def breaks(subset):
        return {3, 5} <= {f for f in subset}
    assert asyncio.run(ddmin(list(range(8)), breaks)) == [3, 5]


def test_a_failure_that_does_not_come_back_is_flaky_not_shrunk(monkeypatch):
    import gate.runner.shrink as shrink

    monkeypatch.setattr(shrink, "_allowing", lambda cell, firings: list(firings))
    job = _job(3)

    async def execute(allowed, run):
        return _run(False)  # never fails again
    asyncio.run(shrink_one(job, execute, 32))
    assert job.result.status == "flaky" and job.minimal is None and job.result.reruns == 1


def test_the_rerun_budget_bounds_shrinking(monkeypatch):
    import gate.runner.shrink as shrink

    monkeypatch.setattr(shrink, "_allowing", lambda cell, firings: [f.index for f in firings])
    job = _job(16)

    async def execute(allowed, run):
        return _run(len(allowed) >= 9)  # needs any nine faults: many subsets to try
    asyncio.run(shrink_one(job, execute, 5))
    assert job.result.status == "partial" and job.result.reruns == 5
    assert len(job.minimal) >= 9


def test_only_fires_exactly_the_listed_firings():
    from pydantic import TypeAdapter

    from gate.config.chaos import Fault

    fault = TypeAdapter(Fault).validate_python({"kind": "server_error", "target": "llm"})  # fires on every call
    schedule = Schedule((fault,), 1, "c", 0, only=frozenset({(0, "openai", 2)}))
    info = RequestInfo(kind="llm", name="openai", provider="openai", method="POST", path="/chat/completions")
    fired = [schedule.decide(info, n) is not None for n in (1, 2, 3)]
    assert fired == [False, True, False]


def test_firings_spell_the_same_both_ways():
    spec = "2:openai:1,5:orders:3"
    assert format_firings(parse_firings(spec)) == spec
    assert parse_firings("none") == frozenset() and format_firings(frozenset()) == "none"
    assert parse_firings("0:my:upstream:2") == {(0, "my:upstream", 2)}
    with pytest.raises(ConfigError, match="INDEX:UPSTREAM:CALL"):
        parse_firings("openai:2")


def test_faults_needs_only(orders_env, tmp_path, capsys):
    config = sdk_config(tmp_path, scenarios=SIX)
    assert main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--faults", "4:orders:1", "--quiet"]) == 2
    assert "--faults replays a set of firings in one cell: name it with --only" in capsys.readouterr().err
