"""Small exact statistics for repeated runs: Wilson score intervals and Fisher's exact test. Pure.

Why these two: a cell run k times gives a handful of Bernoulli trials, far too few
for normal approximations. Wilson's interval stays inside [0, 1] and is honest at
0/k and k/k; Fisher's test is exact for two small samples, so a base-vs-head drop in
pass rate is called a regression only when chance alone is an unlikely explanation.
No SciPy: both fit in a few lines of the standard library.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal distribution


def wilson_interval(passes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (no continuity correction); (0, 1) when nothing was tried."""
    if trials <= 0:
        return 0.0, 1.0
    p = passes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    # at 0/n and n/n the bound is exactly 0 or 1; rounding must not leave a 1e-17 behind
    low = 0.0 if passes == 0 else max(0.0, centre - half)
    high = 1.0 if passes == trials else min(1.0, centre + half)
    return low, high


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _table_probability(a: int, row1: int, row2: int, col1: int) -> float:
    """Hypergeometric probability of a 2x2 table with top-left `a` and the given margins."""
    return math.exp(_log_choose(row1, a) + _log_choose(row2, col1 - a) - _log_choose(row1 + row2, col1))


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test for the table [[a, b], [c, d]].

    Sums the probabilities of every table with the same margins that is no more likely
    than the observed one (the convention of R's fisher.test), with a small relative
    tolerance so tables equal in exact arithmetic are not split by floating point."""
    if min(a, b, c, d) < 0:
        raise ValueError("a 2x2 table holds counts, not negative numbers")
    row1, row2, col1 = a + b, c + d, a + c
    lowest, highest = max(0, col1 - row2), min(row1, col1)
    observed = _table_probability(a, row1, row2, col1)
    total = sum(p for x in range(lowest, highest + 1)
                if (p := _table_probability(x, row1, row2, col1)) <= observed * (1 + 1e-7))
    return min(1.0, total)


def pass_rate_drop(base_passes: int, base_runs: int, head_passes: int, head_runs: int) -> float:
    """p-value that base and head pass at the same rate, from (passes, failures) of each."""
    return fisher_exact(base_passes, base_runs - base_passes, head_passes, head_runs - head_passes)
