"""Plan: the config expanded into ordered cells with stable ids and derived seeds.

`load_config` reads a config and checks its `when` conditions against those cells: what callers
use to load a config to run. Pure but for reading the config's files.
"""

from gate.plan.cells import BASELINE, Cell, build_plan, invariants_of, select
from gate.plan.load import load_config
from gate.plan.seeds import derive_seed, rng_for

__all__ = ["BASELINE", "Cell", "build_plan", "invariants_of", "derive_seed", "load_config", "rng_for", "select"]
