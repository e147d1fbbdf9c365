"""Tokens and cost end to end: usage per call/run/cell/scenario, pricing, tokens_max and
cost_max, the retry storm's amplification, and the budget stop."""

import pytest

from conftest import load_report
from gate.cli import main
from sdk_config import sdk_config, set_agent

PRICING = "pricing: {'gpt-4o*': {input: 2.5, output: 10}, '*': {input: 1, output: 1}}"
STORM = """
    - name: outage
      faults: [{kind: truncate_stream, target: llm, after_events: 3}]"""


@pytest.fixture
def orders_env(orders, monkeypatch):
    monkeypatch.setenv("ORDERS_URL", orders)
    return monkeypatch


def test_usage_at_every_level_and_the_retry_storms_amplification(orders_env, tmp_path):
    set_agent(orders_env, bugs="retry_storm")
    config = sdk_config(tmp_path, scenarios=STORM, extra=PRICING)
    assert main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet", "--full-report"]) == 1
    v = load_report(tmp_path / "out")["verdict"]
    cells = {c["id"]: c for c in v["cells"]}
    base, storm = cells["contract/refund/baseline"], cells["contract/refund/outage"]
    calls = [s for s in base["runs"][0]["trace"] if s["kind"] == "llm"]
    assert [s["usage"]["calls"] for s in calls] == [1, 1]  # per call
    assert base["usage"]["input_tokens"] == sum(s["usage"]["input_tokens"] for s in calls)  # per cell
    assert base["runs"][0]["usage"] == base["usage"]  # one run: the run is the cell
    assert base["usage"]["cost_usd"] == pytest.approx(
        (base["usage"]["input_tokens"] * 2.5 + base["usage"]["output_tokens"] * 10) / 1e6)
    assert storm["usage"]["calls"] == 20  # the agent's own loop: 20 attempts, no backoff
    scenarios = {s["scenario"]: s["usage"] for s in v["usage"]["scenarios"]}
    assert scenarios["outage"] == storm["usage"] and v["usage"]["total"]["calls"] == 22
    amp = {a["scenario"]: a for a in v["usage"]["amplification"]}
    assert amp["outage"]["factor"] >= 3  # README quotes the measured value
    assert amp["outage"]["baseline_tokens_per_run"] == base["usage"]["input_tokens"] + base["usage"]["output_tokens"]


def test_tokens_max_and_cost_max_judge_each_run(orders_env, tmp_path):
    set_agent(orders_env)
    invariants = """
    - {id: completes, type: completes, severity: critical}
    - {id: few-tokens, type: tokens_max, max: 50, severity: medium}
    - {id: enough-tokens, type: tokens_max, max: 100000, severity: medium}
    - {id: cheap, type: cost_max, usd: 0.0000001, severity: low}"""
    # its one baseline cell is what is judged: no fault named, so it would explore too
    config = sdk_config(tmp_path, invariants=invariants, extra=PRICING + "\nchaos: {explore: false}")
    main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
    outcome = {o["id"]: o for o in load_report(tmp_path / "out")["verdict"]["cells"][0]["invariants"]}
    assert outcome["few-tokens"]["breached"] and "(max 50)" in outcome["few-tokens"]["message"]
    assert not outcome["enough-tokens"]["breached"]
    assert outcome["cheap"]["breached"] and outcome["cheap"]["message"].startswith("$0.000")


def test_cost_settings_need_a_price_table(orders_env, tmp_path, capsys):
    invariants = "\n    - {id: cheap, type: cost_max, usd: 0.01, severity: low}"
    config = sdk_config(tmp_path, invariants=invariants, gate="{max_cost_usd: 1}")
    assert main(["validate", "-c", str(config)]) == 2
    err = capsys.readouterr().err
    assert "gate.max_cost_usd: a cost budget needs a `pricing:` table" in err
    assert "contract.invariants[0].usd: cost_max needs a `pricing:` table" in err


def test_budget_stops_new_cells_and_the_verdict_is_error(orders_env, tmp_path):
    set_agent(orders_env)
    scenarios = STORM + "\n    - name: again\n      faults: [{kind: latency, target: llm, ms: 1}]"
    config = sdk_config(tmp_path, scenarios=scenarios, gate="{max_cost_usd: 0.0001}",
                        extra=PRICING + "\nconcurrency: 1")
    assert main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet", "--full-report"]) == 2
    v = load_report(tmp_path / "out")["verdict"]
    assert v["verdict"] == "error" and v["error_reason"] == "budget"
    assert v["reasons"][0].startswith("budget: the run spent $0.000")
    ran = [c["id"] for c in v["cells"] if c["stage"] != "gate"]
    assert ran == ["contract/refund/baseline"]  # it cost more than the budget: nothing new started
