"""Numerical functions the array API standard lacks, one implementation per namespace family."""

import array_api_compat.numpy as _NUMPY_XP
import numpy as np
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
    # Plain numpy: scipy.special.logsumexp's input handling (weights, masked arrays, scalars) costs
    # more than the arithmetic on the small (n, K) arrays it is called on here.
    top = np.max(a, axis=axis, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - top), axis=axis))
    out += np.squeeze(top, axis=axis)
    return out


def matmul_into(a, b, out, xp):
    """``a @ b``, written into ``out`` when given."""
    if out is None:
        return a @ b
    if is_torch_namespace(xp):
        import torch

        return torch.matmul(a, b, out=out)
    return np.matmul(a, b, out=out)


def multiply_inplace(a, b, xp):
    """``a * b``, written into ``a`` where the namespace allows."""
    if is_torch_namespace(xp):
        return a.mul_(b)
    if isinstance(a, np.ndarray):
        return np.multiply(a, b, out=a)
    return a * b


def exp_inplace(a, xp):
    """``exp(a)``, written into ``a`` where the namespace allows."""
    if is_torch_namespace(xp):
        return a.exp_()
    if isinstance(a, np.ndarray):
        return np.exp(a, out=a)
    return xp.exp(a)


def asarray(a, xp, dtype, device):
    """``xp.asarray(a, dtype, device)``; numpy's own call for numpy (the wrapper costs microseconds)."""
    if xp is _NUMPY_XP:  # numpy's own call: array-api-compat's wrapper costs a few us per call
        return np.asarray(a, dtype=dtype)
    if device is None:
        return xp.asarray(a, dtype=dtype)
    return xp.asarray(a, dtype=dtype, device=device)


def empty(shape, xp, dtype, device):
    """``xp.empty(shape, dtype, device)``; numpy's own call for numpy."""
    if xp is _NUMPY_XP:
        return np.empty(shape, dtype=dtype)
    if device is None:
        return xp.empty(shape, dtype=dtype)
    return xp.empty(shape, dtype=dtype, device=device)
