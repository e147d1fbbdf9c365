"""A write sent straight to a service's port, around the gate's proxy, where no network namespace stops it:
the service that fronts a tool watches who connects (chaos_gate_agent/peers.py), and the run that sent it
is `error` / `bypassed_proxy` — never a pass whose trace counted one write where the service executed two.

Linux and root (the agent and the service run as users of their own; the uid of a connection's socket is
what tells the agent from the gate). The agent is tests/agents/bypass_agent.py; its sound twin sends the
same write to the tool's proxied URL and passes. The service is Python (echo_service.py) and Node
(echo_service.cjs): each loads its own watch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import AGENTS, ROOT

SYSTEM_PYTHON = "/usr/bin/python3"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(SYSTEM_PYTHON),
                                reason="separate users need root; the agents run on /usr/bin/python3")


ECHO = [SYSTEM_PYTHON, str(AGENTS / "echo_service.py")]
NODE_ECHO = [shutil.which("node") or "node", str(AGENTS / "echo_service.cjs")]


def run(workdir: Path, direct: bool, service: list[str] = ECHO, concurrency: int = 1,
        service_user: str = "daemon") -> dict:
    """The CLI on the bypass agent. The service runs as `daemon`, a user apart from the agent's, as
    `chaos-service` is in the image (a bare host has neither, and its agent and service would share
    `nobody`)."""
    config = workdir / "chaos-gate.yaml"
    agent_env = '{DIRECT_URL: "{{services.svc.url}}"}' if direct else "{}"
    config.write_text(textwrap.dedent(f"""\
        services:
          - name: svc
            command: {json.dumps(service)}
            port_env: SVC_PORT
            user: {service_user}
        agent:
          start:
            command: [{SYSTEM_PYTHON}, {json.dumps(str(AGENTS / 'bypass_agent.py'))}]
            env: {agent_env}
          invoke:
            http: {{url: "{{{{url}}}}/chat", body: {{input: "{{{{input}}}}"}}, output: $.reply}}
          timeout: 10
        llm:
          - {{name: openai, provider: openai, upstream: sim}}
        tools:
          - {{name: svc, env: SVC_URL, upstream: "{{{{services.svc.url}}}}"}}
        inputs:
          - {{id: refund, text: "refund order 1234"}}
          - {{id: again, text: "refund order 5678"}}
        mutation: {{enabled: false}}
        chaos: {{explore: off}}
        concurrency: {concurrency}
        """))
    out = workdir / f"out-{direct}-{concurrency}"
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(config), "-o", str(out), "--full-report"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (out / "report.json").exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("concurrency, service", [(1, ECHO), (2, ECHO), (1, NODE_ECHO)], ids=["python", "K2", "node"])
def test_a_write_around_the_proxy_makes_the_run_unjudged(open_dir, concurrency, service):
    if service is NODE_ECHO and not shutil.which("node"):
        pytest.skip("no node here")
    report = run(open_dir, direct=True, concurrency=concurrency, service=service)
    cells = report["verdict"]["cells"]
    assert cells and all((c["status"], c["reason"]) == ("error", "bypassed_proxy") for c in cells), \
        [(c["status"], c["reason"], c["error"]) for c in cells]
    error = cells[0]["error"]
    # one write per run; at K=2 on a host without chaos-agent-1 both instances share a uid, so a run may be
    # charged its sibling's write as well (never fewer)
    got = "1" if concurrency == 1 else "[12]"
    assert "around the gate's proxy" in error and re.search(f"service 'svc' got {got} connection\\(s\\) not from the "
                                                            "proxy", error), error
    assert "proxied URL" in error  # the fix, for an agent that was simply handed the wrong URL
    assert report["verdict"]["verdict"] != "pass"


@pytest.mark.parametrize("service", [ECHO, NODE_ECHO], ids=["python", "node"])
def test_the_same_write_through_the_proxy_passes_and_is_traced(open_dir, service):
    if service is NODE_ECHO and not shutil.which("node"):
        pytest.skip("no node here")
    report = run(open_dir, direct=False, service=service)
    cells = report["verdict"]["cells"]
    assert [c["status"] for c in cells] == ["pass", "pass"], [(c["reason"], c["error"]) for c in cells]
    assert {"openai", "svc"} <= {s["target"] for c in cells for r in c["runs"] for s in r["trace"]}
    assert "not watched" not in (report["run"]["separation"] or ""), report["run"]["separation"]


def test_a_service_the_watch_cannot_load_into_is_named(open_dir):
    """`python3 -I` skips PYTHONPATH, so the watch never loads: the run says so instead of trusting it."""
    report = run(open_dir, direct=False, service=[SYSTEM_PYTHON, "-I", *ECHO[1:]])
    line = report["run"]["separation"] or ""
    assert "service 'svc' is not watched for requests sent around the proxy: the watch did not load" in line, line


def test_an_agent_sharing_the_services_uid_is_said_to_be_unwatched(open_dir):
    report = run(open_dir, direct=True, service_user="nobody")
    line = report["run"]["separation"] or ""
    assert "service 'svc' is not watched for requests sent around the proxy: it shares uid 65534" in line, line


@pytest.mark.parametrize("family, host", [("AF_INET", "127.0.0.1"), ("AF_INET6", "::1")])
def test_the_watch_finds_the_owner_of_a_connected_socket(family, host):
    """The lookup the watch makes on every accept: a socket of this process is found as this uid's, on IPv4 and
    IPv6; a peer no table lists is None (the gate then charges it, never trusts it)."""
    import socket

    sys.path.insert(0, str(ROOT / "gate" / "instrument" / "python"))
    from chaos_gate_agent.peers import owner

    fam = getattr(socket, family)
    try:
        server = socket.socket(fam)
        server.bind((host, 0))
    except OSError:
        pytest.skip(f"no {host} here")
    server.listen(1)
    client = socket.create_connection(server.getsockname()[:2])
    conn, addr = server.accept()
    try:
        assert owner(addr[:2], conn.getsockname()[:2]) == os.getuid()
        assert owner((host, 1), conn.getsockname()[:2]) is None
    finally:
        for s in (client, conn, server):
            s.close()


def test_a_log_the_gate_cannot_make_leaves_the_service_running_and_said_unwatched(tmp_path):
    from gate.agent import separation
    from gate.services.peers import PeerLog

    separation.begin_run()
    who = separation.Identity("nobody", 65534, 65534, str(tmp_path), str(tmp_path / "no-such-dir"))
    env = {"PATH": "/usr/bin"}
    assert PeerLog.prepare("svc", who, env) is None and "CHAOS_GATE_PEER_LOG" not in env
    line = separation.summary() or ""
    assert "service 'svc' is not watched for requests sent around the proxy: its log" in line, line
    separation.begin_run()
