"""Product components: a different family on each group of columns, independent given the component."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd

from discrim._typing import ArrayLike
from discrim.backend import ops
from discrim.utils._dask import is_dask, map_table_chunks
from discrim.distributions._base import (
    ComponentFamily,
    Params,
    Stats,
    component_totals,
    weighted_resp_t,
)

__all__ = ["Product", "ProductParams", "ProductStats"]

_SEP = "__"


class ProductParams(Params):
    """Parameters of every part, by ``"<part name>__<parameter name>"`` (e.g. ``"counts__rate"``).

    Each array keeps its part's shape, with the leading component axis (except a part's shared
    parameters). ``as_dict`` lists them part by part, in the order of ``Product(families=...)``.

    Parameters
    ----------
    **params : ndarray
        By qualified name.
    """

    def __init__(self, **params: Any) -> None:
        self.__dict__.update(params)  # the dataclass is frozen: its __setattr__ refuses

    def as_dict(self) -> dict[str, Any]:
        """Return ``{qualified parameter name: array}`` (arrays are not copied)."""
        return {k: v for k, v in self.__dict__.items() if k != "_derived"}

    @property
    def n_components(self):
        """K: the leading axis of the first part's first parameter."""
        return np.shape(next(iter(self.as_dict().values())))[0]

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self):
        return f"ProductParams({', '.join(self.as_dict())})"


@dataclass(frozen=True)
class ProductStats(Stats):
    """Weighted responsibility totals (K,) and the statistics of every part, in order (a tuple)."""

    weight: np.ndarray
    parts: tuple

    def __add__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        return ProductStats(weight=self.weight + other.weight,
                            parts=tuple(a + b for a, b in zip(self.parts, other.parts)))


