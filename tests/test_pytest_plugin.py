"""The pytest plugin, driven through pytester exactly as a team's suite would use it (nothing configured).

Fixtures and env values for the real openai / anthropic / google-genai clients, the sim's
rules (inline, added at run time, from a file), the world/table API with validated writes,
the clock and a record-age fault, the trace API, runs and pass rates, the replay command
(it reproduces the same failing run), seed equivalence with `chaos-gate run`, and living
beside faultbench's plugin.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Properties

pytest_plugins = ["pytester"]
HERE = Path(__file__).parent
SHOP = HERE / "fixtures" / "faultbench_shop"
ROOT = HERE.parent


@pytest.fixture
def suite(pytester):
    shutil.copytree(SHOP, pytester.path, dirs_exist_ok=True)
    return pytester


def run(pytester, *args):
    """An inner pytest run with only this plugin loaded (what autoload gives, minus the other installed plugins'
    seconds of start-up); test_plugin_agents.py and test_docs_pytest.py run with autoload, as a user would."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest_subprocess("-p", "gate.pytest_plugin", "-p", "no:cacheprovider", "-q", *args)


CLIENTS = '''
import os
import anthropic, openai, pytest
from google import genai

SEEN = {}


@pytest.mark.chaos_sim([{"when": "hello", "answer": "Hi from the sim."}])
def test_every_client_reaches_the_sim(chaos_run, chaos_sim):
    SEEN.update(chaos_run.env)
    assert os.environ["OPENAI_BASE_URL"] == chaos_run.url("openai") and chaos_run.url("openai").startswith("http://127.0.0.1:")
    hello = [{"role": "user", "content": "hello"}]
    assert openai.OpenAI().chat.completions.create(model="m", messages=hello).choices[0].message.content == \\
        "Hi from the sim."
    assert anthropic.Anthropic().messages.create(model="m", max_tokens=64, messages=hello).content[0].text == \\
        "Hi from the sim."
    assert genai.Client().models.generate_content(model="gemini-2.5-flash", contents="hello").text == \\
        "Hi from the sim."
    assert openai.AzureOpenAI().chat.completions.create(model="my-deployment", messages=hello).choices[0].message \\
        .content == "Hi from the sim."  # AZURE_OPENAI_ENDPOINT, its key and api-version, all set by the plugin
    assert chaos_run.azure().chat.completions.create(model="d", messages=hello).choices[0].message.content == \\
        "Hi from the sim."
    chaos_sim.rule("bye", answer="See you.")
    bye = [{"role": "user", "content": "bye"}]
    assert openai.OpenAI().chat.completions.create(model="m", messages=bye).choices[0].message.content == "See you."


def test_env_is_restored_and_rules_last_one_run(chaos_run):
    assert os.environ.get("OPENAI_BASE_URL") != SEEN.get("OPENAI_BASE_URL") or "bye" not in str(chaos_run.sim.spec)
    answer = openai.OpenAI().chat.completions.create(model="m", messages=[{"role": "user", "content": "bye"}])
    assert answer.choices[0].message.content == "I can help with that."  # the default: no rule from before


def test_outside_a_chaos_test_nothing_is_set():
    assert os.environ.get("OPENAI_BASE_URL") != SEEN["OPENAI_BASE_URL"]


@pytest.mark.chaos_sim("sim.yaml")
@pytest.mark.chaos_faults({"kind": "rate_limit", "target": "llm", "on_calls": [1], "retry_after": 0})
def test_llm_fault_and_sim_from_a_file(chaos_run, chaos_trace):
    client = openai.OpenAI(max_retries=0)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "ping"}])
    again = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "ping"}])
    assert again.choices[0].message.content == "pong"
    assert chaos_trace.summary() == "llm!rate_limit" and [e["fault"] for e in chaos_trace.faults()] == ["rate_limit"]
    assert chaos_run.cell_id == "chaos/test_llm_fault_and_sim_from_a_file/custom"
'''


def test_clients_sim_rules_and_env(pytester):
    (pytester.path / "sim.yaml").write_text("sim:\n  rules: [{when: ping, answer: pong}]\n")
    pytester.makepyfile(test_clients=CLIENTS)
    run(pytester).assert_outcomes(passed=4)


