"""bench/bench_explore.py's hindsight optimum: the lower bound its figures are read against.

The bound is only worth printing if it is exact, so it is checked against brute force over every
order of the cells on small seeded instances, and on a case worked by hand where choosing the
cell that finds most bugs first can miss the optimum.
"""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_explore import hindsight_optimum  # noqa: E402


def brute_force(breach_sets: dict[str, set[str]]) -> int:
    cells = sorted(set().union(*breach_sets.values()))
    best = None
    for order in itertools.permutations(cells):
        cost = sum(next(n for n, c in enumerate(order, 1) if c in found) for found in breach_sets.values())
        best = cost if best is None else min(best, cost)
    return best


def test_looks_past_the_first_cell():
    """Cells x and y each find three bugs; only after y does one more cell (z) find both bugs left.
    A first choice by count alone can take x: 5 + 2 + 1 = 8 cells of waiting; the optimum is
    y then z: 5 + 2 = 7."""
    sets = {"a": {"x", "y"}, "b": {"z"}, "c": {"y"}, "d": {"x", "y"}, "e": {"z", "x"}}
    assert hindsight_optimum(sets) == brute_force(sets) == 7


@pytest.mark.parametrize("seed", range(30))
def test_equals_brute_force(seed):
    rng = random.Random(f"hindsight:{seed}")
    cells = [f"c{n}" for n in range(rng.randint(1, 6))]
    sets = {f"bug{n}": set(rng.sample(cells, rng.randint(1, len(cells)))) for n in range(rng.randint(1, 5))}
    assert hindsight_optimum(sets) == brute_force(sets)


def test_a_bug_no_cell_breaches_has_no_bound():
    assert hindsight_optimum({"found": {"c1"}, "missed": set()}) is None
