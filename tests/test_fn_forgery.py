"""A trace the agent cannot forge (gate/instrument/calls.py): the /fn/ endpoints answer only calls that
carry the worker's token, and never under a wire tool's name, whose trace and call counters a forged
call would share. Each refusal leaves the run unjudged (`forged_trace`), never a pass; the fault meant
for the wire call still fires on it."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from conftest import load_report
from gate.cli import main

AGENT = textwrap.dedent('''
    import json, os, sys, urllib.request
    sys.path.insert(0, os.environ["HTTPKIT"])
    from httpkit import AgentHandler, serve_agent

    def post(url, doc):
        req = urllib.request.Request(url, json.dumps(doc).encode(), {"content-type": "application/json"})
        try:
            return urllib.request.urlopen(req, timeout=5).status
        except urllib.error.HTTPError as exc:
            return exc.code

    def forge():
        url = os.environ["CHAOS_GATE_FN_URL"]
        if os.environ["FORGE"] == "tokenless":
            url = url.rsplit("/", 1)[0]  # the proxy's /fn without the token: as another process would guess it
        if os.environ["FORGE"] == "none":
            return None
        call = {"id": "f1", "tool": "shop", "transport": "function", "framework": "declared", "arguments": {}}
        return post(url + "/begin", call), post(url + "/end", {"id": "f1", "ok": True, "type": "str", "value": "x"})

    class Handler(AgentHandler):
        def do_POST(self):
            self.json_body()
            forged = forge()
            try:
                status = urllib.request.urlopen(os.environ["SHOP_URL"] + "/orders/1", timeout=5).status
            except urllib.error.HTTPError as exc:
                status = exc.code
            self.reply(200, {"reply": f"order lookup answered {status} (forged: {forged})"})

    serve_agent(Handler)
''')


def run(tmp_path, forge: str):
    (tmp_path / "agent.py").write_text(AGENT)
    config = {
        "version": 1, "seed": 1,
        "agent": {"start": {"command": ["python3", "agent.py"],
                            "env": {"FORGE": forge, "HTTPKIT": str(tmp_path.parent.parent / "tests")},
                            "ready": {"url": "{{url}}/health"}},
                  "invoke": {"http": {"url": "{{url}}/chat", "body": {"message": "{{input}}"}, "output": "$.reply"}}},
        "worlds": [{"name": "shop", "env": "SHOP_URL", "types": {"order": {"fields": {"id": "str"}}},
                    "seed": {"rows": {"order": [{"id": "1"}]}},
                    "operations": {"get_order": {"op": "get", "type": "order"}}}],
        "inputs": [{"id": "look", "text": "look up order 1"}],
        "mutation": {"enabled": False},
        "chaos": {"scenarios": [{"name": "first_fails", "faults": [{"kind": "error", "target": "shop", "status": 503,
                                                                     "on_calls": [1]}]}]},
        "contract": {"invariants": [{"id": "completes", "type": "completes"}]},
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    return main(["run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet", "--full-report"]), \
        load_report(tmp_path / "out")


@pytest.fixture
def tests_dir(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    here = Path(__file__).parent
    (tmp_path / "tests").mkdir()
    shutil.copy(here / "httpkit.py", tmp_path / "tests" / "httpkit.py")
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    return work


@pytest.mark.parametrize("forge", ["tokenless", "wire_name"])
def test_a_forged_in_process_call_is_refused_and_its_run_is_not_judged(tests_dir, forge):
    code, report = run(tests_dir, forge)
    cell = next(c for c in report["verdict"]["cells"] if c["scenario"] == "first_fails")
    assert code == 2 and cell["status"] == "error" and cell["reason"] == "forged_trace", (cell["reason"], cell["error"])
    why = "without its token" if forge == "tokenless" else "named after the wire tool 'shop'"
    assert why in cell["error"]
    trace = cell["runs"][0]["trace"]
    assert [s["target"] for s in trace] == ["shop"]  # the forged call left no entry of its own, under no name
    assert trace[0]["fault"] == "error" and trace[0]["fault_status"] == "fired"  # the real call met its fault
    assert "403" in cell["runs"][0]["output"] if forge == "tokenless" else True


def test_the_same_agent_without_forging_is_judged(tests_dir):
    code, report = run(tests_dir, "none")
    cell = next(c for c in report["verdict"]["cells"] if c["scenario"] == "first_fails")
    assert cell["status"] == "pass" and "answered 503" in cell["runs"][0]["output"], cell
