"""Exponential components: independent non-negative values per feature."""

from dataclasses import dataclass

import numpy as np

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
from discrim.distributions._positive import check_nonnegative_data, collapse_ratios, collapsing, min_collapse_ratio

__all__ = ["Exponential", "ExponentialParams", "ExponentialStats"]

# A component whose observed values are all 0 has an unbounded MLE of its rate: it is held at this
# many times the inverse of the feature's mean (in the data's own units: 1e12 itself capped every fit
# of data in small units, e.g. decay times of 1e-13 s, below its MLE)
_MAX_RATE = 1e12


@dataclass(frozen=True)
class ExponentialParams(Params):
    """Rates ``rate`` of shape (n_components, n_features)."""

    rate: np.ndarray


@dataclass(frozen=True)
class ExponentialStats(Stats):
    """Weighted totals (K,), weighted sums of the observed entries (K, d) and, with a mask, the
    weighted totals of the rows observed in each feature (K, d)."""

    weight: np.ndarray
    weighted_sum: np.ndarray
    observed: np.ndarray = None


class Exponential(ComponentFamily):
    """Independent exponential values per feature: ``x_d ~ Exponential(rate_kd)``, ``x_d >= 0``.

    Notes
    -----
    The density is ``rate * exp(-rate * x)``; the parameter ``rate`` has shape (n_components,
    n_features) and its weighted MLE is the inverse of the responsibility-weighted mean of each
    feature (``scipy.stats.expon(scale=1 / rate)``). A component whose observed values are all 0
    gets ``1e12`` times the inverse of the feature's mean as its rate. With a mask, a row's density is the product over its observed
    entries.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Exponential
    >>> fam = Exponential()
    >>> params = fam.make_params({"rate": [[2.0], [0.5]]}, n_components=2, n_features=1)
    >>> np.round(fam.log_prob(np.array([[1.0]]), params), 4)
    array([[-1.3069, -1.1931]])
    """

    arg_constraints = {"rate": constraints.positive}
    params_class = ExponentialParams
    support = constraints.nonnegative
    is_discrete = False
    cli_names = {"exponential": {}}

    def __init__(self) -> None:
        pass

    def check_data(self, X, rows=None):
        return check_nonnegative_data(self, X)

    def param_shapes(self, n_components, n_features):
        return {"rate": (n_components, n_features)}

    def log_prob(self, X, params, *, mask=None, rows=None):
        rate = params.rate
        out = ops.like(-rate, X) @ observed_entries(X, mask).T  # (K, n): contiguous rows
        if mask is None:
            out += ops.like(np.log(rate).sum(axis=1), X)[:, None]
        else:
            out += ops.like(np.log(rate), X) @ ops.like(mask, X).T
        return out.T

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        wr_t = weighted_resp_t(resp, sample_weight)
        observed = None if mask is None else host(ops.matmul(wr_t, ops.like(mask, X)))
        return ExponentialStats(weight=component_totals(wr_t), weighted_sum=host(ops.matmul(wr_t, observed_entries(X, mask))),
                                observed=observed)

    def params_from_stats(self, stats, current=None):
        w = per_feature_weight(stats)
        w = np.broadcast_to(w, stats.weighted_sum.shape)
        total = stats.weighted_sum.sum(axis=0)
        scale = np.where(total > 0, total / np.maximum(w.sum(axis=0), np.finfo(float).tiny), 1.0)  # each feature's mean
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.minimum(w / stats.weighted_sum, _MAX_RATE / scale)
        return ExponentialParams(rate=np.where(w > 0, rate, 1.0))

    def component_means(self, params, n_rows=1, rows=None):
        return 1.0 / params.rate

    def sample(self, params, n_per_component, rng):
        blocks = [rng.exponential(1.0 / r, size=(int(m), r.shape[0])) for r, m in zip(params.rate, n_per_component)]
        return np.concatenate(blocks, axis=0)

    def component_variances(self, params):
        with np.errstate(divide="ignore"):
            return 1.0 / np.asarray(params.rate, dtype=np.float64) ** 2

    def _collapse_ratios(self, params, occupied=None):
        # Every exponential has the coefficient of variation 1: its likelihood grows without bound only on
        # zeros, where the rate is held at _MAX_RATE times the feature's inverse mean. Its mean (its
        # standard deviation, not its variance) beside the others' tells that apart from a component
        # of smaller values: 1e-12 on zeros, 8e-5 for a healthy component at 4 beside one at 5e4
        return collapse_ratios(1.0 / np.asarray(params.rate, dtype=np.float64), None, occupied)

    def collapsing_components(self, params, scale=None):
        # ``scale`` (a variance of the data) is not in the units of the ratios: the components judge each other
        return collapsing(self._collapse_ratios(params))

    def min_relative_variance(self, params, occupied, feature_var):
        return min_collapse_ratio(self._collapse_ratios(params, occupied), occupied, feature_var)

    def n_parameters(self, n_features, n_components=1):
        return n_components * n_features
