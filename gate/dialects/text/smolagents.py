"""smolagents' text protocol read: tool calls written as text, results sent back as user messages, code steps.

smolagents' ToolCallingAgent (on OpenAIServerModel) rewrites each past call as assistant text
("Calling tools:\n[{'id': .., 'function': {'name': .., 'arguments': {..}}}]") and its result as a
user message ("Observation:\n..." or "Call id: ..\nError:\n..."); it ends a run with a
`final_answer` tool call. Its CodeAgent lists the tools as Python signatures in the prompt; the
code runs as a `python_interpreter` call and what it printed comes back as "Observation:\nExecution
logs:\n...". Both are turned here into the neutral conversation a native agent would have sent,
below both users: the sim (gate/sim/protocols/smolagents.py) and the proxy's reading of the tools
offered and called (gate/dialects/offered.py).
"""


from __future__ import annotations

import ast
import dataclasses
import json
import re

from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec
from gate.dialects.text.literal import literal

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
        any(a is not b for a, b in zip(out, conv.messages, strict=False)) else None


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
    params = {t.name: list(t.parameters.get("properties") or {}) for t in tools}
    found = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id in params and n.func.id != FINAL_ANSWER), key=lambda n: (n.lineno, n.col_offset))
    calls = []
    for n, node in enumerate(found):
        try:
            args = dict(zip(params[node.func.id], (ast.literal_eval(a) for a in node.args), strict=False))
            args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
        except ValueError:  # an argument the code computes: the call as the script would not know it
            args = {}
        calls.append(ToolCall(f"code_call_{index}_{n}", node.func.id, json.dumps(args)))
    return calls
