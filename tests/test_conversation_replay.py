"""A multi-turn production conversation imports as ONE conversation input and replays turn by turn (issue 51,
item 5): a LangSmith thread (root runs sharing a `thread_id`, `session_id` or `conversation_id` in their
metadata) and an OpenTelemetry session (traces, or agent spans of one trace, sharing `gen_ai.conversation.id`
or `session.id`).

The fixtures are written here in the shapes the real exporters write (LangSmith's `list_runs`, newest first,
every run carrying its project as `session_id`; OTLP JSON from the GenAI conventions), and replayed against the
SDK example agent over real loopback HTTP with no model and no orders service: every turn's recorded LLM and
tool answers serve that turn. A thread imported as single traces would leave the second turn's calls unused,
and the replay would fail.
"""

from __future__ import annotations

import json
import sys

import yaml

from conftest import ROOT, load_report
from gate.cli import main
from gate.replay.importers.langsmith import flatten, import_langsmith, import_runs, build_session
from gate.replay.importers.otel import import_otel

SDK = ROOT / "examples" / "sdk_agent"
PROJECT = "00000000-0000-0000-0000-000000000007"  # a run's own `session_id`: its project, never a thread
TURNS = [("Please refund order 1234, it arrived damaged.", "1234", "Your refund for order 1234 has been issued."),
         ("Order 5678 arrived broken too, refund it as well.", "5678", "Order 5678 is refunded as well.")]


# --- LangSmith: the runs `wrap_openai` and `@traceable` record, as `list_runs` exports them ------------------

def _ls_run(rid, trace, name, run_type, start, inputs, outputs, parent=None, thread=None, order=None) -> dict:
    meta = {"ls_method": "traceable", "revision_id": "865266b"} | ({"thread_id": thread} if thread else {})
    return {"id": rid, "name": name, "start_time": f"2026-03-02T10:{start}Z", "end_time": f"2026-03-02T10:{start}Z",
            "run_type": run_type, "extra": {"metadata": meta, "runtime": {"sdk": "langsmith-py"}}, "error": None,
            "inputs": inputs, "outputs": outputs, "parent_run_id": parent, "trace_id": trace, "tags": [],
            "session_id": PROJECT, "status": "success", "child_run_ids": None,
            "dotted_order": order or f"20260302T10{start.replace(':', '').replace('.', '')}Z{rid}"}


def _completion(text=None, call=None, order_id=None) -> dict:
    message = {"content": text, "role": "assistant", "refusal": None, "function_call": None, "tool_calls": None}
    if call:
        message["tool_calls"] = [{"id": call, "type": "function", "function": {
            "name": "refund_order", "arguments": json.dumps({"order_id": order_id, "reason": "damaged"})}}]
    return {"id": f"chatcmpl-{call or 'final'}", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"finish_reason": "tool_calls" if call else "stop", "index": 0, "logprobs": None,
                         "message": message}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}}


def _ls_turn(n: int, question: str, order_id: str, answer: str, thread: str | None) -> list[dict]:
    root, minute = f"0000000{n}-root", f"{n:02d}"
    msgs = [{"role": "user", "content": question}]
    refund = {"refund_id": f"rf_{order_id}", "status": "refunded", "order_id": order_id}
    return [
        _ls_run(root, root, "support", "chain", f"{minute}:00.000", {"question": question}, {"output": answer},
                thread=thread),
        _ls_run(f"0000000{n}-llm1", root, "ChatOpenAI", "llm", f"{minute}:00.100", {"messages": msgs},
                _completion(call=f"call_{n}", order_id=order_id), root, thread),
        _ls_run(f"0000000{n}-tool", root, "refund_order", "tool", f"{minute}:00.200",
                {"order_id": order_id, "reason": "damaged"}, refund, root, thread),
        _ls_run(f"0000000{n}-llm2", root, "ChatOpenAI", "llm", f"{minute}:00.300", {"messages": msgs},
                _completion(text=answer), root, thread),
    ]


def langsmith_export(path) -> None:
    """A two-turn thread, newest first as `list_runs` lists it, and a lone trace in no thread."""
    thread = [run for n, (q, o, a) in enumerate(TURNS, 1) for run in _ls_turn(n, q, o, a, "th-42")]
    lone = _ls_turn(3, "Refund order 9999 please.", "9999", "Your refund for order 9999 has been issued.", None)
    runs = sorted(thread + lone, key=lambda r: r["start_time"], reverse=True)
    path.write_text(json.dumps(runs))


# --- OpenTelemetry: GenAI spans as OTLP JSON ------------------------------------------------------------

