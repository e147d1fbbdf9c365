"""The sim's keyless tool walk (gate/sim/walk.py): an input no rule matches gets what a capable model
does with the tools offered — it calls them, reads first, one a turn, each once, at most four, with
arguments drawn from their schemas (seeded, schema-valid) and filled from the input, then answers
from what they returned, honestly when one failed. `sim: {walk: off}` keeps the `default` answer.

The pure tests plant the conversation a real agent sends (as tests/test_sim_script.py does); the
end-to-end ones run the real CLI on an `openai` SDK agent written the way the SDK's function-calling
guide writes its loop, with two HTTP tools on the example's orders service (tests/conftest.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import jsonschema
import pytest

from conftest import ROOT, load_report, write_config
from gate.cli import main
from gate.config.sim import SimConfig
from gate.dialects.model import Conversation, Message, ToolResult, ToolSpec
from gate.sim import walk
from gate.sim.schema_value import value_for
from gate.sim.script import Script

LOOKUP_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "integer", "minimum": 1},
                                                  "email": {"type": "string", "format": "email"}},
                 "required": ["order_id"]}
REFUND_SCHEMA = {"type": "object", "properties": {
    "order_id": {"type": "integer", "minimum": 1},
    "reason": {"type": "string", "enum": ["damaged", "late", "other"]},
    "amount": {"type": "number", "minimum": 0, "maximum": 500}}, "required": ["order_id", "reason"]}
LOOKUP = ToolSpec("lookup_order", "Look an order up by its id.", LOOKUP_SCHEMA)
REFUND = ToolSpec("refund_order", "Refund an order.", REFUND_SCHEMA)
WEATHER = ToolSpec("getWeather", "Current weather for a city.",
                   {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
SEARCH = ToolSpec("search_docs", "Search the help centre.",
                  {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
REFUND_ASK = "Please refund order 4417 for alice@example.com, it arrived damaged."
OFF = SimConfig(walk=False)


def conv(text: str, tools, *messages, **kw) -> Conversation:
    return Conversation(messages=[Message("user", text), *messages], tools=list(tools), **kw)


def answered(turn, result: str, is_error: bool = False) -> list[Message]:
    return [Message("assistant", tool_calls=turn.tool_calls),
            Message("tool", tool_results=[ToolResult(c.id, result, c.name, is_error) for c in turn.tool_calls])]


def walked(text: str, tools, reply=lambda call: json.dumps({"ok": call.name}), spec=None):
    """Drive the Script as an agent's loop does, each call answered by `reply`: (calls, final turn, notes)."""
    messages, calls, notes = [], [], []
    for _ in range(10):
        script = Script(spec or SimConfig(), conv(text, tools, *messages))
        turn = script.turn()
        notes += script.notes
        if not turn.tool_calls:
            return calls, turn, notes
        assert len(turn.tool_calls) == 1  # one tool a turn
        calls += turn.tool_calls
        messages += answered(turn, reply(turn.tool_calls[0]))
    raise AssertionError("the walk did not end")


# -- which tools, in which order ----------------------------------------------------------------
def test_tools_are_chosen_by_the_words_they_share_with_the_input():
    plan, blind = walk.chosen([WEATHER, REFUND, SEARCH, LOOKUP], "What's the weather in Paris?")
    assert ([t.name for t in plan], blind) == (["getWeather"], False)  # camelCase split: get + weather
    plan, _ = walk.chosen([WEATHER, REFUND, SEARCH, LOOKUP], REFUND_ASK)
    assert [t.name for t in plan] == ["lookup_order", "refund_order"]  # reads first, then writes


def test_no_overlap_looks_around_with_two_reads_and_never_a_write():
    plan, blind = walk.chosen([REFUND, WEATHER, SEARCH, LOOKUP], "hello there")
    assert blind and [t.name for t in plan] == ["getWeather", "search_docs"]
    calls, final, notes = walked("hello there", [REFUND, WEATHER, SEARCH, LOOKUP])
    assert [c.name for c in calls] == ["getWeather", "search_docs"]
    assert "no tool shares a word with the input, so a read to look around" in notes[0]
    # only writes offered and nothing in common: nothing to look at, the default answer as before
    calls, final, notes = walked("hello there", [REFUND])
    assert calls == [] and final.text == "I can help with that." and notes == []


def test_reads_before_writes_each_tool_once_one_a_turn_then_the_answer():
    calls, final, notes = walked(REFUND_ASK, [REFUND, LOOKUP])  # the write offered first
    assert [c.name for c in calls] == ["lookup_order", "refund_order"]
    assert notes[0] == "sim walk: no rule matched; called lookup_order (read) with generated arguments"
    assert notes[1] == "sim walk: no rule matched; called refund_order (write) with generated arguments"
    assert final.text.startswith("I used lookup_order and refund_order.")
    assert 'lookup_order returned: {"ok": "lookup_order"}' in final.text


