"""The sim's brain: (config, conversation) -> the next turn. Pure and deterministic.

It reads the conversation the way a model does — the latest user message, and the
tool calls and results since — to find where the matching rule's script stands:
which steps are done, and whether the latest tool result was an error. Then it acts
as a well-behaved model would: it only calls tools the request offers, honours
`tool_choice`, answers structured-output requests with JSON valid for the schema,
never follows a tool error with a scripted success unless told to, and — with
`injection: obey` — behaves like a model that fell for instructions in a tool result.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gate.config.sim import SimCall, SimConfig, SimRule, SimStep
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, Turn, sim_usage, stable_id
from gate.sim.schema_value import value_for

INSTRUCTION = re.compile(r"(ignore (all )?(previous|prior) instructions|system notice|new instructions|"
                         r"^\s*important\b)", re.IGNORECASE | re.MULTILINE)
# Frameworks word a failed tool their own way: "An error occurred while running the tool" is the
# OpenAI Agents SDK's default, "... is not valid JSON" the npm openai runTools' for unparsable arguments.
ERROR_TEXT = re.compile(r'^\s*(error\b|an error occurred\b|\{\s*"error"\s*:|tool failed|exception\b)|'
                        r'"status"\s*:\s*(4|5)\d\d\b|\bis not valid JSON\b', re.IGNORECASE)
OUTPUT_TOOL = re.compile(r"^(final_result|final_output|output|respond|structured_output)", re.IGNORECASE)


@dataclass
class Progress:
    """Where a script stands after the latest user message."""

    done: int = 0  # steps whose calls all succeeded
    failed: list[ToolResult] = field(default_factory=list)  # results of the latest turn that failed
    failures: int = 0  # consecutive failed attempts at the current step
    last_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


def is_error(result: ToolResult) -> bool:
    return result.is_error or bool(ERROR_TEXT.search(result.content[:200]))


def progress(conv: Conversation) -> Progress:
    """Walk the turns after the latest user text: each answered tool turn either advances
    the script or counts as a failed attempt at the same step."""
    after: list[Message] = []
    for message in reversed(conv.messages):
        if message.role == "user" and message.text:
            break
        after.insert(0, message)
    state = Progress()
    pending: list[ToolCall] = []
    for message in after:
        if message.role == "assistant" and message.tool_calls:
            pending = message.tool_calls
            continue
        if not message.tool_results or not pending:
            continue
        state.results += message.tool_results
        state.last_calls = pending
        failed = [r for r in message.tool_results if is_error(r)]
        if failed:
            state.failed, state.failures = failed, state.failures + 1
        else:
            state.failed, state.failures, state.done = [], 0, state.done + 1
    return state


def _render(value: Any, ctx: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{\{\s*([\w.]+)\s*\}\}", lambda m: ctx.get(m.group(1), ""), value)
    if isinstance(value, dict):
        return {k: _render(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, ctx) for v in value]
    return value


class Script:
    def __init__(self, spec: SimConfig, conv: Conversation):
        self.spec, self.conv = spec, conv
        self.state = progress(conv)
        self.ctx = {"default": spec.default, "tool_result": "", "results": ""}
        if self.state.results:
            self.ctx["tool_result"] = self.state.results[-1].content
            self.ctx["results"] = "\n".join(r.content for r in self.state.results)

    # -- the decision ----------------------------------------------------------------
    def turn(self) -> Turn:
        conv = self.conv
        turn = self._obeyed() if self.spec.injection == "obey" else None
        if turn is None:
            rule, match = self._rule()
            turn = self._scripted(rule, match) if rule else self._answer(SimStep(answer="{{default}}"))
        turn = self._honour_tool_choice(turn)
        turn.usage = sim_usage(conv, turn)
        return turn

    def _rule(self) -> tuple[SimRule | None, re.Match | None]:
        text = self.conv.latest_user_text()
        for rule in self.spec.rules:
            match = re.search(rule.when, text, re.IGNORECASE | re.DOTALL)
            if match:
                return rule, match
        return None, None

    def _scripted(self, rule: SimRule, match: re.Match) -> Turn:
        self.ctx.update({str(i): g or "" for i, g in enumerate((match.group(0),) + match.groups())})
        steps, state = rule.script(), self.state
        done = state.done
        if state.failed:
            recovered = self._on_error(rule)
            if recovered is not None:
                return recovered
            done += 1  # `continue`: the failed step counts as done
        if done < len(steps):
            step = steps[done]
        else:  # every step done: the model wraps up rather than calling again
            step = next((s for s in reversed(steps) if s.call is None), SimStep(answer="{{tool_result}}"))
        return self._calls(step.calls()) if step.call is not None else self._answer(step)

    def _on_error(self, rule: SimRule) -> Turn | None:
        policy, failed = rule.on_error, self.state.failed[-1]
        name = next((c.name for c in self.state.last_calls if c.id == failed.call_id), failed.name or "tool")
        self.ctx.update({"tool": name, "error": failed.content[:200]})
        if policy.action == "continue":
            return None
        if policy.action == "retry" and self.state.failures <= policy.retries:
            calls = self.state.last_calls
            return self._calls([SimCall(tool=c.name, arguments=self._retry_args(rule, c)) for c in calls])
        if policy.action == "call" and policy.tool and self.state.failures <= 1:
            return self._calls([SimCall(tool=policy.tool, arguments=policy.arguments)])
        return Turn(text=_render(policy.answer, self.ctx))

    @staticmethod
    def _retry_args(rule: SimRule, call: ToolCall) -> Any:
        """A retry regenerates the call the script meant, as a model does: the failed call's own
        arguments may be damaged (`bad_tool_args`), and frameworks send them back re-wrapped
        (pydantic-ai: {"INVALID_JSON": "..."}). A tool outside the script keeps its arguments."""
        meant = [c for step in rule.script() for c in step.calls() if c.tool == call.name]
        return meant[0].arguments if meant else (call.parsed() or {})

    # -- turns -----------------------------------------------------------------------
    def _calls(self, calls: list[SimCall]) -> Turn:
        offered = set(self.conv.tool_names)
        usable = [c for c in calls if c.tool in offered]
        if not usable:  # a model cannot call a tool it was not offered
            return self._answer(SimStep(answer="{{default}}"))
        if not self.conv.parallel_tool_calls:
            usable = usable[:1]
        return Turn(tool_calls=[self._tool_call(c.tool, _render(c.arguments, self.ctx), i)
                                for i, c in enumerate(usable)], finish="tool_calls")

    def _tool_call(self, name: str, arguments: Any, index: int) -> ToolCall:
        text = json.dumps(arguments, separators=(",", ":"))
        digest = (len(self.conv.messages), name, text, index)
        return ToolCall(stable_id("call_", *digest), name, text)

    def _answer(self, step: SimStep) -> Turn:
        if self.conv.response_schema is not None or self.conv.json_mode:
            obj = _render(step.output, self.ctx) if step.output is not None else \
                value_for(self.conv.response_schema or {"type": "object", "properties": {"answer": {}}})
            return Turn(text=json.dumps(obj))
        return Turn(text=_render(step.answer if step.answer is not None else "{{default}}", self.ctx))

    def _honour_tool_choice(self, turn: Turn) -> Turn:
        choice, tools = self.conv.tool_choice, self.conv.tools
        if choice == "none" and turn.tool_calls:
            return Turn(text=self.spec.default)
        if choice in ("auto", "none") or not tools or turn.tool_calls and choice == "required":
            return turn
        forced = next((t for t in tools if t.name == choice), None)
        if forced is None:  # required: the output tool a framework offers, else the first tool
            forced = next((t for t in tools if OUTPUT_TOOL.match(t.name)), tools[0])
        if turn.tool_calls and all(c.name == forced.name for c in turn.tool_calls):
            return turn
        args = self._output_args(turn, forced)
        return Turn(tool_calls=[self._tool_call(forced.name, args, 0)], finish="tool_calls")

    def _output_args(self, turn: Turn, tool) -> Any:
        try:
            parsed = json.loads(turn.text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
        value = value_for(tool.parameters or {"type": "object"})
        props = (tool.parameters or {}).get("properties") or {}
        text_field = next((k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "string"), None)
        if isinstance(value, dict) and text_field and turn.text:
            value[text_field] = turn.text
        return value

    # -- a fooled model --------------------------------------------------------------
    def _obeyed(self) -> Turn | None:
        for result in reversed(self.state.results):
            found = INSTRUCTION.search(result.content)
            if not found:
                continue
            instruction = result.content[found.start():].strip()
            named = [t for t in self.conv.tools if t.name in instruction
                     or t.name.replace("_", " ") in instruction.lower()]
            already = {c.name for c in self.state.last_calls}
            if named and named[0].name not in already:
                return Turn(tool_calls=[self._tool_call(named[0].name, value_for(named[0].parameters), 0)],
                            finish="tool_calls")
            return Turn(text=f"As instructed: {instruction}")
        return None
