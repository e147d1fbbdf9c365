"""Conversations at the edges: `chaos_run.conversation([...])` in the pytest plugin, and `chaos-gate init
--session` (or its question) writing a conversation input.

The plugin runs through pytester in a subprocess, as a team's suite runs it: an in-process agent that hands
its model the history, a configured `conversation: lines` command agent (the gate starts it with the run's
env, so its model calls reach the sim through the proxy, each keyed by its turn). The init test runs the
starter it writes against a real session-keeping server (tests/agents/session_chat.py): its sim rules answer
the second turn from the first only when the agent sent both, so the same agent with its memory switched off
fails the per-turn check, naming turn 2.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys

import pytest

from conftest import AGENTS, load_report
from gate.plan import build_plan, load_config
from gate.scaffold import run_init

pytest_plugins = ["pytester"]

INNER = '''
import json, os, urllib.request
import pytest

RULES = [{"turn": 1, "when": "my name is (\\\\w+)", "answer": "Noted: {{1}}."},
         {"turn": 2, "after": "Noted: Ada", "answer": "Your name is Ada."}]
ASK = {"text": "What is my name?", "expect": [{"type": "contains", "value": "Ada"}]}


def model(messages):
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", method="POST",
                                 data=json.dumps({"model": "m", "messages": messages}).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as resp:
        return json.loads(resp.read())["choices"][0]["message"]["content"]


@pytest.mark.chaos_sim(RULES)
def test_in_process(chaos_run):
    told = chaos_run.conversation(["My name is Ada", ASK], history="messages",
                                  agent=lambda text, history: model(history + [{"role": "user", "content": text}]))
    assert told.ok and told.answers == ["Noted: Ada.", "Your name is Ada."] and not told.failures
    assert chaos_run.answer == "Your name is Ada." and told.turn(2)["text"] == "What is my name?"
    forgot = chaos_run.conversation(["My name is Ada", ASK], agent=lambda text: model([{"role": "user", "content": text}]))
    assert forgot.answers[1] == "I can help with that."
    assert forgot.failures == ["test_in_process:turn2:contains: turn 2: output does not contain 'Ada'"]
    assert [e.turn for e in chaos_run.state.trace] == [1, 2, 1, 2]


@pytest.mark.chaos_config("chaos-gate.yaml")
@pytest.mark.chaos_input("ada")
def test_configured(chaos_run):
    result = chaos_run.conversation(["My name is Ada", "What is my name?"])
    assert result.answers == ["Noted: Ada.", "Your name is Ada."], (result.reason, result.detail)
    assert len({json.loads(line)["pid"] for line in open("record.jsonl")}) == 1  # one process, both turns
    assert [e.turn for e in chaos_run.state.trace] == [1, 2]
    crash = chaos_run.conversation(["My name is Bob", "CRASH", "never sent"])
    assert crash.reason == "exit_nonzero" and crash.detail.startswith("turn 2 of 3: exit status 2")
    assert crash.answers == ["Noted: Bob.", None]


def test_a_bad_history_is_refused(chaos_run):
    with pytest.raises(ValueError, match="history is 'none' or 'messages'"):
        chaos_run.conversation(["hi"], history="all", agent=str)
'''


def test_chaos_run_conversation_in_process_and_configured(pytester, monkeypatch):
    sim = json.dumps({"rules": [{"turn": 1, "when": "my name is (\\w+)", "answer": "Noted: {{1}}."},
                                {"turn": 2, "after": "Noted: Ada", "answer": "Your name is Ada."}]})
    (pytester.path / "chaos-gate.yaml").write_text(f"""
version: 1
agent:
  invoke:
    command: {{command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENTS / "chat_lines.py"))}],
              conversation: lines, env: {{RECORD: {json.dumps(str(pytester.path / "record.jsonl"))}}}}}
  timeout: 10
llm: [{{name: openai, provider: openai, upstream: sim}}]
sim: {sim}
inputs: [{{id: ada, turns: [hi]}}]
""")
    pytester.makepyfile(test_talk=INNER)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-p", "gate.pytest_plugin", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=3)


def test_init_session_writes_a_conversation_that_catches_a_forgetful_agent(tmp_path, run_cli):
    shutil.copy(AGENTS / "session_chat.py", tmp_path / "agent.py")
    assert run_cli("init", "--dir", str(tmp_path), "--command", "python3 agent.py", "--session") == 0
    config = tmp_path / "chaos-gate.yaml"
    text = config.read_text()
    assert 'body: {session: "{{session}}", message: "{{input}}"}' in text and "history" in text  # said how to adapt
    [inp] = [i for i in load_config(config).config.inputs if i.turns is not None]
    assert len(inp.turns) == 2 and [c.id for _, _, c in inp.turn_checks()] == ["remembers:turn2:contains"]

    # CI time: as the gate's own user (pytest's 0700 tmp dir is unreadable to another, and finding so costs
    # seconds), and no /bin/sh between the gate and the agent (its group takes 2 s to stop)
    mine = text.replace("  timeout: 30\n", '  timeout: 30\n  user: "off"\n', 1) \
        .replace('command: "python3 agent.py"', f"command: [{json.dumps(sys.executable)}, agent.py]")
    assert mine.count("agent.py]") == 1 and 'user: "off"' in mine

    def remembers(forget: bool) -> dict:
        body = mine.replace('env: {OPENAI_API_KEY: "sk-sim"}', 'env: {OPENAI_API_KEY: "sk-sim", FORGET: "1"}')
        config.write_text(body if forget else mine)
        out = tmp_path / ("forgets" if forget else "keeps")
        run_cli("run", "-c", str(config), "-o", str(out), "--only", "contract/remembers/baseline", "--quiet")
        [cell] = load_report(out)["verdict"]["cells"]
        return {o["id"]: o for o in cell["invariants"]}

    assert not remembers(forget=False)["remembers:turn2:contains"]["breached"]
    forgot = remembers(forget=True)["remembers:turn2:contains"]
    assert forgot["breached"] and forgot["message"] == "turn 2: output does not contain '1234'"


@pytest.mark.parametrize("kind, answers, history", [
    ("url", ["url", "", "yes", "", "", ""], "none"),
    ("script", ["script", "", "stdin", "yes", "", "", ""], "messages"),
])
def test_init_asks_whether_the_agent_keeps_a_conversation(tmp_path, kind, answers, history):
    asked: list[str] = []
    replies = iter(answers)

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(replies)

    args = argparse.Namespace(dir=str(tmp_path), agent_url=None, agent_command=None, script=None, input=None,
                              provider=None, framework=None, service=None, force=False)
    assert run_init(args, io.StringIO(), ask=ask, interactive=True) == 0
    assert any("keep a conversation" in q for q in asked)
    loaded = load_config(tmp_path / "chaos-gate.yaml").config
    [inp] = [i for i in loaded.inputs if i.turns is not None]
    assert inp.history == history and "contract/remembers/baseline" in {c.id for c in build_plan(loaded)}
    assert ("CHAOS_GATE_HISTORY" in (tmp_path / "chaos-gate.yaml").read_text()) == (kind == "script")
