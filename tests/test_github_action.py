"""The Action end to end in-process, against a local server speaking the GitHub REST API:
inputs, outputs, step summary, annotations, sticky comment, forks, size limits."""

import json
import shutil

import pytest

from conftest import EXAMPLE, unboxable_here
from gate.github.action import run_action
from gate.github.comment import MARKER, GitHubApi, upsert_comment
from gate.github.inputs import env_name, read_inputs

REPO = "acme/agent"


def action_env(tmp_path, workspace, github, token="ghs_app_token", pr=True, fork=False, **inputs):
    event = tmp_path / "event.json"
    head = "someone/agent" if fork else REPO
    event.write_text(json.dumps({"pull_request": {"number": 7, "head": {"repo": {"full_name": head}}}}
                                if pr else {"ref": "refs/heads/main"}))
    env = {"GITHUB_WORKSPACE": str(workspace), "GITHUB_OUTPUT": str(tmp_path / "output"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_EVENT_PATH": str(event),
           "GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": REPO, "PATH": "/usr/bin:/bin",
           env_name("config"): "chaos-gate.yaml", env_name("working-directory"): "agent",
           env_name("github-token"): token, env_name("comment"): "true", env_name("comment-mode"): "update"}
    import os
    env["PATH"] = os.environ["PATH"]
    if unboxable_here():  # conftest.unboxable_here: the box is tested where it can be applied, not here
        env[env_name("allow-unboxed")] = "true"
    for key, value in inputs.items():
        env[env_name(key.replace("_", "-"))] = value
    return env


def outputs(tmp_path) -> dict:
    return dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines() if "=" in line)


class Out:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_inputs_keep_hyphens():
    env = {"INPUT_MIN-SCORE": "72.5", "INPUT_COMMENT": "false", "INPUT_FAIL-ON": "score", "INPUT_SEED": ""}
    inputs = read_inputs(env)
    assert (inputs.min_score, inputs.comment, inputs.fail_on, inputs.seed) == (72.5, False, "score", None)


def test_first_run_creates_second_updates_the_same_comment(tmp_path, workspace, github):
    env = action_env(tmp_path, workspace, github)
    out = Out()
    assert run_action(env, out) == 0
    assert len(github.comments) == 1
    first = next(iter(github.comments.values()))
    assert first["body"].startswith(MARKER) and "chaos-gate: **PASS**" in first["body"]
    assert run_action(env, Out()) == 0
    assert len(github.comments) == 1 and ("PATCH", f"/repos/{REPO}/issues/comments/{first['id']}") in github.requests
    got = outputs(tmp_path)
    assert got["verdict"] == "pass" and float(got["score"]) >= 85
    assert got["report"].endswith("report.json") and got["junit"].endswith("junit.xml")
    assert (tmp_path / "summary.md").read_text().count("## ✅ chaos-gate: **PASS**") == 2
    assert "::group::chaos-gate run" in out.text and "::endgroup::" in out.text
    assert "::add-mask::ghs_app_token" in out.text


def test_marker_in_another_users_comment_is_ignored(tmp_path, workspace, github):
    planted = github.add((REPO, 7), MARKER + "\nI copied your marker", "mallory")
    for n in range(120):  # our comment must be found past the first page
        github.add((REPO, 7), f"chatter {n}", "bob")
    env = action_env(tmp_path, workspace, github)
    run_action(env, Out())
    ours = [c for c in github.comments.values() if c["user"]["login"] == "github-actions[bot]"]
    assert len(ours) == 1 and planted["body"] == MARKER + "\nI copied your marker"
    run_action(env, Out())
    assert len([c for c in github.comments.values() if c["user"]["login"] == "github-actions[bot]"]) == 1
    assert any("page=2" in path for _, path in github.requests)


def test_personal_token_owns_comments_by_its_login(tmp_path, workspace, github):
    env = action_env(tmp_path, workspace, github, token="ghp_personal")
    run_action(env, Out())
    run_action(env, Out())
    assert [c["user"]["login"] for c in github.comments.values()] == ["alice"]


def test_fork_read_only_token_gives_notice_not_crash(tmp_path, workspace, github, monkeypatch):
    env = action_env(tmp_path, workspace, github, token="ghs_read_only", fork=True)
    out = Out()
    assert run_action(env, out) == 0  # the exit code is the verdict's, not the comment's
    assert github.comments == {}
    assert ("::notice title=chaos-gate%3A no PR comment::could not write the PR comment: this pull request comes "
            "from a fork, whose token is read-only (HTTP 403)") in out.text
    summary = (tmp_path / "summary.md").read_text()
    assert "chaos-gate: **PASS**" in summary and "fork" in summary and "read\\-only" in summary


