"""The agent in a box of its own (issue 41, docs/security.md): a hostile agent, run by the real CLI as
a subprocess with a secret planted in the gate's environment, attacks the gate that runs it.

Run as root only (the separation needs it). The agent is tests/agents/hostile_agent.py under the
system python3, which the separated user can read (this machine's own interpreter lives under /root).
Each test fails if its defence is removed: `agent.user: off` is what an undefended run looks like.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import gate
from conftest import AGENTS, ROOT

SYSTEM_PYTHON = "/usr/bin/python3"
SECRET_NAME, SECRET = "DEPLOY_NOTE", "planted-gate-secret-4242"  # not credential-named: never redacted
DAEMON_MARK = "hostile-daemon-marker"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the agent runs as another user only when the gate is root"),
    pytest.mark.skipif(not os.path.exists(SYSTEM_PYTHON), reason="needs a python3 outside /root (/usr/bin/python3)"),
]


@pytest.fixture
def workdir(open_dir):
    return open_dir


def config(workdir: Path, user: str = "auto", daemon: bool = False, output_file: str = "",
           service_user: str | None = None, out: str = "out") -> Path:
    service = textwrap.dedent(f"""
        services:
          - name: svc
            command: [{SYSTEM_PYTHON}, {json.dumps(str(AGENTS / 'echo_service.py'))}]
            inherit_env: [{SECRET_NAME}]
            port_env: SVC_PORT
            user: {service_user}
        """) if service_user else ""
    text = service + textwrap.dedent(f"""
        agent:
          user: {user}
          start:
            command: [{SYSTEM_PYTHON}, {json.dumps(str(AGENTS / 'hostile_agent.py'))}]
            env: {{SECRET_NAME: {SECRET_NAME}, GATE_FILE: {json.dumps(gate.__file__)},
                   DAEMON: "{1 if daemon else 0}", DAEMON_SLEEP: "3", REPORT_DIR: {json.dumps(str(workdir / out))},
                   OUTPUT_FILE: {json.dumps(output_file)}, SERVICE_MARK: echo_service.py}}
          invoke:
            http: {{url: "{{{{url}}}}/chat", body: {{input: "{{{{input}}}}"}}, output: $.reply}}
          timeout: 10
          offline: true
        inputs:
          - {{id: hello, text: "say hello"}}
        mutation: {{enabled: false}}
        """)
    path = workdir / "chaos-gate.yaml"
    path.write_text(text.lstrip(), encoding="utf-8")
    return path


def run(workdir: Path, **options) -> tuple[subprocess.CompletedProcess, dict, str]:
    """The CLI on the hostile agent: (process, report.json, the agent's answer as its log shows it)."""
    path = config(workdir, **options)
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(path), "-o", str(workdir / "out"),
                           "--full-report"], env={**os.environ, SECRET_NAME: SECRET}, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    report = json.loads((workdir / "out" / "report.json").read_text())
    logs = "".join(p.read_text(errors="replace") for p in (workdir / "out" / "logs").glob("agent-*.log"))
    return proc, report, logs


def attacks(logs: str) -> dict:
    lines = [line for line in logs.splitlines() if line.startswith("attacks: ")]
    assert lines, f"the hostile agent never answered; its log:\n{logs[-2000:]}"
    return json.loads(lines[-1].removeprefix("attacks: "))


def everything(workdir: Path, proc: subprocess.CompletedProcess) -> str:
    texts = [proc.stdout, proc.stderr]
    texts += [p.read_text(errors="replace") for p in (workdir / "out").rglob("*") if p.is_file()]
    return "\n".join(texts)


def daemons() -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if DAEMON_MARK.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


def test_the_agent_runs_as_another_user_and_reaches_nothing_of_the_gate(workdir):
    proc, report, logs = run(workdir)
    found = attacks(logs)
    assert found["uid"] != 0, report["run"]["separation"]
    assert "run as" in report["run"]["separation"] and "private HOME" in report["run"]["separation"]
    # (a) the gate's environment through /proc: refused, the secret nowhere
    assert "GOT" not in found["environ"] and "denied" in found["environ"], found
    assert SECRET not in everything(workdir, proc)
    # (b) the gate's installation: not writable
    assert found["tamper"].startswith("denied: Permission denied"), found
    # (d) the gate's memory and ptrace
    assert "GOT" not in found["mem"] and found["mem"].count("denied:") == 2, found
    # the gate's stdout (workflow commands) through /proc, and SIGKILL/SIGSTOP of the gate
    assert found["fd"].startswith("denied") and found["signal"].startswith("denied"), found
    if os.path.exists("/var/run/docker.sock"):  # the engine's socket (root on this machine): out of its reach
        assert found["docker"].startswith("denied"), found


def test_a_service_has_a_user_of_its_own_and_the_agent_cannot_read_its_secrets(workdir):
    """The service inherits the gate's secret; the agent, another user, cannot read its /proc. Both as one
    user (what `auto` gives where only nobody exists), it can: the report says they share a uid."""
    proc, report, logs = run(workdir, user="daemon", service_user="nobody")
    found = attacks(logs)
    assert found["uid"] == 1 and found["service"].startswith("denied"), found
    assert "services run as nobody" in report["run"]["separation"]
    assert SECRET not in everything(workdir, proc)
    shutil.rmtree(workdir / "out")
    _, report, logs = run(workdir, user="nobody", service_user="nobody")
    assert f"GOT {SECRET_NAME}={SECRET}" in attacks(logs)["service"]
    assert "share uid 65534" in report["run"]["separation"]


