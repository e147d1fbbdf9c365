"""The canonical, versioned Report: every output (JSON, JUnit, Markdown, terminal,
PR comment) is rendered from this model and nothing else.

`verdict` holds everything that must be byte-identical across two runs of a
deterministic agent with the same seed; anything measured in time lives in
`timings`, and facts about this particular run (concurrency, host) in `run`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from gate.report.insight_model import (Comparison, Firing, PassKFloor, RepeatStats, Shrink, TokenUsage,
                                       UsageSummary)

from gate.report.exchanges import CellExchanges
from gate.explore.causes import group_causes  # the core's rule, applied to whatever findings a report holds

SCHEMA = "agent-chaos-gate/report@1"
# skipped: run but not judged (every firing of its faults met an answer it could not alter); `note` says why
CellStatus = Literal["pass", "fail", "error", "skipped"]
VerdictName = Literal["pass", "fail", "error"]


class CheckResult(BaseModel):
    invariant: str
    severity: str
    passed: bool
    message: str
    judged: bool = Field(default=True, description="False when the run had nothing to judge (no output).")


class TraceStep(BaseModel):
    """One exchange the proxy saw, without its timing (that lives in Timings)."""

    seq: int
    target: str
    kind: str
    call: int
    method: str
    path: str
    model: str | None = None
    tool: str | None = None
    rpc_method: str | None = None
    transport: str | None = Field(default=None, description="In-process calls: function, mcp-stdio or command.")
    status: int | None = None
    fault: str | None = None
    fault_status: str | None = Field(default=None, description="fired | not_applicable (with the reason in note).")
    fault_index: int | None = Field(default=None, description="Index of the fault in its scenario.")
    note: str = ""
    forwarded: bool = False
    handoff: str | None = Field(default=None, description="An LLM call a handoff brought (OpenAI Agents SDK): the "
                                                          "handoff tool and the agent now answering, "
                                                          "'transfer_to_billing → Billing'.")
    sim_fallback: str | None = Field(default=None, description="Under sim: `default` (the default text) or "
                                                               "`generated` (an object made from the response "
                                                               "schema): this answer is what no rule scripted.")
    retry_after: float | None = None
    turn: int | None = Field(default=None, description="A conversation input: the turn in flight when the call "
                                                     "arrived (1-based).")
    usage: TokenUsage | None = Field(default=None, description="LLM calls: tokens (and cost) the upstream billed.")


class TurnRecord(BaseModel):
    """One turn of a conversation run, as sent and answered (gate/agent/conversation.py `record`); its
    latency is a measurement, so it stays out of the verdict."""

    turn: int
    text: str
    answer: str | None = None
    reason: str = "ok"


class RunResult(BaseModel):
    run: int
    reason: str
    status: int | None = None
    output: str | None = None
    detail: str = ""
    error: str | None = None
    checks: list[CheckResult] = Field(default_factory=list)
    trace: list[TraceStep] = Field(default_factory=list)
    state: dict | None = Field(default=None, description="Final world state (kept for failing runs).")
    usage: TokenUsage | None = Field(default=None, description="Tokens and cost of the run's LLM calls.")
    turns: list[TurnRecord] | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="A conversation input: every turn sent, its text, answer and reason, in order (kept for "
                    "failing runs and the fault-free baseline's; absent for a single input).")
    log: str = Field(default="", exclude=True, description="What the agent's log gained during the run (its end): "
                                                          "becomes the cell's log_tail when the cell fails.")


class InvariantOutcome(BaseModel):
    id: str
    severity: str
    passed_runs: int
    total_runs: int
    pass_rate: float
    breached: bool
    message: str
    not_judged_runs: int = 0


class CellReach(BaseModel):
    """What the gate saw of one cell's runs, kept in every row of report.json, passing or not: the
    verdict's run-time checks (a `tool:` glob that met no call, a cell or a run that reached nothing)
    read it, so a merge of shard reports judges exactly as the unsharded run did."""

    calls: int = Field(description="LLM and tool calls the gate saw over all the cell's runs (wire and in-process).")
    tools: list[str] = Field(default_factory=list, description="Tools called (trace names and upstreams), sorted.")
    faulted: bool = Field(default=False, description="A fault changed what the agent received in one of its runs.")
    answer: str | None = Field(default=None, description="A digest of its first run's answer (the stateful check).")
    llm_answers: int = Field(default=0, description="LLM calls of its first run that got an answer.")
    fallbacks: list[str] = Field(default_factory=list, description="Under sim: the first run's LLM calls answered "
                                                                   "by a fallback no rule scripted (`default`, "
                                                                   "`generated`), e.g. 'openai #2: generated'.")


class CellResult(BaseModel):
    id: str
    stage: str
    input_id: str
    mutation: str | None = None
    scenario: str
    seed: int
    input: str
    status: CellStatus
    reason: str
    flaky: bool = False
    pass_rate: float
    invariants: list[InvariantOutcome] = Field(default_factory=list)
    runs: list[RunResult] = Field(default_factory=list)
    error: str | None = None
    note: str | None = Field(default=None, description="Why a cell is skipped or an error, in words.")
    log_tail: str | None = Field(
        default=None, description="Crash and start-up outcomes: the end of what the agent wrote to its log (stderr).")
    reproduce: str
    usage: TokenUsage | None = Field(default=None, description="Tokens and cost over all the cell's runs.")
    stats: RepeatStats | None = Field(default=None, description="passes of k, pass^k, 95 % Wilson interval.")
    minimal_faults: list[Firing] | None = Field(
        default=None, description="The smallest set of fault firings that still breaches the invariant.")
    shrink: Shrink | None = None
    reached: CellReach | None = Field(
        default=None, description="What the gate saw of its runs; None when the gate watched no call (no proxy).")

    @property
    def breaches(self) -> list[InvariantOutcome]:
        return [i for i in self.invariants if i.breached]


class StageScore(BaseModel):
    stage: str
    score: float | None
    weight: float
    cells: int
    passed: int
    failed: int
    errors: int
    flaky: int
    minimum: float | None = None
    skipped: int = 0


class InvariantSummary(BaseModel):
    id: str
    severity: str
    checked: int
    breached: int
    line: int | None = None


class Counts(BaseModel):
    cells: int
    passed: int
    failed: int
    errors: int
    flaky: int
    skipped: int = Field(default=0, description="Cells not judged: their faults could not alter any answer.")


class PinStatus(BaseModel):
    id: str
    seed: int
    cell: str | None = None
    status: str  # pass | fail | error | missing | config_changed


class FaultCoverage(BaseModel):
    """How one fault of one scenario fared over all the cells that ran it."""

    index: int
    fault: str
    target: str
    matched: int = Field(description="Requests the fault matched (its trigger was consulted).")
    fired: int = Field(description="Requests whose answer it really changed.")
    not_applicable: int = Field(default=0, description="Firings that met a response they could not alter.")
    status: Literal["fired", "not_applicable", "never_matched", "never_fired"]
    reason: str = ""
    cells: int = Field(default=0, description="Cells that ran this fault (a profile runs one cell per fault).")
    hint: str = Field(default="", description="When it did not fire: what to change so that it does.")
    most_calls: int = Field(default=0, description="The most requests it matched in one run (a merge's hint needs it).")
    tool: str | None = Field(default=None, description="A tool fault's `tool:` glob (the reach notes name it).")


class ScenarioCoverage(BaseModel):
    stage: str
    scenario: str
    cells: int
    faults: list[FaultCoverage]


class Reach(BaseModel):
    """What the gate reached of the agent's calls: on the wire, and in its process."""

    wire: list[str] = Field(default_factory=list, description="Upstreams that saw calls: llm:NAME, tool:NAME.")
    in_process: list[str] = Field(default_factory=list, description="Framework seams the agent's process loaded "
                                                                    "and called tools through.")
    idle: list[str] = Field(default_factory=list, description="Seams a library the agent imports loaded, whose "
                                                              "framework made no call (the Agents SDK imports mcp): "
                                                              "neither reached nor unreached, so not in the line.")
    failed: list[str] = Field(default_factory=list, description="Seams that could not be patched, with why.")
    offered: list[str] = Field(default_factory=list, description="Tool names the agent offered its model or called.")
    called: list[str] = Field(default_factory=list, description="Tool names the model called, as the conversations "
                                                                "the agent sent back show them.")
    handoffs: list[str] = Field(default_factory=list, description="Handoffs the agent offered its model (OpenAI "
                                                                  "Agents SDK `transfer_to_*`): 'NAME → AGENT' when "
                                                                  "taken, 'NAME' when never taken.")
    died: list[str] = Field(default_factory=list, description="Tool servers the agent started that died before "
                                                              "they answered (an MCP server over stdio): command, "
                                                              "error, the end of their stderr.")
    notes: list[str] = Field(default_factory=list, description="What was not reached, and the way to reach it.")


