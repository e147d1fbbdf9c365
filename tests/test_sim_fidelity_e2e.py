"""Sim fidelity end to end: the gate itself (`gate.cli.main`) on real framework agents.

- npm `openai` `runTools` streaming under `duplicate_tool_fragment` / `reorder_tool_fragments`:
  the corrupted call's `fn.parse` error (V8's words: `Expected ',' or '}' after property value
  in JSON at position 19`) is a failure to the sim, which re-issues the call; the cell passes
  only because the refund really happened (`refund-made` probes the orders service), and an
  agent whose `parse` swallows the damage is caught on `refund-made`.
- `on_error` left at its default re-issues a call whose arguments did not parse (bad_args).
- `chaos-gate validate` warns about a sim rule naming a tool that no recorded request offered.
- A LangSmith trace recorded by `wrap_openai` with `stream=True` imports.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata

import pytest
import yaml

from conftest import ROOT, load_report
from gate.cli import main
from test_frameworks import FRAMEWORKS, node_ready

NODE = FRAMEWORKS / "node_openai"
LENIENT = ROOT / "tests" / "agents" / "node_lenient_parse.mjs"


def run_cells(config, out, *only: str) -> dict[str, dict]:
    selected = [arg for pattern in only for arg in ("--only", pattern)]
    main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report", *selected])
    return {c["scenario"]: c for c in load_report(out)["verdict"]["cells"]}


def failed(cell) -> list[str]:
    return [c["invariant"] for c in cell["runs"][0]["checks"] if not c["passed"]]


def targets(cell) -> list[str]:
    return [s["target"] for s in cell["runs"][0]["trace"] if s["target"] != "functions"]  # in-process seam aside


@pytest.mark.parametrize("scenario", ["fragment_duplicated", "fragments_reordered"])
def test_node_stream_fragment_faults_are_reissued_and_the_refund_really_made(tmp_path, scenario):
    node_ready()
    cell = run_cells(NODE / "chaos-gate.yaml", tmp_path, f"contract/*/{scenario}")[scenario]
    run = cell["runs"][0]
    assert cell["status"] == "pass", failed(cell)
    first = run["trace"][0]
    assert first["fault_status"] == "fired" and first["fault"] in ("duplicate_tool_fragment", "reorder_tool_fragments")
    # the damaged call never reached the tool; the sim re-issued it, then the refund, then the answer
    assert targets(cell) == ["openai", "openai", "orders", "openai"]
    assert "refund-made" not in failed(cell)


def test_reordered_fragments_answered_after_json_are_reissued(tmp_path):
    """16-character fragments swapped: `JSON.parse` in runTools says "Unexpected non-whitespace character
    after JSON at position 2", a V8 wording the sim must know as the family it is (issue 34)."""
    node_ready()
    doc = yaml.safe_load((NODE / "chaos-gate.yaml").read_text())
    doc["services"][0]["command"] = [sys.executable, str(ROOT / "examples" / "sdk_agent" / "orders_service.py")]
    doc["agent"]["start"]["command"] = ["node", str(NODE / "agent.mjs")]
    doc["agent"]["start"]["cwd"] = str(NODE)
    doc["sim"]["chunk_chars"] = 16
    config = tmp_path / "chaos-gate.yaml"
    config.write_text(yaml.safe_dump(doc))
    cell = run_cells(config, tmp_path / "out", "contract/*/fragments_reordered")["fragments_reordered"]
    assert cell["runs"][0]["trace"][0]["fault_status"] == "fired"
    assert cell["status"] == "pass", failed(cell)
    assert targets(cell) == ["openai", "openai", "orders", "openai"]  # re-issued, then the refund, then the answer


def test_an_agent_that_swallows_damaged_arguments_is_caught_on_refund_made(tmp_path):
    node_ready()
    doc = yaml.safe_load((NODE / "chaos-gate.yaml").read_text())
    doc["services"][0]["command"] = [sys.executable, str(ROOT / "examples" / "sdk_agent" / "orders_service.py")]
    doc["agent"]["start"]["command"] = ["node", str(LENIENT)]
    config = tmp_path / "chaos-gate.yaml"
    config.write_text(yaml.safe_dump(doc))
    cells = run_cells(config, tmp_path / "out", "contract/*/baseline", "contract/*/fragment_duplicated")
    assert cells["baseline"]["status"] == "pass", failed(cells["baseline"])
    assert failed(cells["fragment_duplicated"]) == ["refund-made"]  # "issued", but order 1234 has no refund


