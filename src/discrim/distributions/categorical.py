"""Categorical components: independent category codes per feature."""

from dataclasses import dataclass
from numbers import Integral

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
    weighted_resp_t,
)

__all__ = ["Categorical", "CategoricalParams", "CategoricalStats", "MAX_CATEGORIES"]

# Every row is one-hot encoded over the categories and every component keeps a probability per
# category and feature: beyond this many categories that is memory for nothing (codes that large
# are identifiers or counts, not categories).
MAX_CATEGORIES = 65_536


@dataclass(frozen=True)
class CategoricalParams(Params):
    """Category probabilities ``probs`` of shape (n_components, n_features, n_categories)."""

    probs: np.ndarray


@dataclass(frozen=True)
class CategoricalStats(Stats):
    """Weighted responsibility totals (K,) and weighted category counts (K, d, n_categories)."""

    weight: np.ndarray
    counts: np.ndarray


class Categorical(ComponentFamily):
    """Independent categorical features: ``x_d ~ Categorical(probs_kd)`` on codes 0..C-1.

    Parameters
    ----------
    n_categories : int, default=2
        Number of categories C, at most ``MAX_CATEGORIES`` (65,536); every entry of X must be a
        whole number in ``[0, C - 1]`` (encode strings first, e.g. with
        ``sklearn.preprocessing.OrdinalEncoder``).

    Notes
    -----
    The parameter ``probs`` has shape (n_components, n_features, n_categories) and sums to one
    along the last axis; its weighted MLE is the responsibility-weighted frequency of each
    category. Log-densities are one matrix product of the one-hot encoded rows with
    ``log probs``.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Categorical
    >>> fam = Categorical(n_categories=3)
    >>> params = fam.make_params({"probs": [[[0.2, 0.3, 0.5]]]}, n_components=1, n_features=1)
    >>> float(np.exp(fam.log_prob(np.array([[2.0]]), params))[0, 0])
    0.5
    """

    arg_constraints = {"probs": constraints.simplex}
    params_class = CategoricalParams
    cli_names = {"categorical": {}}

    def __init__(self, n_categories=2):
        self.n_categories = n_categories

    def check_options(self):
        c = self.n_categories
        if not isinstance(c, Integral) or isinstance(c, bool) or c < 2:
            raise ValueError(f"n_categories must be an int >= 2; got {c!r}.")
        if c > MAX_CATEGORIES:
            raise ValueError(
                f"n_categories={c} exceeds {MAX_CATEGORIES:,}: codes this large are not categories "
                "(identifiers or counts?); re-encode them as 0..C-1 (sklearn.preprocessing.OrdinalEncoder) "
                "or model them with another family (e.g. Poisson)."
            )
        return self

    def support_upper(self):
        return self.n_categories - 1

    def check_data(self, X, rows=None):
        c = self.n_categories
        if not constraints.integer_interval(0, c - 1).check(X):
            raise ValueError(
                f"X must hold category codes for {self!r}: whole numbers between 0 and {c - 1} "
                "(encode categories with sklearn.preprocessing.OrdinalEncoder)."
            )
        return X

    def _one_hot(self, X, mask):
        """(n, d) codes -> (n, d * C) indicators in X's float dtype; unobserved entries all zero."""
        n, d = X.shape
        dtype = X.dtype if not isinstance(X, np.ndarray) or X.dtype.kind == "f" else np.float64
        out = ops.one_hot(X, self.n_categories, dtype)
        if mask is not None:
            out = out * ops.like(mask, out)[:, :, None]
        return out.reshape(n, d * self.n_categories)

    def row_footprint(self, n_components, n_features):
        return n_components + n_features * self.n_categories

    def param_shapes(self, n_components, n_features):
        return {"probs": (n_components, n_features, self.n_categories)}

    def log_prob(self, X, params, *, mask=None, rows=None):
        with np.errstate(divide="ignore"):
            log_probs = np.maximum(np.log(params.probs), LOG_TINY)
        onehot = self._one_hot(X, mask)
        # (K, n_samples), returned transposed: the posterior then runs over contiguous rows
        return (ops.like(log_probs.reshape(log_probs.shape[0], -1), onehot) @ onehot.T).T

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        wr_t = weighted_resp_t(resp, sample_weight)
        counts = host(wr_t @ self._one_hot(X, mask))
        return CategoricalStats(
            weight=component_totals(wr_t),
            counts=counts.reshape(resp.shape[1], X.shape[1], self.n_categories),
        )

    def params_from_stats(self, stats, current=None):
        # The counts of a (component, feature) sum to the weight of the rows that observed it.
        w = stats.counts.sum(axis=2, keepdims=True)
        c = self.n_categories
        return CategoricalParams(probs=np.where(w > 0, stats.counts / np.where(w > 0, w, 1.0), 1.0 / c))

    def component_means(self, params, n_rows=1, rows=None):
        # the expected category code: the completion of a missing code under a component
        return params.probs @ np.arange(self.n_categories, dtype=np.float64)

    def sample(self, params, n_per_component, rng):
        blocks = []
        for probs, m in zip(params.probs, n_per_component):
            cum = np.cumsum(probs, axis=1)  # (d, C)
            u = rng.random((int(m), probs.shape[0], 1))
            blocks.append(np.minimum((u > cum[None]).sum(axis=2), probs.shape[1] - 1))
        return np.concatenate(blocks, axis=0).astype(np.float64)

    def n_parameters(self, n_features, n_components=1):
        return n_components * n_features * (self.n_categories - 1)
