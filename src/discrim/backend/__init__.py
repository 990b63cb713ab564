"""Array namespaces: numpy by default, torch when requested, through array-api-compat.

Numerical kernels in discrim are written once against an array namespace ``xp``. This module
resolves the namespace for a backend name and moves arrays between host and device.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from array_api_compat import array_namespace, is_torch_namespace

from typing import Any

from discrim._typing import Array, ArrayLike, Device
from discrim.backend import _ops as ops

__all__ = ["BACKENDS", "array_namespace", "asarray", "host_input", "is_torch_namespace", "namespace", "ops", "to_numpy"]

BACKENDS = ("numpy", "torch")


def namespace(backend: str = "numpy") -> ModuleType:
    """Return the array namespace for ``backend``.

    Parameters
    ----------
    backend : {"numpy", "torch"}, default="numpy"

    Returns
    -------
    xp : module
        An array-API compatible namespace.

    Examples
    --------
    >>> from discrim.backend import namespace
    >>> xp = namespace("numpy")
    >>> float(xp.sum(xp.asarray([1.0, 2.0])))
    3.0
    """
    if backend == "numpy":
        import array_api_compat.numpy as xp

        return xp
    if backend == "torch":
        from discrim.backend._torch import torch_namespace

        return torch_namespace()
    raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}.")


def asarray(x: ArrayLike, xp: ModuleType, device: Device = None, dtype: object | None = None) -> Array:
    """Convert ``x`` to an array of namespace ``xp`` on ``device``.

    Parameters
    ----------
    x : array-like
    xp : module
        An array-API namespace, from :func:`namespace`.
    device : str, torch.device or None, default=None
        None keeps the namespace's default device.
    dtype : dtype or None, default=None

    Returns
    -------
    array : array of namespace ``xp``

    Examples
    --------
    >>> from discrim.backend import asarray, namespace
    >>> asarray([1, 2], namespace("numpy"), dtype=float)
    array([1., 2.])
    """
    if device is None:
        return xp.asarray(x, dtype=dtype)
    return xp.asarray(x, dtype=dtype, device=device)


def to_numpy(x: ArrayLike) -> np.ndarray:
    """Return ``x`` as a numpy array on the host (a no-op for numpy input).

    Parameters
    ----------
    x : array-like or torch.Tensor

    Returns
    -------
    array : ndarray

    Examples
    --------
    >>> from discrim.backend import to_numpy
    >>> to_numpy([1, 2])
    array([1, 2])
    """
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "detach"):  # torch tensor
        return _tensor_values(x)
    return np.asarray(x)


def host_input(x: Any) -> Any:
    """Per-row input (labels, weights) on the host: a torch tensor as numpy, anything else unchanged.

    Parameters
    ----------
    x : object

    Returns
    -------
    x : object
        ``x``, or a torch tensor's values as a numpy array.

    Examples
    --------
    >>> from discrim.backend import host_input
    >>> host_input([0, 1, 1])
    [0, 1, 1]
    """
    if hasattr(x, "detach") and hasattr(x, "device"):  # torch tensor
        return _tensor_values(x)
    return x


def _tensor_values(x):
    """A torch tensor's values as numpy on the host: detached from autograd, and bfloat16 (which
    numpy has no type for) as float32, which holds every bfloat16 exactly."""
    x = x.detach().cpu()
    if str(x.dtype) == "torch.bfloat16":
        x = x.float()
    return x.numpy()
