"""A write the agent makes after it answered is its own cell's (issue 42, item 4).

The agent (tests/agents/late_writer.py) does 500 ms of its own work before it asks its model,
answers, then 200 ms later posts an audit record from a background thread, by which time the
next cell has begun on the same worker. The write must
not land in the next cell's trace (where side_effect_once and tool budgets would judge it
against a cell that never made it): it is kept as a stray of the cell that made it, marked as
a late write, with a warning that names that cell. (By design, a read arriving the same way, and
a write once the next cell's model has answered, stay in the run they arrive in: gate/proxy/late_calls.py.)
"""

from __future__ import annotations

import json
import sys
import time

from conftest import AGENTS, load_report, write_config
from gate.cli import main
from httpkit import JsonHandler, serve


class Audit(JsonHandler):
    posts: list[str] = []

    def do_POST(self):
        Audit.posts.append(self.rfile.read(int(self.headers.get("content-length", 0))).decode())
        self.reply(200, {"ok": True})

    def do_GET(self):
        self.reply(200, {"ok": True})


def run(tmp_path, late_ms: int, **env) -> tuple[int, dict]:
    server, url = serve(Audit)
    try:
        doc = {
            "version": 1, "seed": 2,
            "agent": {"start": {"command": [sys.executable, str(AGENTS / "late_writer.py")],
                                "env": {"OPENAI_API_KEY": "sk-sim", "LATE_MS": str(late_ms), "WORK_MS": "500", **env},
                                "ready": {"url": "{{url}}/health", "timeout": 30}},
                      "invoke": {"http": {"url": "{{url}}/chat", "body": {"message": "{{input}}"},
                                          "output": "$.reply"}}, "timeout": 20},
            "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
            "tools": [{"name": "audit", "env": "AUDIT_URL", "upstream": url}],
            "sim": {"default": "Done."},
            "inputs": [{"id": f"i{i}", "text": f"question {i}"} for i in range(3)],
            "mutation": {"enabled": False}, "shrink": {"enabled": False},
            "contract": {"invariants": [{"id": "no-writes-here", "type": "tool_calls_max", "max": 0,
                                         "severity": "high"}]},
            "gate": {"min_score": 0, "allow_vacuous": True}, "concurrency": 1,
            "chaos": {"explore": False},  # the fault-free cells and their strays are what is tested
        }
        config = write_config(tmp_path, json.dumps(doc, indent=1))
        code = main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
        return code, load_report(tmp_path / "out")
    finally:
        server.shutdown()


def test_a_write_200_ms_after_the_answer_is_a_stray_of_its_own_cell(tmp_path):
    code, report = run(tmp_path, 200)
    cells = report["verdict"]["cells"]
    ids = [c["id"] for c in cells]
    traces = {c["id"]: [e["target"] for e in c["runs"][0]["trace"]] for c in cells}
    assert all(t == ["openai"] for t in traces.values()), traces  # no cell carries another's write
    late = [s for s in report["run"]["stray"] if s["late_write"]]
    assert [s["after_cell"] for s in late] == ids[:2]  # the last cell's write arrives after the run: a plain stray
    assert all((s["target"], s["method"], s["path"]) == ("audit", "POST", "/audit") for s in late)
    warning = next(w for w in report["verdict"]["warnings"] if "arrived after their cell had answered" in w)
    assert ids[0] in warning and ids[1] in warning
    assert all(c["status"] == "pass" for c in cells)


def test_an_agent_that_writes_before_asking_its_model_keeps_its_writes(tmp_path):
    """Its first cell shows the habit (a write before any model answer, with no earlier cell to blame):
    every cell keeps its own write, none is taken for a late one."""
    code, report = run(tmp_path, 0, WRITE_FIRST="1")
    traces = [[e["target"] for e in c["runs"][0]["trace"]] for c in report["verdict"]["cells"]]
    assert traces == [["audit", "openai"]] * 3
    assert not [s for s in report["run"]["stray"] if s["late_write"]]


class Bookings(JsonHandler):
    posts: list[dict] = []

    def do_POST(self):
        Bookings.posts.append(self.json_body())
        self.reply(201, {"booking": len(Bookings.posts)})


def run_gives_up(tmp_path, patience_ms: int, **env) -> dict:
    server, url = serve(Bookings)
    Bookings.posts = []
    try:
        names = ["alice", "bob", "carol", "dave"]
        doc = {
            "version": 1, "seed": 2,
            "agent": {"start": {"command": [sys.executable, str(AGENTS / "gives_up_early.py")],
                                "env": {"OPENAI_API_KEY": "sk-sim", "PATIENCE_MS": str(patience_ms), "SLOW_MS": "500",
                                        **env},
                                "ready": {"url": "{{url}}/health", "timeout": 30}},
                      "invoke": {"http": {"url": "{{url}}/chat", "body": {"message": "{{input}}"},
                                          "output": "$.reply"}}, "timeout": 20},
            "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
            "tools": [{"name": "bookings", "env": "BOOKINGS_URL", "upstream": url}],
            "sim": {"rules": [{"when": r"book a table for (\w+)", "steps": [
                {"call": "check_availability", "arguments": {"name": "{{1}}"}},
                {"call": "book_table", "arguments": {"name": "{{1}}"}}, {"answer": "Booked for {{1}}."}]}]},
            "inputs": [{"id": n, "text": f"Please book a table for {n} tonight."} for n in names],
            "mutation": {"enabled": False}, "shrink": {"enabled": False},
            "contract": {"invariants": [{"id": "books-once", "type": "side_effect_once", "tool": "bookings",
                                         "severity": "critical"}]},
            "gate": {"min_score": 0, "allow_vacuous": True}, "concurrency": 1, "chaos": {"explore": False},
        }
        config = write_config(tmp_path, json.dumps(doc, indent=1))
        main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
        time.sleep(2)  # the last conversation's own late calls finish before the booking service stops
        return load_report(tmp_path / "out")
    finally:
        server.shutdown()


