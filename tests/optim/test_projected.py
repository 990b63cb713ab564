"""Tests of the projected L-BFGS method (two-metric projection) against closed forms and L-BFGS-B."""

import numpy as np
import pytest
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning

from discrim.optim import minimize_lbfgsb, minimize_projected
from discrim.optim._projected import projected_gradient


class _Problem:
    """``1/2 theta' A theta - b' theta`` (or a logistic-type smooth function) on a box."""

    def __init__(self, A, b, x0, lower=0.0, upper=np.inf, kind="quadratic"):
        self.A, self.b, self._x0, self.kind = A, b, np.asarray(x0, dtype=float), kind
        self.n_params = b.shape[0]
        self.lower, self.upper = lower, upper

    def x0(self):
        return self._x0.copy()

    def bounds(self):
        n = self.n_params
        return scipy.optimize.Bounds(np.broadcast_to(self.lower, n).astype(float),
                                     np.broadcast_to(self.upper, n).astype(float))

    def value_and_grad(self, theta):
        if self.kind == "quadratic":
            Ax = self.A @ theta
            return 0.5 * float(theta @ Ax) - float(self.b @ theta), Ax - self.b
        # sum log(1 + exp(A theta)) - b' theta + |theta|^2 / 2: smooth, strongly convex
        z = self.A @ theta
        value = float(np.sum(np.logaddexp(0.0, z)) - self.b @ theta + theta @ theta / 2.0)
        return value, self.A.T @ scipy.special.expit(z) - self.b + theta


def test_projected_gradient_is_lbfgsb_measure():
    x = np.array([0.0, 0.0, 1.0, 2.0])
    g = np.array([1.0, -1.0, 3.0, -0.5])
    lower, upper = np.zeros(4), np.array([np.inf, np.inf, np.inf, 2.0])
    # at the lower bound a positive gradient is held there; towards the upper bound likewise
    np.testing.assert_array_equal(projected_gradient(x, g, lower, upper), [0.0, -1.0, 1.0, 0.0])


def test_separable_quadratic_goes_to_its_bounds_in_one_step():
    # 1/2 |theta - c|^2, theta >= 0, with 99 of 100 coordinates of c negative: solution max(c, 0)
    c = np.r_[1.0, -np.linspace(0.5, 2.0, 99)]
    problem = _Problem(np.eye(100), c, np.ones(100))
    result = minimize_projected(problem, tol=1e-10)
    assert result.converged
    np.testing.assert_allclose(result.theta, np.maximum(c, 0.0), atol=1e-10)
    assert result.n_iter <= 3  # L-BFGS-B's line search stops at the first bound it meets
    assert result.value == pytest.approx(problem.value_and_grad(result.theta)[0])


@pytest.mark.parametrize("kind", ["quadratic", "logistic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_optimum_as_lbfgsb_on_convex_problems(kind, seed):
    rng = np.random.default_rng(seed)
    n = 40
    M = rng.normal(size=(60, n))
    A = M.T @ M / 60 + 0.1 * np.eye(n) if kind == "quadratic" else M
    b = rng.normal(size=n) * (1.0 if kind == "quadratic" else 3.0)
    problem = _Problem(A, b, rng.uniform(0.0, 2.0, n), upper=np.where(np.arange(n) % 5 == 0, 0.3, np.inf),
                       kind=kind)
    reference = minimize_lbfgsb(problem, tol=1e-7, ftol=1e-14)
    result = minimize_projected(problem, tol=1e-7, ftol=1e-14)
    assert result.converged
    # both near stationarity, on problems whose Hessian's eigenvalues are >= 0.1
    np.testing.assert_allclose(result.theta, reference.theta, atol=1e-5)
    assert result.value == pytest.approx(reference.value, rel=1e-10, abs=1e-10)
    bounds = problem.bounds()
    assert np.all(result.theta >= bounds.lb) and np.all(result.theta <= bounds.ub)


def test_scale_solves_the_same_problem():
    rng = np.random.default_rng(3)
    M = rng.normal(size=(30, 8))
    problem = _Problem(M.T @ M / 30 + 0.1 * np.eye(8), rng.normal(size=8), np.ones(8))
    plain = minimize_projected(problem, tol=1e-11, ftol=0.0)
    scaled = minimize_projected(problem, tol=1e-11, ftol=0.0, scale=np.array([1e-2, 0.1, 1, 10, 1, 3, 0.5, 2.0]))
    np.testing.assert_allclose(scaled.theta, plain.theta, atol=1e-7)
    with pytest.raises(ValueError, match="positive"):
        minimize_projected(problem, scale=-np.ones(8))


def test_stop_callback_and_iteration_limit():
    rng = np.random.default_rng(4)
    M = rng.normal(size=(30, 8))
    problem = _Problem(M.T @ M / 30 + 0.01 * np.eye(8), rng.normal(size=8) * 10, np.ones(8))
    seen = []
    result = minimize_projected(problem, tol=0.0, stop=lambda n, theta, value: seen.append(n) or n >= 2)
    assert seen == [1, 2] and result.n_iter == 2 and not result.converged
    assert result.message == "stopped by the stop callback"
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        limited = minimize_projected(problem, max_iter=1, tol=0.0, ftol=0.0)
    assert limited.n_iter == 1 and not limited.converged


def test_refuses_a_non_finite_evaluation():
    class Bad(_Problem):
        def value_and_grad(self, theta):
            return float("nan"), np.zeros_like(theta)

    with pytest.raises(FloatingPointError, match="not finite"):
        minimize_projected(Bad(np.eye(2), np.ones(2), np.ones(2)))


def test_a_trial_where_the_objective_overflows_is_rejected_not_fatal():
    # the objective is not finite beyond theta_0 = 4 (as the prototype kernel overflows far along a
    # search arc): the line search backs off from such trials, and the solve reaches the optimum 3
    class Overflows(_Problem):
        def value_and_grad(self, theta):
            if theta[0] > 4.0:
                return float("inf"), np.full_like(theta, np.nan)
            return super().value_and_grad(theta)

    problem = Overflows(np.eye(1), np.array([3.0]), np.array([0.0]))
    result = minimize_projected(problem, tol=1e-10)
    assert result.converged
    assert result.theta[0] == pytest.approx(3.0, abs=1e-8)