WORLD = '''
from datetime import timedelta
import httpx, pytest


@pytest.mark.chaos_world("worlds/shop.yaml", faults={"orders.get_order": {"errors": {"not_found_if_newer_than": "2h"}}})
def test_world_clock_and_trace(chaos_run, world, clock, trace):
    before = world.snapshot()
    order = world.orders.pick(status="delivered")
    assert order.status == order["status"] == "delivered" and world.orders.get(order.id) == order
    with pytest.raises(ValueError, match="'bogus' is not one of placed, shipped, delivered, returned"):
        world.orders.update(order.id, status="bogus")
    with pytest.raises(ValueError, match="total: expected float, got string 'not-a-number'"):
        world.orders.insert(total="not-a-number")
    assert world.diff(before).is_empty() and world.revision == 0
    fresh = world.orders.insert(customer_id="c1", total=5.0, status="delivered", placed_at="-1h")
    url = chaos_run.env["SHOP_URL"]
    assert httpx.post(url + "/ops/get_order", json={"id": fresh.id}).status_code == 404  # placed 1h ago: not yet
    clock.advance(hours=2)
    assert httpx.post(url + "/ops/get_order", json={"id": fresh.id}).json()["total"] == 5.0
    bad = httpx.post(url + "/ops/issue_refund", json={"order_id": "9999", "amount": 1})
    assert bad.status_code == 422 and "no orders with id '9999'" in bad.json()["error"]
    clock.advance(timedelta(days=40))  # shop_rules.create_return reads the same clock
    late = httpx.post(url + "/ops/create_return", json={"order_id": order.id})
    assert late.status_code == 422 and "outside the 30-day return window" in late.json()["error"]
    assert list(world.diff(before).added["orders"]) == [fresh.id] and world.revision == 1
    assert trace.count(tool="get_order") == 2 and trace.count(ok=False) == 3
    assert [e["fault"] for e in trace.faults()] == ["not_found"]
    assert trace.calls_to("create_return")[0]["status"] == 422
    assert trace.summary() == "get_order!not_found → get_order → issue_refund!error → create_return!error"
'''


def test_world_api_clock_record_age_and_trace(suite):
    suite.makeini("[pytest]\nchaos_aliases = world clock trace\n")  # the short names, opted in
    suite.makepyfile(test_world=WORLD)
    run(suite).assert_outcomes(passed=1)


FLAKY = '''
import httpx, pytest


@pytest.mark.chaos_world("worlds/shop.yaml")
@pytest.mark.chaos_faults({"kind": "error", "target": "shop", "path": "get_order", "probability": 0.5, "status": 503})
@pytest.mark.chaos_runs(8)
MIN
def test_lookup(chaos_run, chaos_world):
    order = chaos_world.orders.pick()
    assert httpx.post(chaos_run.env["SHOP_URL"] + "/ops/get_order", json={"id": order.id}).status_code == 200
'''


def _failing_runs(text: str) -> list[str]:
    return re.findall(r"^  (run\d+) failed: (.*)$", text, re.M)


