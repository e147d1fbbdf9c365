"""Config of `sim`, the scripted model: rules that behave like a model, step by step.

A rule matches the latest user message (and, in a conversation, its user turn's number or an earlier
answer: `turn`, `after`) and scripts what the model does next: a tool
call (or several in one turn), then another, then an answer — and what it does when a
tool fails (`on_error`; by default what a model does: re-issue a call whose arguments
did not parse, once, and apologise for a failed tool), so a script never claims success
after a failed tool unless it says so. The older one-step form (`tool` + `arguments` +
`answer`) is kept as shorthand. An input no rule matches walks the offered tools
(gate/sim/walk.py) unless `walk: off`.

`tool_warnings` is what `validate` can say about tool names ahead of a run: where the
config holds recorded LLM requests (replay sessions), a rule naming a tool none of them
offered. At run time the sim's trace note says the same for every request.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from gate.contracts.base import Regex, StrictModel
from gate.dialects.acknowledgement import SIM_APOLOGY


class SimCall(StrictModel):
    tool: str = Field(description="Name of the tool to call (must be offered by the request).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments; {{1}} = regex group 1.")


class SimStep(StrictModel):
    """One model turn: call one or several tools, or answer."""

    call: str | list[SimCall] | None = Field(
        default=None, description="A tool name, or several calls made in one turn (parallel tool calls).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments when `call` is one tool name.")
    answer: str | None = Field(default=None, description="Final text; {{tool_result}}, {{results}} and {{1}} expand.")
    output: Any = Field(default=None, description="Structured-output answer (an object), when a schema is asked for.")

    @model_validator(mode="after")
    def _one_action(self):
        if (self.call is None) == (self.answer is None and self.output is None):
            raise ValueError("a step either calls a tool (`call`) or answers (`answer` / `output`)")
        return self

    def calls(self) -> list[SimCall]:
        if isinstance(self.call, str):
            return [SimCall(tool=self.call, arguments=self.arguments)]
        return list(self.call or [])


class OnError(StrictModel):
    """What the scripted model does when the latest tool result is an error."""

    action: Literal["auto", "apologize", "retry", "call", "continue"] = Field(
        default="auto",
        description="auto: what a model does — re-issue a call whose arguments did not parse or validate (up to "
                    "`retries` times), apologise for a tool that failed; apologize: answer `answer`; retry: "
                    "repeat the failed calls whatever the failure (up to `retries` times, then apologize) — e.g. "
                    "so a timed-out write is retried and `side_effect_once` is tested; call: call `tool` "
                    "instead; continue: go on as if it had worked.")
    retries: int = Field(default=1, ge=0, le=10)
    tool: str | None = Field(default=None, description="With action `call`: the tool to call instead.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    answer: str = Field(default=SIM_APOLOGY + ": the {{tool}} tool failed.",
                        description="The apology; {{tool}} and {{error}} expand.")


class SimRule(StrictModel):
    when: Regex = Field(default="", description="Regex searched in the latest user message (case-insensitive); "
                                                "omitted: any message.")
    model: Regex | None = Field(default=None, description="Regex searched in the model the request names (e.g. "
                                                          "the guardrail's own small model).")
    system: Regex | None = Field(default=None, description="Regex searched in the request's system prompt / "
                                                           "instructions (e.g. a guardrail agent's).")
    schema_: Regex | None = Field(default=None, alias="schema",
                                  description="Regex searched in the name and title of the response schema a "
                                              "structured-output request asks for (e.g. 'Relevance').")
    turn: int | None = Field(default=None, ge=1,
                             description="Match only at this user turn of a conversation: the request's N-th user "
                                         "message, counted from 1 (docs/conversations.md).")
    after: Regex | None = Field(default=None,
                                description="Match only when an earlier answer of the conversation (an assistant "
                                            "message before the latest user message) matches this regex "
                                            "(case-insensitive).")
    tool: str | None = Field(default=None, description="Shorthand: call this tool first, then answer.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Tool arguments; {{1}} = regex group 1.")
    answer: str | None = Field(default=None, description="Final answer; {{tool_result}} and {{1}} expand.")
    output: Any = Field(default=None, description="Structured-output answer object, when a schema is asked for.")
    steps: list[SimStep] = Field(default_factory=list, description="The script: tool turns, then an answer.")
    on_error: OnError = Field(default_factory=OnError)
    success: Regex | None = Field(
        default=None, description="A tool result counts as a success only when this regex matches it (e.g. "
                                  "'\"status\": ?\"refunded\"'); any other result takes `on_error`. Without it, "
                                  "a result fails when it is an error, an error object, empty or cut.")

    @model_validator(mode="after")
    def _something_to_match(self):
        if not self.when and self.model is None and self.system is None and self.schema_ is None \
                and self.turn is None and self.after is None:
            raise ValueError("a rule matches on `when` (the user's message), `model`, `system`, `schema`, `turn` "
                             "or `after`; give at least one")
        return self

    @model_validator(mode="after")
    def _steps_or_shorthand(self):
        if self.steps and (self.tool or self.answer is not None):
            raise ValueError("use either `steps` or the shorthand `tool`/`answer`, not both")
        return self

    def script(self) -> list[SimStep]:
        if self.steps:
            return self.steps
        calls = [SimStep(call=self.tool, arguments=self.arguments)] if self.tool else []
        return calls + [SimStep(answer=self.answer if self.answer is not None else "{{default}}",
                                output=self.output)]


class SimConfig(StrictModel):
    rules: list[SimRule] = Field(default_factory=list)
    default: str = "I can help with that."
    chunk_chars: int = Field(default=8, ge=1, description="Characters per streamed delta / argument fragment.")
    injection: Literal["ignore", "obey"] = Field(
        default="ignore",
        description="obey: follow instructions found in tool results (repeat them, call the tool they name), "
                    "as a fooled model would, so `inject` scenarios test the agent's own defences.")
    models: list[str] = Field(default_factory=lambda: ["sim-1"], description="Served by the models endpoints.")
    embedding_dim: int = Field(default=16, ge=1, le=4096, description="Length of the deterministic embeddings.")
    walk: bool = Field(
        default=True,
        description="An input no rule matches gets what a capable model does with the tools offered: it calls "
                    "those the input is about (reads first, one a turn, each once, at most 4), with arguments "
                    "drawn from their schemas and filled from the input, then answers from what they returned. "
                    "off: answer `default`, as before.")


def rule_tools(spec: SimConfig) -> list[tuple[tuple, str]]:
    """Every tool name a rule may call, with the key path that names it."""
    out = []
    for i, rule in enumerate(spec.rules):
        loc = ("sim", "rules", i)
        if rule.tool:
            out.append((loc + ("tool",), rule.tool))
        for j, step in enumerate(rule.steps):
            if isinstance(step.call, str):
                out.append((loc + ("steps", j, "call"), step.call))
            for k, call in enumerate(step.call if isinstance(step.call, list) else []):
                out.append((loc + ("steps", j, "call", k, "tool"), call.tool))
        if rule.on_error.action == "call" and rule.on_error.tool:
            out.append((loc + ("on_error", "tool"), rule.on_error.tool))
    return out


def tool_warnings(spec: SimConfig, offered: set[str] | None) -> list[tuple[tuple, str]]:
    """(key path, message) for each rule tool that no known request offered; none when the
    tools the agent offers are unknown (`offered` is None: nothing recorded says)."""
    if offered is None:
        return []
    names = ", ".join(sorted(offered)) or "none"
    return [(loc, f"sim calls tool '{name}', which no recorded request of the agent offered (they offered: "
                  f"{names}): a model cannot call it, so the sim will answer `default` instead")
            for loc, name in rule_tools(spec) if name not in offered]


def recorded_offers(patterns: list[str], base_dir) -> set[str] | None:
    """Tool names the recorded LLM requests of replay sessions offered; None when no recorded
    request offered any (imported traces keep no requests), so nothing is known."""
    import glob
    import json
    from pathlib import Path

    from gate.dialects.offered import tool_names
    from gate.replay.session import read_session

    found: set[str] = set()
    for pattern in patterns:
        for name in sorted(glob.glob(str(Path(base_dir) / pattern), recursive=True)):
            try:
                session = read_session(Path(name))
            except Exception:  # the replay stage reports a bad session; validate only looks for names
                continue
            for ex in session.exchanges:
                if ex.kind == "llm" and isinstance(ex.request, dict):
                    found.update(tool_names(json.dumps(ex.request).encode()))
    return found or None