def test_a_conversation_that_runs_on_after_its_answer_is_charged_to_its_own_cell(tmp_path):
    """Each cell answers at 300 ms and its conversation asks its model again (and books) 500 ms in, while
    the next cell runs: the next cell's trace holds its own first model call only, the late model calls
    and the booking are strays of the cell whose input they carry, and no cell is blamed for another's."""
    report = run_gives_up(tmp_path, 300)
    cells = report["verdict"]["cells"]
    ids = [c["id"] for c in cells]
    traces = {c["id"]: [(e["target"], e["method"]) for e in c["runs"][0]["trace"]] for c in cells}
    assert all(t == [("openai", "POST")] for t in traces.values()), traces
    late = [s for s in report["run"]["stray"] if s["late_write"]]
    owners = {(s["after_cell"], s["target"]) for s in late}
    assert {(ids[0], "openai"), (ids[0], "bookings"), (ids[1], "openai"), (ids[1], "bookings")} <= owners, late
    assert all(c["status"] == "pass" for c in cells), [(c["id"], c["reason"]) for c in cells]


def test_a_patient_agent_keeps_its_whole_conversation_in_its_cell(tmp_path):
    """The twin that waits for its conversation: every call is its own cell's, nothing is late."""
    report = run_gives_up(tmp_path, 5000)
    traces = [[e["target"] for e in c["runs"][0]["trace"]] for c in report["verdict"]["cells"]]
    assert traces == [["openai", "openai", "bookings", "openai"]] * 4, traces
    assert not [s for s in report["run"]["stray"] if s["late_write"]]


def test_a_write_repeated_after_the_answer_is_the_double_write_of_the_cell_that_made_it(tmp_path):
    """The planted resend: each cell books, answers, and 200 ms later books again while the next cell is
    still preparing. The repeat is that cell's double booking (its side_effect_once breached, naming it),
    never the next cell's; the last cell's repeat arrives after the run and blames nobody."""
    report = run_gives_up(tmp_path, 5000, SLOW_MS="0", PREP_MS="600", RESEND_MS="200")
    cells = report["verdict"]["cells"]
    traces = [[e["target"] for e in c["runs"][0]["trace"]] for c in cells]
    assert traces == [["openai", "openai", "bookings", "openai"]] * 4, traces  # each cell's own booking only
    repeats = [s for s in report["run"]["stray"] if s["repeats"]]
    assert [s["after_cell"] for s in repeats] == [c["id"] for c in cells[:3]]
    for cell in cells[:3]:
        assert cell["status"] == "fail" and cell["reason"] == "contract:books-once", cell["reason"]
        breach = next(i for i in cell["invariants"] if i["id"] == "books-once")
        assert "executed again after the agent had answered" in breach["message"]
    assert cells[3]["status"] == "pass"


def _model_call(app, run, messages):
    from gate.proxy.routes import Route

    route = Route("llm", "openai", "openai", None)
    body = json.dumps({"model": "gpt-4o-mini", "messages": messages}).encode()
    return app.late.owner(run, route, route.describe("POST", "/v1/chat/completions", body), lambda: False, True)


def test_a_tool_result_is_late_only_after_a_run_that_ended_mid_tool_loop():
    """Rule 2 of gate/proxy/late_calls.py: a first model call that ends with tool results is an ended cell's late
    call only when that cell's conversation was mid tool loop; an agent that runs a tool before asking its
    model (its runs end with answers) keeps its own first call."""
    from gate.proxy.app import ProxyApp, RunState

    user = {"role": "user", "content": "Please book a table for alice tonight."}
    asked = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "check", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "free at 19:00"}
    app = ProxyApp({})
    run = RunState(None)
    run.input_text = user["content"]
    app.late.inputs_verbatim = True
    app.late.ended.append(("contract/alice/baseline", time.monotonic(), user["content"], False))
    assert _model_call(app, run, [user, asked, result]) is None  # the previous run answered: this is its own
    app.late.ended.append(("contract/alice/mid", time.monotonic(), user["content"], True))
    assert _model_call(app, run, [user, asked, result]) == "contract/alice/mid"
    assert _model_call(app, run, [user]) is None  # a fresh conversation is the running cell's