def test_runs_pass_rate_and_a_replay_that_reproduces(suite):
    suite.makepyfile(test_flaky=FLAKY.replace("MIN\n", ""))
    result = run(suite, "--junitxml=junit.xml")
    out = result.stdout.str()
    failed = len(_failing_runs(out.split("pass rate over runs")[1]))
    assert 1 <= failed <= 7
    result.assert_outcomes(passed=8 - failed, failed=failed)  # every run must pass without a minimum
    assert f"  FAIL {failed} run{'s' if failed > 1 else ''} failed ({8 - failed} of 8 passed)" in out
    assert "get_order!error" in out
    replay = re.search(r"^    (python -m pytest '(test_flaky.py::test_lookup\[(run\d+)\])')$", out, re.M)
    again = run(suite, replay.group(2))  # the command as printed: no seed flag, the markers give it
    again.assert_outcomes(failed=1)
    assert f"{replay.group(3)} failed: get_order!error" in again.stdout.str()
    assert "over 1 of the 8 runs chaos_runs asks for" in again.stdout.str()
    other = run(suite, "--chaos-seed", "7").stdout.str()
    assert _failing_runs(other.split("pass rate over runs")[1]) != _failing_runs(out.split("pass rate over runs")[1])
    assert "--chaos-seed 7" in other  # an option the session was given is repeated in its replay lines
    assert " of 3 passed)" in run(suite, "--chaos-runs", "3").stdout.str()
    # JUnit, without a minimum too: each failing run's testcase carries its trace and its replay command
    cases = [case for suite_ in JUnitXml.fromfile(str(suite.path / "junit.xml")) for case in suite_]
    failing = {case.name: dict((p.name, p.value) for p in case.child(Properties)) for case in cases
               if any(isinstance(r, Failure) for r in case.result)}
    assert len(failing) == failed and all(props["chaos_trace"].endswith("get_order!error") and
                                          props["chaos_replay"].startswith("python -m pytest ")
                                          for props in failing.values())
    stopped = run(suite, "-x")  # cut short by -x: the rate says what it is over
    stopped.stdout.fnmatch_lines(["*over * of the 8 runs chaos_runs asks for (-x or an interrupted session): not*"])


def test_min_pass_rate_decides_and_a_short_set_fails_the_session(suite):
    suite.makepyfile(test_flaky=FLAKY.replace("MIN", "@pytest.mark.chaos_min_pass_rate(0.1)"))
    result = run(suite)
    assert result.ret == 0 and "  PASS " in result.stdout.str() and ">= 10%" in result.stdout.str()
    result.assert_outcomes(passed=8)
    forced = run(suite, "-p", "pytest_rerunfailures", "--force-reruns", "1").stdout.str()  # past the exemption
    assert "failed 2 times: get_order!error" in forced and "every attempt counts as a run" in forced
    suite.makepyfile(test_flaky=FLAKY.replace("MIN", "@pytest.mark.chaos_min_pass_rate(1.0)"))
    strict = run(suite)
    assert strict.ret == 1 and "< 100%: " in strict.stdout.str()
    strict.assert_outcomes(passed=7, failed=1)  # the run that completes the set carries the verdict
    failing = _failing_runs(strict.stdout.str().split("pass rate over runs")[1])[0][0]
    cut = run(suite, "-k", failing)  # a subset: its failing run fails alone, and the rate says what it is over
    assert cut.ret == 1
    cut.assert_outcomes(failed=1)
    cut.stdout.fnmatch_lines(["  FAIL 0% < 100%: 1 run failed (0 of 1 passed)",
                              "  over 1 of the 8 runs chaos_runs asks for (-k, --lf, a node id): not the test's",
                              "      verdict"])


def test_beside_faultbench_its_names_stay_its_own(suite):
    """The real faultbench plugin: its world/trace/clock are its own, even with the gate's aliases asked for."""
    suite.makeini("[pytest]\nchaos_aliases = world clock trace\n")
    suite.makepyfile(test_both='''
import pytest
from faultbench.world import World

@pytest.mark.world("worlds/shop.yaml")
def test_faultbench_fixtures(world, trace):
    assert isinstance(world, World) and type(trace).__module__.startswith("faultbench")

@pytest.mark.chaos_world("worlds/shop.yaml")
def test_chaos_fixtures(chaos_world, chaos_trace, chaos_clock):
    assert len(chaos_world.orders) == 50 and chaos_trace.summary() == "(no tool calls)"
''')
    run(suite, "-p", "faultbench.pytest_plugin").assert_outcomes(passed=2)


