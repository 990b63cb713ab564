"""Numerical functions the array API standard lacks, one implementation per namespace family."""

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
