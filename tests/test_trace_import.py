"""Production traces become regression tests: traces recorded by the real `langsmith` SDK
(against a loopback stand-in of the LangSmith API), exported with the real `Client` in every
shape, imported, and replayed against the SDK example agent with no upstream running."""

import json
import sys
import time

import pytest
import yaml

from conftest import ROOT, load_report
from gate.cli import main
from langsmith_standin import LangSmithStandIn
from proxy_harness import ProxyHarness, ToolServer
import traced_programs as tp

SDK = ROOT / "examples" / "sdk_agent"
RATE_LIMIT = {"kind": "rate_limit", "target": "openai", "on_calls": [1], "retry_after": 0.1}


def _dump(run) -> dict:
    return json.loads(run.json()) if hasattr(run, "json") else run


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """Six production traces in the stand-in, and the real Client's exports of them in every shape."""
    import warnings

    import langsmith
    from langchain_core.tracers import LangChainTracer

    out = tmp_path_factory.mktemp("langsmith")
    ls, tools = LangSmithStandIn(), ToolServer()
    h = ProxyHarness(tools.url)
    client = langsmith.Client(api_url=ls.url, api_key="ls-test-not-real")
    tracer = LangChainTracer(client=client, project_name="incidents")
    answers = {}
    try:
        with langsmith.tracing_context(client=client, enabled=True, project_name="incidents"):
            for name, program in [("openai", lambda: tp.openai_support(h)),
                                  ("anthropic", lambda: tp.anthropic_support(h)),
                                  ("langgraph-openai", lambda: tp.langgraph_support(h, tracer, "openai")),
                                  ("langgraph-anthropic", lambda: tp.langgraph_support(h, tracer, "anthropic")),
                                  ("lone", lambda: tp.lone_llm_call(h)),
                                  ("flaky", lambda: tp.flaky_support(h))]:
                h.begin(*([RATE_LIMIT] if name == "flaky" else []), cell_id=f"trace/{name}")
                answers[name] = program()
                h.end()
        client.flush()
        tracer.wait_for_futures()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # list_runs/read_run are deprecated for runs.query, still documented
            flat = [_dump(r) for r in client.list_runs(project_name="incidents")]
            roots = [r["id"] for r in flat if r["parent_run_id"] is None]
            nested = [_dump(client.read_run(rid, load_child_runs=True)) for rid in roots]
            llm_only = [_dump(r) for r in client.list_runs(project_name="incidents", run_type="llm")]
            one_trace = [_dump(r) for r in client.list_runs(project_name="incidents", trace_id=roots[0])]
    finally:
        h.close()
        tools.close()
        ls.close()
    shapes = {"flat": flat, "nested": nested, "nested-one": nested[0], "runs-key": {"runs": flat},
              "run-id-keyed": {r["id"]: {k: v for k, v in r.items() if k != "id"} for r in flat}}
    files = {}
    for shape, doc in shapes.items():
        files[shape] = out / f"{shape}.json"
        files[shape].write_text(json.dumps(doc, default=str))
    files["jsonl"] = out / "runs.jsonl"
    files["jsonl"].write_text("".join(json.dumps(r, default=str) + "\n" for r in flat))
    files["llm-only"] = out / "llm-only.json"
    files["llm-only"].write_text(json.dumps(llm_only, default=str))
    files["one-trace"] = out / "one-trace.json"
    files["one-trace"].write_text(json.dumps(one_trace, default=str))
    return {"dir": out, "files": files, "answers": answers, "flat": flat, "roots": roots}


def import_file(path, out, *extra) -> tuple[int, dict]:
    code = main(["replay", "import", "--langsmith", str(path), "-o", str(out), *extra])
    return code, {p.name: json.loads(p.read_text()) for p in sorted(out.glob("*.json"))}


def by_name(sessions: dict) -> dict:
    return {s["input_id"] if s["input_id"] != "imported" else "lone": s for s in sessions.values()}


def test_every_export_shape_imports_to_the_same_sessions(traced, tmp_path):
    code, reference = import_file(traced["files"]["flat"], tmp_path / "flat")
    assert code == 0 and len(reference) == 6
    for shape in ("nested", "runs-key", "run-id-keyed", "jsonl"):
        code, sessions = import_file(traced["files"][shape], tmp_path / shape)
        assert code == 0 and sessions == reference, shape
    code, one = import_file(traced["files"]["nested-one"], tmp_path / "nested-one")
    assert code == 0 and len(one) == 1 and one == {k: v for k, v in reference.items() if k in one}
    code, one = import_file(traced["files"]["one-trace"], tmp_path / "one-trace")
    assert code == 0 and len(one) == 1 and one == {k: v for k, v in reference.items() if k in one}


