"""Which calls of a long trace an excerpt shows: never the ones that explain the failure dropped.

A Markdown trace table has room for a dozen rows, but the call that breaks a cell is often
late (the retry that refunded twice is call 15 of 17). So an excerpt keeps, first, every
call a fault hit and every later call that repeated one of them (same upstream, method,
path and tool: the retry), then the earliest other calls up to the row budget; the calls
left out are shown as gaps, in order. Pure.
"""

from __future__ import annotations

KEEP_MAX = 40  # faulted calls and their repeats kept even past the row budget, up to this many


def _key(step) -> tuple:
    return (step.target, step.method, step.path, step.tool or step.rpc_method)


def shown_steps(trace: list, limit: int = 12) -> list[int]:
    """Indices into `trace`, ascending: faulted calls, their repeats, then the first others up to `limit`."""
    if len(trace) <= limit:
        return list(range(len(trace)))
    faulted = [n for n, step in enumerate(trace) if step.fault]
    first_fault: dict[tuple, int] = {}
    for n in faulted:
        first_fault.setdefault(_key(trace[n]), n)
    repeats = [n for n, step in enumerate(trace)
               if not step.fault and first_fault.get(_key(step), n) < n]
    keep = (faulted + repeats)[:KEEP_MAX]
    chosen = set(keep)
    for n in range(len(trace)):
        if len(chosen) >= limit:
            break
        chosen.add(n)
    return sorted(chosen)


def gaps(indices: list[int], total: int) -> list[tuple[int, int]]:
    """(position in `indices` before which the gap falls, calls left out) for every run of omitted calls;
    a gap after the last shown call has position len(indices)."""
    out, expected = [], 0
    for pos, n in enumerate(indices):
        if n > expected:
            out.append((pos, n - expected))
        expected = n + 1
    if total > expected:
        out.append((len(indices), total - expected))
    return out
