"""The sim on text-protocol agents (gate/sim/protocols/), pure: a Conversation in, the reply out.

The requests below are written the way the frameworks write them (captured from DSPy 3.4's
ChatAdapter / JSONAdapter under dspy.ReAct, and smolagents 1.26's ToolCallingAgent and
CodeAgent on OpenAIServerModel); the end-to-end runs on the real frameworks are
tests/test_instrument_python_d.py. Each test gives the *usual* rule (call issue_refund,
then answer) and checks the reply is what that framework parses as the rule's next step:
DSPy's fields (`next_tool_name` + `next_tool_args`, `finish`, then the extract step's
outputs), a smolagents observation read as the call's result and the answer sent as its
`final_answer` call (a CodeAgent's: both as code). A request in neither form is the generic Script's, unchanged.
"""

from __future__ import annotations

import json
import re

from gate.config.sim import SimConfig
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec
from gate.sim.script import Script
from gate.sim.protocols import CodeScript, DspyScript, FinalAnswerScript, script_for

ASK = "Please refund order 1234, it arrived damaged."
REFUND_TOOL = ("(1) issue_refund, whose description is <desc>Refund an order.</desc>. "
               "It takes arguments {'order_id': {'type': 'string'}}.")
FINISH_TOOL = ("(2) finish, whose description is <desc>Marks the task as complete.</desc>. It takes arguments {}.")


def spec(on_error: str = "apologize", **rule) -> SimConfig:
    return SimConfig.model_validate({"rules": [{
        "when": r"refund.*?(\d{3,})", "on_error": {"action": on_error, "retries": 1, "answer": "Sorry: {{error}}"},
        "steps": [{"call": "issue_refund", "arguments": {"order_id": "{{1}}"}},
                  rule or {"answer": "Your refund for order {{1}} has been issued."}]}]})


# -- DSPy --------------------------------------------------------------------------------------
def dspy_system(inputs: list[tuple[str, str]], outputs: list[tuple[str, str]], tools: bool, as_json: bool) -> str:
    """A system prompt in the shape DSPy's adapters write (field list, structure, objective)."""
    listed = lambda fields: "\n".join(f"{i + 1}. `{n}` ({t}):" for i, (n, t) in enumerate(fields))  # noqa: E731
    structure = ("Outputs will be a JSON object with the following fields." if as_json else
                 "\n\n".join(f"[[ ## {n} ## ]]\n{{{n}}}" for n, _ in inputs + outputs) + "\n\n[[ ## completed ## ]]")
    objective = "Given the fields `question`, produce the fields `answer`."
    if tools:
        objective += "\nthe tool must be one of:\n" + REFUND_TOOL + "\n" + FINISH_TOOL
    return (f"Your input fields are:\n{listed(inputs)}\nYour output fields are:\n{listed(outputs)}\n"
            f"All interactions will be structured in the following way, with the appropriate values filled in.\n\n"
            f"{structure}\nIn adhering to this structure, your objective is: \n        {objective}")


REACT_OUT = [("next_thought", "str"), ("next_tool_name", "Literal['issue_refund', 'finish']"),
             ("next_tool_args", "dict[str, Any]")]
EXTRACT_OUT = [("reasoning", "str"), ("answer", "str")]
INPUTS = [("question", "str"), ("trajectory", "str")]


def trajectory(*steps: tuple[str, dict, str]) -> str:
    parts = []
    for n, (tool, args, seen) in enumerate(steps):
        parts += [f"[[ ## thought_{n} ## ]]\nI will call {tool}.", f"[[ ## tool_name_{n} ## ]]\n{tool}",
                  f"[[ ## tool_args_{n} ## ]]\n{json.dumps(args)}", f"[[ ## observation_{n} ## ]]\n{seen}"]
    return "\n\n".join(parts)


def dspy_conv(steps=(), outputs=REACT_OUT, as_json: bool = False) -> Conversation:
    reminder = "Respond with the corresponding output fields, starting with the field `[[ ## next_thought ## ]]`."
    user = f"[[ ## question ## ]]\n{ASK}\n\n[[ ## trajectory ## ]]\n{trajectory(*steps)}\n\n{reminder}"
    return Conversation(messages=[Message("user", user)], json_mode=as_json,
                        system=dspy_system(INPUTS, outputs, outputs is REACT_OUT, as_json))


def fields(text: str) -> dict[str, str]:
    """The reply as ChatAdapter parses it: `[[ ## name ## ]]` sections, ending with `completed`."""
    assert text.rstrip().endswith("[[ ## completed ## ]]")
    parts = re.split(r"^\[\[ ## (\w+) ## \]\]\n?", text, flags=re.MULTILINE)
    return {k: v.strip() for k, v in zip(parts[1::2], parts[2::2], strict=False) if k != "completed"}


