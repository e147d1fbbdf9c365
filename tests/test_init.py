"""`chaos-gate init`: flags or questions -> a commented chaos-gate.yaml that validates and runs (here
on the SDK example, whose orders API becomes a service) and a workflow; never overwrites without --force."""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import AGENTS, ROOT, load_report
from gate.cli import main
from gate.plan import load_config
from gate.scaffold import WORKFLOW, run_init


def run_scaffolded(config, without: str, *only: str) -> dict:
    """`chaos-gate run` on a scaffolded config as a user runs it (from the repository, `without` unset
    in the environment): asserts a clean exit, returns the verdict part. `only`: cells to run (--only)."""
    env = {k: v for k, v in os.environ.items() if k != without}
    selected = [arg for cell in only for arg in ("--only", cell)]
    run = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(config), "--quiet", *selected],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    return load_report(config.parent / "chaos-gate-report")["verdict"]


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
    # the explored cells of the orders endpoints only: the baselines plan them all (CI time)
    verdict = run_scaffolded(agent / "chaos-gate.yaml", "ORDERS_URL", "chaos/*/explore/orders-*/*")
    # the starter names no fault, so it explores: the model's calls and the orders endpoints it reached
    assert verdict["verdict"] == "pass" and verdict["explore"]["sites"] >= 2 and verdict["explore"]["run"] > 0
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
    answers = iter(["url", "http://127.0.0.1:8000", "", "google-genai", "", "db=python3 db.py", ""])
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(answers)

    args = argparse.Namespace(dir=str(tmp_path), agent_url=None, agent_command=None, script=None, input=None,
                              provider=None, framework=None, service=None, force=False)
    out = io.StringIO()
    assert run_init(args, out, ask=ask, interactive=True) == 0
    config = load_config(tmp_path / "chaos-gate.yaml").config
    assert config.agent.url == "http://127.0.0.1:8000"
    assert config.llm[0].provider == "gemini"  # the framework's provider was the default, and taken
    assert [s.name for s in config.services] == ["db"] and config.tools[0].env == "DB_URL"
    assert len(asked) == 7 and "next: chaos-gate validate" in out.getvalue()


def test_questions_for_a_script_agent(tmp_path):
    answers = iter(["script", "", "arg", "", "", "", ""])
    args = argparse.Namespace(dir=str(tmp_path), agent_url=None, agent_command=None, script=None, input=None,
                              provider=None, framework=None, service=None, force=False)
    assert run_init(args, io.StringIO(), ask=lambda prompt: next(answers), interactive=True) == 0
    command = load_config(tmp_path / "chaos-gate.yaml").config.agent.invoke.command
    assert command.input == "arg" and command.command.endswith(" agent.py")


@pytest.mark.parametrize("mode", ["stdin", "arg"])
def test_script_agent_on_the_projects_own_interpreter(tmp_path, mode):
    """`init --script`: invoke: command, the input on stdin or as an argument, and the project's
    virtualenv as its interpreter (overridable with $AGENT_PYTHON, which the workflow sets for CI)."""
    shutil.copy(AGENTS / "careful_script.py", tmp_path / "agent.py")  # it survives what exploration faults
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    assert main(["init", "--dir", str(tmp_path), "--script", "python3 agent.py", "--input", mode]) == 0
    loaded = load_config(tmp_path / "chaos-gate.yaml")
    agent = loaded.config.agent
    assert agent.start is None and agent.url is None and agent.invoke.http is None
    assert agent.invoke.command.input == mode and agent.invoke.command.command == ".venv/bin/python agent.py"
    verdict = run_scaffolded(tmp_path / "chaos-gate.yaml", without="AGENT_PYTHON")
    assert verdict["verdict"] == "pass" and verdict["explore"]["run"] > 0
    steps = yaml.safe_load((tmp_path / WORKFLOW).read_text())["jobs"]["chaos-gate"]["steps"]
    assert steps[1]["uses"] == "agent-chaos-gate/agent-chaos-gate@v1" and steps[1]["env"] == {"AGENT_PYTHON": "python3"}


def test_without_a_virtualenv_the_command_is_kept(tmp_path, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert main(["init", "--dir", str(tmp_path), "--command", "python3 server.py"]) == 0
    assert load_config(tmp_path / "chaos-gate.yaml").config.agent.start.command == "python3 server.py"
    assert "AGENT_PYTHON" not in (tmp_path / WORKFLOW).read_text()
    assert main(["init", "--dir", str(tmp_path), "--script", "x", "--command", "y"]) == 2


def test_init_workflow_uses_the_readmes_tag():
    from gate.scaffold import ACTION, render_workflow

    readme = (ROOT / "README.md").read_text()
    assert f"uses: {ACTION}" in readme and f"uses: {ACTION}" in render_workflow("chaos-gate.yaml")
