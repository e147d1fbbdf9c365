"""The sim's brain: (config, conversation) -> the next turn. Pure and deterministic.

It reads the conversation the way a model does — the latest user message (which user turn it is, what
was answered before it: a rule's `turn` and `after`), and the tool calls and results since — to find
where the matching rule's script stands:
which steps are done, and whether the latest tool results were errors (tool_errors.py
knows the frameworks' words for one). Then it acts as a well-behaved model would: it
only calls tools the request offers (and says so in the trace when a rule names one it
did not), honours `tool_choice`, answers structured-output requests with the rule's
`output` — as JSON text, or as the arguments of a framework's output tool
(`final_result`, a forced named tool) — re-issues a call whose arguments did not
parse, never follows a tool error with a scripted success unless told to, and — with
`injection: obey` — behaves like a model that fell for instructions in a tool result.

What counts as a tool error is what a model reading the result would take for one
(gate/dialects/answers.py): a flagged or failure-worded result, an error object in a 200, and
an empty or cut answer; a rule's `success` regex says explicitly what its tools' success
looks like. So the final words follow what the tool answered — the rule's answer on
success, its `on_error` answer otherwise — and `claims_backed`, which reads the agent's
answers the same way, finds the sim honest: any lie it finds is the agent's own.

An input no rule matches gets what a capable model does with the tools offered (walk.py):
it calls those the input is about, then answers from what they returned; with `walk: off`,
or no tool to call, it answers `default`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import jsonschema

from gate.config.sim import SimCall, SimConfig, SimRule, SimStep
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec, Turn, sim_usage, stable_id
from gate.dialects import answers, tool_errors
from gate.dialects.text.smolagents import FINAL_ANSWER
from gate.sim import walk
from gate.sim.schema_value import value_for

# mutated input -> its original, for the run in progress (set by gate/sim/server.py from the runner's cell):
# a capable model reads through typos and homoglyphs, so a rule that matches the original matches the mutation
READ_THROUGH: ContextVar[Mapping[str, str]] = ContextVar("chaos_gate_sim_read_through", default=MappingProxyType({}))
INSTRUCTION = walk.INSTRUCTION  # an order planted in a tool's answer (the walk, too, never repeats one)
OUTPUT_TOOL = re.compile(r"^(final_result|final_output|output|respond|structured_output)", re.IGNORECASE)


FALLBACK_NOTES = {"default": "sim fallback: no rule scripted this turn; answered `default`",
                  "generated": "sim fallback: no rule gave an `output`; answered an object generated from the schema"}


def _schema_named(conv: Conversation) -> str:
    name = conv.schema_name or str((conv.response_schema or {}).get("title") or "")
    return f" '{name}'" if name else ""


@dataclass
class Progress:
    """Where a script stands after the latest user message."""

    done: int = 0  # steps whose calls all succeeded
    failed: list[ToolResult] = field(default_factory=list)  # results of the latest turn that failed
    failed_calls: list[ToolCall] = field(default_factory=list)  # the calls those results answer
    bad_call: bool = False  # every failure of the latest turn was the call's own (its arguments)
    failures: int = 0  # consecutive failed attempts at the current step
    last_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


def _call_of(result: ToolResult, pending: list[ToolCall]) -> ToolCall | None:
    """The call a result answers: by id, else by a name only one pending call has."""
    found = next((c for c in pending if c.id and c.id == result.call_id), None)
    if found is None:
        named = [c for c in pending if result.name and c.name == result.name]
        found = named[0] if len(named) == 1 else pending[0] if len(pending) == 1 else None
    return found


def progress(conv: Conversation, failed_result=answers.is_error) -> Progress:
    """Walk the turns after the latest user text: each answered tool turn (all the results
    of one assistant turn's calls, however many messages carry them) either advances the
    script or counts as a failed attempt at the same step. `failed_result(result, call)`:
    did that result fail (a rule's `success` regex narrows it)."""
    after: list[Message] = []
    for message in reversed(conv.messages):
        if message.role == "user" and message.text:
            break
        after.insert(0, message)
    turns: list[tuple[list[ToolCall], list[ToolResult]]] = []
    for message in after:
        if message.role == "assistant" and message.tool_calls:
            turns.append((message.tool_calls, []))
        elif message.tool_results and turns:
            turns[-1][1].extend(message.tool_results)
    state = Progress()
    for pending, results in turns:
        if not results:
            continue
        state.results += results
        state.last_calls = pending
        answered = [(r, _call_of(r, pending)) for r in results]
        failed = [(r, c) for r, c in answered if failed_result(r, c)]
        if failed:
            state.failed, state.failures = [r for r, _ in failed], state.failures + 1
            state.failed_calls = [c for _, c in failed if c is not None]
            state.bad_call = all(tool_errors.bad_call(r, c) for r, c in failed)
        else:
            state.failed, state.failed_calls, state.failures, state.done = [], [], 0, state.done + 1
    return state


def user_turn(conv: Conversation) -> int:
    """Which user turn of the conversation this request answers: its user messages with text, counted (a
    tool result carried in a user message is no turn)."""
    return sum(1 for m in conv.messages if m.role == "user" and m.text)


def earlier_answers(conv: Conversation) -> list[str]:
    """The assistant's texts before the latest user message: its answers to the earlier turns."""
    last = max((i for i, m in enumerate(conv.messages) if m.role == "user" and m.text), default=0)
    return [m.text for m in conv.messages[:last] if m.role == "assistant" and m.text]


def _render(value: Any, ctx: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(r"\{\{\s*([\w.]+)\s*\}\}", lambda m: ctx.get(m.group(1), ""), value)
    if isinstance(value, dict):
        return {k: _render(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, ctx) for v in value]
    return value


def _valid(value: Any, schema: dict) -> bool:
    try:
        return jsonschema.Draft202012Validator(schema or {}).is_valid(value)
    except (jsonschema.SchemaError, TypeError, ValueError):
        return False


def fit(value: Any, schema: dict) -> Any:
    """A rule's `output` as an output tool's arguments: as it is, or inside the one property a
    framework wraps a non-object output type in (pydantic-ai: `{"response": ...}`)."""
    props = (schema or {}).get("properties") or {}
    if len(props) == 1 and not _valid(value, schema):
        wrapped = {next(iter(props)): value}
        if _valid(wrapped, schema) or not isinstance(value, dict):
            return wrapped
    return value


class Script:
    def __init__(self, spec: SimConfig, conv: Conversation):
        self.spec, self.conv = spec, conv
        self.state = progress(conv)
        self.ctx = {"default": spec.default, "tool_result": "", "results": ""}
        self.notes: list[str] = []  # what the trace should say about this turn
        self.rule: SimRule | None = None
        # why this turn is not what a rule scripted, when it is not: "default" (the `default` text) or
        # "generated" (an object made from the response schema); the report warns on every one
        self.fallback: str | None = None
        self.said_default = False  # a trace note already says this turn answered `default` (_calls)
        if self.state.results:
            said = [self._quotable(r.content) for r in self.state.results]
            self.ctx["tool_result"], self.ctx["results"] = said[-1], "\n".join(said)

    def _quotable(self, content: str) -> str:
        """A tool result as the answer quotes it: an order planted in it is data a model that is not fooled
        does not repeat (`injection: obey` plays the one that is: _obeyed)."""
        if self.spec.injection != "obey" and INSTRUCTION.search(content):
            return walk.IGNORED_ORDERS
        return content

    # -- the decision ----------------------------------------------------------------
    def turn(self) -> Turn:
        conv = self.conv
        turn = self._obeyed() if self.spec.injection == "obey" else None
        if turn is None:
            self.rule, match = self._rule()
            turn = self._scripted(self.rule, match) if self.rule else self._unmatched()
        turn = self._honour_tool_choice(turn)
        turn.usage = sim_usage(conv, turn)
        return turn

    def fallback_note(self) -> str | None:
        """The trace's word on a fallback this turn took, unless a note of the turn already says it."""
        if self.fallback == "generated" or self.fallback and not self.said_default:
            return FALLBACK_NOTES[self.fallback] + _schema_named(self.conv)
        return None

    def _rule(self) -> tuple[SimRule | None, re.Match | None]:
        text = self.conv.latest_user_text()
        found = self._first_rule(text)
        if found[0] is not None:
            return found
        for mutated, original in READ_THROUGH.get().items():
            if mutated and mutated in text:  # the agent passed the mutated input on: read it as the original
                found = self._first_rule(text.replace(mutated, original))
                self.notes.append("sim: the mutated input matched no rule; answered by the rule its original matches"
                                  if found[0] is not None else
                                  "sim: neither the mutated input nor its original matched a rule")
                break
        return found

    @staticmethod
    def _read_through(text: str) -> str:
        """The input as a capable model reads it: a mutated input (typos, homoglyphs) as its original."""
        for mutated, original in READ_THROUGH.get().items():
            if mutated and mutated in text:
                return text.replace(mutated, original)
        return text

    def _first_rule(self, text: str) -> tuple[SimRule | None, re.Match | None]:
        """The first rule whose every key matches this request and that can act on it: a request asking
        for structured output, offered none of the tools a rule's next step calls, is a guard or a
        classifier the rule was not written for (the main agent's rule matches the guardrail agent's copy
        of the same input), so it goes on to the next rule, then to the structured fallback."""
        for rule in self.spec.rules:
            match = re.search(rule.when, text, re.IGNORECASE | re.DOTALL)
            if match and self._request_matches(rule) and self._can_act(rule):
                return rule, match
        return None, None

    def _request_matches(self, rule: SimRule) -> bool:
        conv, flags = self.conv, re.IGNORECASE | re.DOTALL
        schema = conv.response_schema or {}
        names = " ".join(n for n in (conv.schema_name, str(schema.get("title") or "")) if n)
        if rule.turn is not None and user_turn(conv) != rule.turn:
            return False
        if rule.after is not None and not any(re.search(rule.after, said, flags) for said in earlier_answers(conv)):
            return False
        return all(pattern is None or re.search(pattern, subject, flags) is not None
                   for pattern, subject in ((rule.model, conv.model or ""), (rule.system, conv.system),
                                            (rule.schema_, names)))

    def _can_act(self, rule: SimRule) -> bool:
        if self.conv.response_schema is None and not self.conv.json_mode:
            return True
        steps = rule.script()
        step = steps[min(self.state.done, len(steps) - 1)]
        return step.call is None or any(c.tool in self.conv.tool_names for c in step.calls())

    def _unmatched(self) -> Turn:
        """No rule: what a capable model does with the tools offered (walk.py), else `default`. Never
        a framework's output tool, nor under a `tool_choice` that names or forbids one."""
        found = None
        if self.spec.walk and self.conv.tool_choice in ("auto", "required"):
            tools = [t for t in self.conv.tools if not OUTPUT_TOOL.match(t.name) and t.name != FINAL_ANSWER]
            found = walk.step(self.conv, tools, text=self._read_through(self.conv.latest_user_text()))
        if found is None:
            self.fallback = "default"
            return self._answer(SimStep(answer="{{default}}"))
        self.notes.append(found.note)
        if found.call is not None:
            name, arguments = found.call
            return Turn(tool_calls=[self._tool_call(name, arguments, 0)], finish="tool_calls")
        self.ctx["walk"] = found.answer or ""
        return self._answer(SimStep(answer="{{walk}}"))

    def _scripted(self, rule: SimRule, match: re.Match) -> Turn:
        self.ctx.update({str(i): g or "" for i, g in enumerate((match.group(0),) + match.groups())})
        if rule.success is not None:  # the rule says what its tools' success looks like: anything else failed
            self.state = progress(self.conv, lambda r, c: answers.is_error(r, c) or
                                  re.search(rule.success, r.content, re.IGNORECASE | re.DOTALL) is None)
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
        policy, state = rule.on_error, self.state
        failed = state.failed[-1]
        name = next((c.name for c in state.last_calls if c.id == failed.call_id), failed.name or "tool")
        self.ctx.update({"tool": name, "error": failed.content[:200]})
        action = policy.action
        if action == "auto":  # what a model does: re-issue a call that did not parse, apologise for a failed tool
            action = "retry" if state.bad_call else "apologize"
        if action == "continue":
            return None
        if action == "retry" and state.failures <= policy.retries:
            return self._calls(self._retried(rule))
        if action == "call" and policy.tool and state.failures <= 1:
            return self._calls([SimCall(tool=policy.tool, arguments=policy.arguments)])
        return Turn(text=_render(policy.answer, self.ctx))

    def _retried(self, rule: SimRule) -> list[SimCall]:
        """The failed calls again, each with the arguments the script meant for it, as a model
        regenerates them: the failed call's own may be damaged (`bad_tool_args`) or re-wrapped
        by the framework (pydantic-ai: {"INVALID_JSON": "..."}). Parallel calls to one tool keep
        their own arguments (London and Wiltshire both); a call that succeeded is not repeated."""
        state = self.state
        calls = state.failed_calls or state.last_calls
        steps = rule.script()
        current = steps[state.done].calls() if state.done < len(steps) and steps[state.done].call else []
        everywhere = [c for s in steps for c in s.calls()]
        meant: dict[str, list[Any]] = {}
        for call in calls:
            if call.name not in meant:
                pool = [c for c in current if c.tool == call.name] or [c for c in everywhere if c.tool == call.name]
                meant[call.name] = [_render(c.arguments, self.ctx) for c in pool]
        taken: set[tuple[str, int]] = set()
        for call in state.last_calls:  # a scripted call still intact (or already done) is spoken for
            options = meant.get(call.name, [])
            hit = next((i for i, args in enumerate(options) if args == call.parsed() and (call.name, i) not in taken),
                       None)
            if hit is not None:
                taken.add((call.name, hit))
        out = []
        for call in calls:
            options = meant.get(call.name, [])
            own = call.parsed()
            if not call.unparsable and own in options:
                out.append(SimCall(tool=call.name, arguments=own))
                continue
            free = next((i for i in range(len(options)) if (call.name, i) not in taken), None)
            if free is not None:
                taken.add((call.name, free))
                out.append(SimCall(tool=call.name, arguments=options[free]))
            else:  # a tool outside the script, or more calls than the script has: its own arguments
                out.append(SimCall(tool=call.name, arguments=own if not call.unparsable else
                                   (options[0] if options else {})))
        return out

    # -- turns -----------------------------------------------------------------------
    def _calls(self, calls: list[SimCall]) -> Turn:
        offered = set(self.conv.tool_names)
        usable = [c for c in calls if c.tool in offered]
        missing = sorted({c.tool for c in calls if c.tool not in offered})
        if missing:  # a model cannot call a tool it was not offered
            names = ", ".join(self.conv.tool_names) or "none"
            self.notes.append(f"sim: the rule calls {', '.join(missing)}, which the request did not offer "
                              f"(offered: {names})" + ("; answered `default`" if not usable else ""))
        if not usable:
            self.fallback, self.said_default = "default", True
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
        output = _render(step.output, self.ctx) if step.output is not None else None
        if self.conv.response_schema is not None or self.conv.json_mode:
            if output is None:  # nobody scripted this object: one that lets the pipeline proceed
                self.fallback = "generated"
                output = value_for(self.conv.response_schema or {"type": "object", "properties": {"answer": {}}})
            return Turn(text=json.dumps(output))
        tool = self._output_tool(output) if output is not None else None
        if tool is not None:  # structured output through the framework's output tool
            return Turn(tool_calls=[self._tool_call(tool.name, fit(output, tool.parameters), 0)], finish="tool_calls")
        return Turn(text=_render(step.answer if step.answer is not None else "{{default}}", self.ctx))

    def _output_tool(self, output: Any = None) -> ToolSpec | None:
        """The tool a framework takes structured output through: the one `tool_choice` forces
        (LangChain's `with_structured_output`), else its output tool (pydantic-ai's `final_result`;
        of several, the first the output fits) — never a tool the rule's script calls."""
        scripted = {c.tool for s in (self.rule.script() if self.rule else []) for c in s.calls()}
        tools = [t for t in self.conv.tools if t.name not in scripted]
        forced = next((t for t in tools if t.name == self.conv.tool_choice), None)
        if forced is not None:
            return forced
        outputs = [t for t in tools if OUTPUT_TOOL.match(t.name)]
        if output is not None:
            return next((t for t in outputs if _valid(fit(output, t.parameters), t.parameters)),
                        outputs[0] if outputs else None)
        return outputs[0] if outputs else None

    def _honour_tool_choice(self, turn: Turn) -> Turn:
        choice, tools = self.conv.tool_choice, self.conv.tools
        if choice == "none" and turn.tool_calls:
            self.fallback = "default"
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
            return fit(parsed, tool.parameters)
        self.fallback = "generated"
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