def test_not_a_pull_request(tmp_path, workspace, github):
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github, pr=False), out) == 0
    assert github.comments == {} and "not a pull request" in out.text


def test_failing_gate_annotates_critical_breach_and_still_comments_first(tmp_path, workspace, github, monkeypatch):
    monkeypatch.setenv("AGENT_MODE", "fragile")
    env = action_env(tmp_path, workspace, github)
    out = Out()
    assert run_action(env, out) == 1
    config = (workspace / "agent" / "chaos-gate.yaml").read_text().splitlines()
    line = next(n for n, text in enumerate(config, 1) if "no-injected-reply" in text)
    assert f"::error file=agent/chaos-gate.yaml,line={line},title=critical invariant no-injected-reply breached::" in out.text
    assert "chaos-gate: **FAIL**" in next(iter(github.comments.values()))["body"]
    assert outputs(tmp_path)["verdict"] == "fail"


def test_overrides_and_copies(tmp_path, workspace, github, monkeypatch):
    monkeypatch.setenv("AGENT_MODE", "fragile")
    env = action_env(tmp_path, workspace, github, fail_on="never", junit_path="out/j.xml", report_path="out/r.json",
                     comment="false")
    assert run_action(env, Out()) == 0
    assert (workspace / "agent" / "out" / "j.xml").exists() and (workspace / "agent" / "out" / "r.json").exists()
    assert github.comments == {}


def test_bad_config_is_published_as_an_error(tmp_path, workspace, github):
    (workspace / "agent" / "chaos-gate.yaml").write_text("agent:\n  urll: x\ninputs: []\n")
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github), out) == 2
    assert ("::error file=agent/chaos-gate.yaml,line=2,title=invalid chaos-gate config::agent.urll: unknown key "
            "'urll'") in out.text
    assert "did you mean 'url'" in (tmp_path / "summary.md").read_text()
    assert outputs(tmp_path)["verdict"] == "error"


def test_100k_report_is_cut_to_fit_with_a_note(github):
    from test_markdown import report_with

    from gate.report import markdown

    report = report_with([f"failure {n} " + "y" * 4000 for n in range(250)])
    body = markdown.render(report, limit=markdown.COMMENT_LIMIT - len(MARKER) - 1, marker=MARKER, max_failures=250)
    assert len(markdown.render(report, limit=10 ** 9, max_failures=250)) > 100_000
    assert len(body) <= 65_536 and "trimmed to fit" in body
    api = GitHubApi(github.url, "ghs_app_token")
    result = upsert_comment(api, REPO, 9, body)
    assert result.posted and len(next(iter(github.comments.values()))["body"]) <= 65_536
    with pytest.raises(ValueError):
        upsert_comment(api, REPO, 9, "x" * 70_000)


def test_comment_mode_new_posts_each_run(tmp_path, workspace, github):
    env = action_env(tmp_path, workspace, github, comment_mode="new")
    run_action(env, Out())
    run_action(env, Out())
    assert len(github.comments) == 2


def test_shards_write_summaries_only_and_merge_comments(tmp_path, workspace, github):
    for i in (1, 2):
        env = action_env(tmp_path, workspace, github, shard=f"{i}/2")
        env["GITHUB_STEP_SUMMARY"] = str(tmp_path / f"summary{i}.md")
        assert run_action(env, Out()) == 0
        assert github.comments == {}  # shard steps never comment
        assert "chaos-gate: **PASS**" in (tmp_path / f"summary{i}.md").read_text()
        report = workspace / "agent" / "chaos-gate-report" / "report.json"
        (workspace / "agent" / "shards" / str(i)).mkdir(parents=True)
        shutil.copy(report, workspace / "agent" / "shards" / str(i) / "report.json")
    out = Out()
    env = action_env(tmp_path, workspace, github, merge="true", reports="shards/*/report.json")
    assert run_action(env, out) == 0
    assert "merging 2 shard report(s)" in out.text
    assert len(github.comments) == 1 and "chaos-gate: **PASS**" in next(iter(github.comments.values()))["body"]
    (workspace / "agent" / "shards" / "2" / "report.json").unlink()
    assert run_action(env, Out()) == 2  # a missing shard is an error, never a pass


