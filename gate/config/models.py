"""The config schema: pydantic models are the single source of truth.

Validation, the JSON Schema (`chaos-gate schema`) and the docs all derive from
these classes. Every model forbids unknown keys, so a typo is an error with a
suggestion rather than a silently ignored setting.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError, core_schema

from gate.config.catalog_union import CatalogUnion, LazyModel, relocated
from gate.config.chaos import ChaosConfig, LlmUpstream, Scenario, SimConfig, ToolUpstream
from gate.config.pricing import Price, ShrinkConfig
from gate.contracts import INVARIANTS
from gate.contracts.base import InvariantBase, Regex, StrictModel
from gate.contracts.output_checks import OutputInvariant
from gate.mutation import DEFAULT_WEIGHTS, MUTATORS
from gate.templates import parse_path

Stage = Literal["mutation", "chaos", "contract", "replay"]
STAGES: tuple[str, ...] = ("mutation", "chaos", "contract", "replay")

Invariant = Annotated[InvariantBase, CatalogUnion(INVARIANTS, "type")]
# gate.worlds.model (a World and its parts) is imported when a config has worlds: most have none
World = Annotated[Any, LazyModel("gate.worlds.model", "World")]


class ReadySpec(StrictModel):
    """When a started agent counts as ready: a URL that answers, and/or a log line."""

    url: str | None = Field(default=None, description="Polled until it answers (any status < 500). Templates: {{port}}, {{url}}.")
    log: Regex | None = Field(default=None, description="Regex searched in the agent's stdout/stderr.")
    timeout: float = Field(default=30.0, gt=0, description="Startup deadline in seconds.")


class DockerBuild(StrictModel):
    context: str = Field(default=".", description="Build context, relative to the config file.")
    dockerfile: str = "Dockerfile"
    args: dict[str, str] = Field(default_factory=dict, description="Build arguments.")


class DockerStart(StrictModel):
    """Run the agent in a container (docker SDK); removed on exit, on failure too."""

    image: str | None = None
    build: DockerBuild | None = None
    command: str | list[str] | None = None
    port: int = Field(default=8080, description="Port the agent listens on when it cannot share the host network.")

    @model_validator(mode="after")
    def _image_or_build(self):
        if (self.image is None) == (self.build is None):
            raise ValueError("set exactly one of 'image' or 'build'")
        return self


class StartSpec(StrictModel):
    """Start the agent: a child process (own process group, own log file) or a container."""

    command: str | list[str] | None = Field(default=None, description="argv list, or a string run by /bin/sh. "
                                                                        "Templates (in either): {{port}}, {{url}}.")
    docker: DockerStart | None = None
    cwd: str | None = Field(default=None, description="Relative to the config file.")
    env: dict[str, str] = Field(default_factory=dict)
    inherit_env: list[str] = Field(
        default_factory=list,
        description="Names or globs of the gate's own environment variables the agent may see. The agent is "
                    "untrusted code: by default it gets only a minimal base environment (PATH, HOME, locale, TZ, "
                    "TMPDIR, CA certificates), the base URLs the gate sets and `env`.")
    port_env: str = Field(default="PORT", description="Env var that hands each instance its free port.")
    ready: ReadySpec = Field(default_factory=ReadySpec)

    @model_validator(mode="after")
    def _command_or_docker(self):
        if (self.command is None) == (self.docker is None):
            raise ValueError("set exactly one of 'command' or 'docker'")
        return self


class ServiceSpec(StrictModel):
    """Something the agent depends on (a tool API, a stub, a database): started once before the agents,
    health-checked, stopped on every exit path, with the agent's allow-list environment. Its address is
    `{{services.NAME.url}}` (also `.host`, `.port`) in the agent, tools, llm upstreams and worlds."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]+$", description="Used as {{services.NAME.url}}.")
    command: str | list[str] | None = Field(default=None, description="argv list, or a string run by /bin/sh. "
                                                                        "Templates: {{port}}, {{host}}, earlier "
                                                                        "services' {{services.NAME.url}}.")
    docker: DockerStart | None = None
    cwd: str | None = Field(default=None, description="Relative to the config file.")
    env: dict[str, str] = Field(default_factory=dict, description="May use {{port}} and earlier services' URLs.")
    inherit_env: list[str] = Field(default_factory=list, description="As agent.start.inherit_env.")
    reset: HttpRequestSpec | None = Field(
        default=None, description="An HTTP call made before every cell run (e.g. POST {{url}}/reset), so no run "
                                  "sees an earlier run's writes. Templates: {{url}}, {{host}}, {{port}}.")
    restart: Literal["never", "per_cell"] = Field(
        default="never", description="per_cell: stop and start the service (same port) before every cell run.")
    port_env: str | None = Field(default="PORT", description="Env var that hands the service its free port.")
    ready: ReadySpec = Field(default_factory=ReadySpec, description="Default: its URL answers (any status < 500).")
    url: str = Field(default="http://{{host}}:{{port}}", description="Its base URL. Templates: {{host}}, {{port}}.")
    user: str = Field(default="auto", description="As agent.user.")

    @field_validator("user", mode="before")
    @classmethod
    def _user_off_unquoted(cls, value):
        """YAML reads an unquoted `off` as false: it means "off" here, as the user wrote it."""
        return "off" if value is False else value

    @model_validator(mode="after")
    def _command_or_docker(self):
        if (self.command is None) == (self.docker is None):
            raise ValueError("set exactly one of 'command' or 'docker'")
        return self