def test_at_most_four_calls():
    tools = [ToolSpec(f"get_order_{part}", f"The order's {part}.", {"type": "object", "properties": {}})
             for part in ("status", "items", "address", "invoice", "history", "notes")]
    calls, final, _ = walked("Tell me everything about my order", tools)
    assert len(calls) == 4 == len({c.name for c in calls}) and final.text.startswith("I used ")


def test_a_matching_rule_no_tools_walk_off_or_tool_choice_none_answer_as_before():
    rule = SimConfig.model_validate({"rules": [{"when": "refund", "answer": "scripted"}]})
    assert Script(rule, conv(REFUND_ASK, [LOOKUP, REFUND])).turn().text == "scripted"
    assert Script(SimConfig(), conv(REFUND_ASK, [])).turn().text == "I can help with that."
    off = Script(OFF, conv(REFUND_ASK, [LOOKUP, REFUND]))
    assert (off.turn().text, off.notes) == ("I can help with that.", [])
    none = Script(SimConfig(), conv(REFUND_ASK, [LOOKUP, REFUND], tool_choice="none")).turn()
    assert none.tool_calls == [] and none.text == "I can help with that."
    # a framework's output tool is the framework's, never walked
    output = ToolSpec("final_result", "The order refund result.", REFUND_SCHEMA)
    assert Script(SimConfig(), conv(REFUND_ASK, [output])).turn().tool_calls == []


def test_walk_off_in_yaml_parses_as_false(tmp_path):
    import yaml

    assert SimConfig.model_validate(yaml.safe_load("walk: off")).walk is False
    assert SimConfig().walk is True


# -- the answer ---------------------------------------------------------------------------------
@pytest.mark.parametrize("failure", ['{"error": "refund declined"}', "", '{"status": "refun'])
def test_a_failed_tool_is_said_to_have_failed_and_nothing_is_claimed(failure):
    def reply(call):
        return failure if call.name == "refund_order" else '{"order_id": 4417, "status": "delivered"}'

    calls, final, notes = walked(REFUND_ASK, [LOOKUP, REFUND], reply)
    assert [c.name for c in calls] == ["lookup_order", "refund_order"]
    assert final.text.startswith("Sorry, I could not complete that: the refund_order tool failed")
    assert "I used" not in final.text and "refund_order returned" not in final.text
    assert 'lookup_order returned: {"order_id": 4417, "status": "delivered"}' in final.text
    assert notes[-1].startswith("sim walk: refund_order failed")


def test_a_failed_read_ends_the_walk_before_the_write():
    calls, final, _ = walked(REFUND_ASK, [LOOKUP, REFUND], lambda call: "Error: 503 upstream unavailable")
    assert [c.name for c in calls] == ["lookup_order"] and "could not complete" in final.text


def test_calls_sent_back_without_their_results_are_not_taken_for_a_success():
    first = Script(SimConfig(), conv(REFUND_ASK, [LOOKUP])).turn()
    final = Script(SimConfig(), conv(REFUND_ASK, [LOOKUP], Message("assistant", tool_calls=first.tool_calls))).turn()
    assert final.text == "Sorry, I could not complete that: lookup_order gave no answer."


def test_a_structured_output_request_gets_json_valid_for_its_schema_after_the_walk():
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    messages = []
    for _ in range(3):
        turn = Script(SimConfig(), conv(REFUND_ASK, [LOOKUP], *messages, response_schema=schema)).turn()
        if not turn.tool_calls:
            break
        messages += answered(turn, '{"status": "delivered"}')
    jsonschema.validate(json.loads(turn.text), schema)


# -- the arguments ------------------------------------------------------------------------------
SCHEMAS = {
    "nested": {"type": "object", "properties": {
        "customer": {"type": "object", "properties": {"name": {"type": "string", "minLength": 2},
                                                      "tier": {"enum": ["gold", "silver"]}},
                     "required": ["name", "tier"]},
        "note": {"type": "string", "maxLength": 20}}, "required": ["customer"]},
    "ranges": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1, "maximum": 50},
                                                "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}},
               "required": ["page", "ratio"]},
    "arrays": {"type": "object", "properties": {
        "skus": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"}, "minItems": 1,
                 "maxItems": 4, "uniqueItems": True},
        "lines": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer",
                                                                                      "minimum": 1}},
                                             "required": ["qty"]}}}, "required": ["skus"]},
    "refs": {"type": "object", "$defs": {"addr": {"type": "object", "properties": {"zip": {"type": "string"}},
                                                  "required": ["zip"]}},
             "properties": {"ship_to": {"$ref": "#/$defs/addr"}, "gift": {"type": ["boolean", "null"]}},
             "required": ["ship_to", "gift"]},
    "refund": REFUND_SCHEMA,
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_arguments_are_valid_for_the_schema_and_declare_no_extra_keys(name):
    schema = SCHEMAS[name]
    for seed in ("a", "b", "c", "d"):
        args = walk.arguments(ToolSpec("update_thing", "", schema), "please update it", seed)
        jsonschema.Draft202012Validator(schema).validate(args)
        assert set(args) <= set(schema["properties"]), args


