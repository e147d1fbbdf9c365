"""The project's world first on PATH (issue 40, item 3, in part): `python` in the agent's command, and in
whatever the agent spawns (an MCP server started as plain `python`, a tool), is the project's own
virtualenv's, never the gate's interpreter that happens to be on the inherited PATH."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import load_report, write_config
from framework_envs import python_for
from gate.agent.environment import project_path
from gate.cli import main

PROBE = '''
import json, subprocess, sys
child = subprocess.run(["python", "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True).stdout
print(json.dumps({"agent": sys.prefix, "child": child.strip()}))
'''


def test_the_projects_bins_go_first(tmp_path):
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    (tmp_path / "node_modules" / ".bin").mkdir(parents=True)
    venv, node = str(tmp_path / ".venv" / "bin"), str(tmp_path / "node_modules" / ".bin")
    assert project_path(f"/usr/bin:{node}:/bin", [tmp_path]).split(os.pathsep) == [venv, node, "/usr/bin", "/bin"]
    assert project_path("/usr/bin", [tmp_path / "elsewhere"]) == "/usr/bin"  # nothing of its own: as it was


def test_plain_python_in_the_agent_and_in_what_it_spawns_is_the_projects_virtualenv(tmp_path):
    venv = Path(python_for("mcp1")).parent.parent  # a real virtualenv of the project's (here: mcp 1.x)
    (tmp_path / ".venv").symlink_to(venv)
    (tmp_path / "probe.py").write_text(PROBE)
    doc = {"version": 1, "agent": {"invoke": {"command": {"command": ["python", "probe.py"]}}, "timeout": 30,
                                   "offline": True},
           "inputs": [{"id": "probe", "text": "where am I"}], "mutation": {"enabled": False},
           "contract": {"invariants": [{"id": "answers", "type": "not_empty", "severity": "high"}]},
           "gate": {"min_score": 0}}
    config = write_config(tmp_path, json.dumps(doc))
    code = main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
    run = load_report(tmp_path / "out")["verdict"]["cells"][0]["runs"][0]
    assert code == 0, run
    prefixes = json.loads(run["output"])
    assert prefixes == {"agent": str(tmp_path / ".venv"), "child": str(tmp_path / ".venv")}, prefixes
