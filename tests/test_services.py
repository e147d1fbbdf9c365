"""`services:`: started before the agents with the allow-list environment, their URLs resolved into
the config, stopped on every exit path (pass, start failure, SIGTERM), and checked at load time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import AGENTS, ROOT, load_report, write_config
from gate.plan import load_config
from gate.errors import ConfigError


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def service_config(tmp: Path, *, service_env: str = "", invoke_input: str = "hello", timeout: float = 5) -> Path:
    state = tmp / "state.json"
    return write_config(tmp, f"""
        services:
          - name: echo
            command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENTS / 'echo_service.py'))}]
            port_env: SVC_PORT
            env: {{STATE_FILE: {json.dumps(str(state))}, OWN: "http://{{{{host}}}}:{{{{port}}}}"{service_env}}}
            ready: {{log: listening, timeout: 10}}
        agent:
          invoke:
            command:
              command: {json.dumps('cat >/dev/null; printf %s "$SVC"; case "$SVC" in *) ;; esac')}
              env: {{SVC: "{{{{services.echo.url}}}}"}}
          reset: {{method: POST, url: "{{{{services.echo.url}}}}/reset"}}
          timeout: {timeout}
        inputs: [{{id: one, text: {json.dumps(invoke_input)}}}]
        mutation: {{enabled: false}}
        contract:
          invariants:
            - {{id: sees-service, type: regex, pattern: '^http://127\\.0\\.0\\.1:[0-9]+$', severity: critical}}
        """)


def test_service_starts_with_the_allow_list_and_stops(tmp_path, monkeypatch, run_cli):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_not_for_services")
    monkeypatch.setenv("CLOUD_SECRET_KEY", "not-for-services")
    path = service_config(tmp_path)
    assert run_cli("run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet") == 0
    report = load_report(tmp_path / "out")
    assert report["verdict"]["verdict"] == "pass"
    state = json.loads((tmp_path / "state.json").read_text())
    assert {"SVC_PORT", "STATE_FILE", "OWN", "PATH"} <= set(state["env"])
    assert "GITHUB_TOKEN" not in state["env"] and "CLOUD_SECRET_KEY" not in state["env"]
    assert gone(state["pid"]), "the service outlived the run"
    assert "listening" in (tmp_path / "out" / "logs" / "service-echo.log").read_text()


def test_service_that_fails_to_start_is_a_start_error(tmp_path, run_cli):
    path = service_config(tmp_path, service_env=", FAIL: '1'")
    assert run_cli("run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet") == 2
    verdict = load_report(tmp_path / "out")["verdict"]
    assert verdict["error_reason"] == "agent_start"
    error = verdict["cells"][0]["error"]
    assert "service 'echo' did not start" in error and "refusing to start" in error


def test_sigterm_stops_the_services(tmp_path):
    path = service_config(tmp_path, invoke_input="HANG", timeout=60)
    text = path.read_text().replace('cat >/dev/null; printf', 'cat >/dev/null; sleep 60; printf')
    path.write_text(text)
    proc = subprocess.Popen([sys.executable, "-m", "gate", "run", "-c", str(path), "-o", str(tmp_path / "out"),
                             "--quiet"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    state_file = tmp_path / "state.json"
    deadline = time.monotonic() + 30
    while not state_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the cell is now running
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert load_report(tmp_path / "out")["verdict"]["error_reason"] == "interrupted"
    assert gone(json.loads(state_file.read_text())["pid"])


@pytest.mark.parametrize("where, value, message", [
    ("agent", "{{services.ecko.url}}", "names no service (did you mean 'echo'?)"),
    ("agent", "{{services.echo.uri}}", "a service has url, host, port (did you mean 'url'?)"),
    ("service", "{{services.later.url}}", "service 'later' starts after this one"),
    ("service", "{{prot}}", "unknown template '{{prot}}' (did you mean 'port'?)"),
])
def test_service_templates_are_checked_on_their_line(tmp_path, where, value, message):
    agent_env = value if where == "agent" else "x"
    service_env = value if where == "service" else "x"
    path = write_config(tmp_path, f"""
        services:
          - name: echo
            command: [python3, s.py]
            env: {{X: "{service_env}"}}
          - {{name: later, command: [python3, s.py]}}
        agent:
          invoke:
            command: {{command: [cat], env: {{X: "{agent_env}"}}}}
        inputs: [{{id: one, text: hi}}]
        """)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    line = 4 if where == "service" else 8
    assert f"chaos-gate.yaml:{line}:" in str(err.value) and message in str(err.value)


def test_duplicate_service_names(tmp_path):
    path = write_config(tmp_path, """
        services:
          - {name: db, command: [a]}
          - {name: db, command: [b]}
        agent: {invoke: {command: {command: [cat]}}}
        inputs: [{id: one, text: hi}]
        """)
    with pytest.raises(ConfigError, match=r"chaos-gate.yaml:3: services\[1\].name: duplicate service name 'db'"):
        load_config(path)


def test_sdk_example_runs_with_one_command(tmp_path):
    """The README's first command: the SDK example starts its own orders service."""
    env = {k: v for k, v in os.environ.items() if k not in ("ORDERS_URL", "AGENT_BUGS")}
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", "examples/sdk_agent/chaos-gate.yaml",
                           "-o", str(tmp_path / "out"), "--quiet"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    verdict = load_report(tmp_path / "out")["verdict"]
    assert verdict["verdict"] == "pass" and verdict["counts"]["passed"] == verdict["counts"]["cells"] == 8
    assert (tmp_path / "out" / "logs" / "service-orders.log").exists()