class HttpRequestSpec(StrictModel):
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    url: str = Field(description="Templates: {{url}} (agent base URL), {{port}}.")
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = Field(default=None, description="JSON body; strings may hold {{input}}, {{cell_id}}, {{input_id}}.")


class HttpInvoke(HttpRequestSpec):
    body: Any = Field(default_factory=lambda: {"input": "{{input}}"})
    output: str = Field(default="$", description="JSON path of the answer in the response, e.g. $.reply; $ = whole body.")
    fixed_url: bool = Field(
        default=False,
        description="The invoke URL deliberately names a fixed address although the gate starts the agent "
                    "(e.g. a sidecar in front of it). Without this, a started agent's invoke URL must use "
                    "{{url}} or {{port}}: each instance listens on its own free port, so a fixed URL would "
                    "send every cell to one place, or to nothing.")
    stream: Literal["auto", "sse", "ndjson", "off"] = Field(
        default="auto",
        description="How to read a streamed answer (docs/configuration.md#streamed-answers): auto (by the "
                    "response's Content-Type: text/event-stream is sse, application/x-ndjson or jsonl is ndjson, "
                    "else one JSON answer read with `output`), sse, ndjson, or off. A stream's answer is the "
                    "assistant's text only; an error event inside a 200 fails the run (stream_error).")
    select: str | None = Field(
        default=None,
        description="JSON path applied to each streamed event's JSON, the matches concatenated, for a stream "
                    "shape the built-in extractors do not know, e.g. $.payload.token. Error events are "
                    "still recognised.")

    @field_validator("stream", mode="before")
    @classmethod
    def _stream_off_unquoted(cls, value):
        """YAML reads an unquoted `off` as false: it means "off" here, as the user wrote it."""
        return "off" if value is False else value

    @field_validator("select")
    @classmethod
    def _select_is_a_path(cls, value):
        if value is not None:
            parse_path(value)  # a PathError is a ValueError: refused on its line
        return value

    @model_validator(mode="after")
    def _stream_keys_agree(self):
        if self.stream in ("sse", "ndjson") and self.output != "$":
            raise ValueError(f"'output' reads one JSON answer, never a stream (stream: {self.stream}): drop it (the "
                             "assistant's text is read from the events) or name the text with 'select'")
        if self.stream == "off" and self.select is not None:
            raise ValueError("'select' reads a stream's events, and 'stream: off' reads none: drop one")
        return self


class CommandInvoke(StrictModel):
    command: str | list[str]
    input: Literal["stdin", "arg"] = "stdin"
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict, description="Templates: {{session}}, {{turn}}, {{history}} "
                                                                  "(as JSON text), {{cell_id}}, {{input_id}}, {{run}}.")
    conversation: Literal["per_turn", "lines"] = Field(
        default="per_turn",
        description="How a conversation input (`turns`) reaches the command (docs/conversations.md): per_turn runs "
                    "it once per turn, the turn's text as its input (with `history: messages`, the previous turns "
                    "in $CHAOS_GATE_HISTORY); lines runs it once for the whole conversation, each turn written to "
                    "its stdin as one line and each answer read from its stdout as one line (a single `text` "
                    "input too: a conversation of one turn).")

    @model_validator(mode="after")
    def _lines_read_stdin(self):
        if self.conversation == "lines" and self.input == "arg":
            raise ValueError("conversation: lines writes each turn to the command's stdin, one line a turn: "
                             "drop 'input: arg' (or use conversation: per_turn)")
        return self


