"""The agent lifecycle against real subprocesses over real loopback HTTP."""

import json
import signal
import subprocess
import sys
import time
import uuid

from conftest import AGENTS, planted_agent_block, write_config
from gate.plan import load_config
from gate.runner import run_gate


def inputs_block(*texts, mutation=False):
    lines = ["inputs:"] + [f"  - {{id: i{n}, text: {json.dumps(t)}}}" for n, t in enumerate(texts)]
    lines.append(f"mutation: {{enabled: {str(mutation).lower()}}}")
    return "\n".join(lines) + "\n"


def run(tmp_path, behaviour, *texts, timeout=5.0, extra="", extra_env=""):
    path = write_config(tmp_path, planted_agent_block(behaviour, timeout, extra_env) + inputs_block(*texts) + extra)
    return run_gate(load_config(path), output_dir=tmp_path / "out")


def by_id(report):
    return {c.id: c for c in report.verdict.cells}


def pids_with(tag: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True)
    return out.stdout.split()


def test_hanging_agent_fails_completes_within_deadline(tmp_path):
    began = time.monotonic()
    report = run(tmp_path, "hang", "hello", timeout=1.0)
    cell = report.verdict.cells[0]
    assert cell.status == "fail" and cell.reason == "agent_timeout"
    assert [b.id for b in cell.breaches] == ["completes"]
    assert report.timings.cells[0].latency_ms[0] < 1000 + 300  # deadline plus a small margin
    assert time.monotonic() - began < 10