def test_undefended_the_same_agent_gets_everything(workdir):
    """The attacks are real: with the separation off they all succeed (what the test above rules out)."""
    proc, report, logs = run(workdir, user="off")
    found = attacks(logs)
    assert found["uid"] == 0 and f"GOT {SECRET_NAME}={SECRET}" in found["environ"]
    assert found["tamper"] == "GOT write access" and "GOT ptrace" in found["mem"]
    assert found["fd"].startswith("GOT") and found["signal"].startswith("GOT")
    if os.path.exists("/var/run/docker.sock"):
        assert found["docker"].startswith("GOT docker API"), found
    assert "user: off: agents run as the gate's own user" in report["run"]["separation"]


def test_a_setsid_daemon_is_killed_before_the_report_and_listed(workdir):
    """(c) a double-forked setsid daemon that would rewrite report.json after the gate exits."""
    proc, report, _ = run(workdir, daemon=True)
    assert any(DAEMON_MARK in cmd for cmd in report["run"]["left_running"]), report["run"]
    assert any("still running after it stopped" in w for w in report["verdict"]["warnings"])
    assert not daemons(), "the daemon outlived the run"
    time.sleep(3.5)  # past the daemon's sleep: had it lived, it would have rewritten the report by now
    assert json.loads((workdir / "out" / "report.json").read_text()) == report  # not 'forged', not changed


def test_the_daemon_survives_without_the_subreaper_sweep(workdir, monkeypatch):
    """Without the sweep (gate/agent/accounting.py) the same daemon outlives the run: it is what (c) rules out."""
    env_hook = workdir / "sitecustomize.py"
    env_hook.write_text("import gate.agent.accounting as a\na.sweep = lambda before: []\n")
    monkeypatch.setenv("PYTHONPATH", f"{workdir}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    try:
        _, report, _ = run(workdir, daemon=True)
        assert report["run"]["left_running"] == [] and daemons(), "the daemon should have survived undefended"
    finally:
        for pid in daemons():
            os.kill(pid, 9)


def test_the_reports_are_the_gates_own(workdir):
    run(workdir)
    out = workdir / "out"
    assert out.stat().st_uid == 0 and out.stat().st_mode & 0o022 == 0
    for path in out.glob("*.*"):
        assert path.stat().st_mode & 0o777 == 0o644, path
    assert not list(out.glob(".*.tmp")), "a temporary report file was left behind"


def test_a_named_user_that_cannot_read_the_agent_fails_naming_the_path_and_the_fix(workdir):
    private = workdir / "private"
    private.mkdir(mode=0o700)
    shutil.copy(AGENTS / "hostile_agent.py", private / "agent.py")
    path = config(workdir, user="nobody")
    path.write_text(path.read_text().replace(str(AGENTS / "hostile_agent.py"), str(private / "agent.py")))
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(path), "-o", str(workdir / "out")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert str(private) in proc.stderr and "agent.user: off" in proc.stderr and "chmod" in proc.stderr, proc.stderr


def test_the_gate_is_not_dumpable():
    code = ("import ctypes; from gate.agent.accounting import harden; harden(); "
            "libc = ctypes.CDLL(None); print(libc.prctl(3, 0, 0, 0, 0), libc.prctl(37, ctypes.byref(x := "
            "ctypes.c_int()), 0, 0, 0), x.value)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "0", "1"]  # PR_GET_DUMPABLE 0; PR_GET_CHILD_SUBREAPER set


def test_under_the_action_githubs_files_are_out_of_reach_and_written_last(workdir):
    """GITHUB_OUTPUT and the step summary, left writable by anyone, are taken out of the agent's reach before
    it starts; the daemon it leaves is gone before the outputs are written, and they hold the gate's verdict."""
    from gate.github.action import run_action
    from gate.github.inputs import env_name

    github = workdir / "file_commands"
    github.mkdir(mode=0o777)
    github.chmod(0o777)
    files = {name: github / name.lower() for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    for path in files.values():
        path.touch()
        path.chmod(0o666)
    config(workdir, daemon=True, output_file=str(files["GITHUB_OUTPUT"]), out="chaos-gate-report")
    env = {"GITHUB_WORKSPACE": str(workdir), "PATH": os.environ["PATH"], env_name("config"): "chaos-gate.yaml",
           env_name("comment"): "false", **{k: str(v) for k, v in files.items()}}
    run_action(env, io.StringIO())
    found = attacks("".join(p.read_text() for p in (workdir / "chaos-gate-report" / "logs").glob("agent-*.log")))
    assert found["uid"] != 0, found
    assert found["outputs"].startswith("denied"), found
    assert all(p.stat().st_mode & 0o022 == 0 for p in (github, *files.values()))
    assert not daemons()
    written = files["GITHUB_OUTPUT"].read_text().splitlines()
    report = json.loads((workdir / "chaos-gate-report" / "report.json").read_text())
    assert [line for line in written if line.startswith("verdict=")] == [f"verdict={report['verdict']['verdict']}"]
    assert any(DAEMON_MARK in cmd for cmd in report["run"]["left_running"])