class InvokeSpec(StrictModel):
    http: HttpInvoke | None = None
    command: CommandInvoke | None = None

    @model_validator(mode="after")
    def _exactly_one(self):
        if (self.http is None) == (self.command is None):
            raise ValueError("set exactly one of 'http' or 'command'")
        return self


class AgentConfig(StrictModel):
    start: StartSpec | None = Field(default=None, description="Start the agent; omit to use `url`.")
    url: str | None = Field(default=None, description="An agent already running at this base URL.")
    invoke: InvokeSpec
    reset: HttpRequestSpec | None = Field(default=None, description="Request sent before each cell.")
    timeout: float = Field(default=30.0, gt=0, description="Deadline per cell, seconds.")
    restart_on_crash: bool = True
    restart: Literal["on_timeout", "always", "never"] = Field(
        default="on_timeout",
        description="Restart the agent before the next cell: after a cell whose agent may still be working "
                    "(on_timeout), after every cell (always), or only when it crashed (never).")
    log_max_bytes: int = Field(default=10 << 20, ge=4096, description="Cap on each agent log file; a note marks the cut.")
    time_scale: float = Field(
        default=1.0, ge=1, le=100,
        description="Run the agent's clock (and its services') this many times fast under libfaketime: every "
                    "duration the config and faults name, the cell deadline included, is agent time and is waited "
                    "at 1/N real time; timings are reported in agent time. Verified before the first cell.")
    idle_timeout: float = Field(
        default=5.0, gt=0, le=3600,
        description="Seconds an idle keep-alive connection from the agent to the gate's proxy stays open before "
                    "the proxy closes it (5, as uvicorn), so an agent that leaks connections cannot grow them "
                    "without bound.")
    offline: bool = Field(
        default=False,
        description="true: the agent answers without any LLM or tool call the gate can see, on purpose (a rules "
                    "engine, a fixed-answer stub). Otherwise a run in which no cell reached anything is vacuous.")
    instrument: Literal["auto", "off"] = Field(
        default="auto",
        description="auto: reach tools that never cross the wire (in-process function tools of the Python and "
                    "Node frameworks, MCP servers over stdio, `kind: command` tools) through the agent's "
                    "PYTHONPATH, NODE_OPTIONS and PATH; off: leave the agent's environment as configured.")

    user: str = Field(
        default="auto",
        description="Run this as another user than the gate's (docs/security.md): auto (as root: chaos-agent, "
                    "else nobody, when its directory and program are readable by that user; otherwise the gate's own "
                    "user, noted in the report), a user name (never falls back), or off (the gate's own user).")

    network: Literal["host", "proxy-only"] = Field(
        default="host",
        description="proxy-only (Linux, the gate as root): the started agent runs in a network namespace of its own "
                    "where only the gate's proxy is reachable, so a call around the proxy (straight to a service's "
                    "port) is refused rather than unseen; where that cannot be set up the report says so in one "
                    "line. host: the gate's network.")

    @field_validator("instrument", "user", mode="before")
    @classmethod
    def _off_unquoted(cls, value):
        """YAML reads an unquoted `off` as false: it means "off" here, as the user wrote it."""
        return "off" if value is False else value

    @model_validator(mode="after")
    def _reachable(self):
        if self.invoke.http is not None and self.start is None and self.url is None:
            raise ValueError("an HTTP agent needs 'start' or 'url'")
        if self.start is not None and self.url is not None:
            raise ValueError("set 'start' or 'url', not both")
        return self


# The output checks a turn may `expect` (gate/contracts/output_checks.py), judged on that turn's answer alone:
# every one but similar_to_baseline, whose reference answer is the whole input's (docs/conversations.md).
TURN_CHECKS = {name: cls for name, cls in INVARIANTS.items()
               if issubclass(cls, OutputInvariant) and name != "similar_to_baseline"}
AUTO_ID = "__turn_check__"  # an `expect` item without its own id: named `<input>:turn<N>:<type>` by its input
TURN_CHECK_ID = re.compile(r"^[A-Za-z0-9_.-]+:turn[0-9]+:[a-z_]+(-[0-9]+)?$")  # that name, as a dumped config holds it


