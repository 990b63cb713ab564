"""Tests of the penalty, the penalised objective and the L-BFGS-B wrapper."""

import numpy as np
import pytest
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning

import array_api_compat.numpy as xp

from discrim.optim import NonNegElasticNet, Objective, PenalizedObjective, minimize_lbfgsb


class _Quadratic:
    """0.5 |theta - c|^2, a datafit with a known minimiser."""

    xp = xp
    dtype = np.float64
    device = None

    def __init__(self, c):
        self.c = np.asarray(c, dtype=np.float64)

    def value_and_grad(self, t):
        r = t - self.c
        return 0.5 * float(r @ r), r


@pytest.mark.parametrize("alpha, l1_ratio", [(0.0, 0.5), (1.0, 0.0), (0.3, 1.0), (2.0, 0.05)])
def test_penalty_value_and_gradient(alpha, l1_ratio, rng):
    pen = NonNegElasticNet(alpha, l1_ratio)
    t = rng.uniform(0.0, 2.0, 7)
    value, grad = pen.value_and_grad(t)
    assert value == pytest.approx(alpha * (l1_ratio * t.sum() + (1 - l1_ratio) / 2 * (t**2).sum()))
    err = scipy.optimize.check_grad(lambda s: pen.value_and_grad(s)[0], lambda s: pen.value_and_grad(s)[1], t)
    assert err < 1e-6


def test_penalized_objective_is_an_objective_and_adds_blocks(rng):
    c = rng.normal(size=5)
    obj = PenalizedObjective(_Quadratic(c), [(slice(0, 2), NonNegElasticNet(1.0, 0.5)),
                                             (slice(2, 5), NonNegElasticNet(0.1, 1.0))], np.ones(5))
    assert isinstance(obj, Objective)
    assert obj.n_params == 5
    t = rng.uniform(0.1, 1.0, 5)
    value, grad = obj.value_and_grad(t)
    expected = 0.5 * np.sum((t - c) ** 2) + 0.5 * t[:2].sum() + 0.25 * (t[:2] ** 2).sum() + 0.1 * t[2:].sum()
    assert value == pytest.approx(expected)
    assert scipy.optimize.check_grad(lambda s: obj.value_and_grad(s)[0], lambda s: obj.value_and_grad(s)[1], t) < 1e-6


def test_minimize_lbfgsb_matches_closed_form(rng):
    # min 0.5 |t - c|^2 + a * l1 * sum t  s.t. t >= 0  ->  t = max(c - a * l1, 0)
    c = rng.normal(size=8)
    obj = PenalizedObjective(_Quadratic(c), [(slice(0, 8), NonNegElasticNet(0.5, 1.0))], np.ones(8))
    res = minimize_lbfgsb(obj, tol=1e-10)
    assert res.converged
    np.testing.assert_allclose(res.theta, np.maximum(c - 0.5, 0.0), atol=1e-7)
    assert res.value == pytest.approx(obj.value_and_grad(res.theta)[0])
    assert res.n_iter >= 1 and res.n_eval >= res.n_iter


def test_minimize_lbfgsb_warns_when_stopped_early(rng):
    obj = PenalizedObjective(_Quadratic(rng.normal(size=30) * 10), [], np.zeros(30))
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = minimize_lbfgsb(obj, max_iter=1, tol=0.0)
    assert not res.converged


def test_minimize_lbfgsb_with_scale_solves_the_same_problem(rng):
    c = rng.normal(size=6)
    obj = PenalizedObjective(_Quadratic(c), [(slice(0, 6), NonNegElasticNet(0.5, 1.0))], np.ones(6))
    scale = np.array([1e-2, 0.1, 1.0, 10.0, 1.0, 3.0])
    res = minimize_lbfgsb(obj, tol=1e-12, scale=scale)
    np.testing.assert_allclose(res.theta, np.maximum(c - 0.5, 0.0), atol=1e-7)
    with pytest.raises(ValueError, match="positive"):
        minimize_lbfgsb(obj, scale=-np.ones(6))


def test_restricted_objective_fixes_the_other_coordinates(rng):
    from discrim.optim import Restricted

    c = rng.normal(size=5)
    obj = PenalizedObjective(_Quadratic(c), [], np.ones(5))
    theta = rng.uniform(0.5, 1.0, 5)
    sub = Restricted(obj, np.array([1, 3]), theta)
    assert sub.n_params == 2
    np.testing.assert_array_equal(sub.x0(), theta[[1, 3]])
    value, grad = sub.value_and_grad(np.array([0.2, 0.4]))
    full = theta.copy()
    full[[1, 3]] = [0.2, 0.4]
    assert value == pytest.approx(obj.value_and_grad(full)[0])
    np.testing.assert_allclose(grad, (full - c)[[1, 3]])
    res = minimize_lbfgsb(sub, tol=1e-12)
    np.testing.assert_allclose(sub.embed(res.theta)[[1, 3]], np.maximum(c[[1, 3]], 0.0), atol=1e-7)
    np.testing.assert_array_equal(sub.embed(res.theta)[[0, 2, 4]], theta[[0, 2, 4]])
    np.testing.assert_array_equal(obj.with_x0(full).x0(), full)


