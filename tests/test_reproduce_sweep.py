"""`chaos-gate reproduce` prints the failing cell's timeline; `sweep` finds failing seeds and pins them."""

import sys

import pytest
import yaml

from conftest import ROOT
from gate.cli import main

SDK = ROOT / "examples" / "sdk_agent"


@pytest.fixture
def live_orders(orders, monkeypatch):
    monkeypatch.setenv("ORDERS_URL", orders)
    monkeypatch.setenv("PROVIDER", "openai")
    return orders


def test_reproduce_prints_the_timeline(live_orders, monkeypatch, capsys):
    monkeypatch.setenv("AGENT_BUGS", "double_write")
    monkeypatch.setenv("COLUMNS", "220")  # rich folds table cells to the terminal width
    code = main(["reproduce", "contract/refund/double_write", "-c", str(SDK / "chaos-gate.yaml")])
    out = capsys.readouterr().out
    assert code == 1
    assert "contract/refund/double_write — FAIL" in out and "timeout_after_write" in out
    assert "refund-once" in out and "reached the upstream 2 times" in out
    assert "upstream answered 201; answer withheld" in out


def test_sweep_finds_failing_seeds_and_pins_them(live_orders, tmp_path, monkeypatch, capsys):
    doc = yaml.safe_load((SDK / "chaos-gate.yaml").read_text())
    doc["agent"]["start"]["command"] = [sys.executable, str(SDK / "agent.py")]
    doc["services"][0]["cwd"] = str(SDK)
    doc["contract"]["scenarios"] = []
    doc["chaos"] = {"profiles": ["flaky_llm"]}
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump(doc))
    monkeypatch.setenv("AGENT_BUGS", "no_retry")
    code = main(["sweep", "-c", str(config), "--seeds", "6", "--pin"])
    out = capsys.readouterr().out
    assert code == 1 and "seeds found failures" in out
    pins = yaml.safe_load((tmp_path / "chaos-gate.pins.yaml").read_text())["pins"]
    # a profile runs one cell per fault: chaos/refund/flaky_llm/<fault kind>
    assert pins and all(p["id"].startswith("chaos/refund/flaky_llm/") for p in pins)
    seeds = {p["seed"] for p in pins}
    assert len({(p["id"], p["seed"]) for p in pins}) == len(pins) and all(f"seed {s}:" in out for s in seeds)
    # a sound agent survives the same seeds
    monkeypatch.setenv("AGENT_BUGS", "")
    assert main(["sweep", "-c", str(config), "--seeds", "6"]) == 0