REFUNDED = '{"refund_id": "rf_1", "status": "refunded"}'
REFUND_STEP = ("issue_refund", {"order_id": "1234"}, REFUNDED)
FINISH_STEP = ("finish", {}, "Completed.")


def test_react_first_step_is_the_rules_call_as_dspy_fields():
    script = script_for(spec(), dspy_conv())
    assert isinstance(script, DspyScript)
    reply = fields(script.turn().text)
    assert (reply["next_tool_name"], json.loads(reply["next_tool_args"])) == ("issue_refund", {"order_id": "1234"})
    assert list(reply) == ["next_thought", "next_tool_name", "next_tool_args"]


def test_a_result_in_the_trajectory_advances_the_rule_to_finish_then_the_extract_answers():
    reply = fields(script_for(spec(), dspy_conv([REFUND_STEP])).turn().text)
    assert (reply["next_tool_name"], reply["next_tool_args"]) == ("finish", "{}")
    extract = fields(script_for(spec(), dspy_conv([REFUND_STEP, FINISH_STEP], EXTRACT_OUT)).turn().text)
    assert extract["answer"] == "Your refund for order 1234 has been issued." and list(extract) == ["reasoning",
                                                                                                    "answer"]


def test_an_execution_error_observation_is_a_failed_tool():
    failed = ("issue_refund", {"order_id": "1234"}, "Execution error in issue_refund: InjectedToolTimeout: timed out")
    retried = fields(script_for(spec("retry"), dspy_conv([failed])).turn().text)
    assert (retried["next_tool_name"], json.loads(retried["next_tool_args"])) == ("issue_refund",
                                                                                   {"order_id": "1234"})
    # after one retry that worked the script goes on; apologising finishes, and the extract apologises too
    assert fields(script_for(spec("retry"), dspy_conv([failed, REFUND_STEP])).turn().text)["next_tool_name"] == \
        "finish"
    assert fields(script_for(spec(), dspy_conv([failed])).turn().text)["next_tool_name"] == "finish"
    extract = fields(script_for(spec(), dspy_conv([failed, FINISH_STEP], EXTRACT_OUT)).turn().text)
    assert extract["answer"].startswith("Sorry: Execution error in issue_refund")


def test_json_adapter_gets_one_json_object_and_typed_fields_get_their_type():
    doc = json.loads(script_for(spec(), dspy_conv(as_json=True)).turn().text)
    assert doc == {"next_thought": "I will call issue_refund.", "next_tool_name": "issue_refund",
                   "next_tool_args": {"order_id": "1234"}}
    typed = [("reasoning", "str"), ("answer", "str"), ("refunded", "bool"), ("kind", "Literal['full', 'partial']")]
    doc = json.loads(script_for(spec(), dspy_conv([REFUND_STEP], typed, as_json=True)).turn().text)
    assert doc["answer"] == "Your refund for order 1234 has been issued."
    assert (doc["refunded"], doc["kind"]) == (False, "full")
    # a rule's structured `output` fills the fields it names
    out = spec(output={"answer": "done {{1}}", "refunded": True})
    doc = json.loads(script_for(out, dspy_conv([REFUND_STEP], typed, as_json=True)).turn().text)
    assert (doc["answer"], doc["refunded"], doc["kind"]) == ("done 1234", True, "full")


def test_plain_predict_is_answered_in_its_fields():
    conv = Conversation(messages=[Message("user", f"[[ ## question ## ]]\n{ASK}")],
                        system=dspy_system([("question", "str")], [("answer", "str")], False, False))
    # no tool is offered: the rule's call cannot be made, so the model answers `default` (and says why)
    script = script_for(spec(), conv)
    assert fields(script.turn().text) == {"answer": script.inner.spec.default}
    assert any("did not offer" in note for note in script.notes)


# -- tool results sent back as user messages (smolagents) --------------------------------------
SMOL_TOOLS = [ToolSpec("issue_refund", "Refund an order.", {"type": "object", "properties": {"order_id": {}}}),
              ToolSpec("final_answer", "Provides a final answer.", {"type": "object", "properties": {"answer": {}}})]
CALLED = ("Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': {'name': 'issue_refund', "
          "'arguments': {'order_id': '1234'}}}]")


def smol(*messages: Message) -> Conversation:
    return Conversation(messages=[Message("user", f"New task:\n{ASK}"), *messages], tools=SMOL_TOOLS,
                        tool_choice="required", system="You are an expert assistant who can solve any task")


