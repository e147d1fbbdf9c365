"""Stateful services made fresh before every cell run: `services[].reset` (an HTTP call) and
`restart: per_cell`; `{{port}}` in a service's command expanded, an unknown template refused at load.

The service is a tiny in-memory store; the agent writes to it once per run and answers with the
number of writes it sees. Without a reset, later runs see earlier runs' writes and fail.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import load_report, write_config
from gate.cli import main
from gate.plan import load_config
from gate.errors import ConfigError

STORE = '''
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

writes = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _reply(self, doc):
        body = str(doc).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._reply(len(writes))

    def do_POST(self):
        if self.path == "/reset":
            writes.clear()
        else:
            writes.append(self.path)
        self._reply(len(writes))


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), Handler).serve_forever()
'''
AGENT = '''
import os, urllib.request
urllib.request.urlopen(urllib.request.Request(os.environ["STORE_URL"] + "/write", method="POST")).read()
print("count=" + urllib.request.urlopen(os.environ["STORE_URL"]).read().decode())
'''


def config(tmp_path, service_extra: str = "", command_port: str = "{{port}}", concurrency: int = 1) -> str:
    (tmp_path / "store.py").write_text(STORE)
    (tmp_path / "agent.py").write_text(AGENT)
    py = json.dumps(sys.executable)
    return write_config(tmp_path, f"""
services:
  - name: store
    command: [{py}, store.py, --port, "{command_port}"]
    port_env: null
{service_extra}
agent:
  invoke:
    command: {{command: [{py}, agent.py], env: {{STORE_URL: "{{{{services.store.url}}}}"}}}}
  timeout: 10
inputs: [{{id: a, text: one}}, {{id: b, text: two}}]
mutation: {{enabled: false}}
runs: 3
concurrency: {concurrency}
contract:
  invariants:
    - {{id: own-write-only, type: contains, value: "count=1", severity: critical}}
""")


def _passed(tmp_path, path) -> tuple[int, dict]:
    code = main(["run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet"])
    return code, load_report(tmp_path / "out")["verdict"]["counts"]


def test_without_a_reset_later_runs_see_earlier_writes(tmp_path):
    code, counts = _passed(tmp_path, config(tmp_path))
    assert code == 1 and counts["failed"] == 2  # {{port}} expanded: the store listened where the gate said


def test_reset_before_every_cell_run(tmp_path):
    code, counts = _passed(tmp_path, config(tmp_path, '    reset: {url: "{{url}}/reset"}'))
    assert code == 0 and counts["passed"] == 2


def test_restart_per_cell_gives_every_run_a_fresh_process(tmp_path):
    code, counts = _passed(tmp_path, config(tmp_path, "    restart: per_cell"))
    assert code == 0 and counts["passed"] == 2


def test_a_failing_reset_is_a_harness_error_not_the_agents_fault(tmp_path):
    code = main(["run", "-c", str(config(tmp_path, '    reset: {url: "http://127.0.0.1:9/reset"}')),
                 "-o", str(tmp_path / "out"), "--quiet"])
    report = load_report(tmp_path / "out")
    assert code == 2 and report["verdict"]["counts"]["errors"] == 2
    assert "service 'store' reset (POST http://127.0.0.1:9/reset) failed" in json.dumps(report)


@pytest.mark.parametrize("extra, port, concurrency, message", [
    ("", "{{prot}}", 1, r":3: services\[0\].command\[3\]: unknown template '\{\{prot\}\}' \(did you mean 'port'\?\)"),
    ('    reset: {url: "{{url}}/reset/{{cell}}"}', "{{port}}", 1, r"services\[0\].reset.url: unknown template"),
    ('    reset: {url: "{{url}}/reset"}', "{{port}}", 2,
     r"services\[0\].reset: service 'store' is made fresh before every cell run, but it is shared by all 2"),
    ("    restart: per_cell", "{{port}}", 3, r"services\[0\].restart: .*set concurrency: 1"),
])
def test_templates_and_sharing_are_checked_at_load(tmp_path, extra, port, concurrency, message):
    with pytest.raises(ConfigError, match=message):
        load_config(config(tmp_path, extra, port, concurrency))