class Product(ComponentFamily):
    """Components that are products of families on groups of columns.

    Parameters
    ----------
    families : list of tuple
        ``(name, family, columns)`` (or ``(family, columns)``, named by position "0", "1", ...)
        for every group: a :class:`ComponentFamily` and the column indices of X it models (an
        int or a list of ints). Together the columns must be exactly ``0 .. n_features - 1``,
        each in one group. Names are strings without ``"__"``.

    Notes
    -----
    A row's log-density under component k is the sum of the parts' log-densities of their
    columns (the groups are independent given the component; within a group, the family's own
    dependence holds, e.g. a full Gaussian). Parameters are the parts' parameters named
    ``"<name>__<parameter>"``; statistics are the tuple of the parts' statistics (additive over
    row blocks as each part's are); the number of parameters is the sum of the parts'; masks
    and per-row data (``rows``) are sliced per group. Options of a part that the mixture sets on
    its family (``FiniteMixture(reg_covar=...)``) are not passed into the parts: set them on
    the parts.

    Categorical columns with named categories (strings): the estimators validate X as numbers,
    so encode the rows first with :meth:`encode` (which calls each part's ``encode`` on its
    columns, e.g. :meth:`Categorical.encode`, and converts the other columns to floats), and
    turn drawn rows back into values with :meth:`decode`.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Categorical, Gaussian, Poisson, Product
    >>> fam = Product([("size", Gaussian("diag"), [0]), ("count", Poisson(), [1]),
    ...                ("colour", Categorical(categories=[["red", "blue"]]), [2])])
    >>> X = fam.encode([[1.5, 3, "red"], [0.2, 0, "blue"]])
    >>> X
    array([[1.5, 3. , 0. ],
           [0.2, 0. , 1. ]])
    >>> sorted(fam.param_shapes(n_components=2, n_features=3))
    ['colour__probs', 'count__rate', 'size__covariance', 'size__mean']
    """

    params_class = ProductParams

    def __init__(self, families: Sequence[tuple[Any, ...]]) -> None:
        self.families = families

    # --- the parts -----------------------------------------------------------------------------

    def _parts(self):
        """``[(name, family, columns ndarray of int)]`` of the validated specification."""
        spec = self.families
        if not isinstance(spec, (list, tuple)) or len(spec) == 0:
            raise ValueError("families must be a non-empty list of (name, family, columns) tuples; "
                             f"got {spec!r}.")
        parts = []
        for i, entry in enumerate(spec):
            if not isinstance(entry, tuple) or len(entry) not in (2, 3):
                raise ValueError(f"families[{i}] must be a tuple (name, family, columns) or (family, columns); "
                                 f"got {entry!r}.")
            name, family, columns = entry if len(entry) == 3 else (str(i), *entry)
            if not isinstance(name, str) or not name or _SEP in name:
                raise ValueError(f"families[{i}]: the name must be a non-empty string without '__'; got {name!r}.")
            if not isinstance(family, ComponentFamily):
                raise ValueError(f"families[{i}]: {family!r} is not a component family (e.g. Gaussian(), Poisson()).")
            cols = [columns] if isinstance(columns, Integral) else list(columns) if isinstance(
                columns, (list, tuple, range, np.ndarray)) else None
            if not cols or not all(isinstance(c, Integral) and not isinstance(c, bool) and c >= 0 for c in cols):
                raise ValueError(f"families[{i}]: columns must be a non-negative int or a non-empty list of them; "
                                 f"got {columns!r}.")
            parts.append((name, family, np.asarray(cols, dtype=np.intp)))
        names = [p[0] for p in parts]
        if len(set(names)) != len(names):
            raise ValueError(f"families: the names must be distinct; got {names}.")
        used = np.sort(np.concatenate([p[2] for p in parts]))
        if not np.array_equal(used, np.arange(used.shape[0])):
            raise ValueError(f"families: the columns must be 0 .. n_features - 1, each in exactly one group; got "
                             f"{used.tolist()}.")
        return parts

    @property
    def n_columns(self):
        """Number of columns of X the product models (every group's columns)."""
        return int(sum(p[2].shape[0] for p in self._parts()))

    def _check_width(self, n_features):
        m = self.n_columns
        if n_features != m:
            raise ValueError(f"X has {n_features} columns but {type(self).__name__}'s families cover {m}: "
                             "give every column of X to one group.")

    def part_params(self, params: ProductParams, i: int) -> Params:
        """The parameters of part ``i`` as its family's Params (cached per parameter set).

        Parameters
        ----------
        params : ProductParams
        i : int
            Index of the part in ``families``.

        Returns
        -------
        params : Params
        """
        name, family, _ = self._parts()[i]

        def compute():
            values = params.as_dict()
            own = family.param_shapes(1, self._parts()[i][2].shape[0])  # the names
            return family.params_class(**{p: values[f"{name}{_SEP}{p}"] for p in own})

        return params._cached(("part", i), compute)

    def _part_rows(self, rows, name):
        if rows is None:
            return None
        prefix = name + _SEP
        out = {k[len(prefix):]: v for k, v in rows.items() if k.startswith(prefix)}
        return out or None

    def _flatten(self, parts_params):
        out = {}
        for (name, _, _), p in zip(self._parts(), parts_params):
            out.update({f"{name}{_SEP}{k}": v for k, v in p.as_dict().items()})
        return ProductParams(**out)

    # --- options, shapes, counts -----------------------------------------------------------------

    def check_options(self):
        for _, family, _ in self._parts():
            family.check_options()
        return self

    @property
    def arg_constraints(self):
        return {f"{name}{_SEP}{k}": c for name, family, _ in self._parts() for k, c in family.arg_constraints.items()}

    @property
    def is_discrete(self):
        return all(family.is_discrete for _, family, _ in self._parts())

    def param_shapes(self, n_components, n_features):
        return {f"{name}{_SEP}{k}": s for name, family, cols in self._parts()
                for k, s in family.param_shapes(n_components, cols.shape[0]).items()}

    def shared_params(self):
        return tuple(f"{name}{_SEP}{k}" for name, family, _ in self._parts() for k in family.shared_params())

    def n_parameters(self, n_features, n_components=1):
        return int(sum(family.n_parameters(cols.shape[0], n_components) for _, family, cols in self._parts()))

    def param_sizes(self, n_features):
        return {f"{name}{_SEP}{k}": v for name, family, cols in self._parts()
                for k, v in family.param_sizes(cols.shape[0]).items()}

    def row_footprint(self, n_components, n_features):
        return int(sum(family.row_footprint(n_components, cols.shape[0]) for _, family, cols in self._parts()))

    def rows_per_component(self, n_features):
        return max(family.rows_per_component(cols.shape[0]) for _, family, cols in self._parts())

    def takes_missing_values(self):
        return all(family.takes_missing_values() for _, family, _ in self._parts())

    def support_upper(self):
        uppers = [family.support_upper() for _, family, _ in self._parts()]
        return None if any(u is None for u in uppers) else max(uppers)

    def log_penalty(self, params, stats):
        penalties = [family.log_penalty(self.part_params(params, i), part)
                     for i, ((_, family, _), part) in enumerate(zip(self._parts(), stats.parts))]
        return None if any(p is None for p in penalties) else float(sum(penalties))

    def collapsing_components(self, params, scale=None):
        found = [family.collapsing_components(self.part_params(params, i), scale)
                 for i, (_, family, _) in enumerate(self._parts())]
        return np.unique(np.concatenate(found)).astype(int) if found else np.zeros(0, dtype=int)

    def min_relative_variance(self, params, occupied, feature_var):
        values = [family.min_relative_variance(self.part_params(params, i), occupied, feature_var[cols])
                  for i, (_, family, cols) in enumerate(self._parts())]
        values = [v for v in values if not np.isnan(v)]
        return float(min(values)) if values else float("nan")

    def make_params(self, params, n_components, n_features):
        self.check_options()
        self._check_width(n_features)
        if isinstance(params, Params):
            params = params.as_dict()
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict by parameter name; got {type(params).__name__}.")
        known = set(self.param_shapes(n_components, n_features))
        unknown = set(params) - known
        if unknown:
            raise ValueError(f"Product parameters are {sorted(known)}; unknown {sorted(unknown)}.")
        parts = []
        for name, family, cols in self._parts():
            prefix = name + _SEP
            own = {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}
            try:
                parts.append(family.make_params(own, n_components, cols.shape[0]))
            except ValueError as exc:
                raise ValueError(f"part {name!r}: {exc}") from None
        return self._flatten(parts)

    # --- data ----------------------------------------------------------------------------------

    def row_data(self, n_samples):
        out = {}
        for name, family, _ in self._parts():
            rows = family.row_data(n_samples)
            if rows:
                out.update({f"{name}{_SEP}{k}": v for k, v in rows.items()})
        return out or None

    def check_data(self, X, rows=None):
        self._check_width(X.shape[1])
        for name, family, cols in self._parts():
            family.check_data(ops.take_columns(X, cols), self._part_rows(rows, name))
        return X

    def encode(self, X: ArrayLike) -> np.ndarray:
        """Numeric rows for the estimators: each part's ``encode`` on its columns, floats elsewhere.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Any dtype (e.g. a DataFrame with string columns); None or NaN marks a missing value.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features) of float64
            NaN where missing. A dask array, computed lazily chunk by chunk, for a dask array or
            DataFrame X.
        """
        if is_dask(X):
            self._check_width(X.shape[1])
            return map_table_chunks(self.encode, X, X.shape[1], np.float64)
        X = np.asarray(X, dtype=object)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional (n_samples, n_features); got shape {X.shape}.")
        self._check_width(X.shape[1])
        out = np.empty(X.shape, dtype=np.float64)
        for name, family, cols in self._parts():
            block = X[:, cols]
            if hasattr(family, "encode") and getattr(family, "categories", None) is not None:
                # messages name the user's columns, not the part's
                out[:, cols] = (family._encode(block, columns=cols.tolist(), part=name) if hasattr(family, "_encode")
                                else family.encode(block))
                continue
            try:
                # None, NaN and pandas.NA (a nullable Int64/Float64/boolean column's gap) are missing
                out[:, cols] = np.where(pd.isna(block), np.nan, block).astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"the columns {cols.tolist()} of part {name!r} must be numeric (or give "
                                 f"{type(family).__name__} its categories to encode them).") from None
        return out

    def decode(self, X: ArrayLike) -> np.ndarray:
        """Rows of values from numeric rows: each part's ``decode`` on its columns where it has one.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric rows, e.g. drawn by ``FiniteMixture.sample``.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features) of object
            A dask array, computed lazily chunk by chunk, for a dask X.
        """
        if is_dask(X):
            self._check_width(X.shape[1])
            return map_table_chunks(self.decode, X, X.shape[1], object)
        X = np.asarray(X, dtype=np.float64)
        out = X.astype(object)
        for _, family, cols in self._parts():
            if hasattr(family, "decode") and getattr(family, "categories", None) is not None:
                out[:, cols] = family.decode(X[:, cols])
        return out

    # --- the interface -------------------------------------------------------------------------

    def log_prob(self, X, params, *, mask=None, rows=None):
        out = None
        for i, (name, family, cols) in enumerate(self._parts()):
            part = family.log_prob(ops.take_columns(X, cols), self.part_params(params, i),
                                   mask=None if mask is None else ops.take_columns(mask, cols),
                                   rows=self._part_rows(rows, name))
            out = part if out is None else out + part
        return out

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        parts = tuple(
            family.suff_stats(ops.take_columns(X, cols), resp, sample_weight,
                              mask=None if mask is None else ops.take_columns(mask, cols),
                              rows=self._part_rows(rows, name),
                              params=None if params is None else self.part_params(params, i))
            for i, (name, family, cols) in enumerate(self._parts())
        )
        return ProductStats(weight=component_totals(weighted_resp_t(resp, sample_weight)), parts=parts)

    def params_from_stats(self, stats, current=None):
        return self._flatten([
            family.params_from_stats(s, current=None if current is None else self.part_params(current, i))
            for i, ((_, family, _), s) in enumerate(zip(self._parts(), stats.parts))
        ])

    def params_given(self, stats, fixed, current=None):
        parts = []
        for i, ((name, family, _), s) in enumerate(zip(self._parts(), stats.parts)):
            prefix = name + _SEP
            own = {k[len(prefix):]: v for k, v in fixed.items() if k.startswith(prefix)}
            cur = None if current is None else self.part_params(current, i)
            parts.append(family.params_given(s, own, cur) if own else family.params_from_stats(s, cur))
        return self._flatten(parts)

    def component_means(self, params, n_rows=1, rows=None):
        parts = [(cols, family.component_means(self.part_params(params, i), n_rows, self._part_rows(rows, name)))
                 for i, (name, family, cols) in enumerate(self._parts())]
        k = params.n_components
        per_row = any(m.ndim == 3 for _, m in parts)
        out = np.empty((k, n_rows, self.n_columns) if per_row else (k, self.n_columns))
        for cols, m in parts:
            if per_row:
                out[:, :, cols] = m if m.ndim == 3 else m[:, None, :]
            else:
                out[:, cols] = m
        return out

    def conditional_mean(self, X, params, observed, rows=None):
        out = np.empty((params.n_components,) + X.shape)
        for i, (name, family, cols) in enumerate(self._parts()):
            out[:, :, cols] = family.conditional_mean(X[:, cols], self.part_params(params, i), observed[cols],
                                                      self._part_rows(rows, name))
        return out

    def conditional_estimate(self, X, params, observed, resp, rows=None):
        out = np.empty(X.shape, dtype=np.float64)
        for i, (name, family, cols) in enumerate(self._parts()):
            out[:, cols] = family.conditional_estimate(X[:, cols], self.part_params(params, i), observed[cols], resp,
                                                       self._part_rows(rows, name))
        return out

    def conditional_sample(self, X, params, observed, components, rng, rows=None):
        out = np.empty(X.shape, dtype=np.float64)
        for i, (name, family, cols) in enumerate(self._parts()):
            out[:, cols] = family.conditional_sample(X[:, cols], self.part_params(params, i), observed[cols],
                                                     components, rng, self._part_rows(rows, name))
        return out

    def sample(self, params, n_per_component, rng):
        n = int(np.sum(n_per_component))
        out = np.empty((n, self.n_columns))
        for i, (_, family, cols) in enumerate(self._parts()):
            out[:, cols] = family.sample(self.part_params(params, i), n_per_component, rng)
        return out