def test_arguments_are_the_same_for_the_same_schema_input_and_seed_and_vary_with_the_seed():
    tool = ToolSpec("update_thing", "", SCHEMAS["nested"])
    first = walk.arguments(tool, "please update it", "s")
    walk.generated.cache_clear()  # drawn again, not read from the cache
    assert walk.arguments(tool, "please update it", "s") == first
    drawn = {json.dumps(walk.arguments(tool, "please update it", str(seed)), sort_keys=True) for seed in range(8)}
    assert len(drawn) > 1


DRAW = """
import json, sys
{imports}
from gate.dialects.model import ToolSpec
from gate.sim import walk
from gate.sim.schema_value import value_for
schemas = json.loads(sys.argv[1])
print(json.dumps([walk.arguments(ToolSpec("update_thing", "", s), "please update it", "s") for s in schemas]))
"""


def test_arguments_are_the_same_in_fresh_processes_whatever_they_imported():
    """Hypothesis harvests literals from the process's local modules: the walk's draws must not see them."""
    schemas = json.dumps([SCHEMAS[name] for name in sorted(SCHEMAS)])

    def draw(imports: str, hash_seed: str) -> list:
        done = subprocess.run([sys.executable, "-c", DRAW.format(imports=imports), schemas], cwd=ROOT, check=True,
                              capture_output=True, text=True, env={"PYTHONHASHSEED": hash_seed, "PATH": ""})
        return json.loads(done.stdout)

    assert draw("", "1") == draw("import gate.cli, gate.runner", "2")


def test_what_the_input_names_fills_the_parameter_it_fits():
    assert walk.arguments(LOOKUP, "refund order 4417 for alice@example.com") == \
        {"order_id": 4417, "email": "alice@example.com"}
    refund = walk.arguments(REFUND, "I paid 20.5 for order 4417 and it arrived damaged")
    assert (refund["order_id"], refund["reason"]) == (4417, "damaged")  # the number after "order"
    as_text = ToolSpec("get_order", "", {"type": "object", "properties": {"order_id": {"type": "string"}}})
    assert walk.arguments(as_text, "where is order 4417?") == {"order_id": "4417"}
    assert walk.arguments(WEATHER, "What's the weather in Paris?") == {"city": "Paris"}
    assert walk.arguments(SEARCH, 'search the docs for "refund policy"') == {"query": "refund policy"}
    plain = ToolSpec("translate", "", {"type": "object", "properties": {"n": {"type": "boolean"},
                                                                        "words": {"type": "string"}},
                                       "required": ["n", "words"]})
    assert walk.arguments(plain, "translate bonjour please")["words"] == "bonjour"  # the first plain string


def test_a_fill_that_would_break_the_schema_is_not_made():
    small = ToolSpec("get_order", "", {"type": "object", "properties": {
        "order_id": {"type": "integer", "minimum": 1, "maximum": 100}}, "required": ["order_id"]})
    args = walk.arguments(small, "where is order 4417?")
    assert args["order_id"] != 4417
    jsonschema.validate(args, small.parameters)


def test_a_schema_hypothesis_cannot_read_gets_the_simplest_valid_value():
    remote = {"type": "object", "properties": {"x": {"$ref": "https://example.invalid/schema.json"}}}
    assert walk.arguments(ToolSpec("get_x", "", remote), "x") == value_for(remote)


