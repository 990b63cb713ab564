"""The bins algorithm, the minimum-cases lemma and candidate draws."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.prototype._candidates import (
    _min_rows,
    assign_bins,
    candidates_per_bin,
    check_min_cases,
    draw_candidates,
    min_cases_brute_force,
    min_cases_violations,
    round_half_up,
    stratified_subsample,
)


@pytest.mark.parametrize(
    "g, M, eta, expected",
    [
        # worked by hand: empty bin gives 0, bin of 10 gives 5, the rest split 35 evenly (17.5 -> 18)
        ([0, 10, 50, 100], 40, 0.5, [0, 5, 18, 18]),
        # input order is kept
        ([100, 0, 10, 50], 40, 0.5, [18, 0, 5, 18]),
        # sum(g) < M: every bin gives its maximum eta * g
        ([4, 6, 10, 0], 100, 0.5, [2, 3, 5, 0]),
        # every bin large enough: the even share M / 2K
        ([100, 200, 300, 400], 40, 0.5, [10, 10, 10, 10]),
        # all g_i <= M / 2K (the seed's second edge case): eta caps each bin at eta * g_i
        ([5, 5, 5, 5], 40, 0.5, [3, 3, 3, 3]),
        ([8, 8, 8, 8], 40, 0.25, [2, 2, 2, 2]),
        # eta = 0.2: bins of 10 and 20 give 2 and 4; the remaining 94 split over two bins of 1000
        ([10, 20, 1000, 1000], 100, 0.2, [2, 4, 47, 47]),
        # halves round up (the rounding the minimum-cases lemma assumes)
        ([1, 1], 10, 0.5, [1, 1]),
        ([3, 1000], 5, 0.5, [2, 4]),
    ],
)
def test_candidates_per_bin_hand_worked(g, M, eta, expected):
    np.testing.assert_array_equal(candidates_per_bin(g, M, eta), expected)


@settings(max_examples=60, deadline=None)
@given(
    g=st.lists(st.integers(0, 500), min_size=2, max_size=12),
    M=st.integers(1, 2000),
    eta=st.floats(0.05, 0.95),
)
def test_candidates_per_bin_properties(g, M, eta):
    h = candidates_per_bin(g, M, eta)
    g = np.asarray(g)
    assert np.all(h >= 0)
    assert np.all(h <= round_half_up(eta * g))  # never more than the rounded cap
    if g.sum() * eta <= M:  # the whole capacity fits: everything admissible is drawn
        np.testing.assert_array_equal(h, round_half_up(eta * g))
    else:  # the budget is used up to rounding
        assert abs(h.sum() - M) <= len(g) / 2 + 1e-9


def test_min_cases_compact_form_equals_brute_force():
    etas = [Fraction(i, 40) for i in range(1, 40)] + [Fraction(1, 3), Fraction(2, 3), Fraction(1, 7)]
    for eta in etas:
        for n_k in range(0, 60):
            compact = not min_cases_violations([n_k], float(eta))[0]
            assert compact == min_cases_brute_force(n_k, float(eta)), (n_k, eta)


def test_min_cases_default_needs_three_rows():
    # the seed: eta = 0.5 requires N_k >= 3
    np.testing.assert_array_equal(min_cases_violations([0, 1, 2, 3, 4], 0.5), [True, True, True, False, False])


def test_check_min_cases_names_class_and_count():
    with pytest.raises(ValueError, match=r"class 'b' has 2 row\(s\).*at least 3"):
        check_min_cases(np.array([10, 2]), 0.5, np.array(["a", "b"]))
    check_min_cases(np.array([10, 3]), 0.5, np.array(["a", "b"]))


@pytest.mark.parametrize(
    "count, eta, offered",
    [
        (2, 0.5, False),  # at 0.5 already: moving it cannot help
        (2, 0.3, False),  # 2 rows are too few at every max_fraction (3 are needed at 0.5)
        (3, 0.1, True),  # 3 rows suffice at 0.5 but not at 0.1
        (3, 0.9, True),
    ],
)
def test_check_min_cases_offers_moving_max_fraction_only_where_it_helps(count, eta, offered):
    assert min_cases_violations([count], eta)[0]
    assert offered == (not min_cases_violations([count], 0.5)[0])
    advice = "add rows, merge rare classes, or move max_fraction towards 0.5." if offered else \
        "add rows or merge rare classes."
    with pytest.raises(ValueError, match=rf"class 'b' has {count} row\(s\).*: {advice}$"):
        check_min_cases(np.array([100, count]), eta, np.array(["a", "b"]))


def test_check_min_cases_takes_the_caller_s_fixes():
    with pytest.raises(ValueError, match=r"in the fold 1 data, .*: use fewer folds or add rows\.$"):
        check_min_cases(np.array([100, 2]), 0.5, np.array(["a", "b"]), what="fold 1 data",
                        fixes=("use fewer folds", "add rows"))


def test_assign_bins_by_class_and_correctness():
    proba = np.array([[0.7, 0.3], [0.4, 0.6], [0.5, 0.5], [0.2, 0.8], [0.9, 0.1]])
    y = np.array([0, 0, 0, 1, 1])
    # class 0 correct -> 1; class 0 wrong -> 0; a tie is not correct; class 1 correct -> 3; wrong -> 2
    np.testing.assert_array_equal(assign_bins(proba, y), [1, 0, 0, 3, 2])


def test_marginal_model_leaves_half_the_bins_empty():
    y = np.array([0] * 5 + [1] * 8 + [2] * 3)
    bins = assign_bins(np.tile([5 / 16, 8 / 16, 3 / 16], (16, 1)), y)
    np.testing.assert_array_equal(np.bincount(bins, minlength=6), [5, 0, 0, 8, 3, 0])


def test_draw_candidates_counts_and_reproducibility():
    bins = np.repeat(np.arange(4), [3, 10, 0, 7])
    h = np.array([1, 5, 0, 3])
    a = draw_candidates(bins, 4, h, np.random.default_rng(1))
    b = draw_candidates(bins, 4, h, np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.bincount(bins[a], minlength=4), h)
    assert np.unique(a).size == a.size and np.all(np.diff(a) > 0)


def test_stratified_subsample_keeps_proportions():
    y = np.repeat([0, 1, 2], [100, 300, 600])
    idx = stratified_subsample(y, 3, 100, np.random.default_rng(0))
    np.testing.assert_array_equal(np.bincount(y[idx]), [10, 30, 60])
    np.testing.assert_array_equal(stratified_subsample(y, 3, 5000, np.random.default_rng(0)), np.arange(1000))


def _min_rows_by_search(eta):
    n = 1
    while min_cases_violations([n], eta)[0]:
        n += 1
    return n


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-3, max_value=0.999, allow_nan=False))
def test_min_rows_closed_form_equals_the_search(eta):
    n = _min_rows(eta)
    assert n == _min_rows_by_search(eta)
    # it is the smallest count that satisfies the condition
    assert not min_cases_violations([n], eta)[0] and min_cases_violations([n - 1], eta)[0]


@pytest.mark.parametrize("eta", [1e-12, 1e-300, 1.0 - 1e-12, 5e-324])
def test_tiny_or_extreme_max_fraction_is_refused_at_once_with_the_needed_count(eta):
    # found by bisection on the condition, without counting up to it (which never ended for 1e-12)
    n = _min_rows(eta)
    if n != np.inf:
        assert not min_cases_violations([n], eta)[0]
    if n < 2**53:  # below, consecutive counts are distinct floats
        assert min_cases_violations([n - 1], eta)[0]
    with pytest.raises(ValueError, match=rf"max_fraction={eta} needs at least {n} per class"):
        check_min_cases(np.array([10**6, 10**6]), eta, np.array([0, 1]))
