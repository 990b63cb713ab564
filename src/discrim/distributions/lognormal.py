"""Log-normal components: independent positive values per feature, normal on the log scale."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np

from discrim.backend import ops
from discrim.distributions import _constraints as constraints
from discrim.distributions._base import (
    ComponentFamily,
    Params,
    Stats,
    component_totals,
    host,
    merged_moments,
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

__all__ = ["LogNormal", "LogNormalParams", "LogNormalStats"]

_LOG_2PI = float(np.log(2 * np.pi))


@dataclass(frozen=True)
class LogNormalParams(Params):
    """Means ``mu`` and standard deviations ``sigma`` of ``log x``, each (n_components, n_features)."""

    mu: np.ndarray
    sigma: np.ndarray


@dataclass(frozen=True)
class LogNormalStats(Stats):
    """Weighted totals (K,), weighted means of ``log x`` (K, d) and the centred weighted sums of
    squares about them (K, d); with a mask, the means and squares are over the rows observed in
    each feature and ``observed`` (K, d) holds their weighted totals. ``+`` merges two blocks
    with the exact pooled-moment rule."""

    weight: np.ndarray
    mean: np.ndarray
    scatter: np.ndarray
    observed: np.ndarray = None

    def __add__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        mean, scatter, n = merged_moments(per_feature_weight(self), self.mean, self.scatter,
                                          per_feature_weight(other), other.mean, other.scatter)
        return LogNormalStats(weight=self.weight + other.weight, mean=mean, scatter=scatter,
                              observed=None if self.observed is None else n)


class LogNormal(ComponentFamily):
    """Independent log-normal values per feature: ``log x_d ~ N(mu_kd, sigma_kd^2)``, ``x_d > 0``.

    Parameters
    ----------
    reg_covar : float, default=1e-12
        Non-negative amount added to every variance ``sigma^2`` by the M-step, which keeps a
        component that collapses onto one value finite (as the Gaussian's ``reg_covar``);
        ``FiniteMixture(reg_covar=...)`` sets it for a fit. ``sigma`` is on the log scale, so this
        is a relative floor: ``sigma >= sqrt(reg_covar)`` bounds the coefficient of variation the
        fit can express from below (1e-6 by default; the Gaussian's 1e-6 would bound it at 1e-3,
        above the spread of data measured to four digits).

    Notes
    -----
    The density is ``exp(-(log x - mu)^2 / (2 sigma^2)) / (x sigma sqrt(2 pi))``, scipy's
    ``lognorm(s=sigma, scale=exp(mu))``. The weighted MLE is closed-form on ``log x``: ``mu`` the
    weighted mean and ``sigma^2`` the weighted variance (plus ``reg_covar``). Statistics are
    centred moments of ``log x``, merged exactly over row blocks.

    The estimators put 0 in the place of a missing value, so :meth:`check_data` lets 0 through;
    an observed 0 is refused by :meth:`suff_stats` and :meth:`log_prob` (outside the support: mark it
    missing, NaN, to score the row by its other features).

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import LogNormal
    >>> fam = LogNormal()
    >>> params = fam.make_params({"mu": [[0.0]], "sigma": [[1.0]]}, n_components=1, n_features=1)
    >>> round(float(fam.log_prob(np.array([[1.0]]), params)[0, 0]), 6)  # -log(sqrt(2 pi))
    -0.918939
    """

    arg_constraints = {"mu": constraints.real, "sigma": constraints.positive}
    params_class = LogNormalParams
    support = constraints.positive
    is_discrete = False
    fit_options = ("reg_covar",)
    cli_names = {"lognormal": {}}

    def __init__(self, reg_covar: float = 1e-12) -> None:
        self.reg_covar = reg_covar

    def check_options(self):
        reg = self.reg_covar
        if isinstance(reg, bool) or not isinstance(reg, Real) or not (np.isfinite(reg) and reg >= 0):
            raise ValueError(f"reg_covar must be a finite float >= 0; got {reg!r}.")
        return self

    def check_data(self, X, rows=None):
        return check_nonnegative_data(self, X)

    def param_shapes(self, n_components, n_features):
        return {"mu": (n_components, n_features), "sigma": (n_components, n_features)}

    def rows_per_component(self, n_features):
        return 2

    def log_prob(self, X, params, *, mask=None, rows=None):
        check_observed_positive(self, X, mask)  # an observed 0 has density 0: refused, as in fit
        # about the mean of the component means, as the Gaussian's terms (see its _precision_terms)
        center = params.mu.mean(axis=0)
        prec = 1.0 / params.sigma**2
        m = params.mu - center
        L = log_observed(X, mask)
        Lc = L - ops.like(center, L)
        if mask is not None:
            Lc = Lc * ops.like(mask, Lc)
        # sum_d [-(l - mu)^2 prec / 2 - log sigma - log(2 pi) / 2 - l], as (K, n): contiguous rows
        out = ops.like(-0.5 * prec, X) @ (Lc * Lc).T
        out += ops.like(m * prec, X) @ Lc.T
        const = -0.5 * m * m * prec - np.log(params.sigma) - 0.5 * _LOG_2PI
        if mask is None:
            out += ops.like(const.sum(axis=1), X)[:, None]
        else:
            out += ops.like(const, X) @ ops.like(mask, X).T
        out -= L.sum(1)[None, :]
        return out.T

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        if params is None:  # with params, the E-step's log_prob of these rows has checked them
            check_observed_positive(self, X, mask)
        wr_t = weighted_resp_t(resp, sample_weight)
        weight = component_totals(wr_t)
        L = log_observed(X, mask)
        ones = ops.like(np.ones(X.shape[0]), L)
        # centred about the block's mean of log x, then per component: exact far from the origin
        if mask is None:
            observed = None
            w = weight[:, None]
            center = host(ops.matmul(ones, L)) / max(X.shape[0], 1)
        else:
            M = ops.like(mask, L)
            observed = host(ops.matmul(wr_t, M))
            w = observed
            count = host(ops.matmul(ones, M))
            center = host(ops.matmul(ones, L)) / np.where(count > 0, count, 1.0)
        Lc = L - ops.like(center, L)
        if mask is not None:
            Lc = Lc * M
        safe = np.where(w > 0, w, 1.0)
        mean_c = host(ops.matmul(wr_t, Lc)) / safe
        scatter = np.maximum(host(ops.matmul(wr_t, Lc * Lc)) - w * mean_c**2, 0.0)
        mean = np.where(w > 0, mean_c + center, 0.0)
        return LogNormalStats(weight=weight, mean=mean, scatter=scatter, observed=observed)

    def params_from_stats(self, stats, current=None):
        w = np.broadcast_to(per_feature_weight(stats), stats.mean.shape)
        var = np.where(w > 0, stats.scatter / np.where(w > 0, w, 1.0), 1.0)
        return LogNormalParams(mu=stats.mean.copy(), sigma=np.sqrt(var + self.reg_covar))

    def log_penalty(self, params, stats):
        # sigma^2 = scatter / w + reg_covar maximises the expected log-likelihood less
        # (reg_covar / 2) sum w_kd / sigma_kd^2 (w: the rows that observed the feature)
        w = np.broadcast_to(per_feature_weight(stats), stats.mean.shape)
        return -0.5 * self.reg_covar * float(np.sum(w / np.asarray(params.sigma) ** 2))

    def params_given(self, stats, fixed, current=None):
        # a fixed mu: sigma^2 about it, the variance plus the squared shift of the mean
        free = self.params_from_stats(stats, current)
        mu, sigma = free.mu, free.sigma
        if "mu" in fixed:
            value, where = fixed["mu"]
            mu = np.where(where, value, mu)
            sigma = np.sqrt(sigma**2 + (stats.mean - mu) ** 2)
        if "sigma" in fixed:
            value, where = fixed["sigma"]
            sigma = np.where(where, value, sigma)
        return LogNormalParams(mu=mu, sigma=sigma)

    def component_means(self, params, n_rows=1, rows=None):
        return np.exp(params.mu + 0.5 * params.sigma**2)

    def sample(self, params, n_per_component, rng):
        blocks = [rng.lognormal(mu, s, size=(int(m), mu.shape[0]))
                  for mu, s, m in zip(params.mu, params.sigma, n_per_component)]
        return np.concatenate(blocks, axis=0)

    def component_variances(self, params):
        # (exp(sigma^2) - 1) exp(2 mu + sigma^2), with expm1 for small sigma
        sigma2 = np.asarray(params.sigma, dtype=np.float64) ** 2
        with np.errstate(over="ignore"):
            return np.expm1(sigma2) * np.exp(2.0 * np.asarray(params.mu, dtype=np.float64) + sigma2)

    def _collapse_ratios(self, params, occupied=None):
        # the squared coefficient of variation expm1(sigma^2), free of the units (see collapse_ratios);
        # log E[x] = mu + sigma^2 / 2
        mu, sigma = np.asarray(params.mu, dtype=np.float64), np.asarray(params.sigma, dtype=np.float64)
        return collapse_ratios(np.expm1(sigma**2), mu + 0.5 * sigma**2, occupied)

    def collapsing_components(self, params, scale=None):
        # ``scale`` (a variance of the data) is not in the units of the ratios: the components judge each other
        return collapsing(self._collapse_ratios(params))

    def min_relative_variance(self, params, occupied, feature_var):
        return min_collapse_ratio(self._collapse_ratios(params, occupied), occupied, feature_var)

    def n_parameters(self, n_features, n_components=1):
        return 2 * n_components * n_features
