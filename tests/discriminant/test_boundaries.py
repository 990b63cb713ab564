"""normal_boundaries: the allocation regions of two univariate normal populations."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from discrim.discriminant import normal_boundaries


def _in_region(x, region):
    x = np.asarray(x)
    return np.any([(x > lo) & (x < hi) for lo, hi in region], axis=0) if region else np.zeros(x.shape, bool)


def test_seed_example_quadratic_rule():
    res = normal_boundaries(1, 1, 2, 2)
    expected = 2 / 3 + np.array([-1, 1]) * 2 / 3 * math.sqrt(1 + 6 * math.log(2))
    np.testing.assert_allclose(res.points, expected, rtol=1e-14)
    np.testing.assert_allclose(res.points, [-0.85, 2.18], atol=5e-3)
    np.testing.assert_allclose(res.coefficients, (-0.75, 1.0, 2 * math.log(2)), rtol=1e-14)
    assert res.region == [(res.points[0], res.points[1])]
    assert _in_region(0.0, res.region)  # x = 0 goes to population 1
    assert not res.identical


def test_seed_example_equal_variances_is_linear():
    res = normal_boundaries(1, 1, 2, 1)
    assert res.coefficients == (0.0, -2.0, 3.0)  # -2x + 3 > 0
    np.testing.assert_array_equal(res.points, [1.5])
    assert res.region == [(-math.inf, 1.5)]


def test_identical_populations():
    res = normal_boundaries(0.3, 2.0, 0.3, 2.0)
    assert res.identical
    assert res.points.size == 0 and res.region == []
    assert res.coefficients == (0.0, 0.0, 0.0)


def test_larger_variance_first_gives_two_half_lines():
    res = normal_boundaries(2, 2, 1, 1)  # the seed's example with the populations swapped
    np.testing.assert_allclose(res.points, normal_boundaries(1, 1, 2, 2).points, rtol=1e-14)
    lo, hi = res.points
    assert res.region == [(-math.inf, lo), (hi, math.inf)]


def test_nearly_equal_variances_keep_finite_root_accurate():
    # A -> 0: one root runs off to infinity, the other tends to the midpoint; no cancellation.
    res = normal_boundaries(0.0, 1.0, 1.0, 1.0 + 1e-9)
    near = res.points[np.argmin(np.abs(res.points))]
    assert abs(near - 0.5) < 1e-6
    assert np.all(np.isfinite(res.points))


@settings(max_examples=60, deadline=None)
@given(
    m1=st.floats(-5, 5), s1=st.floats(0.2, 5), m2=st.floats(-5, 5), s2=st.floats(0.2, 5)
)
def test_region_matches_density_comparison(m1, s1, m2, s2):
    res = normal_boundaries(m1, s1, m2, s2)
    if res.identical:
        return
    x = np.linspace(-30, 30, 4001)
    diff = norm.logpdf(x, m1, s1) - norm.logpdf(x, m2, s2)
    # Wherever the log densities differ by more than rounding, the region is exactly f_1 > f_2.
    far = np.abs(diff) > 1e-9 * (1 + x * x)
    np.testing.assert_array_equal(_in_region(x, res.region)[far], (diff > 0)[far])
    # f_1 = f_2 at the boundary points (eq. 8.2 evaluated on the log scale).
    a, b, c = res.coefficients
    if abs(a) <= 1e-8 / min(s1, s2) ** 2:
        return  # A = 1/s2^2 - 1/s1^2 is rounding alone for sds equal to ~1e-8: eq. 8.2 cannot judge
    for p in res.points:
        scale = max(1.0, abs(a) * p * p, abs(b * p), abs(c))
        assert abs(a * p * p + b * p + c) <= 1e-9 * scale


@pytest.mark.parametrize(
    "args, match",
    [
        ((0, 0, 1, 1), "std1 must be a finite number > 0"),
        ((0, 1, 1, -2), "std2 must be a finite number > 0"),
        ((math.nan, 1, 1, 1), "mean1 must be a finite number"),
        ((0, 1, math.inf, 1), "mean2 must be a finite number"),
    ],
)
def test_bad_parameters(args, match):
    with pytest.raises(ValueError, match=match):
        normal_boundaries(*args)


def test_non_numeric_parameter():
    with pytest.raises(TypeError, match="mean1 must be a real number"):
        normal_boundaries("a", 1, 0, 1)


# Issue 17: tiny, huge and far-away parameters. The boundaries are checked against the exact
# log-density difference g(x) = log f_1(x) - log f_2(x), evaluated in rational arithmetic at the
# returned float point (only the log terms are rounded).
_EPS = Fraction(2) ** -52


def _g_exact(x, m1, s1, m2, s2):
    """g(x) exactly (up to the rounding of log(s2 / s1)), with |g'(x)| and |g''| bounds."""
    x, m1, s1, m2, s2 = (Fraction(v) for v in (x, m1, s1, m2, s2))
    z1, z2 = (x - m1) / s1, (x - m2) / s2
    # log of the exact ratio rounded once (math.log(s2) - math.log(s1) is off by eps |log s|:
    # 1e-13 at sds of 1e146, more than the slack below, which hid the same error in the code)
    log_ratio = Fraction(math.log(float(s2 / s1)))
    g = (z2 * z2 - z1 * z1) / 2 + log_ratio
    slope = abs(z1) / s1 + abs(z2) / s2
    curve = abs(1 / (s1 * s1) - 1 / (s2 * s2))
    return g, slope, curve, abs(log_ratio)