def replay_config(tmp_path, sessions_glob: str, scenarios=(), tool_map=True) -> str:
    """The SDK example, replaying: no orders service and no LLM key; the recording answers."""
    doc = yaml.safe_load((SDK / "chaos-gate.yaml").read_text())
    doc.pop("services", None)
    doc["agent"].pop("reset")
    doc["agent"]["start"]["command"] = [sys.executable, str(SDK / "agent.py")]
    doc["tools"][0]["upstream"] = "http://127.0.0.1:9"  # nothing listens there
    doc["contract"] = {"baseline": False, "scenarios": doc["contract"]["scenarios"], "invariants": [
        {"id": "completes", "type": "completes", "severity": "critical"},
        {"id": "refund-once", "type": "side_effect_once", "tool": "orders", "severity": "critical"}]}
    doc["replay"] = {"sessions": [sessions_glob], "scenarios": list(scenarios)}
    if tool_map:
        doc["replay"]["tool_map"] = {"refund_order": "orders"}
    path = tmp_path / "replay.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def replay(tmp_path, monkeypatch, sessions_dir, provider: str, bugs: str = "", **kw):
    monkeypatch.setenv("PROVIDER", provider)
    monkeypatch.setenv("AGENT_BUGS", bugs)
    config = replay_config(tmp_path, str(sessions_dir / "*.json"), **kw)
    code = main(["run", "-c", config, "-o", str(tmp_path / f"out-{provider}"), "--quiet", "--full-report", "--only", "replay/*"])
    return code, {c["id"]: c for c in load_report(tmp_path / f"out-{provider}")["verdict"]["cells"]}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_each_trace_replays_against_the_agent_run_by_run(traced, tmp_path, monkeypatch, provider):
    """Every recorded answer is served in the agent's own dialect (Chat or Messages, streamed), every
    failure as the agent saw it (a 429, a timed-out tool), and the agent ends where production did."""
    code, sessions = import_file(traced["files"]["flat"], tmp_path / "sessions")
    code, cells = replay(tmp_path, monkeypatch, tmp_path / "sessions", provider)
    assert code == 0, {k: c["reason"] for k, c in cells.items()}
    for session in sessions.values():
        cell = cells[f"replay/{session['id']}"]
        run = cell["runs"][0]
        assert cell["status"] == "pass" and run["output"] == session["output"], session["input_id"]
        steps = run["trace"]
        assert len(steps) == len(session["exchanges"]), session["input_id"]
        for step, recorded in zip(steps, session["exchanges"], strict=True):
            assert step["target"] == (provider if recorded["kind"] == "llm" else "orders")
            assert step["status"] == recorded["status"] and not step["forwarded"]
    flaky = next(c for c in cells.values() if c["input_id"] == "support-flaky")
    assert [s["status"] for s in flaky["runs"][0]["trace"]] == [429, 200, None, 200, 200]
    assert "as traced: RateLimitError" in flaky["runs"][0]["trace"][0]["note"]


def test_llm_answers_keep_text_blocks_and_every_tool_call(traced, tmp_path):
    code, sessions = import_file(traced["files"]["flat"], tmp_path / "s")
    from gate.dialects.translate import turn_of

    for session in by_name(sessions).values():
        turns = [turn_of(e["body"]) for e in session["exchanges"] if e["kind"] == "llm" and e["status"] == 200]
        assert [c.name for c in turns[0].tool_calls] == (["refund_order"] if session["input"] != "hello there" else [])
        assert turns[-1].text == session["output"] and session["output"]  # list-of-blocks content kept (v1, Claude)
    tool = by_name(sessions)["langgraph-openai"]["exchanges"][1]
    assert json.loads(tool["body"]) == tp.REFUND and tool["content_type"] == "application/json"  # not a ToolMessage


def test_failures_stay_failures(traced, tmp_path):
    code, sessions = import_file(traced["files"]["flat"], tmp_path / "s")
    flaky = by_name(sessions)["support-flaky"]["exchanges"]
    assert flaky[0]["status"] == 429 and flaky[0]["error"].startswith("RateLimitError")
    assert flaky[2]["status"] is None and flaky[2]["dropped"] and flaky[2]["hold_until"] == "agent"
    assert flaky[2]["error"].startswith("ReadTimeout")


def test_a_run_type_filtered_export_still_imports(traced, tmp_path):
    code, sessions = import_file(traced["files"]["llm-only"], tmp_path / "s")
    assert code == 0 and len(sessions) == 6
    assert all(e["kind"] == "llm" for s in sessions.values() for e in s["exchanges"])
    assert {s["input"] for s in sessions.values()} == {tp.QUESTION, "hello there"}