class _TurnChecks(CatalogUnion):
    """An output check of one turn, as in the contract but for its `id`: the input names it by its turn."""

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        return {"type": "object", "required": ["type"], "properties": {"type": {"enum": list(self.catalog)}},
                "description": "An output check as in contract.invariants (its type's parameters), without an id."}

    def validate(self, value: Any):
        if isinstance(value, dict):
            kind = value.get("type")
            if isinstance(kind, str) and kind in INVARIANTS and kind not in self.catalog:
                why = "compares the whole input's answer with its baseline" if kind == "similar_to_baseline" else \
                    "is not a check of an answer's text"
                raise PydanticCustomError("turn_check_type", "'{kind}' {why}: a turn's expect takes {known}; judge "
                                          "the whole run in contract.invariants",
                                          {"kind": kind, "why": why, "known": ", ".join(self.catalog)})
            if "id" not in value:
                value = {**value, "id": AUTO_ID}
            elif not (isinstance(value["id"], str) and TURN_CHECK_ID.match(value["id"])):  # a dumped config's own
                raise PydanticCustomError("turn_check_id", "a turn's check is named by its input and turn "
                                          "(<input>:turn<N>:<type>): drop 'id'")
        return super().validate(value)


TurnCheck = Annotated[InvariantBase, _TurnChecks(TURN_CHECKS, "type")]


class TurnSpec(StrictModel):
    """One turn of a conversation input written as a mapping (docs/conversations.md): its text, and the output
    checks its own answer must pass (the contract's invariants judge the last answer)."""

    text: str = Field(description="What the user says at this turn: `{{input}}` of this turn's request.")
    expect: list[TurnCheck] = Field(
        default_factory=list,
        description="Output checks judged on this turn's answer (contains, excludes, regex, ...: the contract's "
                    "output invariants but similar_to_baseline), each `{type, ...}` as in contract.invariants but for its "
                    "id, which is `<input>:turn<N>:<type>`. A failed one fails the cell, its message naming the turn.")


class _Turn:
    """A turn: a text, or a TurnSpec mapping. Chosen by the value's shape, so a mistake inside a mapping is
    reported at its own key alone (a plain `str | TurnSpec` union adds "should be a valid string" to each)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        return handler(TypeAdapter(str | TurnSpec).core_schema)

    def validate(self, value: Any) -> str | TurnSpec:
        if isinstance(value, (str, TurnSpec)):
            return value
        if not isinstance(value, dict):
            raise PydanticCustomError("turn_type", "a turn is a text, or a mapping {text: ..., expect: [...]}")
        try:
            return TurnSpec.model_validate(value)
        except ValidationError as exc:
            raise relocated(exc) from None


class InputSpec(StrictModel):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    text: str | None = Field(
        default=None, description="The user's message: one turn in a fresh session. Set this or `turns`.")
    turns: list[Annotated[str | TurnSpec, _Turn()]] | None = Field(
        default=None,
        description="A conversation instead of one message (docs/conversations.md): each a text or {text, "
                    "expect}, sent in order in one session ({{session}}, {{turn}}); the last turn's answer is the output.")
    history: Literal["messages", "none"] = Field(
        default="none",
        description="With `turns`: `messages` hands the previous turns to each request as {{history}} (an "
                    "OpenAI-style messages list) for an agent that takes the conversation from the client; "
                    "`none` leaves the conversation to the agent's own session memory.")
    baseline: str | None = Field(default=None, description="Reference answer for similar_to_baseline.")
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _text_or_turns(self):
        self._name_turn_checks()
        if self.turns is not None and not self.turns:
            raise ValueError("'turns' is empty: give the conversation's turns, or one message as 'text'")
        if (self.text is None) == (self.turns is None):
            raise ValueError("set exactly one of 'text' (one message) or 'turns' (a conversation in one session)")
        if self.history != "none" and self.turns is None:
            raise ValueError("'history' is for a conversation: use 'turns', or drop 'history'")
        return self

    def _name_turn_checks(self) -> None:
        """`<input>:turn<N>:<type>` for each `expect` item given no id (a second of one type on a turn: `-2`)."""
        for n, turn in enumerate(self.turns or [], 1):
            seen: dict[str, int] = {}
            for check in turn.expect if isinstance(turn, TurnSpec) else []:
                seen[check.type] = seen.get(check.type, 0) + 1
                if check.id == AUTO_ID:
                    again = seen[check.type]
                    check.id = f"{self.id}:turn{n}:{check.type}" + (f"-{again}" if again > 1 else "")

    def turn_checks(self) -> list[tuple[int, int, InvariantBase]]:
        """(turn number from 1, index in its `expect`, the check) of every per-turn check, in order."""
        return [(n, k, check) for n, turn in enumerate(self.turns or [], 1) if isinstance(turn, TurnSpec)
                for k, check in enumerate(turn.expect)]

    def turn_texts(self) -> tuple[str, ...] | None:
        """The conversation's texts in order, or None for a single message."""
        if self.turns is None:
            return None
        return tuple(t if isinstance(t, str) else t.text for t in self.turns)

    def shown_text(self) -> str:
        """What a cell shows as its input: the message, or a conversation's turns one per line."""
        return self.text if self.turns is None else "\n".join(self.turn_texts())


