"""SIGTERM and SIGINT end a run with a partial report, exit 2 and no agent process left.

The CLI runs as a subprocess; the test waits until the agent is hanging inside a
cell (or still starting), signals the gate, and then checks the report and that the
agent's process and process group are gone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, write_config
from test_security import PLANTED, SECRET_VALUES, config_text

HANG_INPUTS = """
inputs:
  - {id: one, text: "first question"}
  - {id: two, text: "second question"}
  - {id: three, text: "please HANG here"}
concurrency: 1
"""


def start_gate(tmp_path: Path, text: str) -> subprocess.Popen:
    path = write_config(tmp_path, text)
    return subprocess.Popen([sys.executable, "-m", "gate", "run", "-c", str(path), "-o", str(tmp_path / "out"),
                             "--quiet"], env={**os.environ, **PLANTED}, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_log(tmp_path: Path, marker: str, timeout: float = 30) -> int:
    """Waits for `marker` in the agent's live log; returns the agent's pid."""
    log = tmp_path / "out" / "logs" / "agent-0.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        if marker in text:
            return int(re.search(r"secret_agent pid (\d+)", text).group(1))
        time.sleep(0.05)
    raise AssertionError(f"{marker!r} never appeared in {log}")


def gone(pid: int) -> bool:
    for probe in (os.kill, os.killpg):
        try:
            probe(pid, 0)
        except ProcessLookupError:
            continue
        return False
    return True


def interrupt(proc: subprocess.Popen, signum: int) -> tuple[int, str, str]:
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


def without_yaml_inputs(text: str) -> str:
    return text.split("inputs:")[0] + "mutation: {enabled: false}\n"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_mid_cell_gives_a_partial_report_exit_2_and_no_process_left(tmp_path, signum):
    proc = start_gate(tmp_path, without_yaml_inputs(config_text()) + HANG_INPUTS)
    pid = wait_for_log(tmp_path, "HANGING")
    code, out, err = interrupt(proc, signum)
    assert code == 2, err
    v = json.loads((tmp_path / "out" / "report.json").read_text())["verdict"]
    assert v["verdict"] == "error" and v["error_reason"] == "interrupted" and v["exit_code"] == 2
    finished = [c["id"] for c in v["cells"] if c["stage"] != "gate"]
    assert finished == ["contract/one/baseline", "contract/two/baseline"]  # the hanging cell is not reported
    assert f"interrupted by {signal.Signals(signum).name}" in v["reasons"][0]
    assert "2 of 3 cells" in v["reasons"][0]
    assert "<error" in (tmp_path / "out" / "junit.xml").read_text()
    assert (tmp_path / "out" / "summary.md").exists()
    assert gone(pid), f"agent {pid} survived the gate"
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert not any(s in path.read_text(errors="replace") for s in SECRET_VALUES), path


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_start_up_gives_an_interrupted_report_and_no_process_left(tmp_path, signum):
    proc = start_gate(tmp_path, config_text("slow_start", ready_timeout=60))
    pid = wait_for_log(tmp_path, "STARTING")
    code, out, err = interrupt(proc, signum)
    assert code == 2, err
    v = json.loads((tmp_path / "out" / "report.json").read_text())["verdict"]
    assert v["verdict"] == "error" and v["error_reason"] == "interrupted"
    assert [c["id"] for c in v["cells"]] == ["gate/interrupted"]
    assert gone(pid), f"agent {pid} survived the gate"


def test_a_gate_killed_outright_leaves_no_earlier_pass_behind(tmp_path):
    """SIGKILL cannot be handled: the report the gate wrote as it began stands, never the last run's PASS."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text(json.dumps({"verdict": {"verdict": "pass", "score": 100.0}}))
    (out / "summary.md").write_text("## chaos-gate: PASS\n")
    proc = start_gate(tmp_path, config_text("slow_start", ready_timeout=60))
    pid = wait_for_log(tmp_path, "STARTING")
    proc.kill()
    proc.communicate(timeout=30)
    try:
        v = json.loads((out / "report.json").read_text())["verdict"]
        assert v["verdict"] == "error" and v["error_reason"] == "interrupted" and "did not finish" in v["reasons"][0]
        assert "PASS" not in (out / "summary.md").read_text()
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)  # the gate could not end its agent: the test does
        except ProcessLookupError:
            pass
