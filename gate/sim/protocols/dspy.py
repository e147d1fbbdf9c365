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

import json
from typing import Any

from gate.config.sim import SimConfig, SimStep
from gate.dialects.model import Conversation, Turn, sim_usage
from gate.dialects.text.dspy import FINISH, REASONING, DspyRequest, dspy_conversation, dspy_request
from gate.dialects.text.literal import literal
from gate.sim.script import Script, _render

__all__ = ["DspyScript", "FINISH", "dspy_conversation", "dspy_request"]


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
