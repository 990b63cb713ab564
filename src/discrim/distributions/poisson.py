"""Poisson components: independent counts per feature."""

from dataclasses import dataclass

import numpy as np

from discrim.distributions import _constraints as constraints
from discrim.backend import ops
from discrim.distributions._base import (
    LOG_TINY,
    ComponentFamily,
    Params,
    Stats,
    component_totals,
    host,
    observed_entries,
    per_feature_weight,
    weighted_resp_t,
)
from discrim.distributions._special import log_factorial_rows

__all__ = ["Poisson", "PoissonParams", "PoissonStats"]


@dataclass(frozen=True)
class PoissonParams(Params):
    """Rates ``rate`` of shape (n_components, n_features)."""

    rate: np.ndarray


@dataclass(frozen=True)
class PoissonStats(Stats):
    """Weighted responsibility totals (K,), weighted sums of the observed entries of X (K, d),
    and, with a mask, the weighted totals of the rows observed in each feature (K, d)."""

    weight: np.ndarray
    weighted_sum: np.ndarray
    observed: np.ndarray = None


class Poisson(ComponentFamily):
    """Independent Poisson counts per feature: ``x_d ~ Poisson(rate_kd)``.

    Notes
    -----
    The parameter ``rate`` has shape (n_components, n_features); its weighted MLE is the
    responsibility-weighted mean of each feature. A rate of exactly 0 (a component whose rows
    are all zero) is evaluated as the smallest positive float, so positive counts get a tiny
    finite density rather than NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Poisson
    >>> fam = Poisson()
    >>> params = fam.make_params({"rate": [[1.5], [4.0]]}, n_components=2, n_features=1)
    >>> fam.log_prob(np.array([[0.0], [3.0]]), params).shape
    (2, 2)
    """

    arg_constraints = {"rate": constraints.nonnegative}
    params_class = PoissonParams
    support = constraints.nonnegative_integer
    cli_names = {"poisson": {}}

    def __init__(self) -> None:
        pass

    def param_shapes(self, n_components, n_features):
        return {"rate": (n_components, n_features)}

    def log_prob(self, X, params, *, mask=None, rows=None):
        rate = params.rate
        with np.errstate(divide="ignore"):
            log_rate = np.maximum(np.log(rate), LOG_TINY)
        Xo = observed_entries(X, mask)
        # computed as (K, n_samples): the posterior and the statistics then run over contiguous rows
        out = ops.like(log_rate, X) @ Xo.T
        if mask is None:
            out -= ops.like(rate.sum(axis=1), X)[:, None]
        else:
            out -= ops.like(rate, X) @ ops.like(mask, X).T
        out -= ops.like(log_factorial_rows(Xo), X)
        return out.T

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        wr_t = weighted_resp_t(resp, sample_weight)
        observed = None if mask is None else host(ops.matmul(wr_t, ops.like(mask, X)))
        return PoissonStats(
            weight=component_totals(wr_t), weighted_sum=host(ops.matmul(wr_t, observed_entries(X, mask))), observed=observed
        )

    def params_from_stats(self, stats, current=None):
        w = per_feature_weight(stats)
        return PoissonParams(rate=np.where(w > 0, stats.weighted_sum / np.where(w > 0, w, 1.0), 1.0))

    def component_means(self, params, n_rows=1, rows=None):
        return params.rate

    def sample(self, params, n_per_component, rng):
        blocks = [rng.poisson(r, size=(int(m), r.shape[0])) for r, m in zip(params.rate, n_per_component)]
        return np.concatenate(blocks, axis=0).astype(np.float64)

    def n_parameters(self, n_features, n_components=1):
        return n_components * n_features
