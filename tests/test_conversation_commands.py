"""Command agents hold conversations (issue 51): `agent.invoke.command` re-run once per turn, its history in
$CHAOS_GATE_HISTORY with `history: messages`, or one `conversation: lines` process reading a turn a line.

Each run is a real `chaos-gate run` of the tests' own command agents (tests/agents/chat_once.py,
tests/agents/chat_lines.py), which append what they were given to a file: the process ids, turns,
sessions and histories asserted are the agents' own account, never the gate's. Each agent answers
"What is my name?" only from a memory of the first turn, so a gate that drops the history, or starts a
fresh process per turn under `lines`, fails the check on the last answer.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, write_config
from gate.config.loader import read_config
from gate.errors import ConfigError

PY = json.dumps(sys.executable)
ONCE = json.dumps(str(AGENTS / "chat_once.py"))
LINES = json.dumps(str(AGENTS / "chat_lines.py"))
NAME = "[My name is Ada, 'What is my name?']"


def config(tmp_path, command: str, inputs: str, extra: str = "", timeout: float = 5) -> str:
    record = json.dumps(str(tmp_path / "record.jsonl"))
    return f"""
version: 1
agent:
  invoke:
    command: {{command: [{PY}, {command}], env: {{RECORD: {record}, TURN: "{{{{turn}}}}", SESSION: "{{{{session}}}}"}}{extra}}}
  timeout: {timeout}
inputs:
{inputs}
mutation: {{count: 1}}
concurrency: 4
gate: {{fail_on: never}}
"""


def run(run_cli, tmp_path, text: str) -> tuple[dict, list[dict]]:
    path = write_config(tmp_path, text)
    run_cli("run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet")
    cells = {c["id"]: c for c in load_report(tmp_path / "out")["verdict"]["cells"]}
    return cells, [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]


def test_a_command_run_once_per_turn_gets_the_history_it_asked_for(run_cli, tmp_path):
    """`history: messages`: turn 2's process reads turn 1 from $CHAOS_GATE_HISTORY and knows the name; without
    it the same agent does not. Every turn is its own process, in the run's one session ({{session}}, {{turn}})."""
    inputs = f"  - {{id: told, history: messages, turns: {NAME}}}\n  - {{id: blind, turns: {NAME}}}"
    knows = ("\ncontract:\n  invariants:\n    - {id: knows, type: contains, value: Your name is Ada, when: {input: told}}"
             "\n    - {id: blind, type: contains, value: I do not know, when: {input: blind}}\n")
    cells, seen = run(run_cli, tmp_path, config(tmp_path, ONCE, inputs) + knows)
    assert cells["contract/told/baseline"]["status"] == "pass", cells["contract/told/baseline"]
    assert cells["contract/blind/baseline"]["status"] == "pass", cells["contract/blind/baseline"]
    told = [r for r in seen if r["history"] is not None]
    assert [(r["turn"], r["text"]) for r in told] == [("1", "My name is Ada"), ("2", "What is my name?")]
    assert told[1]["history"] == [{"role": "user", "content": "My name is Ada"},
                                  {"role": "assistant", "content": "Nice to meet you, Ada."}] and told[0]["history"] == []
    assert told[0]["session"] == told[1]["session"] and told[0]["pid"] != told[1]["pid"]
    blind = [r for r in seen if r["history"] is None]  # history: none sets no $CHAOS_GATE_HISTORY
    assert len(blind) == 2 and blind[0]["session"] == blind[1]["session"] != told[0]["session"]


def test_a_failing_turn_of_a_per_turn_command_is_named(run_cli, tmp_path):
    cells, seen = run(run_cli, tmp_path, config(tmp_path, ONCE, "  - {id: ada, turns: [My name is Ada, FAIL now, 'What?']}"))
    [run0] = cells["contract/ada/baseline"]["runs"]
    assert run0["reason"] == "exit_nonzero" and run0["detail"].startswith("turn 2 of 3: exit status 3")
    assert "this turn broke" in run0["detail"] and [r["text"] for r in seen] == ["My name is Ada", "FAIL now"]


