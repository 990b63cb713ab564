"""Gamma components: independent positive values per feature, shape and rate estimated numerically."""

from dataclasses import dataclass

import numpy as np
import scipy.special
from array_api_compat import array_namespace

from discrim.backend import ops
from discrim.distributions import _constraints as constraints
from discrim.distributions._base import (
    ComponentFamily,
    Params,
    Stats,
    component_totals,
    host,
    observed_entries,
    per_feature_weight,
    weighted_resp_t,
)
from discrim.distributions._positive import (
    check_nonnegative_data,
    check_observed_positive,
    collapse_ratios,
    collapsing,
    log_observed,
    min_collapse_ratio,
)
from discrim.distributions._special import stirling_remainder as _stirling_remainder

__all__ = ["Gamma", "GammaParams", "GammaStats"]

# log(mean) - mean(log x) is 0 when a component's observed values are all equal: the shape's MLE
# is then infinite. Below this gap the shape is held at about 1 / (2 * _MIN_GAP).
_MIN_GAP = 1e-13
# Shapes above which log_prob evaluates a component in its centred form (see _centred_log_prob).
_CENTRED_SHAPE = 1e4


@dataclass(frozen=True)
class GammaParams(Params):
    """Shapes ``shape`` and rates ``rate``, each of shape (n_components, n_features)."""

    shape: np.ndarray
    rate: np.ndarray


@dataclass(frozen=True)
class GammaStats(Stats):
    """Weighted totals (K,), weighted sums of x and of log x over the observed entries (K, d),
    and, with a mask, the weighted totals of the rows observed in each feature (K, d)."""

    weight: np.ndarray
    sum_x: np.ndarray
    sum_log_x: np.ndarray
    observed: np.ndarray = None


def solve_shape(gap, start=None, tol=1e-12, max_iter=100):
    """Solve ``log(a) - digamma(a) = gap`` for the shape ``a``, element-wise.

    Minka's generalised Newton iteration (Estimating a Gamma distribution, 2002), which
    converges in a few steps from his closed-form start.

    Parameters
    ----------
    gap : ndarray
        ``log(mean) - mean(log x)`` (weighted), > 0.
    start : ndarray or None, default=None
        Starting shapes of the shape of ``gap`` (the current parameters); None: Minka's
        approximation ``(3 - g + sqrt((g - 3)^2 + 24 g)) / (12 g)``.
    tol : float, default=1e-12
        Relative change of every shape at which the iteration stops.
    max_iter : int, default=100

    Returns
    -------
    shape : ndarray of the shape of ``gap``
    """
    gap = np.maximum(gap, _MIN_GAP)
    if start is None or not np.all(np.isfinite(start) & (start > 0)):
        a = (3.0 - gap + np.sqrt((gap - 3.0) ** 2 + 24.0 * gap)) / (12.0 * gap)
    else:
        a = np.array(start, dtype=np.float64)
    for _ in range(max_iter):
        # 1/a_new = 1/a + (log a - digamma(a) - gap) / (a^2 (1/a - trigamma(a)))
        profile, slope = _profile_terms(a)
        num = profile - gap
        den = a * a * slope
        new = 1.0 / (1.0 / a + num / den)
        new = np.where(np.isfinite(new) & (new > 0), new, 0.5 * a)  # a wild step: halve instead
        done = np.all(np.abs(new - a) <= tol * a)
        a = new
        if done:
            break
    return a


