"""Poisson components: independent counts per feature."""

from dataclasses import dataclass

import numpy as np

from discrim.distributions import _constraints as constraints
from discrim.distributions._base import LOG_TINY, ComponentFamily, Params, Stats
from discrim.distributions._special import log_factorial_rows

__all__ = ["Poisson", "PoissonParams", "PoissonStats"]


@dataclass(frozen=True)
class PoissonParams(Params):
    """Rates ``rate`` of shape (n_components, n_features)."""

    rate: np.ndarray


@dataclass(frozen=True)
class PoissonStats(Stats):
    """Weighted responsibility totals (K,) and weighted sums of X (K, d)."""

    weight: np.ndarray
    weighted_sum: np.ndarray


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

    def __init__(self):
        pass

    def param_shapes(self, n_components, n_features):
        return {"rate": (n_components, n_features)}

    def log_prob(self, X, params):
        rate = params.rate
        with np.errstate(divide="ignore"):
            log_rate = np.maximum(np.log(rate), LOG_TINY)
        # computed as (K, n_samples): the posterior and the statistics then run over contiguous rows
        out = log_rate.astype(X.dtype, copy=False) @ X.T
        out -= rate.sum(axis=1).astype(X.dtype, copy=False)[:, None]
        out -= log_factorial_rows(X).astype(X.dtype, copy=False)
        return out.T

    def suff_stats(self, X, resp, sample_weight=None):
        wr_t = resp.T if sample_weight is None else resp.T * sample_weight.astype(resp.dtype, copy=False)
        return PoissonStats(weight=wr_t.sum(axis=1, dtype=np.float64), weighted_sum=(wr_t @ X).astype(np.float64))

    def params_from_stats(self, stats, reg_covar=0.0):
        w = stats.weight[:, None]
        return PoissonParams(rate=np.where(w > 0, stats.weighted_sum / np.where(w > 0, w, 1.0), 1.0))

    def sample(self, params, n_per_component, rng):
        blocks = [rng.poisson(r, size=(int(m), r.shape[0])) for r, m in zip(params.rate, n_per_component)]
        return np.concatenate(blocks, axis=0).astype(np.float64)

    def n_parameters(self, n_features, n_components=1):
        return n_components * n_features
