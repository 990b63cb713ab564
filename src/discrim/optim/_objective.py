"""The objective protocol that :func:`discrim.optim.minimize_lbfgsb` knows, and its composition."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.optimize

from array_api_compat import is_numpy_namespace

from discrim.backend import asarray, to_numpy
from discrim.optim._penalties import NonNegElasticNet


@runtime_checkable
class Objective(Protocol):
    """A smooth function of a bounded parameter vector, evaluated with its gradient.

    This is the only thing :func:`minimize_lbfgsb` knows about a problem. A class need not
    derive from it: any object with these members is an objective (``isinstance`` checks the
    members' presence, not their signatures).

    Attributes
    ----------
    n_params : int
        Length of the parameter vector.

    See Also
    --------
    PenalizedObjective : A data term plus elastic-net penalties on blocks of the parameters.
    Restricted : An objective as a function of some of its coordinates.

    Examples
    --------
    A quadratic with its minimum outside the bounds, at (1, -1); the bounded minimum is (1, 0):

    >>> import numpy as np
    >>> import scipy.optimize
    >>> from discrim.optim import Objective, minimize_lbfgsb
    >>> class Quadratic:
    ...     n_params = 2
    ...     def x0(self):
    ...         return np.ones(2)
    ...     def bounds(self):
    ...         return scipy.optimize.Bounds(np.zeros(2), np.full(2, np.inf))
    ...     def value_and_grad(self, theta):
    ...         r = theta - np.array([1.0, -1.0])
    ...         return 0.5 * float(r @ r), r
    >>> isinstance(Quadratic(), Objective)
    True
    >>> minimize_lbfgsb(Quadratic()).theta.round(6).tolist()
    [1.0, 0.0]
    """

    n_params: int

    def x0(self) -> np.ndarray:
        """Starting point, float64 of shape (n_params,)."""

    def bounds(self) -> scipy.optimize.Bounds:
        """Box constraints on the parameters."""

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Value and gradient at ``theta``; float64 in and out.

        Parameters
        ----------
        theta : ndarray of shape (n_params,), float64
            A point within the bounds.

        Returns
        -------
        value : float
            The objective's value at ``theta``.
        grad : ndarray of shape (n_params,), float64
            Its gradient at ``theta``.
        """


class PenalizedObjective:
    """A smooth data term plus penalties on blocks of the parameters, bounded below by zero.

    The data term is evaluated in its own array namespace (possibly on a device); the
    penalties are cheap and are evaluated on the host. One transfer of ``n_params`` floats each
    way per call is the only host/device traffic.

    Parameters
    ----------
    datafit : object
        Has ``value_and_grad(theta_xp) -> (value, grad_xp)`` taking and returning arrays of
        namespace ``xp`` (the gradient a new array, which this object may modify), plus
        attributes ``xp``, ``dtype`` and ``device``.
    penalties : list of (slice, penalty)
        Each penalty has ``value_and_grad(t) -> (float, ndarray)`` and applies to
        ``theta[slice]``.
    x0 : ndarray of shape (n_params,)
        Starting point.

    Examples
    --------
    Least squares ``1/2 |A theta - b|^2`` with a pure L1 penalty of strength 0.5 on both
    parameters; with ``A`` the identity and ``b = (1, -1)`` the solution is ``(0.5, 0)``:

    >>> import numpy as np
    >>> from discrim.optim import NonNegElasticNet, PenalizedObjective, minimize_lbfgsb
    >>> class LeastSquares:
    ...     xp, dtype, device = np, np.float64, None
    ...     def __init__(self, A, b):
    ...         self.A, self.b = A, b
    ...     def value_and_grad(self, theta):
    ...         r = self.A @ theta - self.b
    ...         return 0.5 * float(r @ r), self.A.T @ r
    >>> datafit = LeastSquares(np.eye(2), np.array([1.0, -1.0]))
    >>> objective = PenalizedObjective(datafit, [(slice(0, 2), NonNegElasticNet(0.5, 1.0))], np.ones(2))
    >>> objective.value_and_grad(np.array([0.5, 0.0]))[1].tolist()  # zero on the free coordinate
    [0.0, 1.5]
    >>> minimize_lbfgsb(objective).theta.round(6).tolist()
    [0.5, 0.0]
    """

    def __init__(self, datafit: Any, penalties: Iterable[tuple[slice, Any]], x0: np.ndarray) -> None:
        self.datafit = datafit
        self.penalties = list(penalties)
        self._x0 = np.asarray(x0, dtype=np.float64).copy()
        self.n_params = self._x0.shape[0]
        # numpy float64 on the host: no conversions per call
        self._on_host = (datafit.device is None and is_numpy_namespace(datafit.xp)
                         and np.dtype(datafit.dtype) == np.float64)
        # Elastic nets on the blocks add up to one per-parameter linear and quadratic term,
        # evaluated with a few whole-vector operations (small problems are bound by their count).
        self._l1 = self._l2 = None
        if self.penalties and all(isinstance(p, NonNegElasticNet) for _, p in self.penalties):
            self._l1, self._l2 = np.zeros(self.n_params), np.zeros(self.n_params)
            for block, penalty in self.penalties:
                l1, l2 = penalty.coefficients()
                self._l1[block] += l1
                self._l2[block] += l2

    def x0(self) -> np.ndarray:
        """Starting point, float64 of shape (n_params,)."""
        return self._x0.copy()

    def with_x0(self, x0: np.ndarray) -> PenalizedObjective:
        """The same objective with another starting point.

        Parameters
        ----------
        x0 : ndarray of shape (n_params,)
            The new starting point.

        Returns
        -------
        objective : PenalizedObjective
            A new objective sharing the data term and the penalties.
        """
        return PenalizedObjective(self.datafit, self.penalties, x0)

    def with_datafit(self, datafit: Any) -> PenalizedObjective:
        """The same penalties and starting point on another data term (e.g. one over fewer rows).

        Parameters
        ----------
        datafit : object
            A data term with the interface of ``datafit`` and the same parameters.

        Returns
        -------
        objective : PenalizedObjective
        """
        return PenalizedObjective(datafit, self.penalties, self._x0)

    def value_at_zero(self) -> float:
        """The value at ``theta = 0``, through the data term's ``value_at_zero`` where it has one.

        Returns
        -------
        value : float
        """
        zero = np.zeros(self.n_params)
        at_zero = getattr(self.datafit, "value_at_zero", None)
        if at_zero is None:
            return self.value_and_grad(zero)[0]
        return float(at_zero()) + sum(penalty.value_and_grad(zero[block])[0] for block, penalty in self.penalties)

    def bounds(self) -> scipy.optimize.Bounds:
        """Non-negativity of every parameter."""
        return scipy.optimize.Bounds(np.zeros(self.n_params), np.full(self.n_params, np.inf))

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Penalised value and gradient at ``theta``.

        Parameters
        ----------
        theta : ndarray of shape (n_params,), float64

        Returns
        -------
        value : float
        grad : ndarray of shape (n_params,), float64
        """
        theta = np.asarray(theta, dtype=np.float64)
        fit = self.datafit
        t = theta if self._on_host else asarray(theta, fit.xp, fit.device, dtype=fit.dtype)
        value, grad_xp = fit.value_and_grad(t)
        # a fresh float64 numpy gradient is used as it is; anything else is converted (a copy)
        grad = grad_xp if self._on_host else np.array(to_numpy(grad_xp), dtype=np.float64)
        value = float(value)
        if self._l1 is not None:
            quadratic = self._l2 * theta
            value += float(self._l1 @ theta + 0.5 * (quadratic @ theta))
            grad += self._l1
            grad += quadratic
            return value, grad
        for block, penalty in self.penalties:
            pv, pg = penalty.value_and_grad(theta[block])
            value += pv
            grad[block] += pg
        return value, grad


class Restricted:
    """An objective as a function of some coordinates, the others held fixed.

    Parameters
    ----------
    objective : Objective
        The full objective.
    free : ndarray of int
        Indices of the coordinates that vary.
    theta : ndarray of shape (objective.n_params,)
        The point that supplies the fixed coordinates and the start of the free ones.
    lower : ndarray of shape (len(free),) or None, default=None
        Lower bounds of the free coordinates that replace the objective's (tighter ones).

    Examples
    --------
    ``1/2 |theta - (1, 2, 3)|^2`` over its second coordinate alone, the others held at 0:

    >>> import numpy as np
    >>> import scipy.optimize
    >>> from discrim.optim import Restricted, minimize_lbfgsb
    >>> class Quadratic:
    ...     n_params = 3
    ...     def x0(self):
    ...         return np.zeros(3)
    ...     def bounds(self):
    ...         return scipy.optimize.Bounds(np.zeros(3), np.full(3, np.inf))
    ...     def value_and_grad(self, theta):
    ...         r = theta - np.array([1.0, 2.0, 3.0])
    ...         return 0.5 * float(r @ r), r
    >>> part = Restricted(Quadratic(), free=[1], theta=np.zeros(3))
    >>> result = minimize_lbfgsb(part)
    >>> part.embed(result.theta).round(6).tolist()
    [0.0, 2.0, 0.0]
    """

    def __init__(self, objective: Objective, free: np.ndarray, theta: np.ndarray, lower: np.ndarray | None = None) -> None:
        self.objective = objective
        self.free = np.asarray(free)
        self.theta = np.asarray(theta, dtype=np.float64).copy()
        self.n_params = self.free.shape[0]
        self.lower = None if lower is None else np.asarray(lower, dtype=np.float64)

    def x0(self) -> np.ndarray:
        """Start of the free coordinates, float64 of shape (n_params,)."""
        return self.theta[self.free].copy()

    def bounds(self) -> scipy.optimize.Bounds:
        """The full objective's bounds on the free coordinates."""
        b = self.objective.bounds()
        lb = np.broadcast_to(b.lb, self.theta.shape)[self.free]
        if self.lower is not None:
            lb = np.maximum(lb, self.lower)
        return scipy.optimize.Bounds(lb, np.broadcast_to(b.ub, self.theta.shape)[self.free])

    def embed(self, t: np.ndarray) -> np.ndarray:
        """The full parameter vector with the free coordinates set to ``t``.

        Parameters
        ----------
        t : ndarray of shape (n_params,)
            Values of the free coordinates.

        Returns
        -------
        theta : ndarray of shape (objective.n_params,)
            A new vector: ``theta`` with ``t`` at the positions ``free``.
        """
        full = self.theta.copy()
        full[self.free] = t
        return full

    def value_and_grad(self, t: np.ndarray) -> tuple[float, np.ndarray]:
        """Value and gradient with respect to the free coordinates.

        Parameters
        ----------
        t : ndarray of shape (n_params,), float64
            Values of the free coordinates.

        Returns
        -------
        value : float
            The full objective's value at ``embed(t)``.
        grad : ndarray of shape (n_params,), float64
            Its gradient's entries at the free coordinates.
        """
        value, grad = self.objective.value_and_grad(self.embed(t))
        return value, grad[self.free]
