"""Exploration in the pytest plugin (gate/pytest_plugin/explore.py): a team's passing test is the
baseline, re-run once per fault point its calls offer, and it plans and judges exactly what
`chaos-gate run` plans and judges for the same config and seed.

The agent is tests/agents/refund_desk (a desk over a gate world's REST tools): sound, it passes its
exploration; `double_refund` and `crash_on_error` are each found by the oracle meant for them.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gate.cli import main
from gate.contracts.universal import UNIVERSAL

pytest_plugins = ["pytester"]
DESK = Path(__file__).parent / "agents" / "refund_desk"

TEST = '''
import atexit, os, socket, subprocess, sys, time
import httpx, pytest

AGENT = {}


def desk(env):
    """The team's own way to start its agent: once, pointed at the gate's proxy (the same for every run)."""
    if "url" not in AGENT:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([sys.executable, "agent.py"], env={**os.environ, **env, "PORT": str(port)})
        atexit.register(proc.kill)
        AGENT["url"] = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                httpx.get(AGENT["url"] + "/health")
                break
            except httpx.HTTPError:
                time.sleep(0.05)
    return AGENT["url"]


@pytest.mark.chaos_config("chaos-gate.yaml")
@pytest.mark.chaos_input("refund")
@pytest.mark.chaos_explore(MARKS)
def test_refund(chaos_run, chaos_world):
    reply = httpx.post(desk(chaos_run.env) + "/chat", json={"message": "Please refund order 1234."}, timeout=30)
    reply.raise_for_status()
    chaos_run.answer = reply.json()["reply"]
    ASSERT
'''


def suite(pytester, marks: str = "", assertion: str = "pass"):
    for name in ("agent.py", "chaos-gate.yaml"):
        shutil.copy(DESK / name, pytester.path / name)
    shutil.copy(DESK.parent.parent / "httpkit.py", pytester.path / "httpkit.py")
    pytester.makepyfile(test_desk=TEST.replace("MARKS", marks).replace("ASSERT", assertion))
    return pytester


def run_suite(pytester, monkeypatch, bugs: str):
    monkeypatch.setenv("BUGS", bugs)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-p", "gate.pytest_plugin", "-p", "no:cacheprovider", "-q",
                                           "--junitxml=junit.xml")
    props = [p for p in ET.parse(pytester.path / "junit.xml").iter("property") if p.get("name") == "chaos-gate-explore"]
    return result, json.loads(props[0].get("value"))


def gate_run(pytester, tmp_path, monkeypatch, bugs: str):
    monkeypatch.setenv("BUGS", bugs)
    main(["run", "-c", str(pytester.path / "chaos-gate.yaml"), "-o", str(tmp_path / "out"), "--quiet"])
    return json.loads((tmp_path / "out" / "report.json").read_text())


def test_the_plugin_plans_and_judges_what_chaos_gate_run_does(pytester, tmp_path, monkeypatch):
    suite(pytester)
    result, explored = run_suite(pytester, monkeypatch, "double_refund")
    report = gate_run(pytester, tmp_path, monkeypatch, "double_refund")
    plan = [c for c in report["run"]["plan"] if "/explore/" in c]
    assert explored["points"] == plan and explored["planned"] == report["verdict"]["explore"]["planned"] > 15
    breached = {c["id"]: sorted(o["id"] for o in c["invariants"] if o["breached"] and o["id"] in UNIVERSAL)
                for c in report["verdict"]["cells"] if "/explore/" in c["id"]}
    assert {f["cell"]: f["invariants"] for f in explored["findings"]} == {k: v for k, v in breached.items() if v}
    cell = "chaos/refund/explore/shop-POST-refunds-1/timeout_after_write"
    assert "writes_once" in breached[cell]
    out = result.stdout.str()
    assert result.ret == 1 and "writes_once: POST shop /refunds lost its answer after the write was made" in out
    assert f"--only {cell} --seed 5" in out and '@pytest.mark.chaos_faults({"kind": "timeout_after_write"' in out


def test_the_sound_desk_passes_its_exploration_and_a_crash_is_found(pytester, monkeypatch):
    suite(pytester)
    result, explored = run_suite(pytester, monkeypatch, "")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert explored["run"] == len(explored["points"]) > 15 and explored["findings"] == []
    result, explored = run_suite(pytester, monkeypatch, "crash_on_error")
    assert result.ret == 1 and explored["findings"]
    assert all(f["invariants"] == ["survives"] for f in explored["findings"])
    assert "Traceback" not in result.stdout.str().split("chaos-gate explore:", 1)[1].split("\n\n", 1)[0]


def test_the_tests_own_assertion_judges_a_transient_fault_only(pytester, monkeypatch):
    """A test that asserts the refund went through: under an outage the desk rightly apologises (not judged);
    under one transient fault the claim must still hold, so a desk that gives up breaches tolerates_transient."""
    suite(pytester, 'kinds=["error"], persistent=True',
          'assert "Refunded" in chaos_run.answer, chaos_run.answer')
    result, explored = run_suite(pytester, monkeypatch, "")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert any(p.endswith("/outage") for p in explored["points"])


@pytest.mark.parametrize("marks, expected", [
    ("budget=0", "budget: Input should be greater than or equal to 1"),
    ("'many'", "takes keywords only"),
])
def test_a_bad_explore_marker_fails_its_test_with_one_line(pytester, monkeypatch, marks, expected):
    suite(pytester, marks)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-p", "gate.pytest_plugin", "-p", "no:cacheprovider", "-q")
    assert result.ret == 1 and expected in result.stdout.str()