# -- end to end: the real CLI, an openai SDK agent, two HTTP tools --------------------------------
AGENT = '''
"""The openai SDK's function-calling loop, two tools on $ORDERS_URL; each call's arguments logged to $CALLS."""
import json, os, sys

import httpx
from openai import OpenAI

TOOLS = [{"type": "function", "function": {"name": "lookup_order", "description": "Look an order up by its id.",
                                           "parameters": LOOKUP_SCHEMA}},
         {"type": "function", "function": {"name": "refund_order", "description": "Refund an order.",
                                           "parameters": REFUND_SCHEMA}}]


def lookup_order(order_id, email=None):
    return httpx.get(f"{os.environ['ORDERS_URL']}/orders/{order_id}").text


def refund_order(order_id, reason, amount=None):
    return httpx.post(f"{os.environ['ORDERS_URL']}/refunds", json={"order_id": order_id, "reason": reason}).text


client = OpenAI()
messages = [{"role": "user", "content": sys.stdin.read().strip()}]
for _ in range(8):
    completion = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    message = completion.choices[0].message
    if not message.tool_calls:
        print(message.content)
        break
    messages.append(message)
    for call in message.tool_calls:
        args = json.loads(call.function.arguments)
        with open(os.environ["CALLS"], "a") as log:
            log.write(json.dumps({"name": call.function.name, "arguments": args}) + "\\n")
        result = {"lookup_order": lookup_order, "refund_order": refund_order}[call.function.name](**args)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
'''


def run_gate(tmp_path, orders: str, sim: str) -> tuple[dict, list[dict]]:
    """The real CLI on the agent, its baseline and one scenario where the refund fails (a config that
    names a fault, so the cells are these two): (cell id -> its one run, the calls the agent made)."""
    agent = tmp_path / "agent.py"
    agent.write_text(f"LOOKUP_SCHEMA = {LOOKUP_SCHEMA!r}\nREFUND_SCHEMA = {REFUND_SCHEMA!r}\n" + AGENT)
    calls = tmp_path / "calls.jsonl"
    config = write_config(tmp_path, textwrap.dedent(f"""
        version: 1
        seed: 4
        agent:
          invoke:
            command:
              command: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]
              env: {{OPENAI_API_KEY: sk-sim, CALLS: {json.dumps(str(calls))}}}
          timeout: 30
        llm:
          - {{name: openai, provider: openai, upstream: sim}}
        tools:
          - {{name: orders, env: ORDERS_URL, upstream: "{orders}"}}
        {sim}
        inputs:
          - {{id: refund, text: "{REFUND_ASK}"}}
        mutation: {{enabled: false}}
        shrink: {{enabled: false}}
        contract:
          invariants:
            - {{id: completes, type: completes, severity: critical}}
          scenarios:
            - {{name: refund_fails, faults: [{{kind: error, target: orders, method: POST}}]}}
        gate: {{min_score: 0}}
        concurrency: 1
        """))
    main(["run", "-c", str(config), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
    runs = {c["id"]: c["runs"][0] for c in load_report(tmp_path / "out")["verdict"]["cells"]}
    made = [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []
    return runs, made


def test_with_no_rules_the_agent_calls_both_tools_reads_first_and_the_answer_says_what_they_returned(
        tmp_path, orders):
    runs, made = run_gate(tmp_path, orders, "sim: {default: I can help with refunds.}")
    assert set(runs) == {"contract/refund/baseline", "contract/refund/refund_fails"}
    assert [c["name"] for c in made] == ["lookup_order", "refund_order"] * 2  # each cell: the read, then the write
    for call in made:
        schema = LOOKUP_SCHEMA if call["name"] == "lookup_order" else REFUND_SCHEMA
        jsonschema.Draft202012Validator(schema).validate(call["arguments"])
        assert call["arguments"]["order_id"] == 4417
    assert made[1]["arguments"]["reason"] == "damaged"
    run = runs["contract/refund/baseline"]
    wire = [(s["method"], s["path"].split("?")[0]) for s in run["trace"] if s["target"] == "orders"]
    assert wire == [("GET", "/orders/4417"), ("POST", "/refunds")]  # the read before the write
    notes = [s["note"] for s in run["trace"] if s["target"] == "openai"]
    assert notes == ["sim walk: no rule matched; called lookup_order (read) with generated arguments",
                     "sim walk: no rule matched; called refund_order (write) with generated arguments",
                     "sim walk: answered from what lookup_order and refund_order returned"]
    assert run["output"].startswith("I used lookup_order and refund_order.")
    assert '"status": "delivered"' in run["output"] and '"status": "refunded"' in run["output"]
    # the refund failed: said so, nothing claimed
    failed = runs["contract/refund/refund_fails"]["output"]
    assert failed.startswith("Sorry, I could not complete that: the refund_order tool failed"), failed
    assert "refunded" not in failed and "I used" not in failed


def test_walk_off_keeps_the_default_answer_and_calls_no_tool(tmp_path, orders):
    runs, made = run_gate(tmp_path, orders, "sim: {default: I can help with refunds., walk: off}")
    assert made == []
    for run in runs.values():
        assert run["output"].strip() == "I can help with refunds."
        assert not [s for s in run["trace"] if s["target"] == "orders"]
        assert not any("sim walk" in s["note"] for s in run["trace"])
