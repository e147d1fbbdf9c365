"""Split the plan into N shards for a CI matrix. Pure.

Cells are dealt in plan order to the least-loaded shard by expected cost (runs, more
for cells whose faults hold connections open), ties going to the lowest index: the
same plan always gives the same split, every cell lands in exactly one shard, and
the shards' costs differ by at most one cell's cost.
"""

from __future__ import annotations

import re

from gate.errors import ConfigError
from gate.plan.cells import Cell

SLOW_FAULTS = {"timeout", "stall", "timeout_after_write", "hang_after_write", "latency"}


def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ConfigError(f"--shard {text!r}: expected I/N with 1 <= I <= N, e.g. 2/4")
    return int(m.group(1)), int(m.group(2))


def cost(cell: Cell, runs: int) -> int:
    slow = any(getattr(f, "kind", None) in SLOW_FAULTS for f in cell.faults)
    return runs * (5 if slow else 1)


def assign(cells: list[Cell], total: int, runs: int) -> list[int]:
    """Shard index (1-based) of every cell, in plan order."""
    load = [0] * total
    out = []
    for cell in cells:
        target = min(range(total), key=lambda i: (load[i], i))
        load[target] += cost(cell, runs)
        out.append(target + 1)
    return out


def shard_of(cells: list[Cell], index: int, total: int, runs: int) -> list[Cell]:
    return [c for c, s in zip(cells, assign(cells, total, runs), strict=True) if s == index]
