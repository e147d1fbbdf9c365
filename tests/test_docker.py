"""With a real Docker engine: the agent started from an image by the gate, and the Action's
image built from our Dockerfile and run the way GitHub runs a container action.

`.ci/run` starts the engine and builds `local/python-base` (see .ci/docker-up.sh). Outside
CI these tests skip when no engine is running; in CI a missing engine is a failure.
"""

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT, load_report
from fake_github import FakeGitHub

BASE = "local/python-base"


def engine_ready() -> bool:
    try:
        ok = subprocess.run(["docker", "image", "inspect", BASE], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    return ok


@pytest.fixture(scope="module", autouse=True)
def docker_engine():
    if not engine_ready():
        if os.environ.get("CI"):
            pytest.fail("CI must provide a Docker engine and local/python-base (.ci/docker-up.sh)")
        pytest.skip("no Docker engine with local/python-base; run .ci/docker-up.sh")


def leftover_agents(wait: float = 120.0) -> list[str]:
    """The agent containers still on the engine once the test's own run is over. Another test on another
    xdist worker may have its agents up right now: theirs go when its run ends, a leak of ours never does,
    so the list is read until it is empty or `wait` seconds have passed."""
    import time

    deadline = time.monotonic() + wait
    while True:
        out = subprocess.run(["docker", "ps", "-aq", "--filter", "label=org.agent-chaos-gate.agent"],
                             capture_output=True, text=True).stdout.split()
        if not out or time.monotonic() > deadline:
            return out
        time.sleep(1)


def test_agent_from_docker_image_through_the_proxy(orders, tmp_path, monkeypatch):
    from gate.cli import main

    monkeypatch.setenv("ORDERS_URL", orders)
    monkeypatch.setenv("BASE_IMAGE", BASE)
    config = str(ROOT / "examples/sdk_agent/chaos-gate.docker.yaml")
    monkeypatch.setenv("AGENT_BUGS", "")
    assert main(["run", "-c", config, "-o", str(tmp_path / "sound"), "--quiet", "--full-report"]) == 0
    sound = load_report(tmp_path / "sound")
    steps = [s for c in sound["verdict"]["cells"] for s in c["runs"][0]["trace"]]
    assert {"openai", "orders"} <= {s["target"] for s in steps}
    assert "timeout_after_write" in {s["fault"] for s in steps}
    monkeypatch.setenv("AGENT_BUGS", "double_write")
    assert main(["run", "-c", config, "-o", str(tmp_path / "buggy"), "--quiet", "--full-report"]) == 1
    cell = next(c for c in load_report(tmp_path / "buggy")["verdict"]["cells"] if c["scenario"] == "double_write")
    assert "refund-once" in [b["id"] for b in cell["invariants"] if b["breached"]]
    assert leftover_agents() == []


@pytest.fixture(scope="module")
def action_image():
    tag = "agent-chaos-gate:ci"
    build = subprocess.run(["docker", "build", "--network", "host", "--build-arg", f"BASE_IMAGE={BASE}", "-t", tag,
                            str(ROOT)], capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return tag


def test_image_budget_and_cached_rebuild(action_image):
    """bench/bench_image.py's measurement: a one-line source change rebuilds from the cached dependency
    layer in seconds; the layers the Dockerfile adds fit the 200 MB budget on python:3.12-slim (its base
    is about 125 MB; here the base is CI's offline Debian image, so the added layers are what is held)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_image import measure

    result = measure(BASE, tag="agent-chaos-gate:rebuild")
    assert result["deps_layer_cached"], result
    assert result["cached_rebuild_s"] < 30, result
    assert result["added_mb"] <= 70, result


def github_run(image: str, workspace: Path, files: Path, inputs: dict, extra: list[str] = (), env: dict = None,
               engine: str = "/var/run/docker.sock"):
    """docker run as GitHub does for a container action (`engine`: the socket mounted as the runner's)."""
    cmd = ["docker", "run", "--rm", "--workdir", "/github/workspace",
           "-v", f"{workspace}:/github/workspace", "-v", f"{files}:/github/file_commands",
           "-v", f"{engine}:/var/run/docker.sock",
           "-e", "GITHUB_WORKSPACE=/github/workspace", "-e", "GITHUB_OUTPUT=/github/file_commands/output",
           "-e", "GITHUB_STEP_SUMMARY=/github/file_commands/summary.md",
           "-e", "GITHUB_EVENT_PATH=/github/file_commands/event.json", "-e", "GITHUB_REPOSITORY=acme/agent",
           "-e", "CI=true", *extra]
    for key, value in {**(env or {})}.items():
        cmd += ["-e", f"{key}={value}"]
    for key, value in inputs.items():
        cmd += ["-e", f"INPUT_{key.upper()}={value}"]
    return subprocess.run(cmd + [image], capture_output=True, text=True, timeout=600)


def test_action_image_runs_like_github(action_image, tmp_path):
    github = FakeGitHub()
    workspace, files = tmp_path / "ws", tmp_path / "files"
    shutil.copytree(EXAMPLE, workspace / "agent")
    files.mkdir()
    (files / "event.json").write_text(json.dumps({"pull_request": {"number": 3,
                                                                     "head": {"repo": {"full_name": "acme/agent"}}}}))
    inputs = {"config": "chaos-gate.yaml", "working-directory": "agent", "github-token": "ghs_app_token",
              "min-score": "85", "comment": "true", "comment-mode": "update", "junit-path": "results/junit.xml"}
    try:
        first = github_run(action_image, workspace, files, inputs, ["--network", "host"],
                           {"GITHUB_API_URL": github.url})
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
        second = github_run(action_image, workspace, files, inputs, ["--network", "host"],
                            {"GITHUB_API_URL": github.url, "AGENT_MODE": "fragile"})
        assert second.returncode == 1, second.stdout[-3000:]
    finally:
        github.close()
    outputs = (files / "output").read_text()
    assert "verdict=pass" in outputs and "verdict=fail" in outputs
    # workspace-relative, so a later step on the runner (not in this container) can open them
    assert "junit=agent/results/junit.xml" in outputs and "report=agent/chaos-gate-report/report.json" in outputs
    assert (workspace / "agent" / "results" / "junit.xml").exists()
    summary = (files / "summary.md").read_text()
    assert "chaos-gate: **PASS**" in summary and "chaos-gate: **FAIL**" in summary
    assert "::error file=agent/chaos-gate.yaml,line=" in second.stdout and "::group::chaos-gate run" in second.stdout
    group = second.stdout.split("::group::chaos-gate run", 1)[1].split("::endgroup::", 1)[0]
    assert "chaos-gate: running " in group and " cells · " in group  # progress lines inside the group
    assert (workspace / "agent" / "chaos-gate-report" / "report.html").exists()
    run = json.loads((workspace / "agent" / "chaos-gate-report" / "report.json").read_text())["run"]
    assert "agents run as chaos-agent" in run["separation"], run  # the bundled example, separated in the image
    comments = list(github.comments.values())
    assert len(comments) == 1 and "chaos-gate: **FAIL**" in comments[0]["body"]  # created, then updated


def test_gate_in_container_reaches_a_sibling_agent_container(action_image, tmp_path):
    """GitHub's topology: the action container on a user-defined network, the host's docker
    socket mounted, the agent started by the gate as a sibling container."""
    network = f"chaos-gate-ci-{uuid.uuid4().hex[:8]}"
    subprocess.run(["docker", "network", "create", network], check=True, capture_output=True)
    workspace, files = tmp_path / "ws", tmp_path / "files"
    shutil.copytree(ROOT / "examples/sdk_agent", workspace / "agent")
    config = (workspace / "agent" / "chaos-gate.docker.yaml").read_text()
    config = config.split("tools:")[0] + "inputs:\n  - {id: hello, text: hello there}\nmutation: {enabled: false}\n" \
        "contract:\n  invariants:\n    - {id: completes, type: completes, severity: critical}\n" \
        "    - {id: answered, type: contains, value: help, severity: high}\n" \
        "  scenarios:\n    - name: rate_limited\n      faults: [{kind: rate_limit, target: llm, on_calls: [1], retry_after: 0.2}]\n"
    (workspace / "agent" / "gate.yaml").write_text(config)
    files.mkdir()
    (files / "event.json").write_text("{}")
    try:
        run = github_run(action_image, workspace, files, {"config": "gate.yaml", "working-directory": "agent"},
                         ["--network", network], {"BASE_IMAGE": BASE})
    finally:
        subprocess.run(["docker", "network", "rm", network], capture_output=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    report = json.loads((workspace / "agent" / "chaos-gate-report" / "report.json").read_text())
    fired = [(f["fault"], f["fired"]) for sc in report["verdict"]["coverage"] for f in sc["faults"]]
    assert fired == [("rate_limit", 1)]  # passing cells are compact rows: the coverage says what fired
    # the orders service ran inside the action container, started by the gate
    assert (workspace / "agent" / "chaos-gate-report" / "logs" / "service-orders.log").exists()
    assert leftover_agents() == []


# --- issue 41 in the built image: a hostile agent attacks the gate that runs it, the way GitHub runs it ---

SECRET_NAME, SECRET = "DEPLOY_NOTE", "planted-image-secret-7171"  # not credential-named: never redacted
DAEMON_MARK = "hostile-daemon-marker"
HOSTILE_CONFIG = """\
services:
  - name: svc
    command: [python3, agents/echo_service.py]
    inherit_env: [DEPLOY_NOTE]
    port_env: SVC_PORT
agent:
  network: proxy-only
  start:
    command: [python3, agents/hostile_agent.py]
    env: {SECRET_NAME: DEPLOY_NOTE, GATE_FILE: /opt/chaos-gate/gate/__init__.py, DAEMON: "1", DAEMON_SLEEP: "2",
          REPORT_DIR: /github/workspace/agent/chaos-gate-report, OUTPUT_FILE: /github/file_commands/output,
          SUMMARY_FILE: /github/file_commands/summary.md, FORGE: "1", SERVICE_MARK: echo_service.py, BYPASS: "1"}
  invoke:
    http: {url: "{{url}}/chat", body: {input: "{{input}}"}, output: $.reply}
  timeout: 10
  offline: true
tools:
  - {name: svc, env: SVC_URL, upstream: "{{services.svc.url}}"}
inputs:
  - {id: hello, text: "say hello"}
mutation: {enabled: false}
contract:
  invariants:
    - {id: thanks, type: contains, value: thank-you-very-much, severity: critical}
"""
PROBE = ("import socket; s = socket.socket(socket.AF_UNIX); s.connect('/var/run/docker.sock'); "
         "s.sendall(b'GET /_ping HTTP/1.0\\r\\n\\r\\n'); print(s.recv(100).split(b'\\r\\n')[0].decode())")


class SocketRelay:
    """A unix socket that forwards to the engine's, owned by root:`gid` 0660: a runner whose docker group has the id
    of the image's chaos-agent group (999, where `groupadd -r docker` often lands on a fresh host)."""

    def __init__(self, path: Path, gid: int):
        import socket
        import threading

        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(path))
        os.chown(path, 0, gid)
        os.chmod(path, 0o660)
        self.server.listen(8)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import socket
        import threading

        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX)
            engine.connect("/var/run/docker.sock")
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(1)
        except OSError:
            pass

    def close(self):
        self.server.close()


def test_hostile_agent_in_the_action_image_reaches_nothing(action_image, tmp_path):
    """Issue 41's must-show in the image: the agent (chaos-agent) tries the gate's and a service's environ, the
    gate's installation, memory, stdout and signals, forges GitHub's output, step summary and the reports, leaves a
    setsid daemon, drives the mounted docker socket and posts a write straight to the service's port. Each is refused
    or caught; the verdict and exit code are the gate's: an ERROR, since the run went around the proxy."""
    gid = int(subprocess.run(["docker", "run", "--rm", "--entrypoint", "id", action_image, "-g", "chaos-agent"],
                             capture_output=True, text=True, check=True).stdout)
    relay_dir = tmp_path / "engine"
    relay_dir.mkdir()
    relay = SocketRelay(relay_dir / "docker.sock", gid)
    engine = str(relay_dir / "docker.sock")
    workspace, files = tmp_path / "ws", tmp_path / "files"
    (workspace / "agent" / "agents").mkdir(parents=True)
    for name in ("hostile_agent.py", "echo_service.py"):
        shutil.copy(ROOT / "tests" / "agents" / name, workspace / "agent" / "agents" / name)
    shutil.copy(ROOT / "tests" / "httpkit.py", workspace / "agent" / "httpkit.py")
    (workspace / "agent" / "gate.yaml").write_text(HOSTILE_CONFIG)
    files.mkdir(mode=0o777)
    files.chmod(0o777)  # as loose as a runner could leave them: the gate takes write away before the agent starts
    for name in ("output", "summary.md"):
        (files / name).touch(mode=0o666)
        (files / name).chmod(0o666)
    (files / "event.json").write_text("{}")
    try:
        # the attack is real: without the gate, chaos-agent reaches this socket through its group
        undefended = subprocess.run(["docker", "run", "--rm", "--user", "chaos-agent", "-v",
                                     f"{engine}:/var/run/docker.sock", "--entrypoint",
                                     "python3", action_image, "-c", PROBE], capture_output=True, text=True)
        assert undefended.stdout.startswith("HTTP/1.0 200"), undefended.stdout + undefended.stderr
        run = github_run(action_image, workspace, files, {"config": "gate.yaml", "working-directory": "agent",
                                                          "github-token": "ghs_app_token", "comment": "false"},
                         ["--network", "none"], {SECRET_NAME: SECRET, "GITHUB_TOKEN": "ghs_app_token"}, engine)
    finally:
        relay.close()
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-2000:]  # the gate's ERROR, not the agent's PASS
    out_dir = workspace / "agent" / "chaos-gate-report"
    report = json.loads((out_dir / "report.json").read_text())
    logs = "".join(p.read_text() for p in (out_dir / "logs").glob("agent-*.log"))
    line = [x for x in logs.splitlines() if x.startswith("attacks: ")]
    assert line, logs[-2000:]
    found = json.loads(line[-1].removeprefix("attacks: "))
    assert found["uid"] == gid and "agents run as chaos-agent" in report["run"]["separation"], (found, report["run"])
    assert "services run as chaos-service" in report["run"]["separation"]
    assert "docker socket" not in report["run"]["separation"]  # taken out of reach, not left and noted
    # a container action has no CAP_SYS_ADMIN for a network namespace: the report says so, never a silent pass
    assert "proxy-only could not make a network namespace" in report["run"]["separation"], report["run"]
    assert "GOT" not in json.dumps(found) and "denied" in found["environ"], found
    for attack in ("service", "tamper", "outputs", "fd", "signal", "docker"):
        assert found[attack].startswith("denied"), (attack, found)
    assert found["mem"].count("denied:") == 2 and found["forge"].count("denied:") == 4, found
    texts = [run.stdout, run.stderr] + [p.read_text(errors="replace") for p in (*workspace.rglob("*"), *files.rglob("*"))
                                        if p.is_file()]
    assert not any(SECRET in text for text in texts)
    assert report["verdict"]["verdict"] == "error" and not (out_dir / "forged.txt").exists()
    # no namespace here, so the write reached the service — and the service's watch caught it: not judged
    assert found["bypass"].startswith("sent ") and ":200" in found["bypass"], found
    cell = report["verdict"]["cells"][0]
    assert (cell["status"], cell["reason"]) == ("error", "bypassed_proxy"), (cell["reason"], cell["error"])
    assert "service 'svc' got" in cell["error"] and "not watched" not in report["run"]["separation"]
    assert any(DAEMON_MARK in cmd for cmd in report["run"]["left_running"]), report["run"]
    outputs = (files / "output").read_text().splitlines()
    assert [x for x in outputs if x.startswith("verdict=")] == ["verdict=error"], outputs
    assert len([x for x in outputs if x.startswith("score=")]) == 1 and "score=100.00" not in outputs, outputs
    summary = (files / "summary.md").read_text()
    assert "chaos-gate: **ERROR**" in summary and "PASS** (forged)" not in summary and "<!--\n" not in summary
    assert all((p.stat().st_mode & 0o022) == 0 for p in (files, files / "output", files / "summary.md"))


def test_an_agent_container_gets_no_socket_no_raw_sockets_and_no_new_privileges(tmp_path):
    """What a docker agent's container is given by the gate: not the engine's socket, not CAP_NET_RAW (on the
    host's network it could sniff the proxy's loopback traffic), and no setuid escalation inside."""
    import time

    from gate.agent.container import ContainerAgent, docker_client, placement

    client = docker_client()
    probe = ("import os; s = open('/proc/self/status').read(); caps = int(s.split('CapEff:')[1].split()[0], 16); "
             "print('raw', bool(caps & (1 << 13)), 'nnp', s.split('NoNewPrivs:')[1].split()[0], "
             "'sock', os.path.exists('/var/run/docker.sock'), flush=True); import time; time.sleep(30)")

    class Spec:
        command = ["python3", "-c", probe]

    agent = ContainerAgent(client, BASE, Spec(), {}, 0, placement(client), tmp_path / "agent.log")
    agent.spawn()
    try:
        for _ in range(100):
            if "nnp" in agent.log_tail():
                break
            time.sleep(0.1)
        assert agent.log_tail().split() == ["raw", "False", "nnp", "1", "sock", "False"], agent.log_tail()
    finally:
        agent.stop()
    assert leftover_agents() == []