class Gamma(ComponentFamily):
    """Independent gamma values per feature: ``x_d ~ Gamma(shape_kd, rate_kd)``, ``x_d > 0``.

    Notes
    -----
    The density is ``rate^shape x^(shape - 1) exp(-rate x) / Gamma(shape)``, scipy's
    ``gamma(shape, scale=1 / rate)``. Parameters ``shape`` and ``rate`` have shape
    (n_components, n_features). The statistics are the weighted sums of ``x`` and ``log x``; the
    weighted MLE has no closed form: with ``m`` the weighted mean and ``l`` the weighted mean of
    ``log x``, the shape solves ``log(a) - digamma(a) = log(m) - l`` (the profile likelihood),
    found by Minka's generalised Newton iteration from the current shape (EM's M-step) or from
    his closed-form approximation (the first M-step), and ``rate = a / m``. A component whose
    observed values are all equal has an unbounded shape, held at about ``5e12``.

    The estimators put 0 in the place of a missing value, so :meth:`check_data` lets 0 through;
    an observed 0 is refused by :meth:`suff_stats` and :meth:`log_prob` (outside the support: mark it
    missing, NaN, to score the row by its other features).

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gamma
    >>> fam = Gamma()
    >>> params = fam.make_params({"shape": [[2.0]], "rate": [[1.0]]}, n_components=1, n_features=1)
    >>> round(float(fam.log_prob(np.array([[1.0]]), params)[0, 0]), 6)  # log(1 * exp(-1))
    -1.0
    """

    arg_constraints = {"shape": constraints.positive, "rate": constraints.positive}
    params_class = GammaParams
    support = constraints.positive
    is_discrete = False
    cli_names = {"gamma": {}}

    def __init__(self) -> None:
        pass

    def check_data(self, X, rows=None):
        return check_nonnegative_data(self, X)

    def param_shapes(self, n_components, n_features):
        return {"shape": (n_components, n_features), "rate": (n_components, n_features)}

    def rows_per_component(self, n_features):
        return 2  # one distinct value per feature: the shape's likelihood grows without bound

    def log_prob(self, X, params, *, mask=None, rows=None):
        # an observed 0 has density +inf (shape < 1) or 0 (shape > 1): refused, as in fit, rather
        # than scored by a floor that would decide a classification silently
        check_observed_positive(self, X, mask)
        a, b = params.shape, params.rate
        const = a * np.log(b) - scipy.special.gammaln(a)  # (K, d)
        log_x = log_observed(X, mask)
        out = ops.like(a - 1.0, X) @ log_x.T  # (K, n): contiguous rows
        out -= ops.like(b, X) @ observed_entries(X, mask).T
        if mask is None:
            out += ops.like(const.sum(axis=1), X)[:, None]
        else:
            out += ops.like(const, X) @ ops.like(mask, X).T
        # the expanded form's terms grow with the shape (a log x, b x, lgamma(a)) while the density's
        # log stays moderate: rounding of about a eps per entry. Components with a large shape (a
        # component collapsing onto one value, or very precise data) get the centred form instead.
        for k in np.flatnonzero((a > _CENTRED_SHAPE).any(axis=1)):
            out[k] = _centred_log_prob(X, log_x, a[k], a[k] / b[k], mask)
        return out.T

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        if params is None:  # with params, the E-step's log_prob of these rows has checked them
            check_observed_positive(self, X, mask)
        wr_t = weighted_resp_t(resp, sample_weight)
        observed = None if mask is None else host(ops.matmul(wr_t, ops.like(mask, X)))
        return GammaStats(weight=component_totals(wr_t), sum_x=host(ops.matmul(wr_t, observed_entries(X, mask))),
                          sum_log_x=host(ops.matmul(wr_t, log_observed(X, mask))), observed=observed)

    def params_from_stats(self, stats, current=None):
        return self._m_step(stats, None if current is None else current.shape)

    def _m_step(self, stats, start, shape=None):
        """The M-step from ``start`` shapes; with ``shape`` given, only the rate (a / mean)."""
        w = np.broadcast_to(per_feature_weight(stats), stats.sum_x.shape)
        occupied = w > 0
        safe = np.where(occupied, w, 1.0)
        mean = np.where(occupied, stats.sum_x / safe, 1.0)
        if shape is None:
            gap = np.where(occupied, np.log(mean) - stats.sum_log_x / safe, 1.0)
            shape = np.where(occupied, solve_shape(gap, start), 1.0)
        return GammaParams(shape=shape, rate=np.where(occupied, shape / mean, 1.0))

    def params_given(self, stats, fixed, current=None):
        # a fixed shape: the rate's MLE given it (a / mean); a fixed rate: the shape solves
        # digamma(a) = mean(log x) + log(rate), by the same Newton steps on that equation
        if "shape" in fixed:
            value, where = fixed["shape"]
            free = self.params_from_stats(stats, current)
            shape = np.where(where, value, free.shape)
            params = self._m_step(stats, None, shape=shape)
        else:
            params = self.params_from_stats(stats, current)
        if "rate" in fixed:
            value, where = fixed["rate"]
            w = np.broadcast_to(per_feature_weight(stats), stats.sum_x.shape)
            # the entries not fixed hold placeholders (0): log 1 there, their solution is not taken
            target = np.where(w > 0, stats.sum_log_x / np.where(w > 0, w, 1.0), 0.0) + np.log(np.where(where, value, 1.0))
            solved = _inverse_digamma(np.broadcast_to(target, params.shape.shape))
            shape = np.where(where & (w > 0), solved, params.shape)
            if "shape" in fixed:
                shape = np.where(fixed["shape"][1], fixed["shape"][0], shape)
            params = GammaParams(shape=shape, rate=np.where(where, value, params.rate))
        return params

    def component_means(self, params, n_rows=1, rows=None):
        return params.shape / params.rate

    def sample(self, params, n_per_component, rng):
        blocks = [rng.gamma(a, 1.0 / b, size=(int(m), a.shape[0]))
                  for a, b, m in zip(params.shape, params.rate, n_per_component)]
        return np.maximum(np.concatenate(blocks, axis=0), np.finfo(np.float64).tiny)

    def component_variances(self, params):
        with np.errstate(divide="ignore", invalid="ignore"):  # shape / rate^2
            return np.asarray(params.shape, dtype=np.float64) / np.asarray(params.rate, dtype=np.float64) ** 2

    def _collapse_ratios(self, params, occupied=None):
        # the squared coefficient of variation 1 / shape, free of the units (see collapse_ratios)
        shape, rate = np.asarray(params.shape, dtype=np.float64), np.asarray(params.rate, dtype=np.float64)
        return collapse_ratios(1.0 / shape, np.log(shape) - np.log(rate), occupied)

    def collapsing_components(self, params, scale=None):
        # ``scale`` (a variance of the data) is not in the units of the ratios: the components judge each other
        return collapsing(self._collapse_ratios(params))

    def min_relative_variance(self, params, occupied, feature_var):
        return min_collapse_ratio(self._collapse_ratios(params, occupied), occupied, feature_var)

    def n_parameters(self, n_features, n_components=1):
        return 2 * n_components * n_features


