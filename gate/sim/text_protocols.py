"""The sim on agents whose tool protocol is text: DSPy's adapters, and tool results sent back as user messages.

Most frameworks hand the model native tools and send results back as tool messages, which
every dialect decodes into the neutral Conversation; the generic Script reads that. Three
common ones do not, and with the usual rule ("call T, then answer") a model that only
read native fields would fail them (DSPy: `AdapterParseError`) or loop (smolagents):

- DSPy (`dspy.ReAct`, `Predict`, `ChainOfThought`) asks for *fields* in its own text
  format: ChatAdapter's `[[ ## name ## ]]` sections ending `[[ ## completed ## ]]`, or
  JSONAdapter's one JSON object. ReAct lists its tools in the system prompt ("(1) name,
  whose description is <desc>..</desc>. It takes arguments {..}.") and sends each past step
  back in the `trajectory` input (`tool_name_N`, `tool_args_N`, `observation_N`; a failed
  call's observation reads "Execution error in <tool>: ..."). Its extract step then asks
  for the signature's own outputs (`reasoning`, then e.g. `answer`).
- smolagents' ToolCallingAgent (on OpenAIServerModel) rewrites each past call as assistant
  text ("Calling tools:\\n[{'id': .., 'function': {'name': .., 'arguments': {..}}}]") and
  its result as a user message ("Observation:\\n..." or "Call id: ..\\nError:\\n..."); it
  ends a run with a `final_answer` tool call, under `tool_choice: required`.
- smolagents' CodeAgent lists its tools as Python signatures in the prompt and wants a
  "Thought: .. <code>..</code>" block; the code runs as a `python_interpreter` call, what
  it printed comes back as "Observation:\\nExecution logs:\\n...", and `final_answer(...)`
  in code ends the run.

So this module translates such a request into the neutral conversation a native agent
would have sent (the trajectory or the text-borne calls become ToolCalls and ToolResults),
lets the generic Script decide exactly as it decides for every other framework, and
writes its turn back in the agent's protocol: a call as `next_tool_name` + `next_tool_args`,
an answer as `finish` and then the extract step's output fields; a text answer as a
`final_answer` call where the request offers that tool; for a CodeAgent, the calls (their
results printed) or `final_answer(...)` as code. A request in neither form is the
generic Script's, untouched.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from typing import Any

from gate.config.sim import SimConfig, SimStep
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, sim_usage
from gate.sim.script import Script, _render

# -- DSPy --------------------------------------------------------------------------------------
HEADER = re.compile(r"^\[\[ ## (\w+) ## \]\][ \t]*\n?", re.MULTILINE)
FIELD = re.compile(r"^\d+\. `(\w+)` \(([^\n]*?)\):", re.MULTILINE)
TOOL = re.compile(r"^\s*\(\d+\) (\S+), whose description is <desc>((?s:.*?))</desc>\. "
                  r"It takes arguments (\{[^\n]*\})\.?[ \t]*$", re.MULTILINE)
STEP = re.compile(r"^(thought|tool_name|tool_args|observation)_(\d+)$")
REMINDER = re.compile(r"\n\s*Respond with (the corresponding output fields|a JSON object)\b.*\Z", re.DOTALL)
EXECUTION_ERROR = "Execution error in "  # dspy.ReAct's words for a tool that raised
FINISH = "finish"  # ReAct's own last tool
REASONING = "The trajectory holds what the answer needs."


@dataclasses.dataclass
class DspyRequest:
    inputs: list[str]
    outputs: list[tuple[str, str]]  # (field, its type as DSPy prints it)
    sections: dict[str, str]  # the latest user message, field by field (the trajectory's own steps too)
    tools: list[ToolSpec]
    as_json: bool  # JSONAdapter: one JSON object rather than [[ ## ]] sections

    @property
    def react(self) -> bool:
        names = {name for name, _ in self.outputs}
        return {"next_tool_name", "next_tool_args"} <= names


def _fields(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2).strip()) for m in FIELD.finditer(text)]


def dspy_request(conv: Conversation) -> DspyRequest | None:
    """The fields a DSPy adapter asks for, or None when `conv` is not a DSPy adapter's request."""
    system = conv.system
    if conv.tools or "Your output fields are:" not in system or "Your input fields are:" not in system:
        return None
    as_json = conv.json_mode or conv.response_schema is not None or "Outputs will be a JSON object" in system
    if not as_json and "[[ ## completed ## ]]" not in system:
        return None
    head, _, rest = system.partition("Your output fields are:")
    outputs_text = re.split(r"\nAll interactions will be structured", rest, maxsplit=1)[0]
    outputs = _fields(outputs_text)
    if not outputs:
        return None
    sections: dict[str, str] = {}
    text = conv.latest_user_text()
    found = list(HEADER.finditer(text))
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        sections.setdefault(match.group(1), text[match.end():end])
    sections = {k: REMINDER.sub("", v).strip() for k, v in sections.items()}
    tools = [ToolSpec(m.group(1), m.group(2).strip(), _literal(m.group(3)) or {}) for m in TOOL.finditer(system)]
    return DspyRequest([name for name, _ in _fields(head)], outputs, sections, tools, as_json)