class StrayCall(BaseModel):
    """A call the proxy saw while no cell ran on its worker (an agent outliving its cell)."""

    worker: int
    after_cell: str | None
    target: str
    method: str
    path: str
    status: int | None = None
    late_write: bool = Field(default=False, description="A call that arrived once the next cell had begun, which "
                                                         "`after_cell` made (its conversation, or a write before the "
                                                         "next cell's model answered).")
    repeats: str | None = Field(default=None, description="The intended write of `after_cell` this late write "
                                                          "executed again (charged to that cell's writes_once).")


class Finding(BaseModel):
    """A failing explored cell, told so it can be fixed and pinned (gate/explore/findings.py)."""

    cell: str
    invariant: str
    severity: str
    line: str = Field(description="One line: where, what fault, what went wrong.")
    evidence: str = Field(default="", description="The oracle's message on the failing run.")
    reproduce: str = ""
    pin: str = Field(default="", description="YAML to paste under the config: the scenario and its invariant.")
    log_tail: str | None = Field(default=None, description="A crash's end of the agent's log (its traceback).")
    site: str = Field(default="", description="The faulted site's group (its matcher, any occurrence): its cause's.")
    where: str = Field(default="", description="That site in words: `POST orders /refunds`, `openai LLM calls`.")
    kind: str = Field(default="", description="The fault kind(s): `error`, `error on every call`, `error + timeout`.")
    behaviour: str = Field(default="", description="What the agent did, normalised: `crashed (KeyError)`, "
                                                   "`answered HTTP 500`, `answered an error`.")
    order: int = Field(default=0, description="The cell's place in the exploration plan.")