class PreserveSpec(StrictModel):
    numbers: bool = True
    quoted: bool = True
    terms: list[str] = Field(default_factory=list)


class ParaphraseSpec(StrictModel):
    enabled: bool = False
    base_url: str = "http://127.0.0.1:11434/v1"
    model: str = "llama3.1"
    api_key: str | None = None
    weight: float = Field(default=1.0, ge=0)


class MutationConfig(StrictModel):
    enabled: bool = True
    count: int = Field(default=6, ge=0, le=500, description="Mutations per input.")
    kinds: dict[str, float] | None = Field(
        default=None, description=f"Weights per kind (0 disables). Kinds: {', '.join(sorted(MUTATORS))}.")
    preserve: PreserveSpec = Field(default_factory=PreserveSpec)
    paraphrase: ParaphraseSpec = Field(default_factory=ParaphraseSpec)

    def weights(self) -> dict[str, float]:
        merged = dict(DEFAULT_WEIGHTS) if self.kinds is None else {k: 0.0 for k in MUTATORS} | self.kinds
        if self.paraphrase.enabled:
            merged["paraphrase"] = self.paraphrase.weight
        return merged


class ContractConfig(StrictModel):
    baseline: bool = Field(default=True, description="Run every input once without faults (the matrix's first row).")
    invariants: list[Invariant] = Field(default_factory=list)
    scenarios: list[Scenario] = Field(
        default_factory=list, description="Named fault sets; with the fault-free baseline they form the matrix.")


class ReplayConfig(StrictModel):
    sessions: list[str] = Field(default_factory=list, description="Session files or globs, relative to this file.")
    contracts: dict[str, list[Invariant]] = Field(
        default_factory=dict, description="Named contracts a session can ask for with `contract: name`.")
    allow_unexpected: bool = Field(default=False, description="Do not fail a session on a request it lacks.")
    tool_map: dict[str, str] = Field(
        default_factory=dict, description="Traced tool name -> the tool upstream that answers it on replay.")
    scenarios: list[str] = Field(
        default_factory=list, description="Scenarios or profiles run on top of every session: the recording "
                                          "answers, their faults apply, a retry is answered from the recording.")
    pins: str = Field(default="chaos-gate.pins.yaml", description="The seed corpus file, relative to this file.")


class StageWeights(StrictModel):
    mutation: float = Field(default=0.20, ge=0)
    chaos: float = Field(default=0.35, ge=0)
    contract: float = Field(default=0.35, ge=0)
    replay: float = Field(default=0.10, ge=0)


class ScoringConfig(StrictModel):
    weights: StageWeights = Field(default_factory=StageWeights)


class GateConfig(StrictModel):
    min_score: float = Field(default=80.0, ge=0, le=100)
    stage_min: dict[Stage, float] = Field(default_factory=dict, description="Per-stage minimum scores.")
    fail_on: Literal["critical", "high", "medium", "low", "score", "regression", "never"] = Field(
        default="critical",
        description="critical: critical breaches and score; high/medium/low: any breach at that severity or above, "
                    "and score; score: score only; regression: only cells that newly fail against --baseline; "
                    "never: report only.")
    alpha: float = Field(default=0.05, gt=0, lt=1,
                         description="Significance of Fisher's exact test for a pass-rate drop against a baseline.")
    min_pass_k: dict[Literal["critical", "high", "medium", "low"], float] = Field(
        default_factory=dict,
        description="Per severity: the fraction of (cell, invariant) pairs whose k runs all passed, at least.")
    max_cost_usd: float | None = Field(
        default=None, gt=0, description="Budget: no new cell starts once the run spent this much (verdict error).")
    allow_vacuous: bool = Field(
        default=False,
        description="Let a run pass although part of the config tested nothing (a fault that never fired, an "
                    "invariant that applied to no cell); it is then a warning shown first, not an error.")