def _attr(key, value) -> dict:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def _span(trace, sid, parent, name, start, attrs) -> dict:
    return {"traceId": trace, "spanId": sid, "parentSpanId": parent or "", "name": name, "kind": 1,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1_000_000),
            "attributes": [_attr(k, v) for k, v in attrs.items()], "status": {}}


def _otel_turn(trace, n, agent_parent, history, question, order_id, answer, session_attr) -> list[dict]:
    """One turn: an invoke_agent span, a chat span asking for the tool, the tool span, the final chat span. The
    chat spans' input holds the whole conversation so far (the agent sends its history): the turn's user text is
    its last user message."""
    base, agent = 1_772_000_000_000_000_000 + n * 10_000_000_000, f"a{n:015d}"
    said = history + [{"role": "user", "parts": [{"type": "text", "content": question}]}]
    ask = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
           "gen_ai.input.messages": json.dumps(said)}
    call = {"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "tool_call", "id": f"call_{n}", "name": "refund_order", "arguments": {"order_id": order_id}}]}
    final = {"role": "assistant", "finish_reason": "stop", "parts": [{"type": "text", "content": answer}]}
    agent_attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support", **session_attr}
    return [
        _span(trace, agent, agent_parent, "invoke_agent support", base, agent_attrs),
        _span(trace, f"c{n:015d}", agent, "chat gpt-4o-mini", base + 100,
              {**ask, "gen_ai.output.messages": json.dumps([call])}),
        _span(trace, f"e{n:015d}", agent, "execute_tool refund_order", base + 200, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund_order",
            "gen_ai.tool.call.result": json.dumps({"refund_id": f"rf_{order_id}", "status": "refunded"})}),
        _span(trace, f"d{n:015d}", agent, "chat gpt-4o-mini", base + 300,
              {**ask, "gen_ai.output.messages": json.dumps([final])}),
    ]


def _history(upto: int) -> list[dict]:
    out = []
    for q, _, a in TURNS[:upto]:
        out += [{"role": "user", "parts": [{"type": "text", "content": q}]},
                {"role": "assistant", "parts": [{"type": "text", "content": a}]}]
    return out


def otel_export(path, one_trace: bool = False) -> None:
    """The session as two traces (turn 2's exported first), or as one trace: a session span over two agent spans."""
    if one_trace:
        trace, top = "ab" * 16, "5e55" + "0" * 12
        spans = [_span(trace, top, None, "session", 1_772_000_000_000_000_000, {"session.id": "sess-7"})]
        for n, (q, o, a) in enumerate(TURNS, 1):
            spans += _otel_turn(trace, n, top, _history(n - 1), q, o, a, {})
    else:
        spans = []
        for n, (q, o, a) in reversed(list(enumerate(TURNS, 1))):
            spans += _otel_turn(f"{n:032x}", n, None, _history(n - 1), q, o, a, {"gen_ai.conversation.id": "conv-9"})
    doc = {"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "support")]},
                              "scopeSpans": [{"scope": {"name": "support-agent"}, "spans": spans}]}]}
    path.write_text(json.dumps(doc))


# --- the tests ------------------------------------------------------------------------------------------