class Cause(BaseModel):
    """Failing explored cells that show one bug: one oracle, one site, one behaviour (gate/explore/causes.py).
    Its line, evidence, reproduce command and pin are its first cell's, in plan order."""

    invariant: str
    severity: str = Field(description="The worst of its cells'.")
    site: str
    where: str
    behaviour: str
    kinds: list[str] = Field(description="The fault kinds that showed it, in plan order.")
    cells: list[str] = Field(description="Its failing cells, in plan order.")
    count: int
    line: str
    evidence: str = ""
    reproduce: str = ""
    pin: str = ""
    log_tail: str | None = None


class ExploreSummary(BaseModel):
    """What exploration found and ran: the sites, the fault points planned, run and pruned."""

    sites: int = Field(description="Distinct call sites the baselines reached.")
    planned: int = Field(description="Fault points planned before the budget.")
    run: int = Field(description="Fault points run (cells).")
    pruned: dict[str, int] = Field(default_factory=dict, description="Fault points not run, by reason.")
    unfaultable: list[str] = Field(default_factory=list, description="Calls seen that could not be faulted, and why.")
    failed_baselines: list[str] = Field(default_factory=list,
                                        description="Inputs whose fault-free baseline did not answer: not explored.")
    findings: list[Finding] = Field(default_factory=list, description="One per failing explored cell.")

    @computed_field(description="The findings grouped by cause, most severe first: what the renderings lead with.")
    @property
    def causes(self) -> list[Cause]:
        return [Cause(**c) for c in group_causes(self.findings)]


