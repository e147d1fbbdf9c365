"""Shared helpers: write a config next to a planted agent and run the real CLI."""

from __future__ import annotations

import functools
import os
import json
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AGENTS = Path(__file__).resolve().parent / "agents"
EXAMPLE = ROOT / "examples" / "support"


def write_config(tmp: Path, body: str, name: str = "chaos-gate.yaml") -> Path:
    path = tmp / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def planted_agent_block(behaviour: str, timeout: float = 5.0, extra_env: str = "") -> str:
    return f"""
agent:
  start:
    command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENTS / 'planted.py'))}]
    env: {{BEHAVIOUR: {behaviour}{extra_env}}}
    ready: {{url: "{{{{url}}}}/health", timeout: 10}}
  invoke:
    http: {{url: "{{{{url}}}}/chat", body: {{input: "{{{{input}}}}"}}, output: $.reply}}
  timeout: {timeout}
"""


@pytest.fixture
def run_cli(tmp_path):
    from gate.cli import main

    def run(*args: str) -> int:
        return main(list(args))

    return run


def load_report(out_dir: Path) -> dict:
    return json.loads((out_dir / "report.json").read_text())


@functools.lru_cache(maxsize=1)
def fast_clock() -> list[str]:
    """`--time-scale 10` where libfaketime dilates here (CI installs it), else nothing. For tests about
    something other than time whose runs wait on fault holds and deadlines: tests/test_dilation.py
    shows the verdict part at 10x equals the one at 1x, so they judge the same and wait a tenth."""
    from gate.agent import dilation

    return ["--time-scale", "10"] if any(dilation.probe(lib, 10) for lib in dilation.candidates()) else []


@pytest.fixture(scope="module")
def orders():
    """The SDK example's orders service (the tool upstream), on a free port, for one module."""
    from httpkit import start_orders

    proc, url = start_orders(ROOT)
    yield url
    proc.terminate()
    proc.wait()


def one_run(config: Path, out: Path) -> tuple[int, dict, dict, set[str], list[str]]:
    """The real CLI on a config of one cell and one run: (exit code, the report, that run, the ids of
    the invariants it breached, the tails of the agent's logs for an assertion's message)."""
    from gate.cli import main

    code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report"])
    report = load_report(out)
    (cell,) = report["verdict"]["cells"]
    (run,) = cell["runs"]
    failed = {c["invariant"] for c in run["checks"] if not c["passed"]}
    logs = [p.read_text()[-3000:] for p in (out / "logs").glob("*")] if (out / "logs").exists() else []
    return code, report, run, failed, logs


# The seam tests' one-scenario configs (tests/test_instrument_*): an agent whose tool `issue_refund` appends
# to a ledger, the keyless sim, one input, one in-process fault, the invariants a case names.
REFUND_INPUT = "Please refund order 1234, it arrived damaged."
REFUND_CHECKS = {
    "completes": {"id": "completes", "type": "completes", "severity": "critical"},
    "refund-once": {"id": "refund-once", "type": "side_effect_once", "tool": "issue_refund", "severity": "critical"},
    "no-injected-reply": {"id": "no-injected-reply", "type": "excludes", "values": ["INJECTION-OBEYED"],
                          "severity": "critical"},
}


def refund_config(tmp: Path, invoke: dict, fault: dict, sim: dict, *, llm: str = "openai", timeout: float = 60,
                  checks=("completes", "refund-once"), tools: list | None = None) -> Path:
    """`invoke`: the agent's `invoke.command` block (command, env, cwd)."""
    doc = {
        "version": 1, "seed": 5,
        "agent": {"invoke": {"command": invoke}, "timeout": timeout},
        "llm": [{"name": llm, "provider": llm, "upstream": "sim"}],
        "tools": tools or [],
        "sim": sim,
        "inputs": [{"id": "refund", "text": REFUND_INPUT}],
        "mutation": {"enabled": False},
        "shrink": {"enabled": False},  # one run per variant: the ledger counts exactly its writes
        "contract": {"baseline": False, "invariants": [REFUND_CHECKS[c] for c in checks],
                     "scenarios": [{"name": "in_process", "faults": [fault]}]},
        "gate": {"min_score": 80},
        "concurrency": 1,
    }
    return write_config(tmp, json.dumps(doc, indent=1))  # JSON is YAML


def ledger_lines(ledger: Path) -> int:
    """The refunds an agent's tool really wrote (counted outside the gate)."""
    return len(ledger.read_text().split()) if ledger.exists() else 0


# the Action's tests (test_github_action.py, test_github_edges.py): a local fake GitHub REST API and a
# workspace holding the bundled example
@pytest.fixture
def github():
    from fake_github import FakeGitHub

    server = FakeGitHub()
    yield server
    server.close()


@pytest.fixture
def workspace(tmp_path):
    import shutil

    ws = tmp_path / "workspace"
    shutil.copytree(EXAMPLE, ws / "agent")
    return ws


@pytest.fixture
def open_dir():
    """A directory anyone may enter, for an agent run as another user (pytest's tmp_path is under a
    0700 one)."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="chaos-open-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def same_text(a: str, b: str, context: int = 2) -> None:
    """Assert two texts (reports' verdict sections) are equal; on a difference the message is a unified
    diff, short enough that CI's tail of the output shows what differed rather than one long string."""
    import difflib

    if a != b:
        diff = difflib.unified_diff(a.splitlines(True), b.splitlines(True), "first", "second", n=context)
        raise AssertionError("texts differ:\n" + "".join(list(diff)[:120]))


def npm_ci(folder: Path) -> Path:
    """`npm ci` in `folder` once, whichever xdist worker asks first: the others wait on a lock and then find
    it done (npm writes node_modules/.package-lock.json last). Two `npm ci` in one folder at once break
    each other (ENOTEMPTY), and a worker that saw half a node_modules would run an agent missing a package."""
    import fcntl
    import shutil
    import subprocess

    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node / npm not installed")
    done = folder / "node_modules" / ".package-lock.json"
    with open(folder / ".npm-ci.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            ran = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True,
                                 text=True, timeout=600)
            if ran.returncode:
                pytest.fail(f"npm ci in {folder}: {ran.stderr[-2000:]}")
    return folder


@functools.lru_cache(maxsize=1)
def unboxable_here() -> bool:
    """Whether this machine cannot box an agent: the Action image's Python is readable by the agent's user,
    but one under a 0700 home (pyenv under /root, as here) is not, and the Action refuses to run a pull
    request's agent unboxed (docs/security.md). Tests of the Action's other behaviour then run as the
    workflow's `allow-unboxed: true`; tests/test_isolation_units.py tests the box itself."""
    from gate.agent.separation import NOBODY, Identity, blocked

    nobody = Identity("nobody", NOBODY, NOBODY, "/", "/")
    return os.geteuid() == 0 and blocked(os.path.realpath(sys.executable), nobody) is not None