def test_an_observation_in_a_user_message_answers_the_call_and_the_answer_is_final_answer():
    first = script_for(spec(), smol()).turn()
    assert [(c.name, c.parsed()) for c in first.tool_calls] == [("issue_refund", {"order_id": "1234"})]
    script = script_for(spec(), smol(Message("assistant", CALLED), Message("user", f"Observation:\n{REFUNDED}")))
    assert isinstance(script, FinalAnswerScript)
    (call,) = script.turn().tool_calls
    assert (call.name, call.parsed()) == ("final_answer", {"answer": "Your refund for order 1234 has been issued."})


def test_a_failed_step_merged_into_the_task_is_read_back_as_its_call_and_an_error():
    # smolagents keeps no call for a step whose tool raised, and merges its error into the task message
    error = ("Error:\nError executing tool 'issue_refund' with arguments {'order_id': '1234'}: "
             "InjectedToolTimeout: the tool call timed out\nPlease try again or use another tool\n"
             "Now let's retry: take care not to repeat previous errors!")
    merged = Conversation(messages=[Message("user", f"New task:\n{ASK}\n{error}")], tools=SMOL_TOOLS,
                          tool_choice="required")
    retried = script_for(spec("retry"), merged).turn()
    assert [(c.name, c.parsed()) for c in retried.tool_calls] == [("issue_refund", {"order_id": "1234"})]
    apology = script_for(spec(), merged).turn()
    assert apology.tool_calls[0].name == "final_answer"
    assert apology.tool_calls[0].parsed()["answer"].startswith("Sorry: Error executing tool 'issue_refund'")


CODE_SYSTEM = ("You are an expert assistant who can solve any task using code blobs.\nyou only have access to "
               "these tools, behaving like regular python functions:\n<code>\n"
               "def issue_refund(order_id: string) -> object:\n"
               '    """Refund an order."""\n\n'
               'def final_answer(answer: any) -> any:\n    """Provides a final answer."""\n\n</code>')


def code_conv(*messages: Message) -> Conversation:
    return Conversation(messages=[Message("user", f"New task:\n{ASK}"), *messages], system=CODE_SYSTEM)


def code_step(code: str) -> Message:
    """The model's code step as smolagents sends it back: its text, and the interpreter call merged in."""
    called = [{"id": "call_7", "type": "function", "function": {"name": "python_interpreter", "arguments": code}}]
    text = f"Thought: I will call issue_refund.\n<code>\n{code}\n</code>"
    return Message("assistant", f"{text}\nCalling tools:\n{called}")


def test_code_agent_gets_the_rules_call_as_code_and_its_printed_result_advances_the_rule():
    script = script_for(spec(), code_conv())
    assert isinstance(script, CodeScript)
    first = script.turn().text
    assert first.endswith("</code>") and "result_0 = issue_refund(order_id='1234')\nprint(result_0)" in first
    code = first.split("<code>\n", 1)[1].rsplit("\n</code>", 1)[0]
    seen = Message("user", f"Observation:\nExecution logs:\n{REFUNDED}\nLast output from code snippet:\nNone")
    final = script_for(spec(), code_conv(code_step(code), seen)).turn().text
    assert "final_answer('Your refund for order 1234 has been issued.')" in final
    failed = Message("user", "Call id: call_7\nError:\nCode execution failed at line 'result_0 = issue_refund("
                             "order_id='1234')' due to: InjectedToolTimeout: the tool call timed out\nNow let's retry")
    assert "issue_refund(order_id='1234')" in script_for(spec("retry"), code_conv(code_step(code), failed)).turn().text
    apology = script_for(spec(), code_conv(code_step(code), failed)).turn().text
    assert "final_answer(" in apology and "Sorry: Code execution failed" in apology


def test_native_requests_are_the_generic_scripts_unchanged():
    native = Conversation(messages=[
        Message("user", ASK), Message("assistant", tool_calls=[ToolCall("c1", "issue_refund", '{"order_id":"1234"}')]),
        Message("tool", tool_results=[ToolResult("c1", REFUNDED, "issue_refund")])], tools=SMOL_TOOLS[:1])
    script = script_for(spec(), native)
    assert type(script) is Script
    assert script.turn().text == Script(spec(), native).turn().text == "Your refund for order 1234 has been issued."
    # an observation with no call the sim can see stays the user's words
    loose = Conversation(messages=[Message("user", "Observation:\nall good")], tools=SMOL_TOOLS[:1])
    assert type(script_for(spec(), loose)) is Script
