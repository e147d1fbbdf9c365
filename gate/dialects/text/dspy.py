"""DSPy's adapters read: the fields a request asks for, ReAct's tools and trajectory as a neutral conversation.

DSPy (`dspy.ReAct`, `Predict`, `ChainOfThought`) asks for *fields* in its own text format:
ChatAdapter's `[[ ## name ## ]]` sections ending `[[ ## completed ## ]]`, or JSONAdapter's one
JSON object. ReAct lists its tools in the system prompt ("(1) name, whose description is
<desc>..</desc>. It takes arguments {..}.") and sends each past step back in the `trajectory`
input (`tool_name_N`, `tool_args_N`, `observation_N`; a failed call's observation reads
"Execution error in <tool>: ..."). Read here, below both users: the sim answers in these fields
(gate/sim/protocols/dspy.py) and the proxy learns the tools offered and called (gate/dialects/offered.py).
"""


from __future__ import annotations

import dataclasses
import json
import re

from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec
from gate.dialects.text.literal import literal

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
