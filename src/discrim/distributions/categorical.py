"""Categorical components: independent category codes per feature."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from collections.abc import Sequence

from discrim._typing import ArrayLike
from discrim.distributions import _constraints as constraints
from discrim.backend import ops
from discrim.utils._dask import is_dask, map_table_chunks
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
    """Independent categorical features: ``x_d ~ Categorical(probs_kd)`` on codes 0..C_d-1.

    Parameters
    ----------
    n_categories : int or list of int, default=2
        Number of categories: one count C for every feature, or a list with the count C_d of
        each feature; each at most ``MAX_CATEGORIES`` (65,536). Every entry of X must be a
        whole number in ``[0, C_d - 1]``.
    categories : list of list or None, default=None
        The categories of each feature (strings, numbers), in code order: the feature's count is
        then the length of its list, and :meth:`encode` turns rows of these values into codes
        (:meth:`decode` back). The estimators take numeric X only: pass ``family.encode(X)`` to
        them. With ``categories``, ``n_categories`` is left at its default or equals the counts.

    Notes
    -----
    The parameter ``probs`` has shape (n_components, n_features, C) with C the largest count,
    and sums to one along the last axis; a feature with fewer categories has probability 0 for
    the codes beyond its count. Its weighted MLE is the responsibility-weighted frequency of
    each category. Log-densities are one matrix product of the one-hot encoded rows with
    ``log probs``.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Categorical
    >>> fam = Categorical(n_categories=3)
    >>> params = fam.make_params({"probs": [[[0.2, 0.3, 0.5]]]}, n_components=1, n_features=1)
    >>> float(np.exp(fam.log_prob(np.array([[2.0]]), params))[0, 0])
    0.5
    >>> colours = Categorical(categories=[["red", "green", "blue"], ["S", "M"]])
    >>> colours.encode([["blue", "S"], ["red", "M"]])
    array([[2., 0.],
           [0., 1.]])
    """

    params_class = CategoricalParams
    cli_names = {"categorical": {}}

    def __init__(self, n_categories: int | Sequence[int] = 2, categories: Sequence[Sequence[Any]] | None = None) -> None:
        self.n_categories = n_categories
        self.categories = categories

    def _declared_counts(self):
        """Per-feature counts (ndarray of int) when they are fixed by the options, else None."""
        if self.categories is not None:
            return np.array([len(c) for c in self.categories], dtype=np.int64)
        if np.ndim(self.n_categories) == 1:
            return np.asarray(self.n_categories, dtype=np.int64)
        return None

    def _counts(self, n_features):
        """The count of categories of each of ``n_features`` features: ndarray of int."""
        counts = self._declared_counts()
        if counts is None:
            return np.full(n_features, int(self.n_categories), dtype=np.int64)
        if counts.shape[0] != n_features:
            raise ValueError(
                f"{self!r} has category counts for {counts.shape[0]} features but X has {n_features}: "
                "give n_categories (or categories) one entry per column of X."
            )
        return counts

    @property
    def arg_constraints(self):
        counts = self._declared_counts()
        if counts is None or np.all(counts == counts.max()):
            return {"probs": constraints.simplex}
        # codes beyond a feature's count are no categories of it: a probability there left the feature's
        # own probabilities summing below one (a density short of 1, and draws that check_data refuses)
        beyond = np.arange(int(counts.max())) >= counts[:, None]  # (d, C)
        return {"probs": constraints.Constraint(
            "simplex", "non-negative entries summing to one along the last axis, and 0 beyond the count of "
            f"categories of each feature, {counts.tolist()}",
            lambda v: constraints.simplex.check(v) and v.shape[-2:] == beyond.shape and bool(np.all(v[..., beyond] == 0)))}

    @property
    def _n_codes(self):
        """C: the largest count of categories (the last axis of ``probs``)."""
        counts = self._declared_counts()
        return int(self.n_categories) if counts is None else int(counts.max())

    def check_options(self):
        c = self.n_categories
        many = isinstance(c, (list, tuple, np.ndarray))
        for value in (c if many else [c]):
            if not isinstance(value, Integral) or isinstance(value, bool) or value < 2:
                raise ValueError(f"n_categories must be an int >= 2 or a list of them (one per feature); got {c!r}.")
            if value > MAX_CATEGORIES:
                raise ValueError(
                    f"n_categories={value} exceeds {MAX_CATEGORIES:,}: codes this large are not categories "
                    "(identifiers or counts?); re-encode them as 0..C-1 (sklearn.preprocessing.OrdinalEncoder) "
                    "or model them with another family (e.g. Poisson)."
                )
        if many and len(c) == 0:
            raise ValueError("n_categories must list one count per feature; got an empty list.")
        if self.categories is not None:
            cats = self.categories
            if isinstance(cats, str) or not all(isinstance(col, (list, tuple, np.ndarray)) for col in cats) or not len(cats):
                raise ValueError("categories must be a list with one list of category values per feature, "
                                 f"e.g. [['a', 'b'], ['x', 'y', 'z']]; got {cats!r}.")
            for j, col in enumerate(cats):
                if len(col) < 2:
                    raise ValueError(f"categories[{j}] must hold at least 2 distinct values; got {list(col)!r}.")
                repeated = [value for value, count in Counter(col).items() if count > 1]
                if repeated:
                    raise ValueError(f"categories[{j}] lists {', '.join(map(repr, repeated))} more than once; each "
                                     f"value must appear once (got {list(col)!r}).")
                if len(col) > MAX_CATEGORIES:
                    raise ValueError(f"categories[{j}] has {len(col):,} values, more than {MAX_CATEGORIES:,}.")
            counts = [len(col) for col in cats]
            if (many and list(c) != counts) or (not many and c != 2 and any(n != c for n in counts)):
                raise ValueError(f"n_categories={c!r} disagrees with the lengths of categories {counts}: "
                                 "leave n_categories at its default when categories are given.")
        return self

    def encode(self, X: ArrayLike) -> np.ndarray:
        """Category codes of rows of category values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Values from ``categories`` (any dtype, e.g. strings or a DataFrame); None or NaN
            marks a missing value.

        Returns
        -------
        codes : ndarray of shape (n_samples, n_features) of float64
            The index of each value in its feature's ``categories``; NaN where missing. A dask
            array, computed lazily chunk by chunk, for a dask array or DataFrame X.
        """
        if is_dask(X):
            self._check_categories("encode")  # now, not when the first chunk is computed
            return map_table_chunks(self._encode, X, len(self.categories), np.float64)
        return self._encode(X)

    def _check_categories(self, verb):
        """Raise unless ``categories`` is given and valid (``verb``: the method that needs them)."""
        if self.categories is None:
            raise ValueError(f"{verb} needs categories: construct the family with categories=[[...], ...].")
        self.check_options()  # a value listed twice would take the later code

    def _encode(self, X, columns=None, part=None):
        """:meth:`encode`; ``columns`` (and ``part``) name X's columns in a wider table in the messages
        (a :class:`~discrim.distributions.Product` encodes its part's columns of the user's X)."""
        self._check_categories("encode")
        X = np.asarray(X, dtype=object)
        if X.ndim != 2 or X.shape[1] != len(self.categories):
            raise ValueError(f"X must have shape (n_samples, {len(self.categories)}) (one column per entry of "
                             f"categories); got {X.shape}.")
        out = np.empty(X.shape, dtype=np.float64)
        for j, col in enumerate(self.categories):
            index = {value: code for code, value in enumerate(col)}
            for i, value in enumerate(X[:, j]):
                if _is_missing(value):
                    out[i, j] = np.nan
                elif value in index:
                    out[i, j] = index[value]
                else:
                    where = "" if part is None else f" of part {part!r}"
                    raise ValueError(f"X[{i}, {j if columns is None else columns[j]}] = {value!r} is not one of "
                                     f"categories[{j}] = {list(col)!r}{where}: add it to categories or mark it "
                                     "missing (None).")
        return out

    def decode(self, codes: ArrayLike) -> np.ndarray:
        """Category values of category codes (the inverse of :meth:`encode`).

        Parameters
        ----------
        codes : array-like of shape (n_samples, n_features)
            Whole numbers (e.g. rows drawn by ``FiniteMixture.sample``); NaN where missing.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features) of object
            The values from ``categories``; None where missing. A dask array, computed lazily
            chunk by chunk, for dask codes.
        """
        if self.categories is None:
            raise ValueError("decode needs categories: construct the family with categories=[[...], ...].")
        if is_dask(codes):
            return map_table_chunks(self.decode, codes, len(self.categories), object)
        codes = np.asarray(codes, dtype=np.float64)
        out = np.empty(codes.shape, dtype=object)
        for j, col in enumerate(self.categories):
            missing = np.isnan(codes[:, j])
            idx = np.where(missing, 0, codes[:, j]).astype(np.intp)
            out[:, j] = [None if m else col[i] for i, m in zip(idx, missing)]
        return out

    def support_upper(self):
        return self._n_codes - 1

    def check_data(self, X, rows=None):
        counts = self._counts(X.shape[1])
        # one bound for all columns as a scalar; per-column bounds where X lives (numpy or torch)
        bound = int(counts[0]) - 1 if np.all(counts == counts[0]) else ops.like(counts - 1.0, X)
        if not constraints.integer_interval(0, bound).check(X):
            upper = counts - 1
            upper = upper[0] if np.all(upper == upper[0]) else f"{upper.tolist()} (column by column)"
            raise ValueError(
                f"X must hold category codes for {self!r}: whole numbers between 0 and {upper}. Set n_categories "
                "(or categories) to the number of categories of each column, and encode text categories with "
                "family.encode or sklearn.preprocessing.OrdinalEncoder."
            )
        return X

    def _one_hot(self, X, mask):
        """(n, d) codes -> (n, d * C) indicators in X's float dtype; unobserved entries all zero."""
        n, d = X.shape
        dtype = X.dtype if not isinstance(X, np.ndarray) or X.dtype.kind == "f" else np.float64
        c = self._n_codes
        out = ops.one_hot(X, c, dtype)
        if mask is not None:
            out = out * ops.like(mask, out)[:, :, None]
        return out.reshape(n, d * c)

    def row_footprint(self, n_components, n_features):
        return n_components + n_features * self._n_codes

    def param_shapes(self, n_components, n_features):
        return {"probs": (n_components, n_features, self._n_codes)}

    def log_prob(self, X, params, *, mask=None, rows=None):
        with np.errstate(divide="ignore"):
            log_probs = np.maximum(np.log(params.probs), LOG_TINY)
        onehot = self._one_hot(X, mask)
        # (K, n_samples), returned transposed: the posterior then runs over contiguous rows
        return (ops.like(log_probs.reshape(log_probs.shape[0], -1), onehot) @ onehot.T).T

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        wr_t = weighted_resp_t(resp, sample_weight)
        counts = host(ops.matmul(wr_t, self._one_hot(X, mask)))
        return CategoricalStats(
            weight=component_totals(wr_t),
            counts=counts.reshape(resp.shape[1], X.shape[1], self._n_codes),
        )

    def params_from_stats(self, stats, current=None):
        # The counts of a (component, feature) sum to the weight of the rows that observed it.
        w = stats.counts.sum(axis=2, keepdims=True)
        counts = self._counts(stats.counts.shape[1])[:, None]  # (d, 1)
        uniform = np.where(np.arange(stats.counts.shape[2]) < counts, 1.0 / counts, 0.0)  # (d, C)
        return CategoricalParams(probs=np.where(w > 0, stats.counts / np.where(w > 0, w, 1.0), uniform))

    def component_means(self, params, n_rows=1, rows=None):
        # the expected category code (a missing code is imputed as the most probable category instead,
        # see conditional_estimate)
        return params.probs @ np.arange(params.probs.shape[2], dtype=np.float64)

    def conditional_estimate(self, X, params, observed, resp, rows=None):
        # an average of category codes means nothing: the most probable category given the
        # observed entries, sum_k P(k | x_o) probs_k (the features are independent within a component)
        k, d, c = params.probs.shape
        probs = (resp @ params.probs.reshape(k, d * c)).reshape(-1, d, c)
        return np.where(observed, X, probs.argmax(axis=2).astype(np.float64))

    def sample(self, params, n_per_component, rng):
        blocks = []
        for probs, m in zip(params.probs, n_per_component):
            cum = np.cumsum(probs, axis=1)  # (d, C)
            u = rng.random((int(m), probs.shape[0], 1))
            # probabilities may sum to 1 less a rounding: a u above a feature's total takes its last
            # category of positive probability (not the widest feature's last code, which a
            # feature with fewer categories does not have)
            last = probs.shape[1] - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)  # (d,)
            blocks.append(np.minimum((u > cum[None]).sum(axis=2), last))
        return np.concatenate(blocks, axis=0).astype(np.float64)

    def n_parameters(self, n_features, n_components=1):
        return n_components * int((self._counts(n_features) - 1).sum())

    def param_sizes(self, n_features):
        return {"probs": int((self._counts(n_features) - 1).sum())}


def _is_missing(value):
    """Whether a cell of a table is a missing value: None, NaN (any float type), pandas.NA or NaT."""
    import pandas as pd

    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))
