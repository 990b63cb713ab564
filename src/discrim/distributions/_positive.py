"""What the families of positive data (Gamma, Exponential, LogNormal) share: logs of observed entries, data checks
and the test of a component collapsing onto one value."""

import numpy as np

from discrim.backend import ops
from discrim.distributions._base import _COLLAPSED_SHARE, LOG_TINY

__all__ = ["check_nonnegative_data", "check_observed_positive", "collapse_ratios", "collapsing", "log_observed", "min_collapse_ratio"]


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


def collapse_ratios(spread, log_mean=None, occupied=None):
    """Every component's relative spread over the largest among the components: (K, d), small where it collapses.

    A positive family's variance grows with its location (a Gamma's is ``mean^2 / shape``), so a
    component's variance beside the others' or the data's tells its magnitude, not a collapse: a
    healthy component at 1 beside one at 1e5 was called collapsing (variance ratio 1e-10). The
    families pass a spread free of the units instead (a Gamma's or LogNormal's squared coefficient
    of variation, 1 / shape or ``expm1(sigma^2)``), which sinks towards 0 only where the
    likelihood grows without bound; components that all collapsed onto distinct values are
    judged beside the spread of their log-means (as the Gaussian's beside the spread of its means).

    Parameters
    ----------
    spread : ndarray of shape (n_components, n_features)
        Positive, free of the data's units (a component at any location keeps its value).
    log_mean : ndarray of shape (n_components, n_features) or None, default=None
        The components' log-means, whose variance over the components is a floor of the reference.
    occupied : ndarray of shape (n_components,) of bool or None, default=None
        The components that form the reference (None: all).

    Returns
    -------
    ratios : ndarray of shape (n_components, n_features)
    """
    spread = np.asarray(spread, dtype=np.float64)
    keep = slice(None) if occupied is None else np.asarray(occupied, dtype=bool)
    reference = np.nanmax(spread[keep], axis=0)
    if log_mean is not None:
        reference = np.maximum(reference, np.var(np.asarray(log_mean, dtype=np.float64)[keep], axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return spread / reference


def collapsing(ratios):
    """Components with a ratio of :func:`collapse_ratios` below ``_COLLAPSED_SHARE`` on some feature: sorted indices."""
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(np.any(ratios < _COLLAPSED_SHARE, axis=1))


def min_collapse_ratio(ratios, occupied, feature_var):
    """Smallest ratio of :func:`collapse_ratios` over the occupied components and non-constant features (NaN: none).

    Parameters
    ----------
    ratios : ndarray of shape (n_components, n_features)
    occupied : ndarray of shape (n_components,) of bool
    feature_var : ndarray of shape (n_features,)
        A constant feature (variance 0) marks nothing.

    Returns
    -------
    rel : float
    """
    occupied = np.asarray(occupied, dtype=bool)
    if not occupied.any():
        return float("nan")
    values = np.where(np.asarray(feature_var) > 0, ratios, np.nan)[occupied]
    return float(np.nanmin(values)) if np.isfinite(values).any() else float("nan")
