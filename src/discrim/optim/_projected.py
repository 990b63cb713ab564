"""A projected quasi-Newton method for bound constraints that can move many variables onto their bounds at once."""

from __future__ import annotations

import math
import warnings
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from discrim.optim._lbfgsb import DEFAULT_FTOL, SolverResult, _Scaled, scaled_box

if TYPE_CHECKING:
    from discrim.optim._objective import Objective

# Sufficient-decrease constant of the line search (Armijo's c1, as in L-BFGS-B's line search).
ARMIJO = 1e-4
# Factor by which an accepted first trial step is extended, and by which a rejected one is cut.
EXTEND, CUT = 4.0, 0.5


def projected_gradient(x, g, lower, upper):
    """L-BFGS-B's projected gradient: ``g`` clipped so that ``x - pg`` stays within the bounds.

    Parameters
    ----------
    x, g, lower, upper : ndarray of shape (n,)

    Returns
    -------
    pg : ndarray of shape (n,)
        ``min(x - lower, g)`` where ``g >= 0``, ``max(x - upper, g)`` where ``g < 0`` (scipy's
        ``projgr``); its largest magnitude is the convergence measure of both solvers.
    """
    return np.where(g >= 0, np.minimum(x - lower, g), np.maximum(x - upper, g))


def _direction(g, free, pairs, length=1.0):
    """The L-BFGS direction ``-H g`` on the free variables (two-loop recursion), 0 on the others.

    Parameters
    ----------
    g : ndarray of shape (n,)
    free : ndarray of shape (n,) of bool
    pairs : sequence of (s, y, 1 / (s'y))
        Correction pairs, oldest first.
    length : float, default=1.0
        Length of the direction when no pair is known (then ``-g`` scaled to it).

    Returns
    -------
    d : ndarray of shape (n,)
    """
    q = np.where(free, g, 0.0)
    alphas = []
    for s, y, rho in reversed(pairs):
        a = rho * (s @ q)
        q -= a * np.where(free, y, 0.0)
        alphas.append(a)
    if pairs:
        s, y, _ = pairs[-1]
        q *= (s @ y) / (y @ y)
    else:  # no curvature known: a first step of unit length, as L-BFGS-B takes, or the last step's
        q *= length / max(float(np.linalg.norm(q)), np.finfo(float).tiny)
    for (s, y, rho), a in zip(pairs, reversed(alphas)):
        q += (a - rho * (y @ q)) * np.where(free, s, 0.0)
    return -q


def _evaluate_trial(fun, trial):
    """``fun(trial)``, or ``(inf, None)`` where the objective is not finite there.

    Far along a search arc the objective can overflow (the prototype kernel's exponent in
    float32 at a large feature weight, where rounding makes it positive): such a trial is
    rejected as one without sufficient decrease, and the search backs off towards the current
    point instead of ending the solve.
    """
    try:
        return fun(trial)
    except FloatingPointError:
        return math.inf, None


def _line_search(fun, x, f, g, d, lower, upper, maxls):
    """Armijo search along the projection arc ``P(x + t d)``; returns ``(x, f, g, n_eval)`` or None.

    The first trial is ``t = 1``. A rejected step is cut by CUT; an accepted first step is extended
    by EXTEND while the value keeps decreasing sufficiently: along the arc, each step can put many
    variables on their bounds (L-BFGS-B's search ends at the first bound it meets). At most
    ``maxls`` evaluations; None if no step decreases the value sufficiently. A trial where the
    objective is not finite counts as one without sufficient decrease (:func:`_evaluate_trial`).
    """
    t, n_eval = 1.0, 0
    while n_eval < maxls:
        trial = np.clip(x + t * d, lower, upper)
        ft, gt = _evaluate_trial(fun, trial)
        n_eval += 1
        if ft <= f + ARMIJO * (g @ (trial - x)):
            break
        t *= CUT
    else:
        return None
    best = (trial, ft, gt)
    extend = n_eval == 1  # only an accepted first trial is extended
    while extend and n_eval < maxls:
        t *= EXTEND
        trial = np.clip(x + t * d, lower, upper)
        if np.array_equal(trial, best[0]):  # every moving variable is on its bound already
            break
        ft, gt = _evaluate_trial(fun, trial)
        n_eval += 1
        if not ft <= best[1] + ARMIJO * (g @ (trial - best[0])):
            break
        best = (trial, ft, gt)
    return (*best, n_eval)


