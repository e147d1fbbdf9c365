"""Progress: a live bar (done/total, failures, elapsed, ETA) on a terminal; a plain line every few
seconds in CI logs, on stderr, and inside the Action's ::group::. The end-to-end cases run the SDK
example, whose orders API the gate starts as a service."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys

from rich.console import Console

from conftest import ROOT
from gate.github.action import run_action
from gate.report.model import CheckResult, RunResult
from gate.report.progress import PlainProgress
from gate.report.terminal import progress_bar
from test_github_action import Out, action_env

SDK = ROOT / "examples" / "sdk_agent"
BAD = RunResult(run=0, reason="ok", checks=[CheckResult(invariant="x", severity="high", passed=False, message="")])
GOOD = RunResult(run=0, reason="ok", checks=[CheckResult(invariant="x", severity="high", passed=True, message="")])


def test_plain_lines_every_interval_with_failures_and_eta():
    now = [100.0]
    out = io.StringIO()
    progress = PlainProgress(out, interval=5, now=lambda: now[0])
    progress.on_plan(4)
    for seconds, run in ((2, GOOD), (4, BAD), (1, GOOD), (3, GOOD)):
        now[0] += seconds
        progress.on_progress(run)
    assert out.getvalue().splitlines() == [
        "chaos-gate: running 4 cell run(s)",
        "chaos-gate: 2/4 cells · 1 failing · 0:06 elapsed · ETA 0:06",  # 5 s passed since the last line
        "chaos-gate: 4/4 cells · 1 failing · 0:10 elapsed · ETA 0:00",  # the last one always prints
    ]


def test_terminal_bar_shows_failures_and_eta():
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    with progress_bar(console) as (on_plan, on_progress):
        on_plan(3)
        on_progress(BAD)
        on_progress(GOOD)
        console.file.flush()
        drawn = buffer.getvalue()
    assert "chaos-gate" in drawn and "1 failing" in drawn and "ETA" in drawn and "2/3" in drawn


def test_ci_log_gets_plain_lines_on_stderr(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ORDERS_URL"} | {
        "AGENT_BUGS": "double_write", "CHAOS_GATE_PROGRESS_SECONDS": "0"}
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(SDK / "chaos-gate.yaml"), "-o",
                           str(tmp_path / "out")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("chaos-gate: ")]
    assert lines[0] == "chaos-gate: running 8 cell run(s)"
    assert lines[-1].startswith("chaos-gate: 8/8 cells · 1 failing · ") and "ETA 0:00" in lines[-1]
    assert len(lines) == 9  # interval 0: one line per finished cell
    assert "\r" not in proc.stderr and "\x1b[" not in proc.stderr  # no redrawn bar in a log


def test_action_prints_progress_inside_its_group(tmp_path, github, monkeypatch):  # noqa: F811
    monkeypatch.delenv("ORDERS_URL", raising=False)
    workspace = tmp_path / "workspace"
    shutil.copytree(SDK, workspace / "agent", ignore=shutil.ignore_patterns("chaos-gate-report"))
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github), out) == 0
    log = out.text.splitlines()
    start, end = log.index("::group::chaos-gate run"), log.index("::endgroup::")
    inside = [line for line in log[start:end] if line.startswith("chaos-gate: ")]
    assert inside[0] == "chaos-gate: running 8 cell run(s)" and inside[-1].startswith("chaos-gate: 8/8 cells · 0 failing")
    assert (workspace / "agent" / "chaos-gate-report" / "report.html").exists()
