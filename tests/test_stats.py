"""Wilson intervals and Fisher's exact test against published reference values."""

import pytest

from gate.scoring.stats import fisher_exact, pass_rate_drop, wilson_interval

# Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of
# seven methods", Statistics in Medicine 17:857-872, Table II, method 3 (Wilson score, no
# continuity correction), 95 %.
NEWCOMBE = [((81, 263), (0.2553, 0.3662)), ((15, 148), (0.0624, 0.1605)),
            ((0, 20), (0.0, 0.1611)), ((1, 29), (0.0061, 0.1718))]


@pytest.mark.parametrize("counts, expected", NEWCOMBE)
def test_wilson_matches_newcombe(counts, expected):
    low, high = wilson_interval(*counts)
    assert (round(low, 4), round(high, 4)) == expected


def test_wilson_edges():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(5, 5)
    assert high == 1.0 and round(low, 4) == 0.5655  # all passed: the upper bound is exactly 1
    assert wilson_interval(0, 5)[0] == 0.0


# Two-sided p-values (R's fisher.test convention, as the literature quotes them):
FISHER = [
    ((3, 1, 1, 3), 0.4857),       # Fisher's lady tasting tea (R docs: TeaTasting, two-sided)
    ((1, 9, 11, 3), 0.002759),    # Wikipedia "Fisher's exact test": dieting by sex, two-tailed
    ((2, 10, 15, 3), 0.0005367),  # R docs: Convictions of like-sex twins (Fleiss 1981), two-sided
]


@pytest.mark.parametrize("table, expected", FISHER)
def test_fisher_matches_published_values(table, expected):
    assert fisher_exact(*table) == pytest.approx(expected, rel=1e-3)


def test_fisher_is_symmetric_and_bounded():
    assert fisher_exact(1, 0, 0, 1) == 1.0  # one run each can never reject
    assert fisher_exact(3, 1, 1, 3) == pytest.approx(fisher_exact(1, 3, 3, 1))
    assert fisher_exact(0, 0, 0, 0) == 1.0
    with pytest.raises(ValueError):
        fisher_exact(-1, 0, 0, 0)


def test_smallest_runs_that_can_reject_a_total_flip():
    assert pass_rate_drop(3, 3, 0, 3) == pytest.approx(0.1)      # 3/3 -> 0/3: inconclusive at 0.05
    assert pass_rate_drop(4, 4, 0, 4) == pytest.approx(1 / 35)   # 4/4 -> 0/4: p = 0.029
