"""A run that attacked nothing says so on the first line of every surface.

The README's example (examples/sdk_agent) with its chaos sections removed still runs its contract
stage and passes with score 100.0; summary.md, the PR comment, the terminal's verdict line and
report.html then say, on that line, that no fault was injected, and report.json carries
`verdict.faults_injected: false`. So does a run whose faults never fired. The unmodified example's
surfaces say nothing of the kind. Only words: the verdict is the same as without them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLE, ROOT
from gate.github.comment import MARKER
from gate.report.failure import failure_report
from gate.report.injected import no_fault_note
from gate.report.model import FaultCoverage, ScenarioCoverage

SDK = EXAMPLE.parent / "sdk_agent"
NOTE = "no fault was injected"
NEVER_FIRES = ("  scenarios:\n    - name: nowhere\n      faults: [{kind: server_error, target: orders, "
               "path: ^/nowhere}]\n")


def example(directory, scenarios: str | None = None, gate: str = "gate: {min_score: 80}"):
    """A copy of the SDK example; `scenarios` replaces its contract scenarios (None: kept as they are)."""
    shutil.copytree(SDK, directory, ignore=shutil.ignore_patterns("chaos-gate-report", "__pycache__"))
    config = directory / "chaos-gate.yaml"
    if scenarios is not None:
        text = config.read_text()
        start, end = text.index("  scenarios:\n"), text.index("gate: {min_score: 80}")
        explore = "" if scenarios.strip() else "\nchaos: {explore: off}"  # no fault named: the gate would explore
        config.write_text(text[:start] + scenarios + gate + explore + text[end + len("gate: {min_score: 80}"):])
    return config


def run_cli(config, out, *extra) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ORDERS_URL", "AGENT_BUGS", "PROVIDER")}
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(config), "-o", str(out), *extra], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=240)
    return proc.returncode, proc.stdout


def verdict_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(("PASS ", "FAIL ", "ERROR ")))


def first_line(path) -> str:
    return path.read_text().splitlines()[0]


def test_no_chaos_configured_says_so_on_every_first_line(tmp_path):
    config = example(tmp_path / "agent", scenarios="")
    code, stdout = run_cli(config, tmp_path / "out")
    report = json.loads((tmp_path / "out" / "report.json").read_text())["verdict"]
    assert code == 0 and (report["verdict"], report["score"]) == ("pass", 100.0)  # the verdict is unchanged
    assert report["faults_injected"] is False and report["coverage"] == []
    assert f"{NOTE} (none is configured)" in verdict_line(stdout)
    assert f"{NOTE} (none is configured)" in first_line(tmp_path / "out" / "summary.md")
    assert f"<span>{NOTE} (none is configured)</span>" in (tmp_path / "out" / "report.html").read_text()


def test_faults_that_never_fired_say_so_too(tmp_path):
    config = example(tmp_path / "agent", NEVER_FIRES, "gate: {min_score: 80, allow_vacuous: true}")
    code, stdout = run_cli(config, tmp_path / "out")
    report = json.loads((tmp_path / "out" / "report.json").read_text())["verdict"]
    assert code == 0 and report["verdict"] == "pass" and report["warnings"]  # vacuous, allowed: a warning
    assert [f["status"] for sc in report["coverage"] for f in sc["faults"]] == ["never_matched"]
    assert report["faults_injected"] is False
    assert f"{NOTE} (the one configured fault never fired)" in verdict_line(stdout)
    assert f"{NOTE} (the one configured fault never fired)" in first_line(tmp_path / "out" / "summary.md")


def test_the_unmodified_example_says_nothing_of_the_kind(tmp_path):
    config = example(tmp_path / "agent")
    code, stdout = run_cli(config, tmp_path / "out", "--only", "contract/refund/baseline",
                           "--only", "contract/refund/rate_limited")
    report = json.loads((tmp_path / "out" / "report.json").read_text())["verdict"]
    assert code == 0 and report["faults_injected"] is True
    assert "fault" not in verdict_line(stdout) and NOTE not in stdout
    assert NOTE not in (tmp_path / "out" / "summary.md").read_text()


@pytest.mark.parametrize("scenarios", ["", None], ids=["chaos removed", "unmodified"])
def test_the_actions_comment_and_summary(tmp_path, github, scenarios, monkeypatch):
    from test_github_action import Out, action_env

    from gate.github.action import run_action

    for name in ("ORDERS_URL", "AGENT_BUGS", "PROVIDER"):  # the example's defaults, whatever ran before
        monkeypatch.delenv(name, raising=False)
    workspace = tmp_path / "workspace"
    example(workspace / "agent", scenarios)
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github), out) == 0, out.text
    body = next(iter(github.comments.values()))["body"]
    assert body.startswith(MARKER + "\n## ✅ chaos-gate: **PASS**")
    heading = body.splitlines()[1]
    summary = first_line(tmp_path / "summary.md")
    logged = next(line for line in out.text.splitlines() if line.startswith("chaos-gate: PASS score"))
    if scenarios == "":
        assert all(f"{NOTE} (none is configured)" in line for line in (heading, summary, logged))
    else:
        assert all(NOTE not in line for line in (heading, summary, logged)) and NOTE not in body


# --- the words, on reports made by hand ------------------------------------------------------------------------

def _with_coverage(*statuses: str):
    from test_markdown import report_with

    report = report_with(["fine"])
    faults = [FaultCoverage(index=n, fault="server_error", target="llm", matched=0, fired=int(s == "fired"),
                            status=s) for n, s in enumerate(statuses)]
    report.verdict.coverage = [ScenarioCoverage(stage="chaos", scenario="outage", cells=1, faults=faults)] \
        if faults else []
    return report


def test_the_note_names_why():
    assert no_fault_note(_with_coverage()) == f"{NOTE} (none is configured)"
    assert no_fault_note(_with_coverage("never_matched", "not_applicable")) == \
        f"{NOTE} (none of the 2 configured faults fired)"
    assert no_fault_note(_with_coverage("never_fired", "fired")) is None
    selected = _with_coverage()
    selected.run.selected = ["contract/refund/baseline"]  # --only: other cells may carry faults
    assert no_fault_note(selected) == f"{NOTE} (none in the cells that ran)"


def test_a_run_that_could_not_judge_says_only_why(tmp_path):
    """The agent did not start: the verdict's line says that, not that no fault was injected."""
    from gate.plan import load_config

    loaded = load_config(example(tmp_path / "agent"))
    report = failure_report(loaded, "agent_start", "agent exited during start-up with code 3")
    assert report.verdict.faults_injected is False and no_fault_note(report) is None
