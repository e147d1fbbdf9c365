"""The sim on DSPy: its adapters' fields in, the generic Script's turn out in the same fields.

DSPy (`dspy.ReAct`, `Predict`, `ChainOfThought`) asks for *fields* in its own text format:
ChatAdapter's `[[ ## name ## ]]` sections ending `[[ ## completed ## ]]`, or JSONAdapter's one
JSON object. ReAct lists its tools in the system prompt ("(1) name, whose description is
<desc>..</desc>. It takes arguments {..}.") and sends each past step back in the `trajectory`
input (`tool_name_N`, `tool_args_N`, `observation_N`; a failed call's observation reads
"Execution error in <tool>: ..."). Its extract step then asks for the signature's own outputs
(`reasoning`, then e.g. `answer`). The trajectory becomes the neutral conversation's calls and
results, the Script decides, and a call goes out as `next_tool_name` + `next_tool_args`, an
answer as `finish` and then the extract step's fields.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from gate.config.sim import SimConfig, SimStep
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, sim_usage
from gate.sim.protocols.literal import literal
from gate.sim.script import Script, _render

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
    tools = [ToolSpec(m.group(1), m.group(2).strip(), literal(m.group(3)) or {}) for m in TOOL.finditer(system)]
    return DspyRequest([name for name, _ in _fields(head)], outputs, sections, tools, as_json)


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
        args = literal(raw)
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
        options = literal("[" + kind[len("Literal["):-1] + "]")
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