def test_one_lines_process_holds_the_whole_conversation(run_cli, tmp_path):
    """`conversation: lines`: one process per run reads every turn and keeps the memory itself; a crash at turn 2
    ends the run naming the turn, with the agent's stderr; a turn over the deadline times out alone (the
    deadline is per turn: three turns of 0.4 s pass under 1 s); a single input is a one-line conversation,
    its line breaks sent as spaces."""
    inputs = "\n".join([f"  - {{id: ada, turns: {NAME}}}",
                        "  - {id: crash, turns: [My name is Bob, CRASH now, 'What is my name?']}",
                        "  - {id: hang, turns: [My name is Bob, SLOW 5, 'What is my name?']}",
                        "  - {id: steady, turns: [SLOW 0.4, SLOW 0.4, SLOW 0.4]}",
                        '  - {id: one, text: "hello\\nthere"}'])
    knows = "\ncontract:\n  invariants:\n    - {id: knows, type: contains, value: Your name is Ada, when: {input: ada}}\n"
    cells, seen = run(run_cli, tmp_path, config(tmp_path, LINES, inputs, ", conversation: lines", timeout=1) + knows)
    assert cells["contract/ada/baseline"]["status"] == "pass", cells["contract/ada/baseline"]
    assert cells["contract/steady/baseline"]["status"] == "pass", cells["contract/steady/baseline"]
    by_text: dict[str, set] = {}
    for r in seen:
        by_text.setdefault(r["text"], set()).add(r["pid"])
    assert len(by_text["My name is Ada"] | by_text["What is my name?"]) == 1  # ada's two turns: one process
    assert len(by_text["SLOW 0.4"]) == 1 and by_text["SLOW 0.4"] != by_text["My name is Ada"]
    [crash] = cells["contract/crash/baseline"]["runs"]
    assert crash["reason"] == "exit_nonzero" and crash["detail"].startswith("turn 2 of 3: exit status 2")
    assert "the agent fell over" in crash["detail"]
    [hang] = cells["contract/hang/baseline"]["runs"]
    assert hang["reason"] == "agent_timeout" and hang["detail"] == "turn 2 of 3: no answer line within 1s"
    assert sum(r["text"] == "What is my name?" for r in seen) == 1  # neither broken conversation sent turn 3
    assert "hello there" in by_text and cells["contract/one/baseline"]["status"] == "pass"


@pytest.mark.parametrize("command, inp, key, says", [
    ('{command: [x], conversation: lines, input: arg}', "{id: a, turns: [hi]}", "agent.invoke.command",
     "conversation: lines writes each turn to the command's stdin, one line a turn: drop 'input: arg'"),
    ('{command: [x], conversation: lines}', "{id: a, history: messages, turns: [hi]}", "inputs[0].history",
     "a conversation: lines command holds the whole conversation in its one process: drop 'history'"),
    ('{command: [x], conversation: line}', "{id: a, turns: [hi]}", "agent.invoke.command.conversation",
     "'per_turn' or 'lines'"),
    ('{command: [x], env: {H: "{{histroy}}"}}', "{id: a, turns: [hi]}", "agent.invoke.command.env.H",
     "unknown template '{{histroy}}' (did you mean '{{history}}'?)"),
])
def test_a_command_conversation_mistake_names_file_line_key_and_fix(tmp_path, command, inp, key, says):
    path = write_config(tmp_path, f"version: 1\nagent:\n  invoke:\n    command: {command}\ninputs:\n  - {inp}\n")
    with pytest.raises(ConfigError) as exc:
        read_config(path)
    line = 4 if key.startswith("agent") else 6
    assert f"{path}:{line}: {key}: " in str(exc.value) and says in str(exc.value)


def test_a_per_turn_command_with_history_messages_is_accepted(tmp_path):
    path = write_config(tmp_path, "version: 1\nagent:\n  invoke:\n    command: {command: [x]}\n"
                                  "inputs:\n  - {id: a, history: messages, turns: [hi, there]}\n")
    assert read_config(path).config.inputs[0].turn_texts() == ("hi", "there")
