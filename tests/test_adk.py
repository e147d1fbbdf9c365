"""Google ADK apps as published (issue 52, item 2): `init` writes ADK's own server and the gate reads
its event stream natively.

The pure tests read ADK events in the shape its api_server serves them (adk-python
`cli/api_server.py`: each `Event` dumped with `exclude_none=True, by_alias=True`, so camelCase;
`/run_sse` frames each as `data: <json>`, `/run` returns the list) and in snake_case, as a
hand-rolled server would send them: the final model event's text is the answer, `partial` chunks
are not repeated, a function-call-only final event leaves an empty answer (not an unreadable
stream), and an `errorCode` event fails the turn with its code.

The end-to-end tests take an ADK app folder written as ADK's quickstart writes one (a package
whose agent.py defines `root_agent = Agent(model="gemini-2.0-flash", ..., tools=[fn])`), let
`chaos-gate init` detect it and write its config, and run that config through the real CLI
under the keyless sim. google-adk cannot share the test environment (it wants google-genai<3,
websockets<16, opentelemetry<=1.44), so, as the other framework tests do (tests/framework_envs.py),
it is installed from the registry into a cached virtualenv, which the project sees as its `.venv`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from conftest import load_report
from gate.agent.invoke import extract_output, extract_stream
from gate.agent.streams import read_documents, read_stream
from gate.cli import main

ANSWER = "Order 1234 has shipped."
CALL = {"functionCall": {"id": "adk-1", "name": "get_order_status", "args": {"order_id": "1234"}}}
RESULT = {"functionResponse": {"id": "adk-1", "name": "get_order_status", "response": {"state": "shipped"}}}
MALFORMED = "Malformed function call: get_order_status(}{"


def event(parts: list | None = None, role: str = "model", snake: bool = False, **more) -> dict:
    """One ADK event as the api_server dumps it (ids, timestamps and actions included: never the answer)."""
    doc = {"author": "support_agent", "id": "7f3c2b1e-4111-1111-1111-111111111111", "timestamp": 1796582513.62,
           "actions": {"stateDelta": {}, "artifactDelta": {}, "requestedAuthConfigs": {}}, **more}
    doc["invocation_id" if snake else "invocationId"] = "e-4111111111111111"
    if parts is not None:
        doc["content"] = {"role": role, "parts": parts}
    return doc


def sse(*events: dict) -> str:
    return "".join(f"data: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events)


# /run_sse with streaming: false: the call, its result, the answer; ADK adds a text before a call at times
TURNS = [event([{"text": "Let me look that up."}, CALL]), event([RESULT], role="user"), event([{"text": ANSWER}])]
# streaming: true: the same turn as token chunks, then the whole event ADK saves
CHUNKED = [event([{"text": "Order 1234 "}], partial=True), event([{"text": "has shipped."}], partial=True),
           event([{"text": ANSWER}])]


def test_the_final_model_events_text_is_the_answer():
    read = read_stream(sse(*TURNS), "sse")
    assert (read.text, read.error) == (ANSWER, None)
    assert read.recognised == 2 and "1796582513" not in read.text  # the function response is not the agent's


def test_partial_chunks_are_not_repeated_when_the_whole_event_comes():
    assert read_stream(sse(*CHUNKED), "sse").text == ANSWER
    assert read_stream(sse(*CHUNKED[:2]), "sse").text == ANSWER  # chunks alone: joined


def test_snake_case_events_read_alike():
    snake = [event([{"text": ANSWER}], snake=True),
             event(snake=True, error_code="MALFORMED_FUNCTION_CALL", error_message=MALFORMED)]
    assert read_stream(sse(snake[0]), "sse").text == ANSWER
    assert read_stream(sse(*snake), "sse").error == f"MALFORMED_FUNCTION_CALL: {MALFORMED}"


def test_a_function_call_only_final_event_is_an_empty_answer_not_an_unreadable_stream():
    """The run ended on a call (a long-running tool, ADK's max_llm_calls): the agent has said nothing
    final, so the answer is empty (not_empty judges it), not the earlier text and not the call's JSON."""
    body = sse(TURNS[0], TURNS[1], event([CALL]))
    assert extract_stream(body.encode(), "sse", None) == ("", "ok", "")


def test_thoughts_and_the_users_turn_are_not_the_answer():
    body = sse(event([{"text": "hello"}], role="user", author="user"),
               event([{"text": "the user wants order 1234", "thought": True}, {"text": ANSWER}]))
    assert read_stream(body, "sse").text == ANSWER


def test_an_error_code_event_is_a_failed_turn_with_its_code():
    failed = event(errorCode="MALFORMED_FUNCTION_CALL", errorMessage=MALFORMED)
    output, reason, detail = extract_stream(sse(TURNS[0], failed).encode(), "sse", None)
    assert (output, reason) == (None, "stream_error")
    assert "MALFORMED_FUNCTION_CALL" in detail and MALFORMED in detail


def test_the_api_servers_own_error_event_is_a_failed_turn():
    """What api_server sends when the run raises after the 200 (`{"error": ..., "error_details": ...}`)."""
    body = sse(TURNS[0], {"error": "ValueError: Session not found", "error_details": {"error_type": "ValueError"}})
    assert extract_stream(body.encode(), "sse", None)[:2] == (None, "stream_error")


def test_run_json_lists_read_as_the_stream_does():
    """`/run` answers the events of /run_sse as one JSON list: with the default `output: $` it is read
    by the same extractors; a JSON list that is not ADK's stays the answer it is."""
    assert read_documents(TURNS).text == ANSWER
    assert extract_output(json.dumps(TURNS).encode(), "$") == (ANSWER, "ok", "")
    failed = [*TURNS[:1], event(errorCode="SAFETY")]
    assert extract_output(json.dumps(failed).encode(), "$")[:2] == (None, "stream_error")
    assert extract_output(b'[{"author": "me"}]', "$") == ('[{"author": "me"}]', "ok", "")


def adk_app(root: Path) -> Path:
    """An app folder as ADK's quickstart writes one: a package, its agent.py defining root_agent."""
    app = root / "support_agent"
    app.mkdir(parents=True)
    (app / "__init__.py").write_text("from . import agent\n")
    (app / "agent.py").write_text('''from google.adk.agents import Agent


def get_order_status(order_id: str) -> dict:
    """Look up the status of a customer's order.

    Args:
        order_id: the order's number
    """
    return {"status": "success", "order_id": order_id, "state": "shipped"}


root_agent = Agent(
    model="gemini-2.0-flash",
    name="support_agent",
    description="Answers questions about a customer's orders.",
    instruction="You help customers with their orders. Use get_order_status to look an order up.",
    tools=[get_order_status],
)
''')
    return app


def test_init_detects_adk_and_writes_its_server(tmp_path):
    adk_app(tmp_path)
    assert main(["init", "--dir", str(tmp_path)]) == 0
    text = (tmp_path / "chaos-gate.yaml").read_text()
    config = yaml.safe_load(text)
    assert config["agent"]["start"]["command"][:4] == ["adk", "api_server", "--port", "{{port}}"]
    assert config["agent"]["start"]["command"][-1] == "."
    assert config["agent"]["invoke"]["http"]["url"] == "{{url}}/run_sse"
    body = config["agent"]["invoke"]["http"]["body"]
    assert (body["app_name"], body["session_id"]) == ("support_agent", "{{session}}")
    assert config["llm"][0]["provider"] == "gemini"
    assert main(["validate", "-c", str(tmp_path / "chaos-gate.yaml")]) == 0


def test_init_in_the_apps_own_folder_serves_its_parent(tmp_path):
    app = adk_app(tmp_path)
    assert main(["init", "--dir", str(app)]) == 0  # detected from the agent.py it holds
    config = yaml.safe_load((app / "chaos-gate.yaml").read_text())
    assert config["agent"]["start"]["command"][-1] == ".."
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "requirements.txt").write_text("google-adk==2.13.0\n")
    assert main(["init", "--dir", str(other)]) == 0  # declared, its agent not found: a placeholder to edit
    assert "your agent folder's name" in (other / "chaos-gate.yaml").read_text()


