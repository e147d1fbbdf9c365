"""Plan: the config expanded into ordered cells with stable ids and derived seeds. Pure."""

from gate.plan.cells import BASELINE, Cell, build_plan, invariants_of, select
from gate.plan.seeds import derive_seed, rng_for

__all__ = ["BASELINE", "Cell", "build_plan", "invariants_of", "derive_seed", "rng_for", "select"]
