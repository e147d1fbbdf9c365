"""Config of exploration (`chaos.explore`): the gate faults every call site its baselines reach.

A config that names no fault explores by default (gate/explore decides when); these keys only
bound it. `explore: off` (YAML's false) switches it off; `explore: {...}` switches it on even
beside scenarios. The oracles are the universal invariants (gate/contracts/universal.py): each
can be switched off or given another severity here, by name, like any invariant's severity.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from gate.contracts.base import Severity, StrictModel
from gate.contracts.universal import EXPLORE_ORACLES

DEFAULT_BUDGET = 60  # cells: the bundled example explores in well under a minute on 2 cores


class ExploreConfig(StrictModel):
    budget: int = Field(default=DEFAULT_BUDGET, ge=1, le=5000,
                        description="At most this many fault cells (single faults first; the rest are counted "
                                    "as pruned by the budget).")
    depth: Literal[1, 2] = Field(default=1, description="1: one fault per cell; 2: pairs of faults within one "
                                                        "conversation too, after every single fault.")
    kinds: list[str] | None = Field(default=None,
                                    description="Fault kinds to try (default: every kind of the catalog that applies "
                                                "at a site).")
    skip: list[str] = Field(default_factory=list,
                            description="Globs of tools (or upstream names) never faulted.")
    baseline_runs: int = Field(default=2, ge=1, le=10,
                               description="Fault-free runs of each input before exploring it: the oracles that "
                                           "compare with the baseline judge against what varied between them (a "
                                           "real model never answers twice alike).")
    persistent: bool = Field(default=True,
                             description="After the single faults, each site's outage: the fault on every call of "
                                         "the site.")
    oracles: dict[str, Literal["off"] | Severity] = Field(
        default_factory=dict, description="Universal oracle name -> `off`, or the severity it is judged with.")

    @field_validator("oracles", mode="before")
    @classmethod
    def _bare_off(cls, value):
        """`whole_answer: off` as written, unquoted: YAML reads a bare `off` as false."""
        return {k: ("off" if v is False else v) for k, v in value.items()} if isinstance(value, dict) else value

    @field_validator("oracles")
    @classmethod
    def _known(cls, value: dict) -> dict:
        unknown = sorted(set(value) - set(EXPLORE_ORACLES))
        if unknown:
            raise ValueError(f"no universal oracle named {', '.join(unknown)}; the oracles are "
                             f"{', '.join(EXPLORE_ORACLES)}")
        return value
