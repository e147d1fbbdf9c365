"""Report models for what the gate measures beyond pass/fail: tokens and cost, repeated-run
statistics (pass^k, Wilson intervals), minimal fault sets, and the comparison with a base report.

Kept apart from model.py so that each concern reads as one small schema; model.py
refers to these classes. Everything here is derived from deterministic facts (the
sim's usage, pass counts, the schedule's firings), so it belongs in the verdict part.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class TokenUsage(BaseModel):
    """Tokens of one call, one run, one cell or a whole scenario; cost when priced."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = Field(default=False, description="Some calls reported no usage: counted from their text.")
    cost_usd: float | None = Field(default=None, description="None when no pricing entry matches a model used.")
    unpriced: list[str] = Field(default_factory=list, description="Models used that no pricing entry matches.")

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


class ScenarioUsage(BaseModel):
    stage: str
    scenario: str
    cells: int
    runs: int
    usage: TokenUsage


class Amplification(BaseModel):
    """Tokens a scenario spent per run, over what the same inputs spent at baseline."""

    stage: str
    scenario: str
    inputs: list[str]
    tokens_per_run: float
    baseline_tokens_per_run: float
    factor: float | None = Field(description="None when the baseline spent no tokens.")


class UsageSummary(BaseModel):
    total: TokenUsage
    scenarios: list[ScenarioUsage] = Field(default_factory=list)
    amplification: list[Amplification] = Field(default_factory=list)


class RepeatStats(BaseModel):
    """A cell's k runs as statistics: passes of k, pass^k and the 95 % Wilson interval."""

    passes: int
    runs: int
    pass_k: bool = Field(description="All k runs passed.")
    wilson_low: float
    wilson_high: float


class PassKFloor(BaseModel):
    """pass^k over every (cell, invariant) pair of one severity, against gate.min_pass_k."""

    severity: str
    pairs: int
    all_passed: int
    pass_k: float
    floor: float


class Firing(BaseModel):
    """One fault firing: fault number `index` of the scenario, on the `call`-th call to `target`."""

    index: int
    target: str
    call: int
    fault: str = ""

    @property
    def spec(self) -> str:
        return f"{self.index}:{self.target}:{self.call}"

    def describe(self) -> str:
        return f"{self.fault or f'fault {self.index}'} on {self.target} call {self.call}"


class Shrink(BaseModel):
    """What shrinking a failing cell to its minimal fault set found."""

    status: Literal["shrunk", "flaky", "no_faults", "partial", "minimal"] = Field(
        description="minimal: one fault (one firing, or an explored point of one fault), so not re-run.")
    invariant: str | None = Field(default=None, description="The breached invariant the subsets must still breach.")
    fired: list[Firing] = Field(default_factory=list, description="Every firing of the failing run.")
    reruns: int = 0
    command: str | None = Field(default=None, description="Replays exactly the minimal set.")
    note: str = ""


CellChange = Literal["new_failure", "fixed", "still_failing", "still_passing", "new_cell", "removed_cell", "error",
                     "not_judged"]


class CellComparison(BaseModel):
    id: str
    change: CellChange
    base_status: str | None = None
    head_status: str | None = None
    base_passes: str | None = Field(default=None, description="passes/runs on the base, e.g. 3/4")
    head_passes: str | None = None
    base_interval: tuple[float, float] | None = None
    head_interval: tuple[float, float] | None = None
    p_value: float | None = Field(default=None, description="Fisher exact, two-sided, when the pass rate fell.")
    trend: Literal["regression", "inconclusive"] | None = Field(
        default=None, description="For a fallen pass rate: significant at gate.alpha, or not.")
    blocking: bool = Field(default=False, description="Counts for gate.fail_on: regression.")
    severity: str | None = Field(default=None, description="The worst breached severity on the head.")


class InvariantDelta(BaseModel):
    id: str
    base_breached: int
    head_breached: int


class StageDelta(BaseModel):
    stage: str
    base_score: float | None
    head_score: float | None


class Comparison(BaseModel):
    base_config: str
    base_digest: str
    base_seed: int
    same_config: bool
    shared_cells: int
    alpha: float
    score_base: float | None
    score_head: float | None
    counts: dict[str, int]
    cells: list[CellComparison]
    invariants: list[InvariantDelta]
    stages: list[StageDelta]
    notes: list[str] = Field(default_factory=list)

    def ids(self, change: str) -> list[str]:
        return [c.id for c in self.cells if c.change == change]
