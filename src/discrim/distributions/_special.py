"""Log-factorials and log binomial coefficients of whole-number data (by table lookup), and Stirling's remainder."""

import numpy as np
import scipy.special

from discrim.backend import ops

__all__ = ["log_binomial_coefficient_rows", "log_factorial_rows", "stirling_remainder"]

# Up to this count a lookup table replaces gammaln, which costs tens of nanoseconds per entry.
_TABLE_MAX = 1 << 16


def _log_factorial_table(m):
    return scipy.special.gammaln(np.arange(m + 1, dtype=np.float64) + 1.0)


def _gammaln(x):
    """``log Gamma(x)`` in the namespace of x (numpy or torch)."""
    return scipy.special.gammaln(x) if isinstance(x, np.ndarray) else x.lgamma()


def log_factorial_rows(X):
    """``sum_d log(x_d!)`` of every row of whole-number data.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        numpy or torch; non-negative whole numbers (any numeric dtype).

    Returns
    -------
    out : array of shape (n_samples,) of float64, in X's namespace
    """
    top = float(X.max()) if X.shape[0] * X.shape[1] else 0.0
    if top <= _TABLE_MAX:
        return ops.lookup(_log_factorial_table(int(top)), X).sum(1)
    return _gammaln(ops.as_float64(X) + 1.0).sum(1)


def log_binomial_coefficient_rows(n_trials, X):
    """``sum_d log C(n, x_d)`` of every row.

    Parameters
    ----------
    n_trials : float or array of shape (n_samples,)
        Trial count of every row (an array in X's namespace).
    X : array of shape (n_samples, n_features)
        numpy or torch; whole numbers in ``[0, n_trials]``.

    Returns
    -------
    out : array of shape (n_samples,) of float64, in X's namespace
    """
    if np.ndim(n_trials) == 0 and n_trials <= _TABLE_MAX:
        n = int(n_trials)
        lf = _log_factorial_table(n)
        table = lf[n] - lf - lf[::-1]  # log C(n, x) for x = 0..n
        return ops.lookup(table, X).sum(1)
    if np.ndim(n_trials) == 0:
        return X.shape[1] * float(scipy.special.gammaln(n_trials + 1.0)) - log_factorial_rows(X) - log_factorial_rows(
            n_trials - X
        )
    n = ops.as_float64(n_trials)
    return X.shape[1] * _gammaln(n + 1.0) - log_factorial_rows(X) - log_factorial_rows(n[:, None] - X)


def stirling_remainder(a):
    """``lgamma(a) - (a - 1/2) log a + a - log(2 pi) / 2`` (element-wise, a > 0): its series from a = 10."""
    a = np.asarray(a, dtype=np.float64)
    small = np.minimum(a, 10.0)  # the direct difference where it cancels little
    direct = scipy.special.gammaln(small) - (small - 0.5) * np.log(small) + small - 0.5 * np.log(2 * np.pi)
    big = np.maximum(a, 10.0)
    inv2 = (1.0 / big) ** 2  # not 1 / big^2, which overflows for a > 1e154
    series = (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (1.0 / 1680 - inv2 / 1188)))) / big
    return np.where(a < 10.0, direct, series)
