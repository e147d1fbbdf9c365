"""Conversation inputs (issue 51, item 1): an input of `turns:` is sent turn by turn in one session.

Each end-to-end test starts a real loopback agent of the tests' own (tests/agents/session_memory.py),
which writes every request it receives to a file: what the gate sent (order, session, turn, history)
is read from the agent's side, never from the gate's own account. No test needs an LLM key: the
agent answers from its memory, and where it asks a model (exploration) the model is the gate's sim.
Each test would fail if conversations were removed: the config would be refused, or the memory the
last answer needs would be missing.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, write_config
from gate.config.loader import read_config
from gate.errors import ConfigError
from gate.plan import build_plan
from gate.templates import filling, render

PY = json.dumps(sys.executable)
AGENT = str(AGENTS / "session_memory.py")
SERVER_SIDE = '{url: "{{url}}/chat", body: {session: "{{session}}", message: "{{input}}", turn: "{{turn}}"}, ' \
              'output: $.reply}'
CLIENT_SIDE = '{url: "{{url}}/chat_client", body: {history: "{{history}}", message: "{{input}}"}, output: $.reply}'
NAME_TURNS = '["My name is Ada", {text: "What is my name?"}]'


def config(tmp_path, inputs: str, http: str = SERVER_SIDE, extra: str = "", timeout: float = 5,
           env: str = "") -> str:
    """A config starting the memory agent, its requests recorded to tmp_path/record.jsonl."""
    record = json.dumps(str(tmp_path / "record.jsonl"))
    return f"""
version: 1
agent:
  start:
    command: [{PY}, {json.dumps(AGENT)}]
    env: {{RECORD: {record}{env}}}
  invoke:
    http: {http}
  timeout: {timeout}
inputs:
{inputs}
mutation: {{count: 2}}
gate: {{fail_on: never}}
{extra}"""


def run(run_cli, tmp_path, text: str) -> tuple[dict, list[dict]]:
    """The report's cells by id, and every request the agent received, in order."""
    path = write_config(tmp_path, text)
    run_cli("run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet")
    cells = {c["id"]: c for c in load_report(tmp_path / "out")["verdict"]["cells"]}
    lines = (tmp_path / "record.jsonl").read_text().splitlines()
    return cells, [json.loads(line) for line in lines]