def test_restricted_lower_bounds_are_respected(rng):
    from discrim.optim import Restricted

    c = np.array([-1.0, 0.3, 2.0])
    obj = PenalizedObjective(_Quadratic(c), [], np.ones(3))
    sub = Restricted(obj, np.arange(3), np.ones(3), lower=np.full(3, 0.5))
    res = minimize_lbfgsb(sub, tol=1e-12)
    np.testing.assert_allclose(res.theta, [0.5, 0.5, 2.0], atol=1e-7)


def test_minimize_lbfgsb_stop_callback_ends_early_without_warning(rng, recwarn):
    obj = PenalizedObjective(_Quadratic(rng.normal(size=30) * 10), [], np.zeros(30))
    seen = []

    def stop(n_iter, theta, value):
        seen.append((n_iter, value))
        assert theta.shape == (30,)
        return n_iter >= 2

    res = minimize_lbfgsb(obj, tol=0.0, stop=stop, scale=np.full(30, 2.0))
    assert res.n_iter == 2 and not res.converged and "stop" in res.message
    assert [n for n, _ in seen] == [1, 2]
    assert res.value == pytest.approx(obj.value_and_grad(res.theta)[0])
    assert not [w for w in recwarn if issubclass(w.category, ConvergenceWarning)]


class _Rosenbrock:
    """scipy's Rosenbrock function on the non-negative orthant (minimum 0 at all ones)."""

    n_params = 4

    def x0(self):
        return np.full(self.n_params, 3.0)

    def bounds(self):
        return scipy.optimize.Bounds(np.zeros(self.n_params), np.full(self.n_params, np.inf))

    def value_and_grad(self, theta):
        return float(scipy.optimize.rosen(theta)), scipy.optimize.rosen_der(theta)


def test_late_ftol_runs_at_least_ftol_after_iterations():
    # a relative-decrease bound this loose stops L-BFGS-B's own test within a few iterations
    early = minimize_lbfgsb(_Rosenbrock(), ftol=0.5)
    late = minimize_lbfgsb(_Rosenbrock(), ftol=0.5, ftol_after=15)
    assert early.n_iter < 15 <= late.n_iter
    assert late.value < early.value
    assert late.converged and "ftol" in late.message


def test_late_ftol_stops_on_the_relative_decrease():
    f_values = []

    class _Recording(_Rosenbrock):
        def value_and_grad(self, theta):
            value, grad = super().value_and_grad(theta)
            f_values.append(value)
            return value, grad

    res = minimize_lbfgsb(_Recording(), ftol=1e-3, ftol_after=3, max_iter=1000)
    assert res.converged and res.n_iter >= 3
    full = minimize_lbfgsb(_Rosenbrock(), max_iter=1000)
    assert res.n_iter < full.n_iter  # stopped before the strict solve would


class _BoundRosenbrock:
    """The chained Rosenbrock function: non-convex, with bounds that bind at the solution."""

    def __init__(self, n):
        self.n_params = n

    def x0(self):
        return np.linspace(-1.0, 2.0, self.n_params)

    def bounds(self):
        lower = np.full(self.n_params, -np.inf)
        lower[::3] = 0.5
        upper = np.full(self.n_params, np.inf)
        upper[1::4] = 0.8  # below the unconstrained minimiser (all ones): these bounds bind
        return scipy.optimize.Bounds(lower, upper)

    def value_and_grad(self, t):
        return float(scipy.optimize.rosen(t)), scipy.optimize.rosen_der(t)