def _replay_config(tmp_path, sessions: str) -> str:
    """The SDK example, replaying: no orders service and no LLM key; the recordings answer every call."""
    doc = yaml.safe_load((SDK / "chaos-gate.yaml").read_text())
    doc.pop("services", None)
    doc["agent"].pop("reset")
    doc["agent"]["start"]["command"] = [sys.executable, str(SDK / "agent.py")]
    doc["tools"][0]["upstream"] = "http://127.0.0.1:9"  # nothing listens there
    doc["contract"] = {"baseline": False, "invariants": [{"id": "completes", "type": "completes"}]}
    doc["replay"] = {"sessions": [sessions], "tool_map": {"refund_order": "orders"}}
    path = tmp_path / "replay.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_a_langsmith_thread_and_an_otel_session_import_as_one_conversation_each_and_replay_turn_by_turn(
        tmp_path, monkeypatch):
    langsmith_export(tmp_path / "runs.json")
    otel_export(tmp_path / "traces.json")
    sessions = tmp_path / "sessions"
    assert main(["replay", "import", "--langsmith", str(tmp_path / "runs.json"), "-o", str(sessions)]) == 0
    assert main(["replay", "import", "--otel", str(tmp_path / "traces.json"), "-o", str(sessions)]) == 0
    found = {p.name: json.loads(p.read_text()) for p in sessions.glob("*.json")}
    assert sorted(found) == ["langsmith-00000003-root.json", "langsmith-th-42.json", "otel-conv-9.json"]
    questions = [q for q, _, _ in TURNS]
    for name in ("langsmith-th-42.json", "otel-conv-9.json"):
        talk = found[name]
        assert talk["turns"] == questions and talk["input"] == "\n".join(questions), name  # in start-time order
        assert talk["output"] == TURNS[1][2]
        assert [(e["kind"], e["turn"]) for e in talk["exchanges"]] == [
            ("llm", 1), ("tool", 1), ("llm", 1), ("llm", 2), ("tool", 2), ("llm", 2)], name
        assert json.loads(talk["exchanges"][4]["body"])["refund_id"] == "rf_5678"  # turn 2's own tool answer
    lone = found["langsmith-00000003-root.json"]
    assert "turns" not in lone and "turn" not in lone["exchanges"][0] and lone["input"] == "Refund order 9999 please."

    monkeypatch.setenv("PROVIDER", "openai")
    monkeypatch.setenv("AGENT_BUGS", "")
    out = tmp_path / "out"
    code = main(["run", "-c", _replay_config(tmp_path, str(sessions / "*.json")), "-o", str(out), "--quiet",
                 "--full-report", "--only", "replay/*"])
    cells = {c["id"]: c for c in load_report(out)["verdict"]["cells"]}
    assert code == 0, {k: (c["status"], c["reason"], [i["message"] for i in c["invariants"] if i["breached"]])
                       for k, c in cells.items()}
    for cid in ("replay/langsmith-th-42", "replay/otel-conv-9"):
        [run] = cells[cid]["runs"]
        assert cells[cid]["status"] == "pass" and cells[cid]["input"] == "\n".join(questions)
        assert [(s["target"], s["status"], s["turn"]) for s in run["trace"]] == [
            ("openai", 200, 1), ("orders", 200, 1), ("openai", 200, 1),
            ("openai", 200, 2), ("orders", 200, 2), ("openai", 200, 2)], cid
        assert run["output"] == TURNS[1][2]
        assert [(t["text"], t["answer"]) for t in run["turns"]] == [(q, a) for q, _, a in TURNS]  # each its own
    assert cells["replay/langsmith-00000003-root"]["status"] == "pass"


def test_a_session_of_agent_spans_in_one_trace_is_a_conversation_too(tmp_path):
    """A session span over two invoke_agent spans: each agent span a turn, with the calls under it."""
    otel_export(tmp_path / "one.json", one_trace=True)
    result = import_otel(tmp_path / "one.json")
    [talk] = result.sessions
    assert result.skipped == [] and talk.id == "otel-sess-7" and talk.turns == [q for q, _, _ in TURNS]
    assert [(e.kind, e.turn, e.name) for e in talk.exchanges] == [
        ("llm", 1, "gpt-4o-mini"), ("tool", 1, "refund_order"), ("llm", 1, "gpt-4o-mini"),
        ("llm", 2, "gpt-4o-mini"), ("tool", 2, "refund_order"), ("llm", 2, "gpt-4o-mini")]


def test_single_traces_import_exactly_as_before_and_a_thread_of_one_turn_is_one(tmp_path):
    """Traces in no thread, and a thread of one trace, import byte for byte as the import that knows no threads
    does; the project's `session_id` every run carries groups nothing."""
    runs = _ls_turn(1, *TURNS[0], None) + _ls_turn(2, *TURNS[1], "th-alone")
    (tmp_path / "runs.json").write_text(json.dumps(runs))
    threaded = import_langsmith(tmp_path / "runs.json")
    plain = import_runs(tmp_path / "runs.json", flatten, build_session, "llm", None)
    assert [s.model_dump_json(by_alias=True) for s in threaded.sessions] == \
           [s.model_dump_json(by_alias=True) for s in plain.sessions]
    assert [s.id for s in threaded.sessions] == ["langsmith-00000001-root", "langsmith-00000002-root"]
    assert all(s.turns is None for s in threaded.sessions)


def test_a_turn_that_cannot_be_imported_skips_its_conversation_naming_the_turn(tmp_path, capsys):
    runs = [r for n, (q, o, a) in enumerate(TURNS, 1) for r in _ls_turn(n, q, o, a, "th-9")]
    for run in runs:
        if run["id"] == "00000002-tool":
            run["outputs"] = None  # still running when exported
    (tmp_path / "runs.json").write_text(json.dumps(runs))
    assert main(["replay", "import", "--langsmith", str(tmp_path / "runs.json"), "-o", str(tmp_path / "s")]) == 2
    assert ("skipped trace th-9: conversation of 2 turns: turn 2 (trace 00000002-root): tool run 00000002-tool "
            "(refund_order) has no outputs and no error") in capsys.readouterr().err