def test_same_seed_same_faults_as_chaos_gate_run(pytester, tmp_path, monkeypatch):
    """A failing test's seed reproduces its faults in `chaos-gate run`: the same agent (worlds_agent, over
    REST) under the same config, scenario, input and seed gets the same faults, run by run."""
    example = ROOT / "examples" / "worlds_agent"
    monkeypatch.setenv("TOOLS", "http")  # the config's agent env reads them: the same agent both ways
    monkeypatch.setenv("RETRY", "naive")
    shutil.copy(example / "agent.py", pytester.path / "agent.py")
    doc = (example / "chaos-gate.yaml").read_text().replace("concurrency: 2", "concurrency: 1")
    doc = doc.replace("    - name: refund_times_out", "    - name: flaky\n      faults:\n"
                      "        - {kind: error, target: shop, method: GET, path: ^/orders, probability: 0.5, status: 503}\n"
                      "        - {kind: latency, target: shop, method: POST, probability: 0.5, ms: 1}\n"
                      "    - name: refund_times_out")
    doc = doc.replace("    operations:\n", "    faults: {refund_order: {errors: {http_500: 0.6}}}\n    operations:\n", 1)
    (pytester.path / "chaos-gate.yaml").write_text(doc)
    pytester.makepyfile(test_same='''
import json, os, subprocess, sys, time
import httpx, pytest


@pytest.mark.chaos_config("chaos-gate.yaml")
@pytest.mark.chaos_scenario("flaky")
@pytest.mark.chaos_input("refund")
@pytest.mark.chaos_seed(11)
@pytest.mark.chaos_runs(6)
def test_refund(chaos_run, chaos_run_index, chaos_trace, tmp_path_factory):
    env = {**os.environ, "PORT": "0", "TOOLS": "http", "RETRY": "naive"}
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    env["PORT"] = str(port)
    agent = subprocess.Popen([sys.executable, "agent.py"], env=env)
    try:
        for _ in range(100):
            try:
                httpx.get(f"http://127.0.0.1:{port}/health"); break
            except httpx.HTTPError:
                time.sleep(0.05)
        httpx.post(f"http://127.0.0.1:{port}/chat", json={"message": "Please refund order 1234."}, timeout=15)
    finally:
        agent.terminate(); agent.wait()
    seen = [(e.method, e.path, e.status, e.fault, "world fault" in e.note) for e in chaos_run.state.trace]
    with open("seen.jsonl", "a") as f:
        f.write(json.dumps([chaos_run_index, chaos_run.cell_id, seen]) + "\\n")
    assert not chaos_trace.failures()
''')
    result = run(pytester)
    assert result.ret == 1
    seen = [json.loads(line) for line in (pytester.path / "seen.jsonl").read_text().splitlines()]
    assert {cell for _, cell, _ in seen} == {"contract/refund/flaky"}
    from gate.cli import main

    out = tmp_path / "out"
    main(["run", "-c", str(pytester.path / "chaos-gate.yaml"), "--only", "contract/refund/flaky", "--seed", "11",
          "--runs", "6", "-o", str(out), "--quiet", "--full-report"])
    [cell] = json.loads((out / "report.json").read_text())["verdict"]["cells"]
    gate = {r["run"]: [[s["method"], s["path"], s["status"], s["fault"], "world fault" in s["note"]]
                       for s in r["trace"]] for r in cell["runs"]}
    assert {run_index: steps for run_index, _, steps in seen} == gate
    assert any(any(step[3] for step in steps) for steps in gate.values())  # wire faults fired
    assert any(any(step[4] for step in steps) for steps in gate.values())  # and world faults
    # the command a failing run prints reruns exactly that run in the CLI
    printed = re.findall(r"^  (run\d+) failed: .*\n\s*python -m pytest .*\n\s*(chaos-gate run .*)$", result.stdout.str(),
                         re.M)
    assert printed
    name, command = printed[-1]
    argv = shlex.split(command)
    assert argv[:8] == ["chaos-gate", "run", "-c", "chaos-gate.yaml", "--only", "contract/refund/flaky", "--seed", "11"]
    monkeypatch.chdir(pytester.path)
    main([*argv[1:], "-o", str(tmp_path / "one"), "--quiet", "--full-report"])
    [cell] = json.loads((tmp_path / "one" / "report.json").read_text())["verdict"]["cells"]
    last = cell["runs"][-1]
    assert last["run"] == int(name[3:])
    assert [[s["method"], s["path"], s["status"], s["fault"], "world fault" in s["note"]] for s in last["trace"]] \
        == gate[int(name[3:])]
