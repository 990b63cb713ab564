"""The direct driver of scipy's compiled L-BFGS-B takes exactly scipy.optimize.minimize's path."""

import warnings

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.optim._setulb import compiled_setulb, run_setulb

pytestmark = pytest.mark.skipif(compiled_setulb() is None,
                                reason="this scipy's compiled L-BFGS-B interface is not the one the driver knows")


def _problem(seed, n):
    """A smooth non-convex function (a shifted Rosenbrock plus a quartic) and random bounds."""
    rng = np.random.default_rng(seed)
    shift = rng.normal(size=n)
    lower = np.where(rng.random(n) < 0.5, rng.uniform(-2.0, 0.5, n), -np.inf)
    upper = np.where(rng.random(n) < 0.4, np.maximum(lower, -1.0) + rng.uniform(0.1, 2.0, n), np.inf)
    x0 = rng.normal(size=n) * 2.0

    def fun_and_grad(x):
        z = x - shift
        value = scipy.optimize.rosen(z) + 0.1 * np.sum(z**4)
        return float(value), scipy.optimize.rosen_der(z) + 0.4 * z**3

    return fun_and_grad, x0, lower, upper


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 25), m=st.integers(1, 12), maxls=st.integers(1, 25),
       max_iter=st.integers(1, 200), ftol_exp=st.integers(-12, -2), gtol_exp=st.integers(-9, -2),
       halt_at=st.one_of(st.none(), st.integers(1, 30)))
def test_driver_equals_scipy_minimize(seed, n, m, maxls, max_iter, ftol_exp, gtol_exp, halt_at):
    fun_and_grad, x0, lower, upper = _problem(seed, n)
    ftol, gtol = 10.0**ftol_exp, 10.0**gtol_exp
    seen_fast, seen_scipy = [], []

    def halt_fast(n_iter, x, f):
        seen_fast.append((x.copy(), f))
        return halt_at is not None and n_iter >= halt_at

    def halt_scipy(intermediate_result):
        seen_scipy.append((intermediate_result.x.copy(), float(intermediate_result.fun)))
        if halt_at is not None and len(seen_scipy) >= halt_at:
            raise StopIteration

    x, f, n_iter, n_eval, success, message = run_setulb(
        fun_and_grad, x0, lower, upper, m=m, factr=ftol / np.finfo(float).eps, pgtol=gtol, max_iter=max_iter,
        max_fun=15000, maxls=maxls, callback=halt_fast)
    ref = scipy.optimize.minimize(
        fun_and_grad, x0, jac=True, method="L-BFGS-B", bounds=scipy.optimize.Bounds(lower, upper),
        options={"maxiter": max_iter, "maxfun": 15000, "ftol": ftol, "gtol": gtol, "maxcor": m, "maxls": maxls},
        callback=halt_scipy)
    np.testing.assert_array_equal(x, ref.x)
    assert (f, n_iter, n_eval) == (float(ref.fun), ref.nit, ref.nfev)
    if "StopIteration" not in ref.message:  # minimize rewrites the outcome of a halting callback
        assert (success, message) == (ref.success, ref.message)
    assert len(seen_fast) == len(seen_scipy)
    for (xa, fa), (xb, fb) in zip(seen_fast, seen_scipy):
        np.testing.assert_array_equal(xa, xb)
        assert fa == fb
    assert np.all(x >= lower) and np.all(x <= upper)


def test_start_outside_the_bounds_is_clipped_as_scipy_does():
    fun_and_grad, _, lower, upper = _problem(0, 6)
    x0 = np.full(6, 50.0)
    x, f, n_iter, n_eval, success, message = run_setulb(
        fun_and_grad, x0, lower, upper, m=10, factr=1e7, pgtol=1e-5, max_iter=500, max_fun=15000, maxls=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # some scipy versions warn about the start
        ref = scipy.optimize.minimize(fun_and_grad, x0, jac=True, method="L-BFGS-B",
                                      bounds=scipy.optimize.Bounds(lower, upper))
    np.testing.assert_array_equal(x, ref.x)
    assert (n_iter, n_eval, message) == (ref.nit, ref.nfev, ref.message)


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=8),
       flip=st.integers(0, 7))
def test_same_point_agrees_with_array_equal_up_to_the_sign_of_zero(values, flip):
    from discrim.optim._setulb import _same_point

    x = np.array(values)
    other = x.copy()
    other[flip % x.size] = -other[flip % x.size] if np.isfinite(other[flip % x.size]) else other[flip % x.size]
    for y in (x.copy(), other):
        same = _same_point(x, y)
        if same:  # never claims equality that np.array_equal (scipy's test) would deny
            assert np.array_equal(x, y)
        elif np.array_equal(x, y):  # the only false "different": a zero of the other sign
            assert np.any((x == 0) & (np.signbit(x) != np.signbit(y)))