def test_agent_exiting_at_startup_is_exit_2_with_log_tail(tmp_path, capsys):
    from gate.cli import main

    path = write_config(tmp_path, planted_agent_block("exit_at_start") + inputs_block("hi"))
    assert main(["run", "-c", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "agent exited during start-up with code 3" in err
    assert "missing OPENAI_API_KEY (planted start-up failure)" in err


def test_crash_mid_run_is_recorded_with_log_tail_and_agent_restarted(tmp_path):
    report = run(tmp_path, "crash_on", "first", "please CRASH now", "after the crash")
    cells = by_id(report)
    crashed = cells["contract/i1/baseline"]
    assert crashed.status == "fail" and crashed.reason == "agent_crash"
    assert "segfault-like crash on planted input" in crashed.runs[0].detail
    assert cells["contract/i2/baseline"].status == "pass"  # restarted for the next cell
    assert cells["contract/i0/baseline"].status == "pass"


def test_http_failures_get_reason_codes(tmp_path):
    assert run(tmp_path, "status500", "x").verdict.cells[0].reason == "http_5xx"
    assert run(tmp_path, "notjson", "x").verdict.cells[0].reason == "bad_output_json"
    flood = run(tmp_path, "flood", "x").verdict.cells[0]
    assert flood.reason == "output_flood" and flood.status == "fail"


def test_input_is_json_escaped_into_the_body(tmp_path):
    nasty = 'quote " backslash \\ newline \n unicode é {{input}} </script>'
    report = run(tmp_path, "echo", "placeholder")
    path = write_config(tmp_path, planted_agent_block("echo") + "inputs:\n  - id: n\n    text: " +
                        __import__("json").dumps(nasty) + "\nmutation: {enabled: false}\n", "n.yaml")
    report = run_gate(load_config(path), output_dir=tmp_path / "out2")
    assert report.verdict.cells[0].runs[0].output == "echo: " + nasty


def test_runs_report_pass_rate_and_flaky(tmp_path):
    extra = "runs: 4\ncontract:\n  invariants:\n    - {id: echoes, type: contains, value: echo, severity: medium}\n"
    report = run(tmp_path, "flaky", "hello", extra=extra)
    cell = report.verdict.cells[0]
    assert cell.flaky and cell.pass_rate == 0.5 and len(cell.runs) == 4
    echoes = next(i for i in cell.invariants if i.id == "echoes")
    assert echoes.pass_rate == 0.5 and echoes.breached


def test_min_pass_rate_tolerates_when_told(tmp_path):
    extra = ("runs: 4\ngate: {min_score: 40}\ncontract:\n  invariants:\n"
             "    - {id: echoes, type: contains, value: echo, severity: critical, min_pass_rate: 0.5}\n")
    report = run(tmp_path, "flaky", "hello", extra=extra)
    assert report.verdict.cells[0].status == "pass" and report.verdict.cells[0].flaky
    assert report.verdict.score == 50.0  # tolerated, but the failures still cost score
    assert report.verdict.verdict == "pass"


def command_agent(tmp_path, mode, *texts, timeout=3.0):
    body = f"""
agent:
  invoke:
    command: {{command: [{sys.executable!r}, {str(AGENTS / 'cli_agent.py')!r}], input: {mode}}}
  timeout: {timeout}
""" + inputs_block(*texts)
    return run_gate(load_config(write_config(tmp_path, body)), output_dir=tmp_path / "out")


def test_command_agent_stdin_and_arg(tmp_path):
    for mode in ("stdin", "arg"):
        report = command_agent(tmp_path, mode, "it's \"quoted\" $HOME", "EXIT7")
        cells = by_id(report)
        assert cells["contract/i0/baseline"].runs[0].output == "IT'S \"QUOTED\" $HOME"
        bad = cells["contract/i1/baseline"]
        assert bad.reason == "exit_nonzero" and bad.runs[0].status == 7


def test_command_agent_hang_is_killed_at_deadline(tmp_path):
    began = time.monotonic()
    report = command_agent(tmp_path, "stdin", "HANG", timeout=1.0)
    assert report.verdict.cells[0].reason == "agent_timeout"
    assert time.monotonic() - began < 8


def test_no_child_survives_the_gate(tmp_path):
    tag = f"chaos-gate-test-{uuid.uuid4().hex}"
    run(tmp_path, "spawn_child", "hello", extra_env=f", CHILD_TAG: {tag}")
    time.sleep(0.2)
    assert pids_with(tag) == []


def test_sigterm_stops_every_agent_process(tmp_path):
    tag = f"chaos-gate-term-{uuid.uuid4().hex}"
    path = write_config(tmp_path, planted_agent_block("hang", 60, f", CHILD_TAG: {tag}").replace(
        "BEHAVIOUR: hang", "BEHAVIOUR: hang") + inputs_block("a", "b") + "concurrency: 2\n")
    # the hang agent does not spawn children; tag its own command line instead
    text = path.read_text().replace("planted.py\"]", f"planted.py\", \"{tag}\"]")
    path.write_text(text)
    gate = subprocess.Popen([sys.executable, "-m", "gate", "run", "-c", str(path), "-o", str(tmp_path / "out"),
                             "--quiet"], start_new_session=True)
    deadline = time.monotonic() + 20
    while len(pids_with(tag)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(pids_with(tag)) == 2
    time.sleep(0.5)  # let both cells reach the hanging agents
    gate.send_signal(signal.SIGTERM)
    assert gate.wait(timeout=15) != 0
    time.sleep(0.2)
    assert pids_with(tag) == []


def test_secret_printed_by_the_agent_is_redacted_from_logs_and_reports(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_API_TOKEN", "tok-very-secret-123")
    extra = ', AGENT_API_TOKEN: "${AGENT_API_TOKEN}"'
    path = write_config(tmp_path, planted_agent_block("crash_on", extra_env=extra).replace(
        "planted.py')", "planted.py')") + inputs_block("CRASH"))
    # the planted agent prints its environment's token when it crashes: make it do so
    text = path.read_text().replace("BEHAVIOUR: crash_on", "BEHAVIOUR: crash_on, LEAK: '1'")
    path.write_text(text)
    report = run_gate(load_config(path), output_dir=tmp_path / "out")
    dump = report.model_dump_json()
    logs = "".join(p.read_text() for p in (tmp_path / "out" / "logs").glob("*.log"))
    assert "***AGENT_API_TOKEN***" in logs and "tok-very-secret-123" not in logs
    assert "tok-very-secret-123" not in dump and "***AGENT_API_TOKEN***" in dump


def test_a_shell_started_agent_stops_at_once_not_after_the_grace(tmp_path):
    """`start.command` as a string runs under /bin/sh. The gate is a child subreaper, so the shell's child,
    outliving the shell by a moment, is the gate's to reap: its zombie must not hold the stop for the
    whole grace period (2 s per agent stop, at every restart and at the end of every run)."""
    from gate.agent import accounting, reaper

    accounting.harden()  # as the CLI does: the subreaper
    proc = subprocess.Popen(["/bin/sh", "-c", f"{sys.executable} -c 'import time; time.sleep(30)'; echo done"],
                            start_new_session=True)
    reaper.track(proc.pid, proc)
    time.sleep(0.3)
    began = time.monotonic()
    reaper.kill_group(proc.pid, grace=2.0)
    assert time.monotonic() - began < 1.0
    assert proc.poll() is not None
