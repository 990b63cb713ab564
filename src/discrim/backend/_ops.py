"""Numerical functions the array API standard lacks, one implementation per namespace family."""

import numpy as np
import scipy.linalg
import scipy.special
from array_api_compat import is_torch_namespace

def logsumexp(a, axis, xp):
    """Log of the sum of exponentials along ``axis``, stable for -inf entries.

    Parameters
    ----------
    a : array of shape (..., n, ...)
    axis : int
    xp : namespace

    Returns
    -------
    out : array with ``axis`` removed
        ``-inf`` where every entry along ``axis`` is ``-inf``.
    """
    if is_torch_namespace(xp):
        import torch

        return torch.logsumexp(a, dim=axis)
    # Plain numpy: several times faster than scipy.special.logsumexp on (n, K) arrays.
    top = np.max(a, axis=axis, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - top), axis=axis))
    out += np.squeeze(top, axis=axis)
    return out

def gammaln(x, xp):
    """Elementwise log-gamma."""
    if is_torch_namespace(xp):
        import torch

        return torch.special.gammaln(x)
    return scipy.special.gammaln(x)

def xlogy(x, y, xp):
    """Elementwise ``x * log(y)`` with ``0 * log(0) = 0``."""
    if is_torch_namespace(xp):
        import torch

        return torch.special.xlogy(x, y)
    return scipy.special.xlogy(x, y)

def cholesky(a, xp):
    """Lower Cholesky factor of symmetric positive definite matrices (batched over leading axes)."""
    if is_torch_namespace(xp):
        import torch

        return torch.linalg.cholesky(a)
    return np.linalg.cholesky(a)

def solve_triangular(a, b, lower, xp):
    """Solve ``a @ x = b`` for triangular ``a`` of shape (n, n); ``b`` of shape (n, m)."""
    if is_torch_namespace(xp):
        import torch

        return torch.linalg.solve_triangular(a, b, upper=not lower)
    return scipy.linalg.solve_triangular(a, b, lower=lower, check_finite=False)

