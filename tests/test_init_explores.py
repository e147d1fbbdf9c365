"""`chaos-gate init` writes a config that explores (issue 52): its starter names no fault and no
scenario, since any one switches exploration off (docs/explore.md "When it runs"), says so in a comment
with how to pin what exploration finds, and a run of it as written explores the agent's call sites."""

from __future__ import annotations

import shutil
import sys

import pytest
import yaml

from conftest import AGENTS, load_report
from gate.cli import main
from gate.plan import load_config
from gate.plan.oracles import explore_spec

# one of each way `init` is told what the agent is: a started server (with a service), a script, a URL
KINDS = {
    "server": ["--command", "python3 agent.py", "--service", "orders=python3 orders_service.py"],
    "script": ["--script", "python3 agent.py", "--input", "arg"],
    "url": ["--agent-url", "http://127.0.0.1:8000"],
}


def names_no_fault(config) -> bool:
    """Nothing in the config that names a fault: what would switch exploration off."""
    chaos = config.chaos
    return not (chaos.profiles or chaos.faults or chaos.scenarios or config.contract.scenarios
                or config.replay.sessions)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_starter_names_no_fault_and_says_it_explores(tmp_path, kind):
    assert main(["init", "--dir", str(tmp_path), *KINDS[kind]]) == 0
    text = (tmp_path / "chaos-gate.yaml").read_text()
    config = load_config(tmp_path / "chaos-gate.yaml").config
    assert names_no_fault(config) and explore_spec(config) is not None
    assert "chaos" not in yaml.safe_load(text)  # exploration by default, not by a switch a pin would need
    # the comment names exploration, its page and both ways to pin a finding
    assert "the gate explores (docs/explore.md)" in text and "faults every call site" in text
    assert "`chaos-gate explore --write`" in text and "paste a finding's pin" in text


def test_init_on_a_project_with_no_config_explores_when_run(tmp_path, monkeypatch):
    """The starter run as written on a script agent under the sim: the baseline, then every fault point of
    the model call it found; the careful agent passes them all."""
    monkeypatch.delenv("AGENT_PYTHON", raising=False)  # the starter's own choice: the project's .venv
    shutil.copy(AGENTS / "careful_script.py", tmp_path / "agent.py")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    assert main(["init", "--dir", str(tmp_path), "--script", "python3 agent.py"]) == 0
    config = tmp_path / "chaos-gate.yaml"
    code = main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet"])
    verdict = load_report(tmp_path / "out")["verdict"]
    explored = verdict["explore"]
    assert explored is not None and explored["sites"] >= 1 and explored["run"] > 0, explored
    assert explored["failed_baselines"] == [] and not explored["findings"], explored
    assert any("/explore/" in cell["id"] for cell in verdict["cells"])
    assert (code, verdict["verdict"]) == (0, "pass"), verdict["reasons"]