def _profile_terms(a):
    """``log(a) - digamma(a)`` and its derivative ``1/a - trigamma(a)``, accurate for large shapes.

    Both differences cancel for large ``a`` (``log a`` against ``digamma(a) = log a - 1/(2a) -
    ...``): from ``a = 100`` their asymptotic series are used instead.

    Parameters
    ----------
    a : ndarray
        Shapes, > 0.

    Returns
    -------
    profile, slope : ndarray of the shape of ``a``
    """
    small = np.minimum(a, 100.0)
    direct = np.log(small) - scipy.special.digamma(small), 1.0 / small - scipy.special.polygamma(1, small)
    big = np.maximum(a, 100.0)
    z, z2 = 1.0 / big, 1.0 / (big * big)
    profile = z * (0.5 + z * (1.0 / 12 - z2 * (1.0 / 120 - z2 * (1.0 / 252 - z2 / 240))))
    slope = -z2 * (0.5 + z * (1.0 / 6 - z2 * (1.0 / 30 - z2 * (1.0 / 42 - z2 / 30))))
    return np.where(a < 100.0, direct[0], profile), np.where(a < 100.0, direct[1], slope)


def _centred_log_prob(X, log_x, a, m, mask):
    """One component's Gamma log-density of every row in a form that stays accurate for large shapes: (n,).

    With ``t = x / m`` for the mean ``m = a / b``, ``log p(x) = a (log t - t + 1) + log(a / 2 pi) / 2
    - stirlerr(a) - log x``, ``stirlerr(a) = lgamma(a) - (a - 1/2) log a + a - log(2 pi) / 2``
    (Stirling's remainder): ``log t - t + 1 = log1p(u) - u`` with ``u = t - 1`` is computed to
    ``eps |u|``, and ``stirlerr`` from its series. The expanded form subtracts terms of size
    ``a |log x|``.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
    log_x : array of shape (n_samples, n_features)
        ``log x`` of the observed entries, 0 elsewhere (:func:`log_observed`).
    a, m : ndarray of shape (n_features,)
        The component's shapes and means.
    mask : array of shape (n_samples, n_features) of bool or None

    Returns
    -------
    log_prob : array of shape (n_samples,)
    """
    u = X / ops.like(m, X) - 1.0
    if mask is not None:  # a missing entry (held as 0 by the estimators) contributes 0: u = 0 there
        u = ops.where(ops.like(mask, X) > 0, u, 0.0 * u)
    per_entry = ops.like(a, X) * (_log1p_above_minus_one(u) - u) - log_x
    constant = ops.like(0.5 * np.log(a / (2 * np.pi)) - _stirling_remainder(a), X)  # (d,)
    if mask is None:
        return ops.row_sums(per_entry)[:, 0] + float(constant.sum())
    return ops.row_sums(per_entry)[:, 0] + ops.like(mask, X) @ constant


def _log1p_above_minus_one(u):
    """``log1p(u)`` with ``u`` held above ``-1 + eps``: an entry far below the mean (``x / m`` rounding to 0)
    gives a finite log-density, as the expanded form's ``log x`` of ``LOG_TINY`` does, not ``-inf``."""
    xp = array_namespace(u)
    return xp.log1p(xp.clip(u, min=-1.0 + float(np.finfo(np.float64).eps)))


def _inverse_digamma(y, n_iter=50):
    """``a`` with ``digamma(a) = y`` (element-wise), by Newton's method from Minka's start."""
    a = np.where(y >= -2.22, np.exp(y) + 0.5, -1.0 / (y - scipy.special.digamma(1.0)))
    for _ in range(n_iter):
        a = a - (scipy.special.digamma(a) - y) / scipy.special.polygamma(1, a)
    return a