@pytest.mark.parametrize("options", [
    dict(),
    dict(max_iter=7),
    dict(ftol=1e-4),
    dict(tol=1e-2, m=3, maxls=5),
])
def test_minimize_lbfgsb_compiled_driver_equals_scipy_minimize(options):
    # The direct driver of scipy's compiled routine must take exactly scipy.optimize.minimize's
    # path: same iterates, counts and messages.
    from discrim.optim._setulb import compiled_setulb

    if compiled_setulb() is None:
        pytest.skip("this scipy's compiled L-BFGS-B interface is not the one the driver knows")
    objective = _BoundRosenbrock(12)
    with pytest.warns(ConvergenceWarning) if "max_iter" in options else _no_warning():
        fast = minimize_lbfgsb(objective, **options)
    with pytest.warns(ConvergenceWarning) if "max_iter" in options else _no_warning():
        reference = minimize_lbfgsb(objective, driver="scipy", **options)
    np.testing.assert_array_equal(fast.theta, reference.theta)
    assert (fast.value, fast.n_iter, fast.n_eval, fast.converged, fast.message) == \
        (reference.value, reference.n_iter, reference.n_eval, reference.converged, reference.message)
    lower, upper = objective.bounds().lb, objective.bounds().ub
    assert np.all(fast.theta >= lower) and np.all(fast.theta <= upper)


@pytest.mark.parametrize("driver", ["auto", "scipy"])
def test_minimize_lbfgsb_paths_agree_with_stop_scale_and_late_ftol(driver, rng):
    objective = _BoundRosenbrock(9)
    scale = rng.uniform(0.5, 2.0, 9)
    seen = []
    stopped = minimize_lbfgsb(objective, scale=scale, stop=lambda n, theta, value: seen.append(theta) or n >= 4,
                              driver=driver)
    assert stopped.n_iter == 4 and stopped.message == "stopped by the stop callback"
    np.testing.assert_allclose(seen[-1], stopped.theta)  # the callback sees theta, not the scaled u
    late = minimize_lbfgsb(objective, scale=scale, ftol=1e-3, ftol_after=5, driver=driver)
    assert late.converged and late.n_iter >= 5


class _no_warning:
    """A context that fails the test on any ConvergenceWarning."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", ConvergenceWarning)

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


def test_penalized_objective_generic_penalty_equals_fused_elastic_net(rng):
    # Elastic nets are fused into per-parameter coefficients; any other penalty goes through the
    # per-block loop. Both give the same value and gradient.
    class _Wrapped:
        def __init__(self, inner):
            self.inner = inner

        def value_and_grad(self, t):
            return self.inner.value_and_grad(t)

    pens = [(slice(0, 3), NonNegElasticNet(0.7, 0.3)), (slice(3, 6), NonNegElasticNet(0.2, 1.0))]
    c = rng.normal(size=6)
    fused = PenalizedObjective(_Quadratic(c), pens, np.ones(6))
    generic = PenalizedObjective(_Quadratic(c), [(b, _Wrapped(p)) for b, p in pens], np.ones(6))
    t = rng.uniform(0.0, 2.0, 6)
    v1, g1 = fused.value_and_grad(t)
    v2, g2 = generic.value_and_grad(t)
    assert v1 == pytest.approx(v2, rel=1e-14)
    np.testing.assert_allclose(g1, g2, rtol=1e-14)


class _PoisonedQuadratic(_Quadratic):
    """0.5 |theta - c|^2 until theta[0] falls below ``at``; then ``bad`` in the value or the gradient."""

    def __init__(self, c, at, bad, where):
        super().__init__(c)
        self.at, self.bad, self.where = at, bad, where

    def value_and_grad(self, t):
        value, grad = super().value_and_grad(t)
        if t[0] < self.at:
            if self.where == "value":
                value = self.bad
            else:
                grad = grad.copy()
                grad[-1] = self.bad
        return value, grad


@pytest.mark.parametrize("driver", ["auto", "scipy"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["value", "gradient"])
def test_minimize_lbfgsb_refuses_a_non_finite_evaluation(driver, bad, where):
    # the minimiser is at 0; the objective turns non-finite on the way there
    obj = PenalizedObjective(_PoisonedQuadratic(np.zeros(3), 0.5, bad, where), [], np.ones(3))
    with pytest.raises(FloatingPointError, match=f"objective's {where}.*not finite"):
        minimize_lbfgsb(obj, tol=1e-12, driver=driver)


class _Linear:
    """g @ theta, a datafit whose gradient is the constant g."""

    xp = xp
    dtype = np.float64
    device = None

    def __init__(self, g):
        self.g = np.asarray(g, dtype=np.float64)

    def value_and_grad(self, t):
        return float(self.g @ t), self.g.copy()


def test_minimize_lbfgsb_accepts_huge_finite_gradients(recwarn):
    # entries of 1e200: their squares would overflow, the check's dot product with zeros does not
    obj = PenalizedObjective(_Linear([1e200, 1e200]), [], np.full(2, 1e-300))
    res = minimize_lbfgsb(obj, tol=0.0, max_iter=5)
    np.testing.assert_array_equal(res.theta, 0.0)  # the minimiser on the bound theta >= 0
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