def by_session(requests: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for req in requests:
        out.setdefault(req["session"], []).append(req)
    return out


def test_the_turns_of_a_run_share_one_session_in_order_and_every_run_gets_a_fresh_one(run_cli, tmp_path):
    """Two conversations, two runs each: four sessions, each told the name and then asked it, `{{turn}}`
    counting 1, 2. The last answer, which the invariant judges, needs the first turn's memory."""
    inputs = f"  - {{id: ada, turns: {NAME_TURNS}}}\n  - {{id: bob, turns: [My name is Bob, 'What is my name?']}}"
    knows = "contract:\n  invariants:\n    - {id: knows, type: regex, pattern: '^Your name is (Ada|Bob)\\.$'}\n"
    cells, requests = run(run_cli, tmp_path, config(tmp_path, inputs, extra=knows + "runs: 2\n"))
    assert set(cells) == {"contract/ada/baseline", "contract/bob/baseline"}  # no mutation cells (not yet)
    assert all(c["status"] == "pass" for c in cells.values()), cells
    sessions = by_session(requests)
    assert len(sessions) == 4  # fresh per run and per cell
    for turns in sessions.values():
        assert [(r["turn"], r["message"].startswith("My name is")) for r in turns] == [("1", True), ("2", False)]
    assert cells["contract/ada/baseline"]["input"] == "My name is Ada\nWhat is my name?"


def test_the_output_is_the_last_turns_answer(run_cli, tmp_path):
    """A failing check shows the output it judged: the second turn's answer, from the first turn's memory."""
    wrong = "contract:\n  invariants:\n    - {id: not-ada, type: excludes, values: [Ada]}\n"
    cells, _ = run(run_cli, tmp_path, config(tmp_path, f"  - {{id: ada, turns: {NAME_TURNS}}}", extra=wrong))
    [run0] = cells["contract/ada/baseline"]["runs"]
    assert cells["contract/ada/baseline"]["status"] == "fail" and run0["output"] == "Your name is Ada."


def test_history_messages_hands_each_turn_the_previous_ones(run_cli, tmp_path):
    """The client-history agent keeps nothing: it knows the name only from the `{{history}}` it is sent,
    a JSON list in the body (never a string holding JSON)."""
    inputs = f"  - {{id: ada, history: messages, turns: {NAME_TURNS}}}"
    knows = "contract:\n  invariants:\n    - {id: knows, type: contains, value: Your name is Ada}\n"
    cells, requests = run(run_cli, tmp_path, config(tmp_path, inputs, http=CLIENT_SIDE, extra=knows))
    assert cells["contract/ada/baseline"]["status"] == "pass", cells
    assert [r["history"] for r in requests] == [
        [], [{"role": "user", "content": "My name is Ada"}, {"role": "assistant", "content": "Nice to meet you, Ada."}]]


def test_a_failing_middle_turn_ends_the_run_and_names_the_turn(run_cli, tmp_path):
    inputs = "  - {id: ada, turns: [My name is Ada, FAIL here, 'What is my name?']}"
    cells, requests = run(run_cli, tmp_path, config(tmp_path, inputs))
    cell = cells["contract/ada/baseline"]
    [run0] = cell["runs"]
    assert cell["status"] == "fail" and run0["reason"] == "http_5xx" and run0["status"] == 500
    assert run0["detail"].startswith("turn 2 of 3: ") and "this turn broke" in run0["detail"]
    assert [r["message"] for r in requests] == ["My name is Ada", "FAIL here"]  # the third turn was never sent


def test_the_deadline_is_per_turn(run_cli, tmp_path):
    """Three turns of 0.4 s under a 1 s deadline: each is in time, though the conversation is not."""
    inputs = "  - {id: slow, turns: [SLOW one, SLOW two, SLOW three]}"
    cells, requests = run(run_cli, tmp_path, config(tmp_path, inputs, timeout=1, env=", SLOW_SECONDS: '0.4'"))
    assert cells["contract/slow/baseline"]["status"] == "pass", cells
    assert len(requests) == 3


def test_an_explored_cell_runs_the_whole_conversation_its_fault_on_a_later_turn(run_cli, tmp_path):
    """The agent asks the sim once per turn: the baseline's trace spans both turns, so exploration finds
    two call sites, each keyed by its turn, and the fault on the second turn's call shows in the last answer,
    the name still remembered from the first turn of the same session."""
    extra = ("llm:\n  - {name: openai, provider: openai, upstream: sim}\n"
             "contract:\n  invariants:\n    - {id: model-answered, type: excludes, values: [did not answer]}\n"
             "chaos: {explore: {budget: 4, kinds: [server_error], persistent: false, baseline_runs: 1}}\n")
    cells, requests = run(run_cli, tmp_path, config(tmp_path, f"  - {{id: ada, turns: {NAME_TURNS}}}", extra=extra))
    first, second = "chaos/ada/explore/t1-llm-openai-1/server_error", "chaos/ada/explore/t2-llm-openai-1/server_error"
    assert cells["contract/ada/baseline"]["status"] == "pass" and cells[first]["status"] == "pass", cells
    assert cells[second]["status"] == "fail"
    assert cells[second]["runs"][0]["output"] == "Your name is Ada. (the model did not answer)"
    assert [len(turns) for turns in by_session(requests).values()] == [2, 2, 2]


def test_a_single_input_renders_turn_one(run_cli, tmp_path):
    """Its baseline and its two mutations: one turn each, so `{{turn}}` means the same in any input."""
    cells, requests = run(run_cli, tmp_path, config(tmp_path, "  - {id: one, text: hello}"))
    assert [r["turn"] for r in requests] == ["1", "1", "1"] and cells["contract/one/baseline"]["status"] == "pass"


def test_the_plan_gives_a_conversation_its_turns_and_no_mutation_cells(tmp_path):
    text = config(tmp_path, f"  - {{id: ada, history: messages, turns: {NAME_TURNS}}}\n  - {{id: one, text: hi}}",
                  http=CLIENT_SIDE)
    cells = build_plan(read_config(write_config(tmp_path, text)).config)
    ada = [c for c in cells if c.input_id == "ada"]
    assert [c.id for c in ada] == ["contract/ada/baseline"]
    assert ada[0].turns == ("My name is Ada", "What is my name?") and ada[0].history == "messages"
    assert sum(c.stage == "mutation" and c.input_id == "one" for c in cells) == 2


def test_a_whole_placeholder_inserts_a_list_and_an_embedded_one_its_json():
    ctx = {"history": [{"role": "user", "content": "hé"}], "turn": "2"}
    assert render({"m": "{{history}}", "t": "{{turn}}"}, ctx) == {"m": ctx["history"], "t": "2"}
    assert filling({"m": "{{history}}"})(ctx) == {"m": ctx["history"]}
    assert render("h={{history}}", ctx) == 'h=[{"role": "user", "content": "hé"}]'


@pytest.mark.parametrize("item, key, says", [
    ('{id: ada, text: hi, turns: [hi]}', "inputs[0]", "set exactly one of 'text' (one message) or 'turns'"),
    ('{id: ada, baseline: x}', "inputs[0]", "set exactly one of 'text' (one message) or 'turns'"),
    ('{id: ada, turns: []}', "inputs[0]", "'turns' is empty: give the conversation's turns, or one message"),
    ('{id: ada, text: hi, history: messages}', "inputs[0]", "'history' is for a conversation: use 'turns'"),
    ('{id: ada, turns: [{text: hi, expct: []}]}', "inputs[0].turns[0].expct", "unknown key 'expct' (did you mean"),
    ('{id: ada, turns: [hi], history: messages}', "inputs[0].history",
     "history: messages sends the previous turns as {{history}}, which agent.invoke.http never uses"),
])
def test_a_conversation_config_mistake_names_file_line_key_and_fix(tmp_path, item, key, says):
    path = write_config(tmp_path, config(tmp_path, f"  - {item}"))
    with pytest.raises(ConfigError) as exc:
        read_config(path)
    assert f"{path}:10: {key}: {says}" in str(exc.value)