class VerdictPart(BaseModel):
    verdict: VerdictName
    exit_code: int
    score: float | None
    min_score: float
    reasons: list[str]
    error_reason: str | None = Field(
        default=None, description="Why the verdict is error: vacuous, interrupted, agent_start, harness, budget, config.")
    warnings: list[str] = Field(default_factory=list, description="Shown first in the comment and summary.")
    coverage: list[ScenarioCoverage] = Field(default_factory=list)
    seed: int
    config: str
    config_digest: str
    runs_per_cell: int
    counts: Counts
    stages: list[StageScore]
    invariants: list[InvariantSummary]
    outcome_tally: dict[str, int]
    pins: list[PinStatus] = Field(default_factory=list)
    usage: UsageSummary | None = Field(default=None, description="Tokens and cost per scenario, amplification.")
    pass_k: list[PassKFloor] = Field(default_factory=list, description="pass^k per severity with gate.min_pass_k.")
    reach: Reach | None = Field(default=None, description="What the gate reached: wire, in-process, not at all.")
    explore: ExploreSummary | None = Field(default=None, description="Exploration: sites, fault points, findings.")
    cells: list[CellResult]

    @computed_field(description="A fault changed what the agent received in some cell (a `fired` row of "
                                "`coverage`); false when none was configured for the cells that ran, or none fired.")
    @property
    def faults_injected(self) -> bool:
        return any(f.status == "fired" for sc in self.coverage for f in sc.faults)


class CellTiming(BaseModel):
    id: str
    latency_ms: list[float]
    wall_ms: float
    trace_ms: list[list[tuple[float, float | None, int]]] = Field(
        default_factory=list,
        description="Per run, per trace step: (start ms, end ms since the run began, bytes sent to the agent).")


class Timings(BaseModel):
    started_at: str
    finished_at: str
    wall_seconds: float
    agent_startup_seconds: list[float]
    cells: list[CellTiming]


class ShardInfo(BaseModel):
    index: int
    total: int


class Rerun(BaseModel):
    """A cell that failed on an agent instance an earlier cell's faults may have left broken, re-run on a
    restarted agent (gate/runner/recover.py). Which cells shared an instance depends on scheduling, so
    this lives in `run`, not in the verdict; the cell's verdict is the restarted agent's."""

    cell: str
    first_reason: str = Field(description="How its run on the shared instance ended.")
    outcome: Literal["passed", "failed_again", "error"]
    left_broken_by: str | None = Field(
        default=None, description="The earlier cell on that instance whose faults fired before the failures began.")
    worker: int


class RunInfo(BaseModel):
    tool_version: str
    concurrency: int
    selected: list[str] | None = None
    shard: ShardInfo | None = None
    plan: list[str] = Field(default_factory=list, description="Every cell id of the whole plan, in order.")
    stray: list[StrayCall] = Field(
        default_factory=list, description="Calls seen while no cell ran on a worker; timing-dependent, so kept here.")
    reruns: list[Rerun] = Field(
        default_factory=list, description="Cells re-run on a restarted agent after failing on a broken one.")
    time_scale: float = Field(default=1.0, description="agent.time_scale: the agent's clock ran this many times fast.")
    agent_clock_rates: list[float] = Field(
        default_factory=list, description="Under time_scale: each agent process's own clock rate, measured inside it "
        "(gate/instrument/clock.py); empty when no process had the Python or Node bootstrap.")
    separation: str | None = Field(
        default=None, description="Which user the agents and services ran as, or why they ran as the gate's own "
                                  "(docs/security.md); null when the gate started no process.")
    left_running: list[str] = Field(
        default_factory=list, description="Command lines of processes the agent started that were still running after "
                                          "it stopped (a setsid daemon...), killed before the reports were written.")


class Report(BaseModel):
    schema_: str = Field(default=SCHEMA, alias="schema")
    verdict: VerdictPart
    timings: Timings
    run: RunInfo
    exchanges: list[CellExchanges] = Field(
        default_factory=list, description="Body excerpts of the failing cells' exchanges (report.html).")
    comparison: Comparison | None = Field(default=None, description="Against a base report (--baseline).")

    model_config = {"populate_by_name": True}

    def cells_by_stage(self) -> dict[str, list[CellResult]]:
        out: dict[str, list[CellResult]] = {}
        for cell in self.verdict.cells:
            out.setdefault(cell.stage, []).append(cell)
        return out
