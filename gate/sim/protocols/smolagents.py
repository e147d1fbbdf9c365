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

import dataclasses

from gate.config.sim import SimConfig
from gate.dialects.model import Conversation, ToolSpec, Turn, sim_usage
from gate.dialects.text.smolagents import FINAL_ANSWER, code_tools, neutral
from gate.sim.script import Script

__all__ = ["CodeScript", "FINAL_ANSWER", "FinalAnswerScript", "code_tools", "neutral"]


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
