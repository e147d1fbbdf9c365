"""Per-turn checks (`turns: [{text, expect: [...]}]`) and sim rules that match a turn (`turn: N`, `after: REGEX`).

A turn's `expect` holds the contract's output checks, judged on that turn's answer alone: they show in the
run's checks as `<input>:turn<N>:<type>`, a failed one fails the cell with its message naming the turn. The
end-to-end runs start real loopback agents of the tests' own: the HTTP session agent of
tests/test_conversations.py, and the `conversation: lines` command agent, which sends the sim the whole
conversation so far, so the sim's `turn` counts the user turns of a real request and `after` reads the
answers it gave before.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, write_config
from gate.config.loader import read_config
from gate.config.sim import SimConfig
from gate.dialects.model import Conversation, Message, ToolResult
from gate.errors import ConfigError
from gate.sim.script import Script

PY = json.dumps(sys.executable)
MEMORY = json.dumps(str(AGENTS / "session_memory.py"))
LINES = json.dumps(str(AGENTS / "chat_lines.py"))


def run(run_cli, tmp_path, text: str) -> dict:
    path = write_config(tmp_path, text)
    run_cli("run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet")
    return {c["id"]: c for c in load_report(tmp_path / "out")["verdict"]["cells"]}


def http_config(tmp_path, inputs: str) -> str:
    record = json.dumps(str(tmp_path / "record.jsonl"))
    return f"""
version: 1
agent:
  start: {{command: [{PY}, {MEMORY}], env: {{RECORD: {record}}}}}
  invoke:
    http: {{url: "{{{{url}}}}/chat", body: {{session: "{{{{session}}}}", message: "{{{{input}}}}"}}, output: $.reply}}
  timeout: 5
inputs:
{inputs}
gate: {{fail_on: never}}
"""


def test_each_turns_checks_judge_its_own_answer_and_a_failure_names_the_turn(run_cli, tmp_path):
    """Turn 1's check passes on turn 1's answer (the last answer lacks "meet"), turn 2's fails on turn 2's: the
    cell fails with that check, its message naming turn 2. A turn the conversation never reached is not judged
    (the outcome carries the failure, named by its turn)."""
    inputs = """\
  - id: ada
    turns:
      - {text: My name is Ada, expect: [{type: contains, value: meet you}, {type: excludes, values: [Bob]}]}
      - {text: "What is my name?", expect: [{type: regex, pattern: "^Your name is Bob", severity: high}]}
  - id: broken
    turns: [My name is Ada, FAIL now, {text: "What is my name?", expect: [{type: contains, value: Ada}]}]
"""
    cells = run(run_cli, tmp_path, http_config(tmp_path, inputs))
    ada = cells["contract/ada/baseline"]
    outcomes = {o["id"]: o for o in ada["invariants"]}
    assert ada["status"] == "fail" and ada["reason"] == "contract:ada:turn2:regex", ada
    assert not outcomes["ada:turn1:contains"]["breached"] and not outcomes["ada:turn1:excludes"]["breached"]
    assert outcomes["ada:turn1:contains"]["message"] == "turn 1: output contains 'meet you'"
    assert outcomes["ada:turn2:regex"]["breached"] and outcomes["ada:turn2:regex"]["severity"] == "high"
    assert outcomes["ada:turn2:regex"]["message"].startswith("turn 2: ")
    [run0] = ada["runs"]
    assert [c["invariant"] for c in run0["checks"]] == ["completes", "stays_up", "ada:turn1:contains", "ada:turn1:excludes",
                                                        "ada:turn2:regex"]
    broken = {o["id"]: o for o in cells["contract/broken/baseline"]["invariants"]}
    assert broken["completes"]["breached"] and not broken["broken:turn3:contains"]["breached"]
    assert broken["broken:turn3:contains"]["not_judged_runs"] == 1
    assert "turn 3: not judged: never sent (the conversation ended at turn 2" in broken["broken:turn3:contains"]["message"]


def test_sim_rules_match_a_turn_and_an_earlier_answer(run_cli, tmp_path):
    """The lines agent asks the sim with the whole conversation: `turn: 1` answers the first user turn,
    `turn: 2` + `after` the second only after the first answer was given; at turn 3 neither matches."""
    record = json.dumps(str(tmp_path / "record.jsonl"))
    text = f"""
version: 1
agent:
  invoke:
    command: {{command: [{PY}, {LINES}], conversation: lines, env: {{RECORD: {record}}}}}
  timeout: 5
llm: [{{name: openai, provider: openai, upstream: sim}}]
sim:
  default: Fallback.
  rules:
    - {{turn: 2, after: 'noted: (ada|bob)', answer: Remembered from turn 1.}}
    - {{turn: 1, when: 'my name is (\\w+)', answer: 'Noted: {{{{1}}}}.'}}
    - {{turn: 2, when: name, after: never said, answer: Wrong rule.}}
inputs:
  - id: ada
    turns:
      - {{text: My name is Ada, expect: [{{type: regex, pattern: '^Noted: Ada\\.$', case_sensitive: true}}]}}
      - {{text: "What is my name?", expect: [{{type: contains, value: Remembered from turn 1.}}]}}
      - {{text: "What is my name, again?", expect: [{{type: contains, value: Fallback.}}]}}
