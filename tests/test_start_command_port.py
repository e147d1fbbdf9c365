"""`{{port}}` in a start command (issue 52): an agent's `agent.start.command` and a service's `command`
get the same substitutions in a list as in a string, so a server that takes its port as an argument
(`adk api_server --port {{port}}`) starts on the port the gate handed it and is reached there."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from conftest import one_run, write_config
from gate.errors import ConfigError
from gate.plan import load_config

# a server that takes its port only as an argv element: it never reads $PORT
SERVE = [sys.executable, "-m", "http.server", "{{port}}", "--bind", "127.0.0.1"]
COMMANDS = {"list": json.dumps(SERVE), "string": json.dumps(shlex.join(SERVE))}


def config(tmp_path, command: str) -> str:
    """The agent and a service both served by `http.server` from `www/`, each on its own {{port}}."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "reply.json").write_text(json.dumps({"reply": "served on its own port"}))
    return write_config(tmp_path, f"""
        version: 1
        services:
          - {{name: files, command: {json.dumps(SERVE)}, cwd: www, ready: {{url: "{{{{url}}}}/reply.json"}}}}
        agent:
          start:
            command: {command}
            cwd: www
            ready: {{url: "{{{{url}}}}/reply.json", timeout: 20}}
          invoke:
            http: {{method: GET, url: "{{{{url}}}}/reply.json", output: $.reply}}
          timeout: 10
        inputs:
          - {{id: hello, text: hello}}
        mutation: {{enabled: false}}
        """)


@pytest.mark.parametrize("form", sorted(COMMANDS))
def test_port_reaches_the_command_in_either_form(tmp_path, form):
    code, _, run, failed, logs = one_run(config(tmp_path, COMMANDS[form]), tmp_path / "out")
    assert (code, run["reason"], failed) == (0, "ok", set()), logs
    assert run["output"] == "served on its own port"


def test_an_unknown_template_in_the_agents_command_is_refused(tmp_path):
    path = config(tmp_path, json.dumps([*SERVE[:3], "{{prot}}"]))
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert "agent.start.command" in str(refused.value) and "{{port}}" in str(refused.value)
