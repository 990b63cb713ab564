"""scipy's L-BFGS-B behind a small result object and a ConvergenceWarning."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning

from discrim.optim._setulb import compiled_setulb, run_setulb

if TYPE_CHECKING:
    from discrim.optim._objective import Objective

# scipy's defaults: ``ftol`` (factr = 1e7 times machine epsilon) and the evaluation limit
DEFAULT_FTOL = 1e7 * np.finfo(float).eps
MAX_FUN = 15000


@dataclass(frozen=True)
class SolverResult:
    """Outcome of :func:`minimize_lbfgsb`.

    Attributes
    ----------
    theta : ndarray of shape (n_params,)
        The last iterate (feasible).
    value : float
        Objective value at ``theta``.
    n_iter : int
        L-BFGS-B iterations.
    n_eval : int
        Objective evaluations (each with its gradient).
    converged : bool
        Whether a stopping test of the tolerances was met (not the iteration limit, a failed
        line search or the ``stop`` callback).
    message : str
        Why the solve ended.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.optimize
    >>> from discrim.optim import minimize_lbfgsb
    >>> class Quadratic:
    ...     n_params = 2
    ...     def x0(self):
    ...         return np.ones(2)
    ...     def bounds(self):
    ...         return scipy.optimize.Bounds(np.zeros(2), np.full(2, np.inf))
    ...     def value_and_grad(self, theta):
    ...         r = theta - np.array([1.0, -1.0])
    ...         return 0.5 * float(r @ r), r
    >>> result = minimize_lbfgsb(Quadratic())
    >>> result.converged, round(result.value, 6), result.n_eval >= result.n_iter
    (True, 0.5, True)
    """

    theta: np.ndarray
    value: float
    n_iter: int
    n_eval: int
    converged: bool
    message: str


class _Scaled:
    """The objective in the variables ``u = theta / scale``, refusing non-finite evaluations.

    L-BFGS-B does not test its input: a NaN value or gradient makes its line search fail or its
    convergence test pass (comparisons with NaN are false), and the solve returns a point that
    means nothing. Each evaluation is therefore checked here, at the cost of one dot product.
    """

    def __init__(self, objective, scale):
        self.objective, self.scale = objective, scale
        self._zeros = np.zeros_like(scale)

    def value_and_grad(self, u):
        value, grad = self.objective.value_and_grad(u * self.scale)
        grad = grad * self.scale
        # check_finite_evaluation's test, inline: this runs once per evaluation
        if not (math.isfinite(value) and math.isfinite(grad @ self._zeros)):
            check_finite_evaluation(value, grad)
        return value, grad


def scaled_box(objective, scale):
    """The scales and the bounds in the variables ``u = theta / scale`` of both solvers.

    Parameters
    ----------
    objective : Objective
    scale : ndarray of shape (n_params,) or None
        Positive scales; None means no scaling.

    Returns
    -------
    scale, lower, upper : ndarray of shape (n_params,)
    """
    n = objective.n_params
    scale = np.ones(n) if scale is None else np.asarray(scale, dtype=np.float64)
    if scale.shape != (n,) or not np.all(scale > 0):
        raise ValueError(f"scale must hold {n} positive numbers.")
    bounds = objective.bounds()
    return scale, np.broadcast_to(bounds.lb, (n,)) / scale, np.broadcast_to(bounds.ub, (n,)) / scale


def check_finite_evaluation(value, grad, zeros=None):
    """Raise a FloatingPointError unless the value and every gradient entry are finite.

    Parameters
    ----------
    value : float
    grad : ndarray of shape (n_params,)
    zeros : ndarray of shape (n_params,) or None
        Zeros, kept by a caller that checks often: ``grad @ zeros`` is 0 if every entry is finite
        and NaN otherwise (``inf * 0`` is NaN), one dot product that cannot overflow.

    Raises
    ------
    FloatingPointError
        Naming what is not finite.
    """
    if zeros is None:
        zeros = np.zeros_like(grad)
    if math.isfinite(value) and math.isfinite(grad @ zeros):
        return
    what = f"value {value}" if not math.isfinite(value) else \
        f"gradient ({int(np.sum(~np.isfinite(grad)))} of {grad.shape[0]} entries)"
    raise FloatingPointError(f"the objective's {what} is not finite, so L-BFGS-B cannot continue")


def minimize_lbfgsb(objective: Objective, *, max_iter: int = 15000, tol: float = 1e-5, ftol: float | None = None,
                    ftol_after: int = 0, m: int = 10, maxls: int = 20, scale: np.ndarray | None = None,
                    stop: Callable[[int, np.ndarray, float], bool] | None = None,
                    driver: Literal["auto", "scipy"] = "auto") -> SolverResult:
    """Minimise an :class:`~discrim.optim.Objective` subject to its bounds with L-BFGS-B.

    Parameters
    ----------
    objective : Objective
        The function to minimise, with its starting point and bounds.
    max_iter : int, default=15000
        Iteration limit.
    tol : float, default=1e-5
        Stop when the largest entry of the projected gradient is at most ``tol`` (scipy's
        ``gtol``, Fortran's ``pgtol``); with ``scale``, the gradient with respect to the scaled
        variables ``u``.
    ftol : float or None, default=None
        Also stop when the relative decrease of the value in one iteration,
        ``(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1)``, is at most ``ftol``. None uses scipy's
        default (``factr = 1e7`` times machine epsilon, about 2.2e-9).
    ftol_after : int, default=0
        Apply the ``ftol`` test only from this iteration on (counted from 1). L-BFGS-B's first
        steps can be tiny (its first step has length 1 in the largest coordinate), and the test
        would then stop it before it has started; with ``ftol_after > 0`` the test runs in a
        callback instead of inside L-BFGS-B.
    m : int, default=10
        Number of correction pairs kept (``maxcor``).
    maxls : int, default=20
        Line-search steps per iteration.
    scale : ndarray of shape (n_params,) or None, default=None
        Positive scales: L-BFGS-B iterates on ``u = theta / scale`` (a diagonal preconditioner:
        its first steps and its metric treat each ``u_i`` alike). None means no scaling.
    stop : callable or None, default=None
        ``stop(n_iter, theta, value) -> bool`` called after every iteration; True ends the solve
        (``converged=False``, message "stopped by the stop callback").
    driver : {"auto", "scipy"}, default="auto"
        "auto" drives scipy's compiled routine directly when this scipy is one the driver was
        tested with (see :func:`discrim.optim._setulb.compiled_setulb`), else uses
        ``scipy.optimize.minimize``; "scipy" always uses ``scipy.optimize.minimize``. Both take
        the same iterates.

    Returns
    -------
    result : SolverResult
        The last iterate, its value, the counts and whether the solve converged.

    Warns
    -----
    ConvergenceWarning
        If the iteration limit is reached or the line search fails.

    Notes
    -----
    With a tested scipy (1.15 to 1.17) the compiled routine is driven directly (:mod:`._setulb`:
    the same iterates as ``scipy.optimize.minimize``, without its per-evaluation overhead);
    otherwise through ``scipy.optimize.minimize``.

    Examples
    --------
    ``1/2 |theta - (1, -1)|^2`` over ``theta >= 0``, whose minimum is at (1, 0):

    >>> import numpy as np
    >>> import scipy.optimize
    >>> from discrim.optim import minimize_lbfgsb
    >>> class Quadratic:
    ...     n_params = 2
    ...     def x0(self):
    ...         return np.full(2, 3.0)
    ...     def bounds(self):
    ...         return scipy.optimize.Bounds(np.zeros(2), np.full(2, np.inf))
    ...     def value_and_grad(self, theta):
    ...         r = theta - np.array([1.0, -1.0])
    ...         return 0.5 * float(r @ r), r
    >>> result = minimize_lbfgsb(Quadratic(), tol=1e-8)
    >>> result.theta.round(6).tolist(), result.converged
    ([1.0, 0.0], True)

    A ``stop`` callback ends the solve early (without a warning):

    >>> minimize_lbfgsb(Quadratic(), stop=lambda n_iter, theta, value: True).message
    'stopped by the stop callback'
    """
    if driver not in ("auto", "scipy"):
        raise ValueError(f"driver must be 'auto' or 'scipy'; got {driver!r}.")
    scale, lower, upper = scaled_box(objective, scale)
    late_ftol = ftol is not None and ftol_after > 0
    # with the late test, L-BFGS-B's own test is off (it only stops on no decrease at all)
    own_ftol = DEFAULT_FTOL if ftol is None else (0.0 if late_ftol else float(ftol))
    state = {"stopped": False, "converged": False, "previous": None}

    def halt(n_iter, u, value):
        """After every iteration: True ends the solve."""
        if stop is not None and stop(n_iter, u * scale, value):
            state["stopped"] = True
            return True
        previous, state["previous"] = state["previous"], value
        if late_ftol and n_iter >= ftol_after and previous is not None \
                and previous - value <= ftol * max(abs(previous), abs(value), 1.0):
            state["converged"] = True
            return True
        return False

    solve = _solve_compiled if driver == "auto" and compiled_setulb() is not None else _solve_scipy
    u, value, n_iter, n_eval, success, message = solve(
        _Scaled(objective, scale).value_and_grad, objective.x0() / scale, lower, upper,
        m=int(m), ftol=own_ftol, gtol=float(tol), max_iter=int(max_iter), maxls=int(maxls),
        callback=halt if (stop is not None or late_ftol) else None,
    )
    theta = np.asarray(u, dtype=np.float64) * scale
    if state["stopped"]:
        return SolverResult(theta=theta, value=value, n_iter=n_iter, n_eval=n_eval, converged=False,
                            message="stopped by the stop callback")
    if state["converged"]:
        success, message = True, f"relative reduction of f <= ftol after iteration {ftol_after}"
    if not success:
        warnings.warn(
            f"L-BFGS-B stopped before convergence after {n_iter} iterations: {message}. "
            "Increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return SolverResult(theta=theta, value=value, n_iter=n_iter, n_eval=n_eval, converged=success, message=message)


def _solve_compiled(fun_and_grad, x0, lower, upper, *, m, ftol, gtol, max_iter, maxls, callback):
    """L-BFGS-B through :func:`run_setulb` (scipy's routine without ``minimize``'s layers)."""
    return run_setulb(fun_and_grad, x0, lower, upper, m=m, factr=ftol / np.finfo(float).eps, pgtol=gtol,
                      max_iter=max_iter, max_fun=MAX_FUN, maxls=maxls, callback=callback)


def _solve_scipy(fun_and_grad, x0, lower, upper, *, m, ftol, gtol, max_iter, maxls, callback):
    """L-BFGS-B through ``scipy.optimize.minimize`` (any scipy version)."""
    state = {"n_iter": 0}

    def scipy_callback(intermediate_result):
        state["n_iter"] += 1
        if callback(state["n_iter"], intermediate_result.x, float(intermediate_result.fun)):
            raise StopIteration

    res = scipy.optimize.minimize(
        fun_and_grad, x0, jac=True, method="L-BFGS-B", bounds=scipy.optimize.Bounds(lower, upper),
        options={"maxiter": max_iter, "maxfun": MAX_FUN, "gtol": gtol, "ftol": ftol, "maxcor": m, "maxls": maxls},
        callback=scipy_callback if callback is not None else None,
    )
    return res.x, float(res.fun), int(res.nit), int(res.nfev), bool(res.success), str(res.message)