@pytest.mark.parametrize("name", ["pydantic_ai_chat", "node_openai"])
def test_the_default_on_error_reissues_a_call_whose_arguments_did_not_parse(tmp_path, name):
    if name == "node_openai":
        node_ready()
    elif not _installed("pydantic-ai-slim"):
        pytest.skip("pydantic-ai-slim not installed")
    doc = yaml.safe_load((FRAMEWORKS / name / "chaos-gate.yaml").read_text())
    assert "on_error" not in doc["sim"]["rules"][0]  # these examples leave it at its default
    cell = run_cells(FRAMEWORKS / name / "chaos-gate.yaml", tmp_path, "contract/*/bad_args")["bad_args"]
    assert cell["status"] == "pass", failed(cell)
    assert cell["runs"][0]["output"] == "Your refund for order 1234 has been issued."
    assert targets(cell).count("orders") == 1


def _installed(dist: str) -> bool:
    try:
        metadata.version(dist)
        return True
    except metadata.PackageNotFoundError:
        return False


def test_validate_warns_about_a_rule_tool_no_recorded_request_offered(tmp_path, capsys):
    from gate.replay.session import RecordedExchange, Session, write_session

    request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "refund 1234"}],
               "tools": [{"type": "function", "function": {"name": "refund_order", "parameters": {}}}]}
    write_session(Session(id="s1", input_id="refund", input="refund 1234", exchanges=[RecordedExchange(
        target="openai", kind="llm", method="POST", path="/chat/completions", digest="d", request=request,
        status=200, body="{}")]), tmp_path / "sessions")
    doc = yaml.safe_load((FRAMEWORKS / "langgraph" / "chaos-gate.yaml").read_text())
    doc.pop("services")
    doc["tools"][0]["upstream"] = "http://127.0.0.1:9"
    doc["agent"]["start"]["command"] = [sys.executable, str(FRAMEWORKS / "langgraph" / "agent.py")]
    doc["sim"]["rules"][0]["steps"][0]["call"] = "refund_ordr"
    doc["replay"] = {"sessions": ["sessions/*.json"]}
    config = tmp_path / "chaos-gate.yaml"
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert main(["validate", "-c", str(config)]) == 0
    err = capsys.readouterr().err
    assert "sim.rules[0].steps[0].call" in err and "refund_ordr" in err and "they offered: refund_order" in err
    doc["sim"]["rules"][0]["steps"][0]["call"] = "refund_order"
    config.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert main(["validate", "-c", str(config)]) == 0
    assert "refund_" not in capsys.readouterr().err


def test_a_langsmith_trace_of_a_streamed_chat_completion_imports(tmp_path):
    """`wrap_openai` + `stream=True` records `object: chat.completion.chunk` with whole messages."""
    import warnings

    import langsmith
    from langsmith import traceable
    from langsmith.wrappers import wrap_openai

    from langsmith_standin import LangSmithStandIn
    from proxy_harness import OA_TOOLS, ProxyHarness, ToolServer

    ls, tools = LangSmithStandIn(), ToolServer()
    h = ProxyHarness(tools.url)
    client = langsmith.Client(api_url=ls.url, api_key="ls-test-not-real")
    try:
        with langsmith.tracing_context(client=client, enabled=True, project_name="streamed"):
            h.begin()
            oa = wrap_openai(h.openai())

            @traceable(name="support")
            def support(question: str) -> str:
                msgs = [{"role": "user", "content": question}]
                chunks = list(oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, tools=OA_TOOLS,
                                                         stream=True, stream_options={"include_usage": True}))
                deltas = [c.choices[0].delta for c in chunks if c.choices]
                call = next(d.tool_calls[0] for d in deltas if d.tool_calls)
                args = "".join(t.function.arguments or "" for d in deltas for t in d.tool_calls or [])
                msgs += [{"role": "assistant", "tool_calls": [{"id": call.id, "type": "function", "function": {
                    "name": "refund_order", "arguments": args}}]},
                         {"role": "tool", "tool_call_id": call.id, "content": '{"status": "refunded"}'}]
                final = oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, tools=OA_TOOLS, stream=True)
                return "".join(c.choices[0].delta.content or "" for c in final if c.choices)
            answer = support("Please refund order 1234, it arrived damaged.")
            h.end()
        client.flush()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = [json.loads(r.json()) for r in client.list_runs(project_name="streamed")]
    finally:
        h.close()
        tools.close()
        ls.close()
    assert {r["outputs"].get("object") for r in runs if r["run_type"] == "llm"} == {"chat.completion.chunk"}
    trace = tmp_path / "runs.json"
    trace.write_text(json.dumps(runs, default=str))
    assert main(["replay", "import", "--langsmith", str(trace), "-o", str(tmp_path / "out")]) == 0
    [session] = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("*.json")]
    llm = [json.loads(e["body"])["choices"][0] for e in session["exchanges"] if e["kind"] == "llm"]
    assert [c["finish_reason"] for c in llm] == ["tool_calls", "stop"]
    assert llm[0]["message"]["tool_calls"][0]["function"]["name"] == "refund_order"
    assert llm[1]["message"]["content"] == answer
