"""scipy's L-BFGS-B behind a small result object and a ConvergenceWarning."""

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning


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
    message : str
    """

    theta: np.ndarray
    value: float
    n_iter: int
    n_eval: int
    converged: bool
    message: str


class _Scaled:
    """The objective in the variables ``u = theta / scale``."""

    def __init__(self, objective, scale):
        self.objective, self.scale = objective, scale

    def value_and_grad(self, u):
        value, grad = self.objective.value_and_grad(u * self.scale)
        return value, grad * self.scale


def minimize_lbfgsb(objective, *, max_iter=15000, tol=1e-5, ftol=None, m=10, maxls=20, scale=None,
                    stop=None):
    """Minimise an :class:`~discrim.optim.Objective` subject to its bounds with L-BFGS-B.

    Parameters
    ----------
    objective : Objective
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
    m : int, default=10
        Number of correction pairs kept (``maxcor``).
    maxls : int, default=20
        Line-search steps per iteration.
    scale : ndarray of shape (n_params,) or None, default=None
        Positive scales: L-BFGS-B iterates on ``u = theta / scale`` (a diagonal preconditioner:
        its first steps and its metric treat each ``u_i`` alike). None means no scaling.

    Returns
    -------
    result : SolverResult

    Warns
    -----
    ConvergenceWarning
        If the iteration limit is reached or the line search fails.
    """
    options = {"maxiter": int(max_iter), "gtol": float(tol), "maxcor": int(m), "maxls": int(maxls)}
    if ftol is not None:
        options["ftol"] = float(ftol)
    bounds = objective.bounds()
    if scale is None:
        scale = np.ones(objective.n_params)
    scale = np.asarray(scale, dtype=np.float64)
    if scale.shape != (objective.n_params,) or not np.all(scale > 0):
        raise ValueError(f"scale must hold {objective.n_params} positive numbers.")
    state = {"n_iter": 0, "stopped": False}

    def callback(intermediate_result):
        state["n_iter"] += 1
        if stop(state["n_iter"], intermediate_result.x * scale, float(intermediate_result.fun)):
            state["stopped"] = True
            raise StopIteration

    res = scipy.optimize.minimize(
        _Scaled(objective, scale).value_and_grad,
        objective.x0() / scale,
        jac=True,
        method="L-BFGS-B",
        bounds=scipy.optimize.Bounds(bounds.lb / scale, bounds.ub / scale),
        options=options,
        callback=None if stop is None else callback,
    )
    if state["stopped"]:
        return SolverResult(theta=np.asarray(res.x, dtype=np.float64) * scale, value=float(res.fun),
                            n_iter=state["n_iter"], n_eval=int(res.nfev), converged=False,
                            message="stopped by the stop callback")
    if not res.success:
        warnings.warn(
            f"L-BFGS-B stopped before convergence after {res.nit} iterations: {res.message}. "
            "Increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return SolverResult(
        theta=np.asarray(res.x, dtype=np.float64) * scale,
        value=float(res.fun),
        n_iter=int(res.nit),
        n_eval=int(res.nfev),
        converged=bool(res.success),
        message=str(res.message),
    )
