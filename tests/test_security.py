"""The agent is untrusted code: it sees an allow-listed environment, and no secret it
could get hold of (inherited, sent in a header, printed) survives in any output.

The CLI runs as a subprocess with CI credentials planted in its environment, against
a nosy agent (tests/agents/secret_agent.py) that dumps its environment, echoes the
headers it receives and sends an API key on the wire to its LLM.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import AGENTS, ROOT, write_config
from gate.agent.environment import agent_environment
from gate.agent.logs import _segments, scrub_file
from gate.config.secrets import Redactor

PLANTED = {
    "GITHUB_TOKEN": "ghs_plantedGithubToken0001",
    "INPUT_GITHUB-TOKEN": "ghp_plantedInputToken0002",
    "ACTIONS_RUNTIME_TOKEN": "plantedActionsRuntime0003",
    "AWS_SECRET_ACCESS_KEY": "plantedAwsSecret0004/abc+def",
    "DB_DSN": "postgres://u:plantedDsn0005@db",  # not credential-named: redacted because `secrets:` lists it
    "AGENT_AUTH_TOKEN": "plantedAgentAuth0006",  # sent to the agent in a header by the config
    "PLAIN_GREETING": "hello-plain",
}
SECRET_VALUES = [v for k, v in PLANTED.items() if k != "PLAIN_GREETING"]
WIRE_KEY = "hdr-" + "".join(reversed("only-on-the-wire-0123456789"))  # secret_agent's header value


def config_text(mode: str = "echo", ready_timeout: float = 10, extra_env: str = "") -> str:
    return textwrap.dedent(f"""
        secrets: [DB_DSN]
        agent:
          start:
            command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENTS / 'secret_agent.py'))}]
            env: {{MODE: {mode}{extra_env}}}
            inherit_env: [AWS_SECRET_ACCESS_KEY, DB_DSN, "PLAIN_*", "GITHUB_*", "INPUT_*", "ACTIONS_*"]
            ready: {{url: "{{{{url}}}}/health", timeout: {ready_timeout}}}
          invoke:
            http:
              url: "{{{{url}}}}/chat"
              headers: {{x-agent-token: "${{AGENT_AUTH_TOKEN}}"}}
              body: {{input: "{{{{input}}}}"}}
              output: $.reply
          timeout: 10
        llm:
          - {{name: openai, provider: openai, upstream: sim}}
        inputs:
          - {{id: hello, text: "say hello"}}
        mutation: {{enabled: false}}
        """)


def run_cli(tmp_path: Path, text: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    path = write_config(tmp_path, text)
    return subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(path), "-o", str(tmp_path / "out"),
                           "--full-report", *args],
                          env={**os.environ, **PLANTED, **(env or {})}, cwd=ROOT, capture_output=True, text=True,
                          timeout=180)


def every_output(tmp_path: Path, proc: subprocess.CompletedProcess) -> dict[str, str]:
    texts = {"stdout": proc.stdout, "stderr": proc.stderr}
    for root in (tmp_path / "out", tmp_path / "rec"):
        for path in root.rglob("*") if root.exists() else ():
            if path.is_file():
                texts[str(path.relative_to(tmp_path))] = path.read_bytes().decode("utf-8", "replace")
    return texts


def assert_no_secret(texts: dict[str, str], extra: tuple[str, ...] = ()) -> None:
    for name, text in texts.items():
        for value in SECRET_VALUES + list(extra):
            assert value not in text, f"{value!r} leaked into {name}"


# -- the allow-list, pure ---------------------------------------------------------------

def test_environment_is_an_allow_list():
    parent = {"PATH": "/bin", "HOME": "/root", "LC_ALL": "C", "TZ": "UTC", "SSL_CERT_FILE": "/ca.pem",
              "GITHUB_TOKEN": "t", "INPUT_GITHUB-TOKEN": "t", "ACTIONS_RUNTIME_TOKEN": "t", "RUNNER_TEMP": "/r",
              "AWS_SECRET_ACCESS_KEY": "k", "EDITOR": "vi", "MY_APP_MODE": "x", "MY_APP_KEY": "k"}
    env = agent_environment(parent, inherit=["MY_APP_*", "RUNNER_TEMP"], gate_set={"OPENAI_BASE_URL": "http://p"},
                            configured={"MODE": "m"})
    assert env == {"PATH": "/bin", "HOME": "/root", "LC_ALL": "C", "TZ": "UTC", "SSL_CERT_FILE": "/ca.pem",
                   "MY_APP_MODE": "x", "RUNNER_TEMP": "/r", "OPENAI_BASE_URL": "http://p", "MODE": "m"}


def test_only_an_exact_name_inherits_a_credential_and_a_glob_never_does():
    parent = {"GITHUB_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "k", "INPUT_MIN-SCORE": "80"}
    assert agent_environment(parent, inherit=["*"]) == {}
    assert agent_environment(parent, inherit=["GITHUB_TOKEN"]) == {"GITHUB_TOKEN": "t"}


def test_container_gets_no_host_base_and_config_env_wins():
    parent = {"PATH": "/host/bin", "HOME": "/root"}
    env = agent_environment(parent, gate_set={"PORT": "1"}, configured={"PORT": "2"}, base=False)
    assert env == {"PORT": "2"}


# -- the redactor, pure ----------------------------------------------------------------

def test_redactor_learns_environment_and_headers():
    r = Redactor.for_environment({"SESSION_ID": "s3ss10n-abcdef", "AUTH_MODE": "none", "DB_DSN": "dsn-1234",
                                  "HOME": "/root/secrethome"}, declared=["DB_DSN"])
    r.note_header("Authorization", "Bearer sk-live-abcdef123456")
    r.note_header("Cookie", "a=short; sid=cookie-value-123")
    r.note_header("content-type", "application/json-long-enough")
    text = r.redact('s3ss10n-abcdef none dsn-1234 /root/secrethome sk-live-abcdef123456 cookie-value-123 '
                    'application/json-long-enough')
    assert text == ("***SESSION_ID*** none ***DB_DSN*** /root/secrethome ***AUTHORIZATION*** ***COOKIE*** "
                    "application/json-long-enough")


def test_redactor_finds_json_and_xml_escaped_forms():
    r = Redactor()
    r.add('pa"ss<wörd>1', "PW")
    assert "***PW***" in r.redact(json.dumps({"x": 'pa"ss<wörd>1'}))
    assert "***PW***" in r.redact("<a>pa&quot;ss&lt;wörd&gt;1</a>")


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 4096])
def test_streamed_scrub_equals_whole_text_scrub_across_chunk_boundaries(chunk):
    r = Redactor()
    r.add("SECRETVALUE123", "A")
    r.add("SECRET", "B")
    r.add("zz-ü-token-99", "C")
    text = ("x" * 5 + "SECRETVALUE123" + "SECRETVAL" + "zz-ü-token-99" + "SECRET" + "\n") * 40
    got = b"".join(seg[2] for seg in _segments(io.BytesIO(text.encode()), r, chunk))
    assert got.decode() == r.redact(text)


def test_capped_log_keeps_head_and_tail_with_a_note(tmp_path):
    r = Redactor()
    r.add("s3cr3t-value-xyz", "S")
    log = tmp_path / "agent-0.log"
    log.write_bytes(b"HEAD " + b"s3cr3t-value-xyz " * 4000 + b" TAIL\n")
    scrub_file(log, r, cap=4096)
    data = log.read_bytes()
    assert data.startswith(b"HEAD ") and data.endswith(b" TAIL\n")
    assert b"s3cr3t" not in data and b"***S***" in data
    assert data.count(b"cut here (agent.log_max_bytes = 4096)") == 1
    assert len(data) < 4096 + 200


# -- real processes ---------------------------------------------------------------------

def test_no_secret_reaches_the_agent_unless_inherited_and_none_reaches_any_output(tmp_path):
    proc = run_cli(tmp_path, config_text(), "--record", str(tmp_path / "rec"))
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    answer = json.loads(report["verdict"]["cells"][0]["runs"][0]["output"])
    seen = answer["env"]
    for name in ("GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "ACTIONS_RUNTIME_TOKEN", "AGENT_AUTH_TOKEN"):
        assert name not in seen  # no glob pulls a CI or credential variable in
    assert seen["AWS_SECRET_ACCESS_KEY"] == "***AWS_SECRET_ACCESS_KEY***"  # named exactly: inherited, redacted
    assert seen["DB_DSN"] == "***DB_DSN***" and seen["PLAIN_GREETING"] == "hello-plain"
    assert seen["OPENAI_BASE_URL"].startswith("http://127.0.0.1:")
    allowed = {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR",
               "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "AWS_SECRET_ACCESS_KEY", "DB_DSN",
               "PLAIN_GREETING", "OPENAI_BASE_URL", "PORT", "MODE",
               # the same proxy URL under the name LiteLLM and LlamaIndex read, and LiteLLM kept offline (sim)
               "OPENAI_API_BASE", "LITELLM_LOCAL_MODEL_COST_MAP", "CREWAI_DISABLE_TELEMETRY", "AGNO_TELEMETRY",
               "DSPY_CACHEDIR",  # DSPy's disk cache off: each LLM call reaches the gate
               # the in-process instrumentation (gate/instrument/environment.py): paths and the worker's proxy
               "CHAOS_GATE_FN_URL", "PYTHONPATH", "NODE_OPTIONS"}
    assert {k for k in seen if not k.startswith("LC_")} - allowed == set()
    assert seen["CHAOS_GATE_FN_URL"].startswith("http://127.0.0.1:") and "/instrument/" in seen["PYTHONPATH"]
    assert {k.lower(): v for k, v in answer["headers"].items()}["x-agent-token"] == "***AGENT_AUTH_TOKEN***"
    assert answer["wire_key"] == "***X-API-KEY***"  # learnt from the proxy, never from the config
    texts = every_output(tmp_path, proc)
    assert any(k.startswith("rec") for k in texts), "no session was recorded"
    assert any("logs" in k for k in texts)
    assert_no_secret(texts, (WIRE_KEY,))
    logs = "".join(v for k, v in texts.items() if "logs" in k)
    assert "***AWS_SECRET_ACCESS_KEY***" in logs and "***X-API-KEY***" in logs


def test_agent_exiting_at_start_ends_in_an_error_report_with_its_redacted_log_tail(tmp_path):
    proc = run_cli(tmp_path, config_text("exit_at_start"))
    assert proc.returncode == 2, proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    v = report["verdict"]
    assert v["verdict"] == "error" and v["error_reason"] == "agent_start" and v["exit_code"] == 2
    assert "agent exited during start-up with code 3" in v["reasons"][0]
    error = v["cells"][0]["error"]
    assert "refusing to start (planted)" in error and "***AWS_SECRET_ACCESS_KEY***" in error
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert "<error" in junit and "agent_start" in junit
    assert "agent_start" in (tmp_path / "out" / "summary.md").read_text()
    assert "refusing to start (planted)" in proc.stderr
    assert_no_secret(every_output(tmp_path, proc))


def test_agent_never_ready_ends_in_an_error_report_with_its_log_tail(tmp_path):
    proc = run_cli(tmp_path, config_text("never_ready", ready_timeout=1.5))
    assert proc.returncode == 2, proc.stderr
    v = json.loads((tmp_path / "out" / "report.json").read_text())["verdict"]
    assert v["verdict"] == "error" and v["error_reason"] == "agent_start"
    assert "not ready after 1.5s" in v["reasons"][0]
    assert "pretending to warm up forever" in v["cells"][0]["error"]
    assert "<error" in (tmp_path / "out" / "junit.xml").read_text()
    assert_no_secret(every_output(tmp_path, proc))


def test_unexpected_gate_exception_ends_in_a_harness_report(tmp_path):
    """A gate bug (here: planted by making the pool raise) is a `harness` report, redacted, exit 2."""
    path = write_config(tmp_path, config_text())
    script = textwrap.dedent(f"""
        import sys
        import gate.runner.pool as pool
        async def broken(*a, **k):
            raise RuntimeError("boom with {PLANTED['GITHUB_TOKEN']}")
        pool.run_pool = broken
        import gate.runner.gate_run as gr
        gr.run_pool = broken
        from gate.cli import main
        sys.exit(main(["run", "-c", {str(path)!r}, "-o", {str(tmp_path / 'out')!r}]))
        """)
    proc = subprocess.run([sys.executable, "-c", script], env={**os.environ, **PLANTED}, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    v = json.loads((tmp_path / "out" / "report.json").read_text())["verdict"]
    assert v["verdict"] == "error" and v["error_reason"] == "harness"
    assert "boom with ***GITHUB_TOKEN***" in v["reasons"][0]
    assert_no_secret(every_output(tmp_path, proc))


SCRUB_RSS = """
import resource, sys
from pathlib import Path
from gate.agent.logs import scrub_file
from gate.config.secrets import Redactor
r = Redactor.for_environment({"AWS_SECRET_ACCESS_KEY": "plantedAwsSecret0004/abc+def"})
scrub_file(Path(sys.argv[1]), r, cap=int(sys.argv[2]) if sys.argv[2] != "none" else None)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(hwm)  # not ru_maxrss: Linux carries the parent's peak across fork+exec into it
"""


def make_big_log(path: Path, size: int) -> None:
    secret = PLANTED["AWS_SECRET_ACCESS_KEY"].encode()
    block = (b"agent line " + secret + b" " + b"y" * 100 + b"\n") * 8000
    with open(path, "wb") as fh:
        fh.write(b"x" * ((1 << 20) - 7) + secret)  # straddles the first 1 MiB chunk boundary
        while fh.tell() < size:
            fh.write(block)


@pytest.mark.parametrize("cap", ["none", str(10 << 20)])
def test_200mb_log_is_scrubbed_in_bounded_memory(tmp_path, cap):
    log = tmp_path / "agent-0.log"
    make_big_log(log, 200 << 20)
    out = subprocess.run([sys.executable, "-c", SCRUB_RSS, str(log), cap], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    peak_kb = int(out.stdout)
    print(f"peak RSS scrubbing a 200 MB log (cap {cap}): {peak_kb / 1024:.1f} MB")
    assert peak_kb < 150 * 1024
    secret = PLANTED["AWS_SECRET_ACCESS_KEY"].encode()
    with open(log, "rb") as fh:
        head = fh.read(2 << 20)
        assert head[(1 << 20) - 7:].startswith(b"***AWS_SECRET_ACCESS_KEY***")
        fh.seek(0)
        prev = b""
        while chunk := fh.read(8 << 20):
            assert secret not in prev[-64:] + chunk
            prev = chunk
    if cap != "none":
        assert log.stat().st_size < (10 << 20) + 200


GATE_RSS = """
import resource, sys
from gate.cli import main
code = main(sys.argv[1:])
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
sys.stderr.write(f"GATE_PEAK_KB={hwm}\\n")  # VmHWM is this process's own; ru_maxrss inherits the parent's
sys.exit(code)
"""


def test_gate_run_with_an_agent_writing_200mb_of_log_stays_bounded(tmp_path):
    """The whole gate, end to end: its peak RSS while an agent floods its log, and the log kept capped."""
    path = write_config(tmp_path, config_text("flood", extra_env=", FLOOD_MB: '200'"))
    proc = subprocess.run([sys.executable, "-c", GATE_RSS, "run", "-c", str(path), "-o", str(tmp_path / "out"),
                           "--quiet"], env={**os.environ, **PLANTED}, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    peak_kb = int(proc.stderr.rsplit("GATE_PEAK_KB=", 1)[1].split()[0])
    print(f"gate peak RSS with a 200 MB agent log: {peak_kb / 1024:.1f} MB")
    assert peak_kb < 150 * 1024
    log = tmp_path / "out" / "logs" / "agent-0.log"
    assert log.stat().st_size < (10 << 20) + 200  # agent.log_max_bytes defaults to 10 MiB
    data = log.read_bytes()
    assert b"cut here" in data and PLANTED["AWS_SECRET_ACCESS_KEY"].encode() not in data


def test_action_publishes_an_agent_start_failure_everywhere_without_secrets(tmp_path, monkeypatch):
    """In the Action, a failed start still writes the step summary, an ::error and the PR comment."""
    from fake_github import FakeGitHub
    from test_github_action import Out, action_env
    from gate.github.action import run_action

    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    workspace = tmp_path / "workspace"
    (workspace / "agent").mkdir(parents=True)
    (workspace / "agent" / "chaos-gate.yaml").write_text(config_text("exit_at_start"))
    github = FakeGitHub()
    try:
        out = Out()
        assert run_action(action_env(tmp_path, workspace, github), out) == 2
        comments = [c["body"] for c in github.comments.values()]
    finally:
        github.close()
    summary = (tmp_path / "summary.md").read_text()
    assert "ERROR" in summary and "agent_start" in summary and "refusing to start (planted)" in summary
    assert any(line.startswith("::error") and "agent_start" in line for line in out.text.splitlines())
    assert len(comments) == 1 and "agent_start" in comments[0] and "refusing to start (planted)" in comments[0]
    # ::add-mask:: lines hand the values to the runner so that it hides them; it never prints those lines
    shown = "\n".join(line for line in out.text.splitlines() if not line.startswith("::add-mask::"))
    assert_no_secret({"summary": summary, "annotations": shown, "comment": comments[0],
                      **{str(p): p.read_text(errors="replace") for p in workspace.rglob("*") if p.is_file()
                         and p.suffix != ".yaml"}})


def test_command_invocations_get_the_same_allow_list(tmp_path):
    script = "import json, os, sys; sys.stdin.read(); print(json.dumps(sorted(os.environ)))"
    text = textwrap.dedent(f"""
        agent:
          invoke:
            command:
              command: [{json.dumps(sys.executable)}, "-c", {json.dumps(script)}]
              env: {{CALLED_AS: command}}
        inputs:
          - {{id: hello, text: "hi"}}
        mutation: {{enabled: false}}
        """)
    proc = run_cli(tmp_path, text)
    assert proc.returncode in (0, 1), proc.stderr
    cell = json.loads((tmp_path / "out" / "report.json").read_text())["verdict"]["cells"][0]
    names = set(json.loads(cell["runs"][0]["output"]))
    assert "CALLED_AS" in names and "PATH" in names
    assert not names & {"GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "ACTIONS_RUNTIME_TOKEN", "AWS_SECRET_ACCESS_KEY",
                        "PLAIN_GREETING", "DB_DSN"}