class OutputConfig(StrictModel):
    dir: str = "chaos-gate-report"
    json_: str = Field(default="report.json", alias="json")
    junit: str = "junit.xml"
    junit_family: Literal["auto", "annotated", "xunit2"] = Field(
        default="auto", description="annotated: each testcase carries `file` and `line` for GitHub's annotators; "
                                    "xunit2: strict, valid against Jenkins xUnit's and Ant's schemas; auto: "
                                    "annotated under GitHub Actions, else xunit2 (docs/reports.md).")
    markdown: str = "summary.md"
    html: str = Field(default="report.html", description="Self-contained trace viewer (no network requests).")
    full: bool = Field(default=False, description="Keep every run's output, checks and trace for passing cells "
                                                 "too; false keeps them for failing and flaky cells only (a compact "
                                                 "row per passing cell: a 10,000-cell report a quarter smaller).")


class Config(StrictModel):
    version: Literal[1] = Field(default=1, description="The config format's version: 1.")
    seed: int = Field(default=0, description="The root seed: every mutation and fault decision derives from it.")
    services: list[ServiceSpec] = Field(
        default_factory=list, description="Processes or containers the agent depends on, started before it.")
    agent: AgentConfig = Field(description="How the agent starts (or where it runs), how one input reaches it, "
                                           "its reset and its deadline.")
    inputs: list[InputSpec] = Field(
        min_length=1, description="The agent's golden inputs: id, text (or a conversation's turns), optional baseline.")
    mutation: MutationConfig = Field(default_factory=MutationConfig,
                                     description="The mutation stage: how many perturbed inputs, which kinds, what to keep.")
    contract: ContractConfig = Field(default_factory=ContractConfig,
                                     description="Invariants and the fault scenarios of the scenario × invariant matrix.")
    scoring: ScoringConfig = Field(default_factory=ScoringConfig, description="Stage weights of the overall score.")
    gate: GateConfig = Field(default_factory=GateConfig,
                             description="What fails the gate: min_score, stage_min, fail_on, pass^k floors, budgets.")
    llm: list[LlmUpstream] = Field(default_factory=list, description="LLM APIs the agent calls, proxied.")
    tools: list[ToolUpstream] = Field(default_factory=list, description="Tool services the agent calls, proxied.")
    sim: SimConfig = Field(default_factory=SimConfig,
                           description="The scripted model served for `upstream: sim`: rules, default answer, injection.")
    chaos: ChaosConfig = Field(default_factory=ChaosConfig,
                               description="The chaos stage: profiles, scenarios and ad-hoc faults run on every input.")
    replay: ReplayConfig = Field(default_factory=ReplayConfig,
                                 description="The replay stage: recorded sessions, their contracts and scenarios, pins.")
    worlds: list[World] = Field(default_factory=list, description="Fake stateful tool services served by the gate.")
    profiles_dir: str | None = Field(default=None, description="Extra directory of profile YAML files.")
    runs: int = Field(default=1, ge=1, le=100, description="Repetitions of each cell.")
    concurrency: int = Field(default=1, ge=1, le=64, description="Agent instances run in parallel.")
    secrets: list[str] = Field(default_factory=list, description="Env var names whose values are redacted everywhere.")
    pricing: dict[str, Price] = Field(
        default_factory=dict, description="Model glob -> USD per million input/output tokens; first match wins.")
    shrink: ShrinkConfig = Field(default_factory=ShrinkConfig,
                                 description="Shrinking failing cells to their minimal fault set: on/off, re-run budget.")
    output: OutputConfig = Field(default_factory=OutputConfig,
                                 description="Where the reports go (dir beside the config) and their file names.")
    # Unique ids and names, and every cross-reference, are checked by gate/config/references.py
    # with the line of the offending value, which a model validator here could not give.