def _literal(text: str) -> Any:
    """A value as DSPy wrote it: JSON, else a Python literal (tool arguments are a dict's repr)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def dspy_conversation(conv: Conversation, req: DspyRequest) -> Conversation:
    """The request as a native agent would have sent it: the inputs as the user's words, each
    trajectory step (ReAct's `finish` aside) as one tool call and its result."""
    user = "\n\n".join(req.sections[name] for name in req.inputs if name != "trajectory" and name in req.sections)
    messages = [Message("user", user)]
    steps = sorted({int(m.group(2)) for m in map(STEP.match, req.sections) if m})
    for n in steps:
        name = req.sections.get(f"tool_name_{n}", "").strip()
        if not name or name == FINISH:
            continue
        raw = req.sections.get(f"tool_args_{n}", "").strip() or "{}"
        args = _literal(raw)
        call = ToolCall(f"dspy_call_{n}", name, json.dumps(args) if isinstance(args, dict) else raw)
        seen = req.sections.get(f"observation_{n}", "")
        result = ToolResult(call.id, seen, name, is_error=seen.startswith(EXECUTION_ERROR))
        messages += [Message("assistant", tool_calls=[call]), Message("tool", tool_results=[result])]
    return Conversation(messages=messages, system=conv.system, model=conv.model,
                        tools=[t for t in req.tools if t.name != FINISH], parallel_tool_calls=False)


class _Fields(Script):
    """The generic Script, keeping the rendered `output` of the step it answers with."""

    output: Any = None

    def _answer(self, step: SimStep) -> Turn:
        if step.output is not None:
            self.output = _render(step.output, self.ctx)
        return super()._answer(step)


def _typed(kind: str, text: str) -> Any:
    """A value of the type DSPy named for a field, the answer's text where it is a string."""
    kind = kind.strip()
    if kind.startswith("Literal["):
        options = _literal("[" + kind[len("Literal["):-1] + "]")
        return options[0] if options else text
    simple = {"int": 0, "float": 0.0, "bool": False}
    if kind in simple:
        return simple[kind]
    if kind.startswith(("list", "List", "tuple", "set")):
        return []
    if kind.startswith(("dict", "Dict")):
        return {}
    return text


def _formatted(values: dict[str, Any], as_json: bool) -> str:
    if as_json:
        return json.dumps(values)
    parts = [f"[[ ## {name} ## ]]\n{v if isinstance(v, str) else json.dumps(v)}" for name, v in values.items()]
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])


class DspyScript:
    """One DSPy request answered: the generic Script's decision, in the adapter's fields."""

    def __init__(self, spec: SimConfig, conv: Conversation, req: DspyRequest):
        self.conv, self.req = conv, req
        self.inner = _Fields(spec, dspy_conversation(conv, req))

    @property
    def notes(self) -> list[str]:
        return self.inner.notes

    def turn(self) -> Turn:
        decided = self.inner.turn()
        values = self._react(decided) if self.req.react else self._outputs(decided)
        turn = Turn(text=_formatted(values, self.req.as_json))
        turn.usage = sim_usage(self.conv, turn)
        return turn

    def _react(self, decided: Turn) -> dict[str, Any]:
        if decided.tool_calls:
            call = decided.tool_calls[0]  # ReAct takes one tool a step
            picked = {"next_thought": f"I will call {call.name}.", "next_tool_name": call.name,
                      "next_tool_args": call.parsed() if isinstance(call.parsed(), dict) else {}}
        else:
            picked = {"next_thought": decided.text or "I can answer now.", "next_tool_name": FINISH,
                      "next_tool_args": {}}
        return {name: picked.get(name, _typed(kind, decided.text)) for name, kind in self.req.outputs}

    def _outputs(self, decided: Turn) -> dict[str, Any]:
        text = decided.text if not decided.tool_calls else self.inner.spec.default
        output = self.inner.output
        answers = [name for name, _ in self.req.outputs if name != "reasoning"]
        values: dict[str, Any] = {}
        for name, kind in self.req.outputs:
            if isinstance(output, dict) and name in output:
                values[name] = output[name]
            elif name == "reasoning" and kind == "str":
                values[name] = REASONING
            elif output is not None and not isinstance(output, dict) and answers == [name]:
                values[name] = output
            else:
                values[name] = _typed(kind, text)
        return values


# -- tool results sent back as user messages (smolagents) --------------------------------------
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
    listed = _literal(found.group(1)) if found else None
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
        args = _literal(named.group(2)) if named else None
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


def script_for(spec: SimConfig, conv: Conversation):
    """What answers `conv`: DSPy's fields, a CodeAgent's code, the neutral conversation (a `final_answer`
    tool's call for the answer), or — for every other request — the generic Script on `conv` itself."""
    req = dspy_request(conv)
    if req is not None:
        return DspyScript(spec, conv, req)
    in_code = code_tools(conv)
    if in_code is not None:
        return CodeScript(spec, conv, in_code)
    translated = neutral(conv)
    offers_final = any(t.name == FINAL_ANSWER for t in conv.tools)
    if translated is not None or offers_final:
        return FinalAnswerScript(spec, conv, translated or conv)
    return Script(spec, conv)