def minimize_projected(objective: Objective, *, max_iter: int = 15000, tol: float = 1e-5, ftol: float | None = None,
                       ftol_after: int = 0, m: int = 10, maxls: int = 20, scale: np.ndarray | None = None,
                       stop: Callable[[int, np.ndarray, float], bool] | None = None) -> SolverResult:
    """Minimise an :class:`~discrim.optim.Objective` subject to its bounds by projected L-BFGS.

    The two-metric projection method (Gafni and Bertsekas) with limited-memory BFGS curvature:
    each iteration takes the L-BFGS direction on the variables that are not held at a bound by
    their gradient, and searches along its projection onto the box (:func:`_line_search`), so
    one step can move any number of variables onto their bounds. L-BFGS-B
    (:func:`minimize_lbfgsb`) instead ends each line search at the first bound on its way, one
    variable per iteration; where many variables go to their bounds (the prototype weights of a
    batch that ends empty) this method needs a fraction of its iterations and evaluations.

    Parameters
    ----------
    objective : Objective
        The function to minimise, with its starting point and bounds.
    max_iter : int, default=15000
        Iteration limit.
    tol : float, default=1e-5
        Stop when the largest entry of the projected gradient (:func:`projected_gradient`, with
        ``scale`` in the scaled variables) is at most ``tol``: L-BFGS-B's ``pgtol`` test.
    ftol : float or None, default=None
        Also stop when an iteration lowers the value by a relative amount
        ``(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1)`` of at most ``ftol``; None is scipy's default.
    ftol_after : int, default=0
        Apply the ``ftol`` test only from this iteration on.
    m : int, default=10
        Correction pairs kept.
    maxls : int, default=20
        Evaluations per line search.
    scale : ndarray of shape (n_params,) or None, default=None
        Positive scales: the method iterates on ``u = theta / scale``, as :func:`minimize_lbfgsb`.
    stop : callable or None, default=None
        ``stop(n_iter, theta, value) -> bool`` after every iteration; True ends the solve.

    Returns
    -------
    result : SolverResult

    Warns
    -----
    ConvergenceWarning
        If the iteration limit is reached or no step decreases the value.

    Examples
    --------
    ``1/2 |theta - c|^2`` over ``theta >= 0`` with most of ``c`` negative: the solution
    ``max(c, 0)`` puts those coordinates on the bound, in few iterations:

    >>> import numpy as np
    >>> import scipy.optimize
    >>> from discrim.optim import minimize_projected
    >>> c = np.r_[1.0, -np.ones(99)]
    >>> class Quadratic:
    ...     n_params = 100
    ...     def x0(self):
    ...         return np.ones(100)
    ...     def bounds(self):
    ...         return scipy.optimize.Bounds(np.zeros(100), np.full(100, np.inf))
    ...     def value_and_grad(self, theta):
    ...         r = theta - c
    ...         return 0.5 * float(r @ r), r
    >>> result = minimize_projected(Quadratic(), tol=1e-8)
    >>> result.converged, result.theta[:3].tolist(), result.n_iter <= 5
    (True, [1.0, 0.0, 0.0], True)
    """
    scale, lower, upper = scaled_box(objective, scale)
    fun = _Scaled(objective, scale).value_and_grad
    ftol = DEFAULT_FTOL if ftol is None else float(ftol)
    x = np.clip(np.asarray(objective.x0(), dtype=np.float64) / scale, lower, upper)
    f, g = fun(x)
    n_eval, n_iter = 1, 0
    pairs = deque(maxlen=int(m))
    eps = np.finfo(float).eps
    last_length = 1.0
    message, converged = "", False
    while True:
        if np.max(np.abs(projected_gradient(x, g, lower, upper)), initial=0.0) <= tol:
            message, converged = "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL", True
            break
        if n_iter >= max_iter:
            message = "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT"
            break
        # variables held at a bound by their gradient stay there; the others take the L-BFGS step
        free = ~(((x <= lower) & (g > 0)) | ((x >= upper) & (g < 0)))
        # Without a curvature pair (none yet, or none kept: along a path of negative curvature,
        # such as the prototype weights shrinking together, s'y <= 0), the gradient step has the
        # length of the last step taken: the search then starts where the last one ended.
        d = _direction(g, free, pairs, last_length)
        step = _line_search(fun, x, f, g, d, lower, upper, maxls) if g @ d < 0 else None
        if step is None and pairs:  # the curvature pairs mislead: start over from the gradient
            pairs.clear()
            step = _line_search(fun, x, f, g, _direction(g, free, pairs, last_length), lower, upper, maxls)
        if step is None:
            message = "ABNORMAL: NO DECREASE ALONG THE PROJECTED SEARCH PATH"
            break
        x_new, f_new, g_new, used = step
        n_eval += used
        n_iter += 1
        s, y = x_new - x, g_new - g
        last_length = float(np.linalg.norm(s))
        sy = float(s @ y)
        if sy > eps * float(y @ y):  # curvature condition, L-BFGS-B's test for keeping a pair
            pairs.append((s, y, 1.0 / sy))
        previous, (x, f, g) = f, (x_new, f_new, g_new)
        if stop is not None and stop(n_iter, x * scale, f):
            return SolverResult(theta=x * scale, value=f, n_iter=n_iter, n_eval=n_eval, converged=False,
                                message="stopped by the stop callback")
        if n_iter >= ftol_after and previous - f <= ftol * max(abs(previous), abs(f), 1.0):
            message, converged = "CONVERGENCE: REL_REDUCTION_OF_F <= FACTR*EPSMCH", True
            break
    if not converged:
        warnings.warn(f"projected L-BFGS stopped before convergence after {n_iter} iterations: {message}. "
                      "Increase max_iter or tol.", ConvergenceWarning, stacklevel=2)
    return SolverResult(theta=x * scale, value=float(f), n_iter=n_iter, n_eval=n_eval, converged=converged,
                        message=message)