mutation: {{enabled: false}}
chaos: {{explore: off}}
gate: {{fail_on: never}}
"""
    cells = run(run_cli, tmp_path, text)
    cell = cells["contract/ada/baseline"]
    assert cell["status"] == "pass", cell
    assert sorted(o["id"] for o in cell["invariants"]) == [
        "ada:turn1:regex", "ada:turn2:contains", "ada:turn3:contains", "completes"]


def ask(rules: list, *messages: Message) -> str:
    return Script(SimConfig.model_validate({"rules": rules, "default": "Fallback."}),
                  Conversation(messages=list(messages))).turn().text


def test_turn_counts_the_requests_user_texts_and_after_reads_only_earlier_answers():
    rules = [{"turn": 2, "answer": "second"}, {"after": "noted", "answer": "after noted"}, {"turn": 1, "answer": "first"}]
    assert ask(rules, Message("user", "hi")) == "first"
    # an Anthropic-style tool result rides in a user message with no text: no turn of its own
    assert ask(rules, Message("user", "hi"), Message("assistant", "noted"),
               Message("user", tool_results=[ToolResult("c1", "ok", "t")])) == "first"
    assert ask(rules, Message("user", "hi"), Message("assistant", "sure"), Message("user", "and?")) == "second"
    assert ask(rules, Message("user", "hi"), Message("assistant", "noted"), Message("user", "a"),
               Message("assistant", "b"), Message("user", "c")) == "after noted"
    # an answer after the latest user message (this turn's own) is not an earlier one
    assert ask(rules[1:2], Message("user", "hi"), Message("assistant", "noted")) == "Fallback."


@pytest.mark.parametrize("turn, key, says", [
    ("{text: hi, expect: [{type: contans, value: x}]}", "inputs[0].turns[0].expect[0].type",
     "unknown invariant type 'contans' (did you mean 'contains'?)"),
    ("{text: hi, expect: [{type: contains, valeu: x}]}", "inputs[0].turns[0].expect[0].valeu",
     "unknown key 'valeu' (did you mean 'value'?)"),
    ("{text: hi, expect: [{type: similar_to_baseline}]}", "inputs[0].turns[0].expect[0]",
     "'similar_to_baseline' compares the whole input's answer with its baseline: a turn's expect takes contains,"),
    ("{text: hi, expect: [{type: tool_called, tool: x}]}", "inputs[0].turns[0].expect[0]",
     "'tool_called' is not a check of an answer's text"),
    ("{text: hi, expect: [{id: mine, type: not_empty}]}", "inputs[0].turns[0].expect[0]",
     "a turn's check is named by its input and turn (<input>:turn<N>:<type>): drop 'id'"),
    ("{text: hi, expect: [{type: not_empty, when: {input: b}}]}", "inputs[0].turns[0].expect[0].when.input",
     "a turn's check judges its own input ('a') only: drop 'input'"),
    ("{text: hi, expect: [{type: contains}]}", "inputs[0].turns[0].expect[0]", "required key 'value' is missing"),
    ("{txt: hi}", "inputs[0].turns[0].txt", "unknown key 'txt' (did you mean 'text'?)"),
])
def test_a_turn_check_mistake_names_file_line_key_and_fix(tmp_path, turn, key, says):
    path = write_config(tmp_path, f"version: 1\nagent:\n  invoke:\n    command: {{command: [x]}}\ninputs:\n"
                                  f"  - id: a\n    turns:\n      - {turn}\n")
    with pytest.raises(ConfigError) as exc:
        read_config(path)
    assert f"{path}:8: {key}: {says}" in str(exc.value)
    assert "valid string" not in str(exc.value)  # a mapping turn is never also reported as a bad text


def test_turn_check_ids_are_unique_and_a_clash_with_the_contract_is_refused(tmp_path):
    body = ("version: 1\nagent:\n  invoke:\n    command: {command: [x]}\ninputs:\n  - id: a\n    turns:\n"
            "      - {text: hi, expect: [{type: contains, value: x}, {type: contains, value: y}]}\n")
    loaded = read_config(write_config(tmp_path, body))
    assert [c.id for _, _, c in loaded.config.inputs[0].turn_checks()] == ["a:turn1:contains", "a:turn1:contains-2"]
    clash = body + "contract:\n  invariants:\n    - {id: 'a:turn1:contains', type: not_empty}\n"
    with pytest.raises(ConfigError, match="duplicate invariant id 'a:turn1:contains'"):
        read_config(write_config(tmp_path, clash))


@pytest.mark.parametrize("rule, says", [
    ("{turn: 0, answer: x}", "sim.rules[0].turn: Input should be greater than or equal to 1"),
    ("{after: '(', answer: x}", "sim.rules[0].after: not a valid regular expression"),
])
def test_a_sim_turn_rule_mistake_is_named(tmp_path, rule, says):
    path = write_config(tmp_path, "version: 1\nagent:\n  invoke:\n    command: {command: [x]}\n"
                                  f"inputs: [{{id: a, text: hi}}]\nsim:\n  rules:\n    - {rule}\n")
    with pytest.raises(ConfigError) as exc:
        read_config(path)
    assert f"{path}:8: {says}" in str(exc.value)
