"""`agent.network: proxy-only` (gate/agent/netns.py): a write sent straight to a service's real port, around
the gate's proxy, is refused by the kernel instead of going unseen; the proxy still answers.

Linux and root only (a network namespace needs CAP_SYS_ADMIN). The agent is tests/agents/bypass_agent.py
under the system python3, which the separated user can read. Without proxy-only (the undefended run) the
same write reaches the service and the gate's trace has no step for it: that is the bypass.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import AGENTS, ROOT

SYSTEM_PYTHON = "/usr/bin/python3"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0 or not sys.platform.startswith("linux"),
                       reason="a network namespace needs Linux and root"),
    pytest.mark.skipif(not os.path.exists(SYSTEM_PYTHON) or not shutil.which("nsenter"),
                       reason="needs /usr/bin/python3 and nsenter"),
]


def run(workdir: Path, network: str) -> tuple[dict, dict]:
    """The CLI on the bypass agent: (report.json, what the agent's calls achieved)."""
    config = workdir / "chaos-gate.yaml"
    config.write_text(textwrap.dedent(f"""\
        services:
          - name: svc
            command: [{SYSTEM_PYTHON}, {json.dumps(str(AGENTS / 'echo_service.py'))}]
            port_env: SVC_PORT
        agent:
          network: {network}
          start:
            command: [{SYSTEM_PYTHON}, {json.dumps(str(AGENTS / 'bypass_agent.py'))}]
            env: {{DIRECT_URL: "{{{{services.svc.url}}}}"}}
          invoke:
            http: {{url: "{{{{url}}}}/chat", body: {{input: "{{{{input}}}}"}}, output: $.reply}}
          timeout: 10
        llm:
          - {{name: openai, provider: openai, upstream: sim}}
        inputs:
          - {{id: refund, text: "refund order 1234"}}
        mutation: {{enabled: false}}
        chaos: {{explore: off}}
        """))
    out = workdir / f"out-{network}"
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(config), "-o", str(out), "--full-report"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (out / "report.json").exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    logs = "".join(p.read_text(errors="replace") for p in (out / "logs").glob("agent-*.log"))
    lines = [line for line in logs.splitlines() if line.startswith("bypass: ")]
    assert lines, f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}\nthe agent's log:\n{logs[-2000:]}"
    return report, json.loads(lines[0].removeprefix("bypass: "))  # the one cell: no fault


def traced(report: dict) -> set[str]:
    return {s["target"] for c in report["verdict"]["cells"] for r in c["runs"] for s in r["trace"]}


def test_a_write_around_the_proxy_is_refused_under_proxy_only(open_dir):
    report, found = run(open_dir, "proxy-only")
    assert found["direct"].startswith("refused: Connection refused"), found
    assert found["proxy"] == "200" and "openai" in traced(report), (found, traced(report))  # the proxy still answers
    assert "only the gate's proxy" in report["run"]["separation"], report["run"]
    assert report["verdict"]["verdict"] == "pass", report["verdict"]


def test_without_it_the_same_write_reaches_the_service_unseen(open_dir):
    report, found = run(open_dir, "host")
    assert found["direct"] == "200" and found["proxy"] == "200", found  # the service executed the write ...
    assert traced(report) == {"openai"}, traced(report)  # ... and the gate's trace has no step for it
    assert "network namespace" not in (report["run"]["separation"] or "")


def test_where_it_cannot_be_set_up_the_run_says_so_in_one_line(monkeypatch, tmp_path):
    from gate.agent import separation
    from gate.agent.process import AgentProcess

    separation.begin_run()
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    agent = AgentProcess(["/bin/true"], tmp_path, {}, tmp_path / "log", network="proxy-only", proxy_ports=(1,))
    assert agent._isolated() == (["/bin/true"], {}, ())  # started as before, in the gate's network ...
    line = separation.summary()
    assert line.startswith("agent.network: proxy-only needs root (the gate runs as uid 1000)"), line  # ... said so
    separation.begin_run()
