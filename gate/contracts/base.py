"""The shape every invariant shares, and the registry that makes adding one a one-file change.

An invariant is a pydantic model (its parameters are the config schema) with a
`check(observation)` method. Registering the class adds it to the config's
discriminated union, to the JSON Schema and to the docs at once, Toxiproxy-style.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

Severity = Literal["critical", "high", "medium", "low"]
SEVERITY_WEIGHT: dict[str, int] = {"critical": 3, "high": 2, "medium": 1, "low": 1}
SEVERITY_RANK: dict[str, int] = {"critical": 0, "high": 1, "medium": 2, "low": 3}  # worst first


def check_regex(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
    return value


Regex = Annotated[str, AfterValidator(check_regex)]


class StrictModel(BaseModel):
    """Unknown keys are errors everywhere in the config: a typo must never be ignored."""

    model_config = ConfigDict(extra="forbid")


Patterns = str | list[str]


class When(StrictModel):
    """Which cells an invariant applies to; every given field must match (globs allowed)."""

    stage: Patterns | None = None
    input: Patterns | None = None
    mutation: Patterns | None = None
    scenario: Patterns | None = Field(
        default=None,
        description="baseline (fault-free contract cells), a contract/chaos scenario or profile name, custom "
                    "(chaos.faults), replay, or mutation (every mutation cell: no faults, a perturbed input).")

    def matches(self, facts: dict[str, str | None]) -> bool:
        for key in ("stage", "input", "mutation", "scenario"):
            wanted = getattr(self, key)
            if wanted is None:
                continue
            value = facts.get(key)
            patterns = [wanted] if isinstance(wanted, str) else wanted
            if value is None or not any(fnmatch.fnmatchcase(value, p) for p in patterns):
                return False
        return True


@dataclass
class Observation:
    """Everything one run of one cell produced, as the checkers see it."""

    output: str | None
    reason: str  # ok, agent_timeout, agent_crash, http_5xx, http_4xx, bad_output_json, ...
    status: int | None = None  # HTTP status or process exit code
    latency_ms: float = 0.0
    baseline: str | None = None
    trace: list[Any] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    # the fault-free run of the same input and what was done to this one (gate/contracts/universal.py)
    reference: Any = None
    detail: str = ""  # how a crash or a non-zero exit ended, with the tail of the agent's log

    @property
    def completed(self) -> bool:
        return self.reason == "ok"


@dataclass
class Verdict:
    """A checker's answer; `message` must not embed timings (the verdict part is byte-stable).

    `judged=False` means the run gave the checker nothing to judge (no output after a
    timeout or crash): it is neither a pass nor a breach, so the outcome invariant
    (`completes`) carries the failure once instead of every output check repeating it."""

    passed: bool
    message: str
    judged: bool = True

    @classmethod
    def not_judged(cls, message: str) -> Verdict:
        return cls(True, message, judged=False)


class InvariantBase(StrictModel):
    """Fields every invariant has; subclasses add `type` and their parameters."""

    # built on first use: most configs name few of the catalog's types (gate/config/catalog_union.py)
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$", description="Stable id, shown in reports.")
    severity: Severity = "medium"
    when: When | None = Field(default=None, description="Apply only to matching cells.")
    negate: bool = Field(default=False, description="Pass exactly when the check fails.")
    min_pass_rate: float = Field(
        default=1.0, ge=0.0, le=1.0,
        description="With runs > 1: fraction of runs that must pass before this is a breach.",
    )
    description: str | None = None

    kind: ClassVar[str] = "outcome"  # output | outcome | trace | state
    # `async probe(client) -> dict` on invariants that look at the world after a run (`state`); a plain
    # None elsewhere, because asking a pydantic model for a missing attribute costs an exception per cell
    probe: ClassVar[Any] = None

    def applies_to(self, facts: dict[str, str | None]) -> bool:
        return self.when is None or self.when.matches(facts)

    def evaluate(self, obs: Observation) -> Verdict:
        verdict = self.check(obs)
        if self.negate and verdict.judged:
            return Verdict(not verdict.passed, f"negated: {verdict.message}")
        return verdict

    def check(self, obs: Observation) -> Verdict:  # pragma: no cover - abstract
        raise NotImplementedError


INVARIANTS: dict[str, type[InvariantBase]] = {}


def register(cls: type[InvariantBase]) -> type[InvariantBase]:
    name = cls.model_fields["type"].default
    INVARIANTS[name] = cls
    return cls