def test_init_on_a_terminal_offers_the_detected_framework(tmp_path):
    """Every question answered with its default: the detected ADK, and so ADK's server."""
    import argparse
    import io

    from gate.scaffold import run_init

    adk_app(tmp_path)
    args = argparse.Namespace(dir=str(tmp_path), agent_url=None, agent_command=None, script=None, provider=None,
                              framework=None, service=None, force=False)
    assert run_init(args, io.StringIO(), ask=lambda prompt: "", interactive=True) == 0
    config = yaml.safe_load((tmp_path / "chaos-gate.yaml").read_text())
    assert config["agent"]["start"]["command"][:2] == ["adk", "api_server"]


def test_each_run_gets_a_fresh_session_its_reset_shares(tmp_path):
    """{{session}}: a reset and the invoke after it name one session; the next run, even of the same
    cell and run number (a shrink re-runs them), and an invoke with no reset, each get their own."""
    from httpkit import JsonHandler, serve

    from gate.agent.instance import AgentInstance
    from gate.config.models import AgentConfig

    seen = []

    class Recorder(JsonHandler):
        def do_POST(self):
            seen.append((self.path, self.json_body()["session"]))
            self.reply(200, {"reply": "ok"})

    server, url = serve(Recorder)
    agent = AgentConfig.model_validate({
        "url": url, "reset": {"url": "{{url}}/reset", "body": {"session": "{{session}}"}},
        "invoke": {"http": {"url": "{{url}}/chat", "body": {"session": "{{session}}"}, "output": "$.reply"}}})
    instance = AgentInstance(agent, tmp_path, 0, tmp_path)
    ctx = {"cell_id": "contract/greeting/baseline", "input_id": "greeting", "run": "0"}

    async def runs():
        for _ in range(2):
            await instance.reset(ctx)
            await instance.invoke("hi", ctx)
        await instance.invoke("hi", {**ctx, "cell_id": "reference/greeting"})
    try:
        asyncio.run(runs())
    finally:
        server.shutdown()
    sessions = [s for _, s in seen]
    assert [p for p, _ in seen] == ["/reset", "/chat", "/reset", "/chat", "/chat"]
    assert sessions[0] == sessions[1] and sessions[2] == sessions[3]
    assert len(set(sessions)) == 3 and "{{session}}" not in sessions


