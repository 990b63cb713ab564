"""What the families of positive data (Gamma, Exponential, LogNormal) share: logs of observed entries and data checks."""

import numpy as np

from discrim.backend import ops
from discrim.distributions._base import LOG_TINY

__all__ = ["check_nonnegative_data", "check_observed_positive", "log_observed"]


def log_observed(X, mask):
    """``log x`` of the observed entries, 0 in the unobserved ones; an observed 0 gives ``LOG_TINY``.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        numpy or torch; entries >= 0.
    mask : array of shape (n_samples, n_features) of bool or None

    Returns
    -------
    log_x : array of shape (n_samples, n_features)
        In X's namespace and floating dtype.
    """
    if isinstance(X, np.ndarray):
        Xf = X if X.dtype.kind == "f" else X.astype(np.float64)
        with np.errstate(divide="ignore"):
            out = np.maximum(np.log(Xf), LOG_TINY)
        return out if mask is None else np.where(mask, out, 0.0).astype(out.dtype, copy=False)
    out = X.log().clamp_min(LOG_TINY)
    return out if mask is None else out * ops.like(mask, out)


def check_nonnegative_data(family, X):
    """Raise ``ValueError`` unless every entry of X is finite and >= 0.

    The estimators put 0 in the place of a missing entry before they check the data, so 0 passes
    here; an observed 0 is refused by :func:`check_observed_positive` where the family needs x > 0.

    Parameters
    ----------
    family : ComponentFamily
    X : array of shape (n_samples, n_features)

    Returns
    -------
    X : array
        Unchanged.
    """
    from discrim.distributions import _constraints as constraints

    if not constraints.nonnegative.check(X):
        raise ValueError(f"X must hold finite values >= 0 for {family!r} (a positive family); "
                         "shift or transform the data, or choose another family (e.g. Gaussian).")
    return X


def check_observed_positive(family, X, mask):
    """Raise ``ValueError`` if an observed entry of X is <= 0 (its log-density would be unbounded).

    Parameters
    ----------
    family : ComponentFamily
    X : array of shape (n_samples, n_features)
    mask : array of shape (n_samples, n_features) of bool or None
    """
    bad = X <= 0
    if mask is not None:
        bad = bad & ops.like(mask, bad)
    if bool(bad.any()):
        raise ValueError(f"X has observed entries <= 0 but {family!r} needs x > 0: remove or shift them, "
                         "mark them missing (NaN), or use Exponential(), whose support includes 0.")