def test_an_llm_only_export_keeps_each_traces_final_answer(traced, tmp_path):
    """Filtered to LLM runs there is no chain root: each session's output is still the trace's final
    answer (the last LLM run's text), as the full export has it, not the first LLM run's."""
    _, full = import_file(traced["files"]["flat"], tmp_path / "full")
    code, sessions = import_file(traced["files"]["llm-only"], tmp_path / "s")
    assert code == 0 and sessions.keys() == full.keys()
    for name, session in sessions.items():
        assert session["output"] == full[name]["output"] and session["output"], session["input_id"]
    spoke_first = [s for s in sessions.values() if len(s["exchanges"]) > 1]
    assert spoke_first and all(s["output"] in traced["answers"].values() for s in spoke_first)


def test_replay_is_followed_or_fails(traced, tmp_path, monkeypatch):
    """A trace the agent stops following is reported; an unmapped tool name is named on both sides."""
    code, sessions = import_file(traced["files"]["flat"], tmp_path / "sessions")
    keep = next(n for n, s in sessions.items() if s["input_id"] == "support")
    for name in sessions:
        if name != keep:
            (tmp_path / "sessions" / name).unlink()
    code, cells = replay(tmp_path, monkeypatch, tmp_path / "sessions", "openai", tool_map=False)
    cell = next(iter(cells.values()))
    breach = next(i for i in cell["invariants"] if i["id"] == "replay-matches")
    assert code == 1 and breach["breached"]
    assert "the recording's next tool call is 'refund_order', the agent called 'orders'" in breach["message"]
    assert "tool_map: {refund_order: orders}" in breach["message"]
    doc = json.loads((tmp_path / "sessions" / keep).read_text())
    doc["exchanges"].append(doc["exchanges"][-1])  # production made one more call than the agent now does
    (tmp_path / "sessions" / keep).write_text(json.dumps(doc))
    code, cells = replay(tmp_path, monkeypatch, tmp_path / "sessions", "anthropic")
    breach = next(i for i in next(iter(cells.values()))["invariants"] if i["id"] == "replay-matches")
    assert code == 1 and "agent stopped after 3 of 4 recorded calls" in breach["message"]


def test_chaos_on_a_replayed_production_trace_catches_the_planted_bugs(traced, tmp_path, monkeypatch):
    """The recording answers, the scenario's faults apply on top, a retry is served from the recording:
    no upstream runs, and the example's planted bugs are caught (no_retry under rate_limited,
    double_write under double_write) while the fixed agent passes both."""
    code, sessions = import_file(traced["files"]["flat"], tmp_path / "sessions")
    for name, session in sessions.items():
        if session["input_id"] != "support":
            (tmp_path / "sessions" / name).unlink()
    scenarios = ["rate_limited", "double_write"]
    code, cells = replay(tmp_path, monkeypatch, tmp_path / "sessions", "openai", scenarios=scenarios)
    assert code == 0 and all(c["status"] == "pass" for c in cells.values()), {k: c["reason"] for k, c in cells.items()}
    limited = next(c for c in cells.values() if c["id"].endswith("/rate_limited"))["runs"][0]["trace"]
    assert [s["status"] for s in limited][:2] == [429, 200] and not any(s["forwarded"] for s in limited)
    code, cells = replay(tmp_path, monkeypatch, tmp_path / "sessions", "openai", bugs="no_retry,double_write",
                         scenarios=scenarios)
    assert code == 1
    by_scenario = {c["scenario"]: c for c in cells.values()}
    assert by_scenario["replay"]["status"] == "pass"  # the recording alone does not show either bug
    breached = {s: {i["id"] for i in by_scenario[s]["invariants"] if i["breached"]} for s in scenarios}
    assert "completes" in breached["rate_limited"]
    assert breached["double_write"] == {"refund-once"}
    writes = [s for s in by_scenario["double_write"]["runs"][0]["trace"] if s["target"] == "orders"]
    assert len(writes) == 2 and not any(s["forwarded"] for s in writes)  # the retry, answered from the recording


def test_import_is_linear_and_fast_at_scale(tmp_path):
    """10,000 runs (2,000 traces) import in seconds; ten times the runs cost about ten times the time.

    Each size is timed as its best of three, so one slow moment of a shared CI machine (it once made
    a single 10,000-run import take 2.4 s where it takes 0.25 s) is not read as growth; quadratic
    growth would still be 100x, far past the bound."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_import", ROOT / "bench" / "bench_import.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    from gate.replay.importers.langsmith import import_langsmith

    times = {}
    for n in (1_000, 10_000):
        path = tmp_path / f"{n}.json"
        path.write_text(json.dumps(bench.langsmith_runs(n)))
        best = float("inf")
        for _ in range(3):
            began = time.perf_counter()
            result = import_langsmith(path)
            best = min(best, time.perf_counter() - began)
            assert len(result.sessions) == n // bench.PER_TRACE and not result.skipped
        times[n] = best
    assert times[10_000] < 10 and times[10_000] / max(times[1_000], 1e-3) < 40  # quadratic would be 100x