def _assert_root(p, m1, s1, m2, s2):
    # The point is a root to within the rounding of x = m + s u: a few eps of |p| and of its
    # distances to the means, plus the smallest subnormal.
    g, slope, curve, log_ratio = _g_exact(p, m1, s1, m2, s2)
    dx = 16 * _EPS * (abs(Fraction(p)) + abs(Fraction(p) - Fraction(m1)) + abs(Fraction(p) - Fraction(m2)))
    dx += Fraction(5e-324)
    assert abs(g) <= slope * dx + curve * dx * dx + 16 * _EPS * (1 + log_ratio), (p, float(g))


@pytest.mark.parametrize("s1, s2", [(1e146, 1e147), (1e-146, 1e-145), (1e-150, 1e150), (2.0, 7.0), (1.0, 1.5)])
def test_boundaries_of_equal_means_keep_their_precision_at_any_scale(s1, s2):
    # x^2 = 2 log(s2 / s1) s1^2 s2^2 / (s2^2 - s1^2), with the log of the exact ratio rounded once;
    # -2 log r taken as log(s2) - log(s1) kept only eps |log s| of it: 10-50 eps off at 1e+-146
    S1, S2 = Fraction(s1), Fraction(s2)
    want = 2 * Fraction(math.log(float(S2 / S1))) * S1**2 * S2**2 / (S2**2 - S1**2)
    points = normal_boundaries(0.0, s1, 0.0, s2).points
    assert points.shape == (2,)
    for p in points:
        assert abs(Fraction(float(p)) ** 2 / want - 1) <= 8 * _EPS


_sds = st.floats(-150, 150).map(lambda e: 10.0**e)
_means = st.floats(-1e9, 1e9)


@settings(max_examples=300, deadline=None)
@given(m1=_means, s1=_sds, m2=_means, s2=_sds)
# huge and tiny sds whose ratio is far from 1 (-2 log r from the two logs lost 1e-13 there) or
# close to it (an earlier oracle took the logs' difference, and failed these)
@example(m1=0.0, s1=1e146, m2=0.0, s2=1e147)
@example(m1=0.0, s1=1e-146, m2=0.0, s2=1e-145)
@example(m1=3.0, s1=1e140, m2=-2e140, s2=5e141)
@example(m1=0.0, s1=1e146, m2=0.0, s2=10.0**146.25)
def test_boundaries_are_roots_for_extreme_parameters(m1, s1, m2, s2):
    try:
        res = normal_boundaries(m1, s1, m2, s2)
    except ValueError as exc:
        # Only when a boundary lies beyond the float range: the far root of nearly equal
        # variances is about 2 |mu_1 - mu_2| / (1 - r^2) standard deviations away.
        assert "beyond the float range" in str(exc) and "std1 and std2" in str(exc)
        r = Fraction(min(s1, s2)) / Fraction(max(s1, s2))
        far = 2 * abs(Fraction(m1) - Fraction(m2)) / (1 - r * r) * Fraction(min(s1, s2))
        assert far > Fraction(1e300)
        return
    points = res.points
    assert np.all(np.isfinite(points)) and np.all(np.diff(points) >= 0)
    for p in points:
        _assert_root(float(p), m1, s1, m2, s2)
    # The side claims: population 1 strictly wins inside its region and loses outside, checked
    # at points clear of the boundaries.
    if res.identical:
        return
    lo, hi = points[0], points[-1]
    width = max(abs(lo), abs(hi), hi - lo, s1, s2)
    outside = [lo - width, hi + width]
    inside = [0.5 * lo + 0.5 * hi] if lo < hi and points.size == 2 else []
    for x in outside + inside:
        if not np.isfinite(x) or x in (lo, hi):
            continue
        g = _g_exact(x, m1, s1, m2, s2)[0]
        if g != 0:
            assert _in_region(x, res.region) == (g > 0), (x, float(g), res.region)
    if points.size == 2:  # the sharper population wins between the roots
        assert (res.region == [(lo, hi)] or lo == hi) if s1 < s2 else len(res.region) == 2


def test_shift_of_means_keeps_boundaries_to_the_spread():
    # The seed example moved by 1e8: the boundaries move with it within rounding of 1e8
    # (relative to the first mean), not 0.025 standard deviations as the expanded eq. (8.2).
    base = normal_boundaries(1, 1, 2, 2).points
    shifted = normal_boundaries(1e8 + 1, 1, 1e8 + 2, 2).points
    np.testing.assert_allclose(shifted - 1e8, base, atol=4 * 1e8 * 2**-52)


@pytest.mark.parametrize(
    "args",
    [(0, 1e-200, 1, 1e-180), (0, 1e200, 1, 1e180), (1e300, 1, -1e300, 2), (0, 5e-324, 1e-300, 1e-310)],
)
def test_tiny_and_huge_parameters_do_not_crash(args):
    # These raised ZeroDivisionError or OverflowError (squares of 1/s).
    try:
        res = normal_boundaries(*args)
    except ValueError as exc:
        assert "mean" in str(exc) or "std" in str(exc)
        return
    assert np.all(np.isfinite(res.points))
    for p in res.points:
        _assert_root(float(p), *args)


def test_unrepresentable_far_root_is_a_clear_error():
    with pytest.raises(ValueError, match="beyond the float range"):
        normal_boundaries(0.0, 1.0, 1e300, 1.0 + 2**-52)