def test_report_path_naming_the_gates_own_file_is_no_crash(tmp_path, workspace, github):
    """The "Against main" step: report-path / junit-path name the files the gate itself writes."""
    env = action_env(tmp_path, workspace, github, report_path="chaos-gate-report/report.json",
                     junit_path="chaos-gate-report/junit.xml")
    out = Out()
    assert run_action(env, out) == 0
    got = outputs(tmp_path)
    assert got["verdict"] == "pass" and got["report"] == "agent/chaos-gate-report/report.json"
    assert got["junit"] == "agent/chaos-gate-report/junit.xml"
    assert "chaos-gate: **PASS**" in (tmp_path / "summary.md").read_text()
    assert "Traceback" not in out.text and "::warning" not in out.text


def test_report_path_that_cannot_be_written_is_a_warning(tmp_path, workspace, github):
    (workspace / "agent" / "taken").write_text("a file, not a directory\n")
    env = action_env(tmp_path, workspace, github, report_path="taken/report.json")
    out = Out()
    assert run_action(env, out) == 0
    assert "::warning title=chaos-gate%3A report-path::report-path taken/report.json: could not copy" in out.text
    assert outputs(tmp_path)["report"] == "agent/chaos-gate-report/report.json"
    assert "chaos-gate: **PASS**" in (tmp_path / "summary.md").read_text()


def test_reproduce_commands_work_from_the_repository_root(tmp_path, workspace, github, monkeypatch):
    """working-directory: agent — the comment, the annotations and the JUnit `file` all name
    agent/chaos-gate.yaml, and the printed command reproduces the failure from the repository root."""
    import os
    import re
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    monkeypatch.setenv("AGENT_MODE", "fragile")
    out = Out()
    assert run_action(action_env(tmp_path, workspace, github), out) == 1
    body = next(iter(github.comments.values()))["body"]
    commands = re.findall(r"^((?:\w+=\S* )*chaos-gate run -c \S+ --only \S+.*)$", body, re.M)
    assert commands and all(" chaos-gate run -c agent/chaos-gate.yaml --only " in f" {c}" for c in commands)
    assert "file=agent/chaos-gate.yaml" in out.text and "Reproduce: AGENT_MODE=fragile chaos-gate run -c agent/" in out.text
    cases = list(ET.parse(workspace / "agent/chaos-gate-report/junit.xml").getroot().iter("testcase"))
    assert {c.get("file") for c in cases} == {"agent/chaos-gate.yaml"}
    shim = tmp_path / "bin"  # `chaos-gate` as this checkout's gate
    shim.mkdir()
    (shim / "chaos-gate").write_text(f"#!/bin/sh\nexec {sys.executable} -m gate \"$@\"\n")
    (shim / "chaos-gate").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("AGENT_MODE")  # the command sets it itself
    rerun = subprocess.run(["sh", "-c", commands[0] + f" -o {tmp_path / 'r'} --quiet"], cwd=workspace,
                           capture_output=True, text=True, timeout=120, env=env)
    assert rerun.returncode == 1, (commands[0], rerun.stderr)  # from the repository root, the failure reproduces


def test_matrix_recipe_on_the_sdk_example_merges_to_its_unsharded_pass(tmp_path, github):
    """docs/github-action.md's matrix recipe end to end on the README's example, whose `side_effect_once`
    names its HTTP tool: three shard steps, then the merge step (it once found no call to the tool)."""
    ws = tmp_path / "workspace"
    shutil.copytree(EXAMPLE.parent / "sdk_agent", ws / "agent")
    for i in (1, 2, 3):
        env = action_env(tmp_path, ws, github, shard=f"{i}/3")
        assert run_action(env, Out()) == 0
        (ws / "agent" / "shards" / str(i)).mkdir(parents=True)
        shutil.copy(ws / "agent" / "chaos-gate-report" / "report.json", ws / "agent" / "shards" / str(i))
    out = Out()
    assert run_action(action_env(tmp_path, ws, github, merge="true", reports="shards/*/report.json"), out) == 0, out.text
    merged = json.loads((ws / "agent" / "chaos-gate-report" / "report.json").read_text())["verdict"]
    assert (merged["verdict"], merged["counts"]["passed"], merged["counts"]["cells"]) == ("pass", 8, 8)
    assert outputs(tmp_path)["verdict"] == "pass"
    assert "chaos-gate: **PASS**" in next(iter(github.comments.values()))["body"]
