"""The Action at GitHub's edges, against the local fake GitHub REST server: refused
requests explained (401 bad token, 403 fork or missing permission, 404 unknown PR),
outputs a later step can open, the CLI's report location, config errors on their line.
"""

from __future__ import annotations

import os

from gate.cli import main
from gate.github.action import run_action
from gate.github.comment import GitHubApi, upsert_comment
from test_github_action import REPO, Out, action_env, outputs


def _summary(tmp_path) -> str:
    return (tmp_path / "summary.md").read_text()


def test_401_says_the_token_is_invalid_or_expired(tmp_path, workspace, github):
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github, token="ghp_revoked"), out) == 0
    assert ("::warning title=chaos-gate%3A no PR comment::could not write the PR comment: the token is invalid "
            "or expired (HTTP 401)") in out.text
    assert "invalid or expired" in _summary(tmp_path) and github.comments == {}


def test_403_on_a_fork_is_a_read_only_notice(tmp_path, workspace, github):
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github, token="ghs_read_only", fork=True), out) == 0
    assert "::notice title=chaos-gate%3A no PR comment::" in out.text and "read-only" in out.text
    assert "::warning" not in out.text


def test_403_on_a_same_repo_pr_asks_for_the_permission(tmp_path, workspace, github):
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github, token="ghs_read_only", fork=False), out) == 0
    assert "::warning title=chaos-gate%3A no PR comment::" in out.text and "pull-requests: write" in out.text


def test_404_says_the_pr_or_repo_was_not_found(tmp_path, workspace, github):
    github.repos = {"someone/else"}
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github), out) == 0
    assert f"pull request #7 or repository {REPO} was not found (HTTP 404)" in out.text
    result = upsert_comment(GitHubApi(github.url, "ghs_app_token"), "acme/gone", 3, "body")
    assert not result.posted and result.level == "warning" and "HTTP 404" in result.notice


def test_outputs_are_workspace_relative_paths_a_later_step_can_open(tmp_path, workspace, github, monkeypatch):
    env = action_env(tmp_path, workspace, github, comment="false", junit_path="out/j.xml")
    assert run_action(env, Out()) == 0
    got = outputs(tmp_path)
    assert got["report"] == "agent/chaos-gate-report/report.json" and got["junit"] == "agent/out/j.xml"
    monkeypatch.chdir(workspace)  # a later step runs in the workspace, on the runner's own path for it
    assert all(os.path.isfile(got[k]) for k in ("report", "junit"))


def test_cli_and_action_write_to_the_same_place(tmp_path, workspace, github, monkeypatch):
    """Config in a subdirectory, run from the workspace: both write beside the config."""
    env = action_env(tmp_path, workspace, github, comment="false")
    env["INPUT_WORKING-DIRECTORY"], env["INPUT_CONFIG"] = ".", "agent/chaos-gate.yaml"
    assert run_action(env, Out()) == 0
    action_report = workspace / outputs(tmp_path)["report"]
    assert action_report == workspace / "agent" / "chaos-gate-report" / "report.json"
    action_report.unlink()
    monkeypatch.chdir(workspace)
    assert main(["run", "-c", "agent/chaos-gate.yaml", "--quiet"]) == 0
    assert action_report.is_file()


def test_config_errors_are_annotated_on_their_lines(tmp_path, workspace, github):
    (workspace / "agent" / "chaos-gate.yaml").write_text(
        "agent:\n  urll: x\ninputs: []\ngate:\n  min_scor: 3\n")
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github), out) == 2
    errors = [line for line in out.text.splitlines() if line.startswith("::error ")]
    assert any(e.startswith("::error file=agent/chaos-gate.yaml,line=2,title=invalid chaos-gate config::agent.urll")
               for e in errors), errors
    assert any(e.startswith("::error file=agent/chaos-gate.yaml,line=5,") and "min_scor" in e for e in errors), errors
    assert outputs(tmp_path)["verdict"] == "error"


def test_an_input_error_without_a_line_is_still_annotated(tmp_path, workspace, github):
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github, min_score="lots"), out) == 2
    assert "::error title=chaos-gate could not run::input min-score: expected a float, got 'lots'" in out.text


def test_a_pull_requests_config_cannot_turn_the_box_off_unless_the_workflow_allows_it(tmp_path, workspace, github):
    """`agent.user: off` runs the PR's agent as the gate's own user: the Action refuses it, naming the line and
    the input that allows it; with `allow-unboxed: true` (the workflow's word, for trusted code) it runs."""
    config = workspace / "agent" / "chaos-gate.yaml"
    config.write_text(config.read_text().replace("agent:\n", "agent:\n  user: off\n", 1))
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github, allow_unboxed="false"), out) == 2
    assert outputs(tmp_path)["verdict"] == "error"
    refusal = [line for line in out.text.splitlines() if line.startswith("::error file=agent/chaos-gate.yaml,line=")]
    assert refusal and "agent.user: off" in refusal[0] and "allow-unboxed: true" in refusal[0], out.text[-2000:]
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github, allow_unboxed="true"), out) == 0, out.text[-2000:]
