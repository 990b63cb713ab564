"""normal_boundaries: the allocation regions of two univariate normal populations."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
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