@pytest.fixture(scope="module")
def adk_venv() -> Path:
    """The cached virtualenv holding google-adk from the registry (tests/framework_envs.py)."""
    from framework_envs import python_for

    try:
        python = python_for("google-adk")
    except pytest.fail.Exception as exc:
        pytest.skip(f"google-adk could not be installed here: {exc}")
    return Path(python).parent.parent


@pytest.fixture
def project(tmp_path, adk_venv) -> Path:
    """An ADK project: the app folder, and ADK in the project's `.venv` (so `adk` is on the agent's PATH)."""
    root = tmp_path / "project"
    adk_app(root)
    (root / ".venv").symlink_to(adk_venv)
    assert main(["init", "--dir", str(root)]) == 0
    return root


def only_run(config: Path, out: Path, cell: str) -> tuple[int, dict, dict]:
    code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report", "--only", cell])
    report = load_report(out)
    (found,) = report["verdict"]["cells"]
    return code, report, found["runs"][0]


def test_an_adk_app_started_from_inits_config_reaches_its_tool_and_answers(project, tmp_path):
    """The config as `init` wrote it: ADK's api_server starts, the sim's walk calls the function tool
    (the in-process seam traces it), and the answer is read out of /run_sse's events."""
    code, report, run = only_run(project / "chaos-gate.yaml", tmp_path / "out", "*baseline*")
    assert (code, run["reason"]) == (0, "ok"), run.get("detail")
    assert "shipped" in run["output"] and "invocationId" not in run["output"]
    tools = [(step["tool"], step["transport"]) for step in run["trace"] if step["kind"] == "tool"]
    assert ("get_order_status", "function") in tools
    reach = report["verdict"]["reach"]
    assert "google-adk.FunctionTool.run_async" in reach["in_process"] and reach["called"] == ["get_order_status"]


def test_an_adk_error_code_fails_the_turn_with_its_code(project, tmp_path):
    """The model's call does not parse: Gemini answers MALFORMED_FUNCTION_CALL, ADK streams an
    errorCode event inside its 200, and the run fails with that code, not a crash or an empty pass."""
    config = yaml.safe_load((project / "chaos-gate.yaml").read_text())
    config["contract"]["scenarios"] = [{"name": "malformed", "faults": [
        {"kind": "bad_tool_args", "target": "llm", "on_calls": [1]}]}]
    path = project / "malformed.yaml"
    path.write_text(yaml.safe_dump(config))
    code, _, run = only_run(path, tmp_path / "out", "*malformed*")
    assert (code, run["reason"]) == (1, "stream_error")
    assert "MALFORMED_FUNCTION_CALL" in run["detail"]
