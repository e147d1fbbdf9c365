"""The sim on smolagents: tool calls written as text and results sent back as user messages.

smolagents' ToolCallingAgent (on OpenAIServerModel) rewrites each past call as assistant text
("Calling tools:\n[{'id': .., 'function': {'name': .., 'arguments': {..}}}]") and its result as a
user message ("Observation:\n..." or "Call id: ..\nError:\n..."); it ends a run with a
`final_answer` tool call, under `tool_choice: required`. Its CodeAgent lists the tools as Python
signatures in the prompt and wants a "Thought: .. <code>..</code>" block; the code runs as a
`python_interpreter` call, what it printed comes back as "Observation:\nExecution logs:\n...",
and `final_answer(...)` in code ends the run. Both are turned into the neutral conversation a
native agent would have sent; the generic Script's turn goes back as a `final_answer` call (where
the request offers that tool) or as code.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re

from gate.config.sim import SimConfig
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, sim_usage
from gate.sim.protocols.literal import literal
from gate.sim.script import Script

CALLING = re.compile(r"(?:^|\n)Calling tools:\s*\n(\[.*\])\s*\Z", re.DOTALL)
# a result in a user message: smolagents writes "Observation:" or "[Call id: ..]\nError:" on a line of
# its own, and merges it into the message before when that is a user message too (a failed step keeps
# no call of its own, so its error follows the task directly)
RESULT = re.compile(r"(?:\A|\n)(?:Call id: ([^\n]*)\n)?(Observation|Error):[ \t]*(?:\n|\Z)", re.IGNORECASE)
# smolagents' error for a tool that raised names the call: the sim reads the call back from it
NAMED_CALL = re.compile(r"\bError executing tool '([^']+)' with arguments (\{.*?\}): ", re.DOTALL)
FINAL_ANSWER = "final_answer"
# CodeAgent: tools listed as Python signatures; the model answers in a <code> block, run as a
# `python_interpreter` call; what the code printed comes back as "Execution logs:"
CODE_TOOLS = re.compile(r"behaving like regular python functions:\s*\n<code>\n(.*?)\n</code>", re.DOTALL)
CODE_DEF = re.compile(r"^def (\w+)\((.*?)\) -> [^\n]*:$", re.MULTILINE)
LOGS = re.compile(r"\AExecution logs:\n?(.*?)(?:\n?Last output from code snippet:\n(.*))?\Z", re.DOTALL)
INTERPRETER = "python_interpreter"


def _calls_in_text(text: str) -> tuple[str, list[ToolCall]]:
    """An assistant text that carries its tool calls ("Calling tools:\\n[...]"): (its other text, the calls)."""
    found = CALLING.search(text or "")
    listed = literal(found.group(1)) if found else None
    if not isinstance(listed, list):
        return text, []
    calls = []
    for i, item in enumerate(listed):
        fn = item.get("function") if isinstance(item, dict) else None
        if not isinstance(fn, dict) or not fn.get("name"):
            return text, []
        args = fn.get("arguments")
        calls.append(ToolCall(str(item.get("id") or f"text_call_{i}"), str(fn["name"]),
                              args if isinstance(args, str) else json.dumps(args)))
    return text[:found.start()].strip(), calls


def _result_in_text(text: str, pending: list[ToolCall], index: int) -> list[Message] | None:
    """A user message that carries a tool's result, as the messages a native agent sends: the user's own
    words before it (if merged in), the call (when only the error names it), the result."""
    found = RESULT.search(text or "")
    if found is None:
        return None
    failed = found.group(2).lower() == "error"
    content = text[found.end():].strip()
    logs = LOGS.match(content)  # a CodeAgent's observation: what the code printed, else its last value
    if logs and not failed:
        content = logs.group(1).strip() or (logs.group(2) or "").strip()
    out = [Message("user", text[:found.start()].strip())] if text[:found.start()].strip() else []
    calls = pending
    if not calls:
        named = NAMED_CALL.search(content) if failed else None
        args = literal(named.group(2)) if named else None
        if not isinstance(args, dict):
            return None  # an observation of no call the sim can see: left as the user's words
        calls = [ToolCall((found.group(1) or "").strip() or f"text_call_{index}", named.group(1), json.dumps(args))]
        out.append(Message("assistant", tool_calls=calls))
    call = calls[0]  # one observation answers the turn's calls together
    return out + [Message("tool", tool_results=[ToolResult(call.id, content, call.name, is_error=failed)])]


def neutral(conv: Conversation, code_tools: list[ToolSpec] | None = None) -> Conversation | None:
    """`conv` with text-borne tool calls as ToolCalls and the user messages that answer them as
    ToolResults; None when it has neither (the request is the generic Script's as it is). With
    `code_tools` (a CodeAgent's), a `python_interpreter` call is the calls of those tools in its code."""
    out: list[Message] = []
    pending: list[ToolCall] = []
    for message in conv.messages:
        replaced = [message]
        if message.role == "assistant" and not message.tool_calls:
            text, calls = _calls_in_text(message.text)
            if code_tools is not None:
                calls = [c for call in calls for c in
                         (_calls_in_code(call.arguments, code_tools, len(out)) if call.name == INTERPRETER else [call])]
            if calls:
                replaced = [Message("assistant", text, tool_calls=calls)]
        elif message.role == "user" and not message.tool_results:
            replaced = _result_in_text(message.text, pending, len(out)) or replaced
        out += replaced
        last = replaced[-1]
        if last.role == "assistant" and last.tool_calls:
            pending = last.tool_calls
        elif last.tool_results or last.role == "user":
            pending = []
    return dataclasses.replace(conv, messages=out) if len(out) != len(conv.messages) or \
        any(a is not b for a, b in zip(out, conv.messages)) else None


class FinalAnswerScript:
    """The generic Script over the neutral conversation; its text answer goes out as a call of the
    request's `final_answer` tool (smolagents ends a run that way, and forces a tool each turn)."""

    def __init__(self, spec: SimConfig, conv: Conversation, translated: Conversation):
        self.conv = conv
        self.tool = next((t for t in conv.tools if t.name == FINAL_ANSWER), None)
        if self.tool is not None and translated.tool_choice in ("required", FINAL_ANSWER):
            translated = dataclasses.replace(translated, tool_choice="auto")  # the answer goes out as its call
        self.inner = Script(spec, translated)

    @property
    def notes(self) -> list[str]:
        return self.inner.notes

    def turn(self) -> Turn:
        turn = self.inner.turn()
        if self.tool is None or turn.tool_calls or turn.refusal:
            return turn
        props = list((self.tool.parameters or {}).get("properties") or {}) or ["answer"]
        key = "answer" if "answer" in props else props[0]
        turn = Turn(tool_calls=[self.inner._tool_call(FINAL_ANSWER, {key: turn.text}, 0)], finish="tool_calls")
        turn.usage = sim_usage(self.conv, turn)
        return turn


def code_tools(conv: Conversation) -> list[ToolSpec] | None:
    """The tools a smolagents CodeAgent lists in its prompt as Python functions (None: not a CodeAgent's)."""
    found = None if conv.tools else CODE_TOOLS.search(conv.system)
    if found is None:
        return None
    return [ToolSpec(m.group(1), "", {"type": "object", "properties": {
        p.split(":")[0].strip(): {} for p in m.group(2).split(",") if p.strip()}})
        for m in CODE_DEF.finditer(found.group(1))]


def _calls_in_code(code: str, tools: list[ToolSpec], index: int) -> list[ToolCall]:
    """The calls of `tools` in a code block, in order, keyword and positional arguments by name."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    params = {t.name: list((t.parameters.get("properties") or {})) for t in tools}
    found = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id in params and n.func.id != FINAL_ANSWER), key=lambda n: (n.lineno, n.col_offset))
    calls = []
    for n, node in enumerate(found):
        try:
            args = dict(zip(params[node.func.id], (ast.literal_eval(a) for a in node.args)))
            args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
        except ValueError:  # an argument the code computes: the call as the script would not know it
            args = {}
        calls.append(ToolCall(f"code_call_{index}_{n}", node.func.id, json.dumps(args)))
    return calls


class CodeScript:
    """A CodeAgent's request: the generic Script over the neutral conversation, its turn written as code
    (the calls, their results printed for the next step; an answer as `final_answer(...)`)."""

    def __init__(self, spec: SimConfig, conv: Conversation, tools: list[ToolSpec]):
        self.conv = conv
        translated = neutral(conv, tools) or conv
        self.inner = Script(spec, dataclasses.replace(
            translated, tools=[t for t in tools if t.name != FINAL_ANSWER], tool_choice="auto"))

    @property
    def notes(self) -> list[str]:
        return self.inner.notes

    def turn(self) -> Turn:
        decided = self.inner.turn()
        if decided.tool_calls:
            thought = "I will call " + ", ".join(c.name for c in decided.tool_calls) + "."
            lines = []
            for i, call in enumerate(decided.tool_calls):
                args = call.parsed() if isinstance(call.parsed(), dict) else {}
                lines += [f"result_{i} = {call.name}({', '.join(f'{k}={v!r}' for k, v in args.items())})",
                          f"print(result_{i})"]
        else:
            thought, lines = "I can answer now.", [f"final_answer({decided.text!r})"]
        turn = Turn(text=f"Thought: {thought}\n<code>\n" + "\n".join(lines) + "\n</code>")
        turn.usage = sim_usage(self.conv, turn)
        return turn
