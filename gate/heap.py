"""How the gate uses CPython's cyclic garbage collector while it runs and writes its reports.

A run builds a config, a plan and then, cell by cell, results that all live until the report is
written: long-lived objects in bulk, and almost no reference cycles. CPython's defaults collect
the young generation every 700 allocations and, every so often, walk everything that survived,
which for a gate run is its own growing report, again and again. So the run freezes what exists
(`frozen_heap`, `settle_heap`) and collects the young generation less often.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

YOUNG_THRESHOLD = 20_000  # allocations between young collections while the gate runs (CPython: 700)
_held: list[tuple[int, int, int]] = []  # the thresholds to restore, one per open frozen_heap


@contextmanager
def frozen_heap():
    """Exempt what exists before the run (modules, the config, the plan) from the cyclic GC, and
    collect the young generation less often while it runs.

    Those objects live for the whole run, yet every full collection walked them again: with
    thousands of cells that was about a twentieth of the gate's CPU. And every cell allocates
    results that live until the report is written, so at CPython's threshold the older
    generations were collected again and again over a growing heap of them: fewer young
    collections mean fewer of those. The gate makes few reference cycles (a cell's exception and
    its traceback); they wait a little longer. Nested uses (the report writers inside a run) keep
    the outermost's settings; only it restores them and unfreezes, so a process that runs the
    gate many times (the tests) still collects everything once it dies."""
    gc.freeze()
    _held.append(gc.get_threshold())
    gc.set_threshold(max(YOUNG_THRESHOLD, _held[-1][0]), *_held[-1][1:])
    try:
        yield
    finally:
        gc.set_threshold(*_held.pop())
        if not _held:
            gc.unfreeze()


def settle_heap() -> None:
    """Inside `frozen_heap`: exempt what exists now (a finished pool's results, which live until
    the report is written) from the collections that follow."""
    if _held:
        gc.freeze()
