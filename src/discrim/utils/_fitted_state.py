"""Checks of a fitted state read from a model file: the helpers of the estimators' ``_check_loaded_state``.

skops rebuilds an estimator by setting its attributes from the file, so an edited or damaged
file can give arrays of the wrong shape, dtype or values that no method checks before using
them (a silently wrong prediction, or an IndexError deep in numpy). Each estimator checks its
own attributes with these helpers; :func:`discrim.persistence.load_model` calls the checks and
turns their FittedStateError into a one-line ``ModelFileError``. They read shapes, dtypes and a few
reductions over the arrays, never anything of the size of the training data.
"""

from numbers import Integral, Real

import numpy as np


class FittedStateError(ValueError):
    """A fitted attribute that is missing or inconsistent; the message starts with its name."""


# dtype kinds accepted for each ``kind`` of :func:`array`, and how messages name them
_KINDS = {"f": ("f", "floating-point"), "i": ("iu", "integer"), "fi": ("fiu", "numeric")}


def is_fitted(estimator):
    """Whether ``estimator`` has fitted attributes (a name ending in "_"), as ``check_is_fitted`` judges.

    An unfitted estimator (a parameter such as ``covariance_estimator``, or a model saved before
    fit) has no fitted state to check.
    """
    return any(name.endswith("_") and not name.startswith("__") for name in vars(estimator))


def fitted_attributes(estimator, *names):
    """The values of the fitted attributes ``names``; FittedStateError naming the first that is missing.

    Parameters
    ----------
    estimator : object
    *names : str

    Returns
    -------
    values : tuple
    """
    state = vars(estimator)
    for name in names:
        if name not in state:
            raise FittedStateError(f"{name} is missing")
    return tuple(state[name] for name in names)


def count(value, what, minimum=0):
    """``value`` as an int: an integer (not a bool) of at least ``minimum``.

    Parameters
    ----------
    value : object
    what : str
        The attribute, as the message names it.
    minimum : int, default=0

    Returns
    -------
    value : int
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise FittedStateError(f"{what} is {_described(value)}, not an integer")
    if value < minimum:
        raise FittedStateError(f"{what} is {int(value)}, below {minimum}")
    return int(value)


def scalar(value, what):
    """``value`` as a float: a finite real number (a Python or numpy scalar, or a 0-d array)."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "fi":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise FittedStateError(f"{what} is {_described(value)}, not a real number")
    if not np.isfinite(value):
        raise FittedStateError(f"{what} is {value}, not a finite number")
    return float(value)


def array(value, what, shape, *, kind="f", dims=None, finite=True, positive=False, nonnegative=False):
    """Check that ``value`` is an ndarray of ``shape`` and dtype ``kind`` with admissible values.

    Parameters
    ----------
    value : object
    what : str
        The attribute, as the message names it.
    shape : tuple of (int or None)
        The expected shape; None matches any length along that axis. A shape of () takes a
        number (a Python or numpy scalar) as well as a 0-d array.
    kind : {"f", "i", "fi"} or None, default="f"
        Floating-point, integer, either, or any dtype (labels).
    dims : str or None, default=None
        What the expected shape is made of, e.g. "(n_classes, n_features_in_)".
    finite : bool, default=True
        Refuse NaN and infinite entries (numeric arrays).
    positive, nonnegative : bool, default=False
        Refuse entries <= 0, or < 0.

    Returns
    -------
    value : ndarray
    """
    if shape == () and isinstance(value, (Real, np.generic)):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise FittedStateError(f"{what} is {_described(value)}, not an array")
    if kind is not None and value.dtype.kind not in _KINDS[kind][0]:
        raise FittedStateError(f"{what} has dtype {value.dtype}, not a {_KINDS[kind][1]} one")
    if value.ndim != len(shape) or any(n is not None and n != m for n, m in zip(shape, value.shape)):
        expected = ", ".join("any" if n is None else str(n) for n in shape)
        expected = f"({expected}{',' if len(shape) == 1 else ''})"
        raise FittedStateError(f"{what} has shape {value.shape}, not {f'{dims} = ' if dims else ''}{expected}")
    if kind is not None:
        if finite and value.dtype.kind == "f" and not np.isfinite(value).all():
            raise FittedStateError(f"{what} holds values that are not finite (NaN or infinite)")
        if positive and not (value > 0).all():
            raise FittedStateError(f"{what} holds values <= 0, where every one must be positive")
        if nonnegative and not (value >= 0).all():
            raise FittedStateError(f"{what} holds negative values")
    return value


def probabilities(value, what, n, *, dims=None, positive=False):
    """Check that ``value`` is a float array of shape (n,) of non-negative (or positive) entries summing to 1.

    Parameters
    ----------
    value : object
    what : str
    n : int
    dims : str or None, default=None
        What n is, e.g. "(n_classes,)".
    positive : bool, default=False
        Refuse zeros too.

    Returns
    -------
    value : ndarray
    """
    array(value, what, (n,), dims=dims, positive=positive, nonnegative=True)
    if n and not np.isclose(value.sum(), 1.0, rtol=0, atol=1e-6):
        raise FittedStateError(f"{what} sums to {value.sum():.6g}, not 1")
    return value


def _described(value):
    """A value of the wrong kind, as a message names it: its type, and the value if short."""
    shown = repr(value)
    return f"a {type(value).__name__}" + (f" ({shown})" if len(shown) <= 40 and "\n" not in shown else "")
