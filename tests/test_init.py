"""`chaos-gate init`: flags or questions -> a commented chaos-gate.yaml that validates and runs (here
on the SDK example, whose orders API becomes a service) and a workflow; never overwrites without --force."""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys

import yaml

from conftest import ROOT, load_report
from gate.cli import main
from gate.config import load_config
from gate.scaffold import WORKFLOW, run_init


def test_flags_write_a_config_that_validates_and_runs(tmp_path, capsys):
    agent = tmp_path / "agent"
    shutil.copytree(ROOT / "examples/sdk_agent", agent, ignore=shutil.ignore_patterns("chaos-gate*"))
    assert main(["init", "--dir", str(agent), "--command", "python3 agent.py", "--provider", "openai",
                 "--service", "orders=python3 orders_service.py"]) == 0
    printed = capsys.readouterr().out
    assert f"next: chaos-gate validate -c {agent}/chaos-gate.yaml" in printed
    text = (agent / "chaos-gate.yaml").read_text()
    assert text.count("\n#") >= 2 and "{{services.orders.url}}" in text  # commented, service wired in
    loaded = load_config(agent / "chaos-gate.yaml")
    assert [s.name for s in loaded.config.services] == ["orders"]
    env = {k: v for k, v in os.environ.items() if k != "ORDERS_URL"}
    run = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(agent / "chaos-gate.yaml"), "--quiet"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    verdict = load_report(agent / "chaos-gate-report")["verdict"]
    assert verdict["verdict"] == "pass" and verdict["counts"]["cells"] == 7
    workflow = yaml.safe_load((agent / WORKFLOW).read_text())
    steps = workflow["jobs"]["chaos-gate"]["steps"]
    assert steps[1]["uses"].startswith("agent-chaos-gate/agent-chaos-gate@") and steps[1]["with"]["config"]
    assert steps[2]["uses"].startswith("actions/upload-artifact@")


def test_never_overwrites_without_force(tmp_path, capsys):
    (tmp_path / "chaos-gate.yaml").write_text("mine\n")
    assert main(["init", "--dir", str(tmp_path), "--agent-url", "http://127.0.0.1:9"]) == 2
    assert "already exist" in capsys.readouterr().err
    assert (tmp_path / "chaos-gate.yaml").read_text() == "mine\n" and not (tmp_path / WORKFLOW).exists()
    assert main(["init", "--dir", str(tmp_path), "--agent-url", "http://127.0.0.1:9", "--force"]) == 0
    assert load_config(tmp_path / "chaos-gate.yaml").config.agent.url == "http://127.0.0.1:9"


def test_questions_on_a_terminal(tmp_path):
    answers = iter(["http://127.0.0.1:8000", "google-genai", "", "db=python3 db.py", ""])
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(answers)

    args = argparse.Namespace(dir=str(tmp_path), agent_url=None, agent_command=None, provider=None,
                              framework=None, service=None, force=False)
    out = io.StringIO()
    assert run_init(args, out, ask=ask, interactive=True) == 0
    config = load_config(tmp_path / "chaos-gate.yaml").config
    assert config.agent.url == "http://127.0.0.1:8000"
    assert config.llm[0].provider == "gemini"  # the framework's provider was the default, and taken
    assert [s.name for s in config.services] == ["db"] and config.tools[0].env == "DB_URL"
    assert len(asked) == 5 and "next: chaos-gate validate" in out.getvalue()
