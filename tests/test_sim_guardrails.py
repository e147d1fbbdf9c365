"""Guardrails and classifiers under `sim` (issue 40, item 2).

A guardrail agent sends the user's own input with a response schema and no tools, so the
main agent's sim rule (which calls a tool) matches it too. Before, that rule's tool was
"not offered", the sim answered the simplest object (`is_relevant: false`) and every input
was refused — with no word that every answer came from a fallback. Now:

- a rule can match on the request's `model`, `system` prompt and response `schema` name or
  title, and its `output` answers the structured request;
- a rule that cannot act on a structured request (none of its next step's tools offered)
  lets the next rule, or the fallback, answer it;
- the fallback object lets the pipeline proceed (a verdict field named as a permission is
  true; a flag the agent acts on stays false);
- every fallback is marked on its trace step and warned about per input and call, and a
  cell whose every answer was a fallback is named as testing the sim, not the agent.

The end-to-end cases run a real OpenAI Agents SDK app with an input guardrail
(tests/agents/guarded/support.py) through the real CLI.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, write_config
from gate.config.sim import SimConfig
from gate.dialects.model import Conversation, Message, ToolSpec
from gate.sim.schema_value import value_for
from gate.sim.script import Script

pytest.importorskip("agents")

LOOKUP = [ToolSpec("lookup_order", parameters={"type": "object", "properties": {"order_id": {"type": "string"}}})]
RELEVANCE = {"title": "RelevanceOutput", "type": "object", "required": ["reasoning", "is_relevant"],
             "properties": {"reasoning": {"type": "string"}, "is_relevant": {"type": "boolean"}}}
ORDER_RULE = {"when": r"order (\d+)", "steps": [{"call": "lookup_order", "arguments": {"order_id": "{{1}}"}},
                                                {"answer": "Order {{1}}: {{tool_result}}"}]}
GUARD_SYSTEM = "Determine if the user's message is about the shop's orders"


def guard_request(**kw) -> Conversation:
    return Conversation(messages=[Message("user", "Where is order 77?")], system=GUARD_SYSTEM, model="gpt-4o-mini",
                        response_schema=RELEVANCE, **kw)


def turn(rules, conv):
    script = Script(SimConfig.model_validate({"rules": rules}), conv)
    return script.turn(), script


def test_the_main_agents_rule_leaves_the_guard_to_a_fallback_that_lets_it_through():
    answer, script = turn([ORDER_RULE], guard_request())
    assert json.loads(answer.text)["is_relevant"] is True
    assert script.fallback == "generated"
    main, script = turn([ORDER_RULE], Conversation(messages=[Message("user", "Where is order 77?")], tools=LOOKUP))
    assert main.tool_calls[0].name == "lookup_order" and script.fallback is None


@pytest.mark.parametrize("key, value", [("system", "about the shop's orders"), ("schema", "^Relevance"),
                                        ("model", "mini")])
def test_a_rule_matches_on_system_schema_or_model_and_its_output_answers(key, value):
    rule = {key: value, "output": {"reasoning": "off topic", "is_relevant": False}}
    answer, script = turn([ORDER_RULE, rule], guard_request())
    assert json.loads(answer.text) == {"reasoning": "off topic", "is_relevant": False}
    assert script.fallback is None
    other = {key: "no-such-thing", "output": {"reasoning": "x", "is_relevant": False}}
    answer, script = turn([other], guard_request())
    assert json.loads(answer.text)["is_relevant"] is True and script.fallback == "generated"


def test_the_schema_name_the_request_gives_is_matched():
    rule = {"schema": "relevance_check", "output": {"reasoning": "no", "is_relevant": False}}
    conv = guard_request(schema_name="relevance_check")
    conv.response_schema = {k: v for k, v in RELEVANCE.items() if k != "title"}
    assert json.loads(turn([rule], conv)[0].text)["is_relevant"] is False


def test_a_rule_must_match_on_something():
    with pytest.raises(ValueError, match="at least one"):
        SimConfig.model_validate({"rules": [{"answer": "hi"}]})


def test_the_fallback_object_proceeds_but_raises_no_flag():
    schema = {"type": "object", "properties": {
        "is_safe": {"type": "boolean"}, "allowed": {"type": "boolean"}, "valid": {"type": "boolean"},
        "is_harmful": {"type": "boolean"}, "block_card": {"type": "boolean"}, "escalate": {"type": "boolean"},
        "decision": {"enum": ["block", "review", "allow"]}, "label": {"enum": ["spam", "ham"]}}}
    assert value_for(schema) == {"is_safe": True, "allowed": True, "valid": True, "is_harmful": False,
                                 "block_card": False, "escalate": False, "decision": "allow", "label": "spam"}


def test_the_default_answer_is_a_marked_fallback():
    answer, script = turn([ORDER_RULE], Conversation(messages=[Message("user", "hello there")]))
    assert script.fallback == "default"


# -- a real Agents SDK app through the real CLI -------------------------------------------------

def guarded_config(tmp_path, rules, *, walk=True):
    doc = {
        "version": 1, "seed": 3,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(AGENTS / "guarded" / "support.py")],
                                         "env": {"OPENAI_API_KEY": "sk-sim", "OPENAI_AGENTS_DISABLE_TRACING": "1"}}},
                  "timeout": 60},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "sim": {"rules": rules, "walk": walk},
        "inputs": [{"id": "order", "text": "Where is order 77?"}],
        "mutation": {"enabled": False}, "shrink": {"enabled": False},
        "chaos": {"explore": "off"},
        "contract": {"baseline": True, "invariants": [
            {"id": "completes", "type": "completes", "severity": "critical"},
            {"id": "not-refused", "type": "excludes", "values": ["only help with questions"], "severity": "critical"}],
            "scenarios": [{"name": "slow_model", "faults": [{"kind": "latency", "target": "openai", "ms": 5,
                                                              "on_calls": [1]}]}]},
        "concurrency": 1,
    }
    return write_config(tmp_path, json.dumps(doc, indent=1))


def run(config, out):
    from gate.cli import main

    code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report"])
    report = load_report(out)
    baseline = next(c for c in report["verdict"]["cells"] if c["scenario"] == "baseline")
    return code, report, baseline


def llm_steps(cell):
    return [s for s in cell["runs"][0]["trace"] if s["kind"] == "llm"]


def test_a_guarded_app_passes_its_baseline_with_no_guardrail_rule_and_is_warned(tmp_path):
    code, report, baseline = run(guarded_config(tmp_path, [ORDER_RULE]), tmp_path / "out")
    assert code == 0, report["verdict"]
    assert "shipped" in baseline["runs"][0]["output"]
    fallbacks = [s["sim_fallback"] for s in llm_steps(baseline)]
    assert fallbacks.count("generated") == 1 and fallbacks.count(None) == 2  # the guard; the tool turn, the answer
    warnings = " ".join(report["verdict"]["warnings"])
    assert "input order: the sim fell back" in warnings and "generated" in warnings
    assert "tested the sim, not the agent" not in warnings


def test_a_guard_rule_output_decides_and_a_refusal_is_caught(tmp_path):
    guard = {"system": "about the shop's orders", "output": {"reasoning": "not about orders", "is_relevant": False}}
    code, report, baseline = run(guarded_config(tmp_path, [ORDER_RULE, guard]), tmp_path / "out")
    assert code == 1
    assert "only help with questions" in baseline["runs"][0]["output"]
    assert not [s for s in llm_steps(baseline) if s["sim_fallback"]]


def test_a_missing_tool_rule_is_warned_as_testing_the_sim(tmp_path):
    code, report, baseline = run(guarded_config(tmp_path, [], walk=False), tmp_path / "out")
    assert {s["sim_fallback"] for s in llm_steps(baseline)} == {"generated", "default"}
    warnings = " ".join(report["verdict"]["warnings"])
    assert "got every model answer from a sim fallback" in warnings and baseline["id"] in warnings
