"""The component-family interface shared by EM, the plug-in discriminant rules and the reducers."""

from __future__ import annotations

import threading
from collections import OrderedDict
from abc import ABCMeta, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from discrim._typing import Array, ArrayLike
from discrim.backend import ops, to_numpy

__all__ = ["ComponentFamily", "Params", "Stats", "host", "mask_patterns", "slice_rows"]

# Smallest log we evaluate: a probability or rate of exactly 0 gives a density that is tiny but
# finite, so that 0 * log(0) never turns into NaN inside a matrix product.
LOG_TINY = float(np.log(np.finfo(np.float64).tiny))
# The key of the lock in a parameter set's cache of derived quantities (see Params._cached).
_CACHE_LOCK = "lock of the cache"
# The key of the quantities that depend on the rows too (see Params._cached_for_rows).
_ROWS_CACHE = "quantities of the rows"


def slice_rows(rows, index):
    """Per-row data of a subset of rows: every array of ``rows`` indexed along its first axis.

    Parameters
    ----------
    rows : dict of str to array of shape (n_samples,) or None
    index : slice or array of int

    Returns
    -------
    rows : dict of str to array or None
    """
    return None if rows is None else {name: value[index] for name, value in rows.items()}


def host(x):
    """A statistic as a float64 numpy array on the host (a no-op for numpy float64).

    Parameters
    ----------
    x : array
        numpy or torch.

    Returns
    -------
    x : ndarray of float64
    """
    if isinstance(x, np.ndarray):
        return x.astype(np.float64, copy=False)
    return np.asarray(to_numpy(x), dtype=np.float64)


def _add_optional(a, b):
    # Optional statistics (the per-feature totals of masked data) are None on both sides or neither.
    return None if a is None else a + b


def observed_entries(X, mask):
    """X with its unobserved entries set to 0 (X itself without a mask).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
    mask : array of shape (n_samples, n_features) of bool or None

    Returns
    -------
    X : array of shape (n_samples, n_features)
    """
    if mask is None:
        return X
    return X * ops.like(mask, X)


def weighted_resp_t(resp, sample_weight):
    """Responsibilities times row weights, transposed: (n_components, n_samples).

    Components along rows and samples along columns: the statistics are then products with
    long contiguous rows.

    Parameters
    ----------
    resp : array of shape (n_samples, n_components)
    sample_weight : array of shape (n_samples,) or None

    Returns
    -------
    wr_t : array of shape (n_components, n_samples)
    """
    if sample_weight is None:
        return resp.T
    return resp.T * ops.like(sample_weight, resp)


def component_totals(wr_t):
    """Row sums of ``wr_t`` accumulated in float64, on the host: (n_components,)."""
    if isinstance(wr_t, np.ndarray):
        return wr_t.sum(axis=1, dtype=np.float64)
    import torch

    return host(wr_t.sum(1, dtype=torch.float64))


def mask_patterns(mask):
    """The distinct patterns of observed features and the rows that have each.

    Parameters
    ----------
    mask : array of shape (n_samples, n_features) of bool
        numpy or torch.

    Yields
    ------
    observed : ndarray of shape (n_features,) of bool
    index : ndarray of int
        The rows with that pattern, in order.
    """
    host_mask = np.asarray(to_numpy(mask), dtype=bool)
    patterns, inverse = np.unique(host_mask, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for p, observed in enumerate(patterns):
        yield observed, np.flatnonzero(inverse == p)


def per_feature_weight(stats):
    """Weighted total of the rows behind each (component, feature) statistic: (K, d) or (K, 1).

    With a mask it is the total over the rows that observed the feature (``stats.observed``),
    otherwise the component total, broadcast over the features.
    """
    return stats.weight[:, None] if stats.observed is None else stats.observed


def merged_moments(weight_a, mean_a, scatter_a, weight_b, mean_b, scatter_b):
    """Mean and centred scatter of two blocks of rows merged exactly (Chan, Golub and LeVeque).

    Parameters
    ----------
    weight_a, weight_b : ndarray of shape (K, d) or (K, 1)
        The weighted totals behind each block's means (per feature with a mask).
    mean_a, mean_b : ndarray of shape (K, d)
    scatter_a, scatter_b : ndarray of shape (K, d, d) or (K, d)
        Weighted sums of squares (and products) about each block's means.

    Returns
    -------
    mean : ndarray of shape (K, d)
    scatter : ndarray, shaped as ``scatter_a``
        About the merged means: ``S_a + S_b + n_a n_b / n (m_b - m_a)(m_b - m_a)'``.
    weight : ndarray, shaped as ``weight_a``
    """
    weight = weight_a + weight_b
    safe = np.where(weight > 0, weight, 1.0)
    delta = mean_b - mean_a
    coef = weight_a * weight_b / safe
    if scatter_a.ndim == 3:
        extra = coef[:, :, None] * delta[:, :, None] * delta[:, None, :]
    else:
        extra = coef * delta**2
    return mean_a + delta * (weight_b / safe), scatter_a + scatter_b + extra, weight


# One-pass moments lose the digits of a component's variance that its distance from the block's
# centre holds (second moment about the centre - weight * mean^2): where the variance of a feature is
# below this share of its second moment, the component's moments are taken again about its own mean.
_CANCELLATION = 1e-8


def weighted_moments(X, wr_t, full, origin=None):
    """Weighted totals, means and centred scatter of the rows under each component.

    One product over all components about the block's centre, as fast as one pass; a component
    lying far from that centre against its spread (a gross outlier's, or a cluster far from the
    others) loses the digits of its scatter to cancellation there, and only its moments are
    computed again, about its own mean (two passes, exact).

    Parameters
    ----------
    X : array of shape (n_samples, n_features), or (K, n_features, n_samples) with ``origin``
        numpy or torch.
    wr_t : array of shape (K, n_samples)
        Weights of the rows under each component (responsibilities times row weights).
    full : bool
        The (K, d, d) scatter; False its diagonal only, (K, d).
    origin : ndarray of shape (K, n_features) or None, default=None
        ``X`` then holds each component's rows less its origin, transposed (K, d, n): the
        moments are taken about each component's own origin (contiguous (d, n) blocks).

    Returns
    -------
    weight : ndarray of shape (K,)
    mean : ndarray of shape (K, n_features)
        0 for a component of no weight.
    scatter : ndarray of shape (K, n_features, n_features) or (K, n_features)
        ``sum_i w_ik (x_i - mean_k)(x_i - mean_k)'`` (its diagonal if not ``full``).
    """
    wr_t = ops.contiguous(ops.like(wr_t, X))
    weight = component_totals(wr_t)
    safe = np.where(weight > 0, weight, 1.0)
    k = wr_t.shape[0]
    if origin is None:
        # Moments about the block mean, then centred per component: one GEMM for all components.
        n = X.shape[0]
        center = ops.matmul(ops.like(np.ones(n), X), X) / n  # a GEMV: much faster than mean(axis=0)
        xc_t = ops.centred_transpose(X, center)
        rows_t = [xc_t] * k
        mean_c = host(ops.matmul(wr_t, xc_t.T)) / safe[:, None]
    else:  # each component's rows are centred already, as contiguous (d, n) blocks
        center = origin
        rows_t = [X[j] for j in range(k)]
        mean_c = host(ops.stack([ops.matmul(X[j], wr_t[j]) for j in range(k)])) / safe[:, None]
    if full:
        # sum_i r_ik xc_i xc_i' = z z' with z = sqrt(r_k) xc: numpy runs z @ z.T as a symmetric rank
        # update (half the flops of a GEMM), so a loop over components does half the work of one
        # stacked GEMM of all of them; one copy to the host for all (on a device each copy waits)
        root = wr_t**0.5
        second = host(ops.stack([_gram(rows_t[j] * root[j]) for j in range(k)]))
        scatter = second - weight[:, None, None] * mean_c[:, :, None] * mean_c[:, None, :]
        second_diag, scatter_diag = np.diagonal(second, axis1=1, axis2=2), np.diagonal(scatter, axis1=1, axis2=2)
    else:  # the centred copy is ours: squared in place (the rare second pass centres X again)
        second = host(ops.matmul(wr_t, ops.square_inplace(xc_t).T))
        scatter = second - weight[:, None] * mean_c**2
        second_diag, scatter_diag = second, scatter
    for j in np.flatnonzero((scatter_diag < _CANCELLATION * second_diag).any(axis=1)):
        # the second pass, about the component's own mean
        if full:
            scatter[j] = host(_gram((rows_t[j] - ops.like(mean_c[j], rows_t[j])[:, None]) * root[j]))
        else:
            z = ops.centred_transpose(X, center + ops.like(mean_c[j], X))
            scatter[j] = host(ops.matmul(wr_t[j], ops.square_inplace(z).T))
    if full:
        scatter = 0.5 * (scatter + scatter.transpose(0, 2, 1))
    else:
        scatter = np.maximum(scatter, 0.0)
    mean = mean_c + host(center)
    mean[weight <= 0] = 0.0
    return weight, mean, scatter


def _gram(z):
    """``z @ z.T``: numpy sees the same operand twice and runs a symmetric rank update (syrk)."""
    return ops.matmul(z, z.T)


# A component variance below this share of the largest (per feature) has collapsed onto a value
# (component_variances): far below any real spread, where the likelihood grows without bound.
_COLLAPSED_SHARE = 1e-8


@dataclass(frozen=True)
class Params:
    """Parameters of all K components of a family, each array with a leading component axis.

    Subclasses are frozen dataclasses whose fields are the parameter names.

    Examples
    --------
    >>> from discrim.distributions import Params, Poisson, PoissonParams
    >>> params = Poisson().make_params({"rate": [[1.5], [4.0]]}, n_components=2, n_features=1)
    >>> isinstance(params, PoissonParams) and isinstance(params, Params)
    True
    >>> params.n_components, sorted(params.as_dict())
    (2, ['rate'])
    """

    @property
    def n_components(self) -> int:
        """K: the leading axis of the first parameter (never a shared one)."""
        return np.shape(getattr(self, fields(self)[0].name))[0]

    def as_dict(self) -> dict[str, Any]:
        """Return ``{parameter name: array}`` (arrays are not copied)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __getstate__(self):
        # The cache of derived quantities is recomputed on demand: it is never saved with a model.
        return {k: v for k, v in self.__dict__.items() if k != "_derived"}

    def _cached(self, key, compute):
        # Derived quantities (e.g. Cholesky factors) computed once per parameter set; the
        # dataclass is frozen, so the cache can never go stale. Row blocks in threads ask for the
        # same quantity at once: one thread computes it while the others wait (setdefault is
        # atomic, so they all find the same lock).
        cache = self.__dict__.setdefault("_derived", {})
        if key not in cache:
            with cache.setdefault(_CACHE_LOCK, threading.RLock()):
                if key not in cache:
                    cache[key] = compute()
        return cache[key]

    def _cached_for_rows(self, key, compute, limit):
        """:meth:`_cached` for a quantity of these parameters and of the rows (their missingness
        patterns): at most ``limit`` of them are kept, the least recently used dropped.

        Within a fit the rows are the same at every E-step of a parameter set; a fitted model scores
        new rows at every call, and a cache without bound grew without bound (23 MB per 1,000 calls).
        """
        cache = self.__dict__.setdefault("_derived", {})
        with cache.setdefault(_CACHE_LOCK, threading.RLock()):
            rows = cache.setdefault(_ROWS_CACHE, OrderedDict())
            if key in rows:
                rows.move_to_end(key)
            else:
                rows[key] = compute()
                while len(rows) > limit:
                    rows.popitem(last=False)
            return rows[key]


@dataclass(frozen=True)
class Stats:
    """Sufficient statistics of all K components; ``a + b`` merges two row blocks.

    Every family's statistics have a field ``weight`` of shape (n_components,): the total
    (sample-weighted) responsibility of each component, from which EM takes the mixing weights.
    A field that is None (e.g. the per-feature totals that only masked data need) stays None.

    The default ``__add__`` adds field by field, which is right for plain sums. Families whose
    statistics are centred moments override it with the exact merge rule.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Poisson
    >>> X, resp = np.array([[1.0], [3.0]]), np.ones((2, 1))
    >>> merged = Poisson().suff_stats(X[:1], resp[:1]) + Poisson().suff_stats(X[1:], resp[1:])
    >>> merged.weight.tolist(), merged.weighted_sum.tolist()
    ([2.0], [[4.0]])
    """

    def __add__(self, other):
        if isinstance(other, int) and other == 0:  # lets sum() start from 0
            return self
        return type(self)(**{f.name: _add_optional(getattr(self, f.name), getattr(other, f.name)) for f in fields(self)})

    def __radd__(self, other):
        return self.__add__(other)


@dataclass(frozen=True)
class LabelWeights(Stats):
    """Only the total weight of every label (component or class), shape (n_labels,)."""

    weight: np.ndarray


def _outside_support(support, X):
    """Where X leaves ``support``, for a message: the features that do, and a value with its row (error path only)."""
    from discrim._posterior import listed_indices

    bad = np.array([not support.check(X[:, j:j + 1]) for j in range(X.shape[1])])
    if not bad.any():  # the support is not a property of single features
        return "some of its entries are not"
    column = X[:, int(np.flatnonzero(bad)[0]):][:, :1]
    lo, hi = 0, column.shape[0]  # bisect for the first row outside: [lo, hi) holds one
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if not support.check(column[lo:mid]) else (mid, hi)
    count, shown = listed_indices(bad)
    return f"{count} feature(s) of X (index {shown}) hold entries outside it, e.g. {float(column[lo, 0])!r} in row {lo}"


class ComponentFamily(BaseEstimator, metaclass=ABCMeta):
    """A parametric family of component densities, evaluated for all K components at once.

    A family object holds only structural options (such as ``covariance_type``);
    parameters and statistics are dataclasses of arrays with a leading component axis. Families
    derive from scikit-learn's ``BaseEstimator`` only for ``get_params``/``set_params``, ``clone``
    and a readable ``repr``, so that ``FiniteMixture(family=...)`` clones and grid-searches like
    any nested estimator (e.g. ``set_params(family__covariance_type="diag")``).

    Subclasses define ``arg_constraints`` (parameter name -> constraint), ``params_class``,
    ``support`` (the constraint rows of X must satisfy) and implement the abstract methods.

    Notes
    -----
    One interface serves every data path (numpy, torch, row blocks on threads or Dask) and
    incomplete data:

    - **Array namespace.** The row-wise work (:meth:`log_prob`, :meth:`suff_stats`) runs in the
      namespace and on the device of X (numpy or torch, through array-api-compat). Parameters
      and statistics are per-component arrays of size K d^2 at most: they live on the host in
      float64, and :meth:`params_from_stats` works there.
    - **Row blocks.** Statistics are additive: the statistics of stacked row blocks are the sum
      of the blocks' statistics, wherever the blocks were computed.
    - **Observed-value mask.** ``mask`` (n_samples, n_features) of bool, True where an entry
      was observed; the density of a row is then the marginal density of its observed entries,
      and the statistics count only observed entries. None means every entry was observed.
    - **Per-row data.** Data that belong to rows rather than to the family (Binomial's trial
      counts) come as ``rows``, a dict of arrays with a leading row axis, sliced with X:
      :meth:`row_data` builds it from the family's options once per data set.
    - **Block data.** EM cuts its rows into blocks once per fit and asks the family for the data
      of every block once (:meth:`block_rows`): row_data's arrays of the block and whatever the
      family derives from the block's mask (the Gaussian's missingness patterns). Every
      iteration passes a block's data back as ``rows``, so that nothing is found again per
      iteration nor recognised by the identity of an array.
    - **Options** are validated once, by :meth:`check_options`, before a fit or a scoring
      pass; the other methods assume valid options.
    - **The M-step** receives the current parameters, which a numerical M-step starts from.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import ComponentFamily, Poisson
    >>> fam = Poisson()
    >>> isinstance(fam, ComponentFamily)
    True
    >>> X = np.array([[0.0], [2.0], [5.0]])
    >>> resp = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    >>> stats = fam.suff_stats(X[:2], resp[:2]) + fam.suff_stats(X[2:], resp[2:])  # two row blocks
    >>> fam.params_from_stats(stats).rate.ravel().tolist()  # the weighted means: the M-step
    [0.6666666666666666, 4.0]
    >>> fam.log_prob(X, fam.params_from_stats(stats)).shape
    (3, 2)
    """

    arg_constraints: ClassVar[dict] = {}
    params_class: ClassVar[type] = Params
    support = None
    #: Options that tune the M-step rather than define the model (the Gaussian's reg_covar):
    #: model-choice tables name a family without them unless they differ from their defaults.
    fit_options: ClassVar[tuple] = ()
    #: Names of the family on the command line (``discrim mixture --family NAME``), each with
    #: the options it stands for.
    cli_names: ClassVar[dict] = {}

    # --- the interface -------------------------------------------------------------------

    @abstractmethod
    def log_prob(self, X: Array, params: Params, *, mask: Array | None = None,
                 rows: dict[str, Array] | None = None) -> Array:
        """Log-density of every row under every component.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            numpy or torch; unobserved entries hold any value in the support (e.g. 0).
        params : Params
            Parameters of K components.
        mask : array of shape (n_samples, n_features) of bool or None, default=None
            True where an entry was observed; None: all observed.
        rows : dict of str to array of shape (n_samples,) or None, default=None
            Per-row data from :meth:`row_data`, sliced like X.

        Returns
        -------
        log_prob : array of shape (n_samples, n_components)
            In the namespace, device and floating dtype of X.
        """

    @abstractmethod
    def suff_stats(self, X: Array, resp: Array, sample_weight: Array | None = None, *, mask: Array | None = None,
                   rows: dict[str, Array] | None = None, params: Params | None = None) -> Stats:
        """Sufficient statistics of X under weighted responsibilities.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        resp : array of shape (n_samples, n_components)
            Responsibilities (soft assignments), rows summing to one; same namespace as X.
        sample_weight : array of shape (n_samples,) or None
        mask : array of shape (n_samples, n_features) of bool or None, default=None
        rows : dict of str to array of shape (n_samples,) or None, default=None
        params : Params or None, default=None
            The parameters that gave ``resp``. Families whose statistics of unobserved entries
            are conditional expectations given the observed ones (a Gaussian with a full or tied
            covariance) need them with a mask.

        Returns
        -------
        stats : Stats
            float64 numpy arrays, additive over row blocks: ``suff_stats(X1, ...) +
            suff_stats(X2, ...)`` equals the statistics of the stacked rows.
        """

    @abstractmethod
    def params_from_stats(self, stats: Stats, current: Params | None = None) -> Params:
        """Weighted maximum-likelihood parameters from sufficient statistics (the M-step).

        Parameters
        ----------
        stats : Stats
        current : Params or None, default=None
            The parameters of the E-step that produced ``stats``; a numerical M-step starts
            from them. The closed-form M-steps ignore them.

        Returns
        -------
        params : Params
            Finite for every component; a component with zero total weight gets placeholder
            values that the caller must replace.
        """

    def params_given(self, stats: Stats, fixed: dict[str, tuple[np.ndarray, np.ndarray]],
                     current: Params | None = None) -> Params:
        """The M-step with some parameter entries held at given values.

        Parameters
        ----------
        stats : Stats
        fixed : dict of str to tuple of (ndarray, ndarray of bool)
            By parameter name: its value, of the parameter's full shape, and which entries of it
            are fixed (True), of the same shape.
        current : Params or None, default=None
            As in :meth:`params_from_stats`.

        Returns
        -------
        params : Params
            The fixed entries hold their values; the others maximise the expected complete-data
            log-likelihood given them. This default substitutes the fixed entries into
            :meth:`params_from_stats`: that is the constrained maximiser when no parameter's
            M-step uses another's new value (Poisson, Binomial, Categorical, Exponential).
            Families whose M-steps are coupled (Gamma's rate given its shape) override it.
        """
        params = self.params_from_stats(stats, current).as_dict()
        for name, (value, where) in fixed.items():
            params[name] = np.where(where, value, params[name])
        return self.params_class(**params)

    @abstractmethod
    def sample(self, params: Params, n_per_component: ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """Draw rows from each component.

        Parameters
        ----------
        params : Params
        n_per_component : array-like of int of shape (n_components,)
        rng : numpy.random.Generator

        Returns
        -------
        X : ndarray of shape (sum(n_per_component), n_features)
            Rows of component 0 first, then component 1, and so on.
        """

    @abstractmethod
    def n_parameters(self, n_features: int, n_components: int = 1) -> int:
        """Number of free parameters of ``n_components`` components (mixing weights excluded).

        Parameters
        ----------
        n_features : int
        n_components : int, default=1

        Returns
        -------
        n_parameters : int
        """

    def param_sizes(self, n_features: int) -> dict[str, int]:
        """Free parameters in each parameter of one component (of all components, for a shared one).

        Summed over the parameters and multiplied out over K components (shared ones once), they
        give :meth:`n_parameters`; :class:`~discrim.distributions.Fixed` subtracts those it fixes.
        The default counts from the shapes and constraints: a simplex of C entries has C - 1
        free ones, a positive definite d x d matrix d (d + 1) / 2.

        Parameters
        ----------
        n_features : int

        Returns
        -------
        sizes : dict of str to int
        """
        from discrim.distributions import _constraints as constraints

        shared = set(self.shared_params())
        out = {}
        for name, shape in self.param_shapes(1, n_features).items():
            shape = tuple(shape) if name in shared else tuple(shape)[1:]
            constraint = self.arg_constraints[name]
            if constraint is constraints.simplex:
                out[name] = int(np.prod(shape[:-1], dtype=np.int64)) * (shape[-1] - 1)
            elif constraint is constraints.positive_definite:
                m = shape[-1]
                out[name] = int(np.prod(shape[:-2], dtype=np.int64)) * m * (m + 1) // 2
            else:
                out[name] = int(np.prod(shape, dtype=np.int64))
        return out

    @abstractmethod
    def param_shapes(self, n_components: int, n_features: int) -> dict[str, tuple[int, ...]]:
        """Expected shape of every parameter array.

        Parameters
        ----------
        n_components : int
        n_features : int

        Returns
        -------
        shapes : dict of str to tuple of int
        """

    def check_options(self) -> ComponentFamily:
        """Validate the structural options; raise ``ValueError`` naming the option and the fix.

        Returns
        -------
        self : ComponentFamily
        """
        return self

    def uses_data_defaults(self) -> bool:
        """Whether some option defaults to a moment of the data (a Gaussian prior's mean and scale).

        Returns
        -------
        needed : bool
            When True, a mixture computes :meth:`suff_stats` of all its rows with one component
            once per fit and passes them to :meth:`fill_data_defaults`.
        """
        return False

    def beside_noise(self) -> ComponentFamily:
        """The family as a mixture with a uniform noise component fits it (self where that is no different).

        A family whose M-step for a single component differs from its M-step for several (a
        Gaussian with a prior, which follows mclust) returns a copy that takes the general one:
        beside a noise component, mclust's EM fits even one component by the model's own formulas.

        Returns
        -------
        family : ComponentFamily
        """
        return self

    def fill_data_defaults(self, data_stats: Stats, n_components: int) -> ComponentFamily:
        """The family with its data-dependent defaults filled in (self when it has none).

        Parameters
        ----------
        data_stats : Stats
            :meth:`suff_stats` of all rows with a single component: additive, so they come from
            row blocks or Dask like EM's statistics.
        n_components : int

        Returns
        -------
        family : ComponentFamily
        """
        return self

    def completion_stats(self, X: np.ndarray, mask: np.ndarray, sample_weight: np.ndarray,
                         rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Additive statistics of some rows, from whose totals :meth:`completion` completes a fit's start.

        Summed over row blocks or Dask chunks, so that every data path starts from the same values.
        The default: the weight of the rows that observed each feature, and the weighted sum of
        each feature's observed values.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        mask : ndarray of shape (n_samples, n_features) of bool
            True where observed.
        sample_weight : ndarray of shape (n_samples,)
        rows : dict or None, default=None
            :meth:`row_data` of these rows.

        Returns
        -------
        stats : ndarray of shape (n_stats, n_features) of float64
        """
        w = np.asarray(sample_weight, dtype=np.float64)[:, None] * mask
        return np.stack([w.sum(axis=0), (w * np.where(mask, X, 0.0)).sum(axis=0)])

    def completion(self, stats: np.ndarray, rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """The values that complete the missing entries of the rows a fit starts from.

        The start (k-means++ seeding and the first M-step) sees complete rows; EM itself then
        uses the exact marginal densities. The default: each feature's weighted mean over the rows
        that observed it, rounded for a discrete family so that the rows stay in its support.

        Parameters
        ----------
        stats : ndarray of shape (n_stats, n_features)
            :meth:`completion_stats` of all rows (every feature observed in a row of positive weight).
        rows : dict or None, default=None
            :meth:`row_data` of the rows to complete.

        Returns
        -------
        fill : ndarray of shape (n_features,) or (n_samples, n_features)
        """
        from discrim.utils.validation import completion_values

        return completion_values(stats[1] / stats[0], self.is_discrete)

    def start_completion(self, X: np.ndarray, mask: np.ndarray, sample_weight: np.ndarray,
                         rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """:meth:`completion` of these rows from their own :meth:`completion_stats` (rows in memory).

        Parameters
        ----------
        X, mask, sample_weight, rows
            As for :meth:`completion_stats`.

        Returns
        -------
        fill : ndarray of shape (n_features,) or (n_samples, n_features)
        """
        return self.completion(self.completion_stats(X, mask, sample_weight, rows), rows)

    def row_data(self, n_samples: int) -> dict[str, np.ndarray] | None:
        """Per-row data for ``n_samples`` rows, or None when the family has none.

        Parameters
        ----------
        n_samples : int

        Returns
        -------
        rows : dict of str to ndarray of shape (n_samples,) or None
        """
        return None

    def block_rows(self, mask: np.ndarray | None, rows: dict[str, np.ndarray] | None,
                   slices: list[slice]) -> list[dict[str, Any] | None]:
        """The family's data of every block of rows, built once per fit and passed as ``rows``.

        Parameters
        ----------
        mask : array of shape (n_samples, n_features) of bool or None
            True where an entry was observed, of all rows; None: all observed.
        rows : dict of str to ndarray of shape (n_samples,) or None
            :meth:`row_data` of all rows.
        slices : list of slice
            The rows of every block, in order.

        Returns
        -------
        block_rows : list of (dict or None)
            One per block: what :meth:`log_prob` and :meth:`suff_stats` of that block receive as
            ``rows``. This default is ``rows`` sliced for the block; families that derive
            something from the mask once per fit add it (see :class:`Gaussian`), and read it only
            from the blocks' data (a caller may always pass ``rows`` of :meth:`row_data` alone).
        """
        return [slice_rows(rows, sl) for sl in slices]

    # --- missing values: what a component says of the unobserved entries of a row ------------

    def component_means(self, params: Params, n_rows: int = 1, rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Expected value of every feature under every component: (K, d), or (K, n, d) per row.

        Families whose features are independent given the component (all but the full and tied
        Gaussian) complete a row's missing entries with these. Per-row data (Binomial's trial
        counts) give a value per row.

        Parameters
        ----------
        params : Params
        n_rows : int, default=1
        rows : dict of str to ndarray of shape (n_rows,) or None, default=None

        Returns
        -------
        means : ndarray of shape (n_components, n_features) or (n_components, n_rows, n_features)
        """
        raise NotImplementedError(f"{type(self).__name__} does not give the expected values of its features.")

    def conditional_mean(self, X: np.ndarray, params: Params, observed: np.ndarray,
                         rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Rows completed under each component: the missing entries replaced by their conditional mean.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Rows sharing one pattern of observed features (unobserved entries hold any value).
        params : Params
        observed : ndarray of shape (n_features,) of bool
        rows : dict of str to ndarray of shape (n_samples,) or None, default=None

        Returns
        -------
        completed : ndarray of shape (n_components, n_samples, n_features)
            ``E_k[x_m | x_o]`` in the missing entries, the observed values elsewhere. With
            independent features (the default) the conditional mean is the component's mean.
        """
        means = self.component_means(params, X.shape[0], rows)
        means = means[:, None, :] if means.ndim == 2 else means
        return np.where(observed, X[None], means)

    def conditional_estimate(self, X: np.ndarray, params: Params, observed: np.ndarray, resp: np.ndarray,
                             rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Rows completed under the mixture: each missing entry replaced by its point estimate.

        The default is the conditional expectation ``sum_k resp_k E_k[x_m | x_o]``; a family whose
        values have no meaningful average (nominal categories) gives its most probable value.

        Parameters
        ----------
        X, params, observed
            As for :meth:`conditional_mean`.
        resp : ndarray of shape (n_samples, n_components)
            ``P(k | x_o)`` of each row.
        rows : dict of str to ndarray of shape (n_samples,) or None, default=None

        Returns
        -------
        completed : ndarray of shape (n_samples, n_features)
            The estimates in the missing entries, the observed values elsewhere.
        """
        completed = np.einsum("nk,knd->nd", resp, self.conditional_mean(X, params, observed, rows))
        return np.where(observed, X, completed)

    def conditional_sample(self, X: np.ndarray, params: Params, observed: np.ndarray, components: np.ndarray,
                           rng: np.random.Generator, rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Rows with their missing entries drawn from the conditional distribution of a component.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Rows sharing one pattern of observed features.
        params : Params
        observed : ndarray of shape (n_features,) of bool
        components : ndarray of shape (n_samples,) of int
            The component each row's draw comes from.
        rng : numpy.random.Generator
        rows : dict of str to ndarray of shape (n_samples,) or None, default=None

        Returns
        -------
        completed : ndarray of shape (n_samples, n_features)
            With independent features (the default) the missing entries are those of a draw of
            the whole row from the component.
        """
        counts = np.bincount(components, minlength=params.n_components)
        order = np.argsort(components, kind="stable")  # sample() returns component 0's rows first
        draws = np.empty(X.shape, dtype=np.float64)
        draws[order] = self.sample(params, counts, rng)
        return np.where(observed, X, draws)

    # --- shared behaviour ----------------------------------------------------------------

    def row_footprint(self, n_components: int, n_features: int) -> int:
        """Floats per row in the largest temporaries of :meth:`log_prob` and :meth:`suff_stats`.

        EM sizes its row blocks with it, so that one block's temporaries stay in cache.

        Parameters
        ----------
        n_components : int
        n_features : int

        Returns
        -------
        n_floats : int
        """
        return n_components + n_features

    def shared_params(self) -> tuple[str, ...]:
        """Names of parameters shared by all components (no leading component axis)."""
        return ()

    # --- what model choice, plots and the CLI need to know of a family -----------------------

    #: Whether the family's support is a set of integers (a mass function, drawn as bars and
    #: markers) or the real line (a density, drawn as curves and contours).
    is_discrete = True

    def support_upper(self) -> int | None:
        """Largest value of the support, or None when it is unbounded (Poisson, Gaussian).

        Returns
        -------
        upper : int or None
        """
        return None

    def takes_missing_values(self) -> bool:
        """Whether :meth:`log_prob` and :meth:`suff_stats` take a mask of observed entries.

        Returns
        -------
        takes : bool
            True unless the family has no marginal density of a row's observed entries (a full
            Student-t), which then refuses a mask.
        """
        return True

    def rows_per_component(self, n_features: int) -> int:
        """Weighted rows a component needs for non-degenerate parameters (0: any positive weight).

        With fewer, the likelihood of a fit can grow without bound as the component shrinks
        onto its rows (a Gaussian covariance): model choice never selects such a fit.

        Parameters
        ----------
        n_features : int

        Returns
        -------
        n_rows : int
        """
        return 0

    def component_variances(self, params: Params) -> np.ndarray | None:
        """The variance of every component's distribution on every feature, where it can collapse.

        A continuous family fitted by maximum likelihood can put a component on (nearly) one
        repeated value, where its likelihood grows without bound (a Gamma's shape and rate, a
        LogNormal's sigma, an Exponential's rate on zeros). Such families return their
        variances, from which :meth:`min_relative_variance` and :meth:`collapsing_components`
        tell the collapse; the others return None (Gaussian and Student-t have their own tests).

        Parameters
        ----------
        params : Params

        Returns
        -------
        variances : ndarray of shape (n_components, n_features) or None
        """
        return None

    def min_relative_variance(self, params: Params, occupied: np.ndarray, feature_var: np.ndarray) -> float:
        """Smallest variance of a fitted component in units of the features' variances.

        Families with a variance parameter that can collapse onto tied values (Gaussian)
        return the smallest eigenvalue of a component covariance less their regularisation,
        in the standardised units of the data; those with :meth:`component_variances` the
        smallest of them over the features' variances; the others NaN (nothing to collapse).
        Gamma, LogNormal and Exponential, whose variance grows with their location, compare a
        spread free of the units instead (their coefficient of variation, or an Exponential's
        mean), over the largest of the occupied components'.

        Parameters
        ----------
        params : Params
        occupied : ndarray of shape (n_components,) of bool
            Components with positive mixing weight.
        feature_var : ndarray of shape (n_features,)
            Weighted variance of every feature of the data (zero for a constant one).

        Returns
        -------
        rel : float
        """
        variances = self.component_variances(params)
        if variances is None or not np.any(occupied):
            return float("nan")
        scale = np.where(feature_var > 0, feature_var, np.inf)  # a constant feature marks nothing
        with np.errstate(invalid="ignore"):
            return float(np.nanmin(np.asarray(variances, dtype=np.float64)[occupied] / scale))

    def log_penalty(self, params: Params, stats: Stats) -> float | None:
        """The penalty that the M-step's regularisation adds to the log-likelihood it maximises.

        An M-step that regularises (a variance floor, a prior) maximises the expected
        complete-data log-likelihood plus a log-penalty; EM then ascends the log-likelihood plus
        that penalty, which accelerated EM compares between parameter sets (with the component
        totals of ``stats`` fixed, as where every row's component is known, the objective is
        exact).

        Parameters
        ----------
        params : Params
        stats : Stats
            The E-step's statistics at ``params`` (their component totals weigh the penalty).

        Returns
        -------
        penalty : float or None
            Summed over the components (0 for a maximum-likelihood M-step); None where the
            regularisation is no penalty of a likelihood (a fixed point only).
        """
        return 0.0

    def collapsing_components(self, params: Params, scale: float | None = None) -> np.ndarray:
        """Components whose variance is sinking onto the family's regularisation floor.

        Where the likelihood has no interior maximum (a component with too few rows for its
        covariance, or rows with missing values that leave a direction unobserved), EM flattens a
        variance towards the floor that keeps it factorable and never converges; the fit then
        means nothing along that direction, and its densities are overconfident. Families with such
        a floor (Gaussian) say which components are on that path; the others return none.

        Parameters
        ----------
        params : Params
        scale : float or None, default=None
            The variance a collapsed one is small beside (e.g. the data's largest feature
            variance, where the mixture is one of several, such as one class's); None: the
            largest variance of the components.

        Returns
        -------
        components : ndarray of int
            Sorted component indices (for a tied covariance, all of them).
        """
        variances = self.component_variances(params)
        if variances is None:
            return np.zeros(0, dtype=int)
        variances = np.asarray(variances, dtype=np.float64)
        # per feature, beside the largest variance of the components (or ``scale``)
        largest = np.nanmax(variances, axis=0)
        if scale is not None:
            largest = np.maximum(largest, float(scale))
        with np.errstate(invalid="ignore"):
            return np.flatnonzero(np.any(variances < _COLLAPSED_SHARE * largest, axis=1))

    def fit_params(self, X: Array, resp: Array, sample_weight: Array | None = None, *, mask: Array | None = None,
                   rows: dict[str, Array] | None = None) -> Params:
        """Weighted MLE from responsibilities: ``params_from_stats(suff_stats(...))``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        resp : array of shape (n_samples, n_components)
        sample_weight : array of shape (n_samples,) or None
        mask : array of shape (n_samples, n_features) of bool or None, default=None
        rows : dict of str to array of shape (n_samples,) or None, default=None

        Returns
        -------
        params : Params
        """
        return self.params_from_stats(self.suff_stats(X, resp, sample_weight, mask=mask, rows=rows))

    def check_data(self, X: np.ndarray, rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Raise ``ValueError`` if some row of X is outside the support of the family.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        rows : dict of str to ndarray of shape (n_samples,) or None, default=None
            Per-row data from :meth:`row_data`.

        Returns
        -------
        X : ndarray
            Unchanged.
        """
        if self.support is not None and not self.support.check(X):
            raise ValueError(
                f"X is outside the support of {self!r}: {_outside_support(self.support, X)}; its entries must be "
                f"{self.support.description}."
            )
        return X

    def make_params(self, params: dict[str, ArrayLike] | Params, n_components: int, n_features: int) -> Params:
        """Validate a dict (or Params) of parameters and return a Params instance.

        Parameters
        ----------
        params : dict or Params
            By parameter name; every parameter of the family must be given.
        n_components : int
        n_features : int

        Returns
        -------
        params : Params

        Raises
        ------
        ValueError
            Naming the parameter, for a missing or unknown name, a wrong shape, or a value
            outside the parameter's constraint.
        """
        self.check_options()
        if isinstance(params, Params):
            params = params.as_dict()
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict by parameter name; got {type(params).__name__}.")
        shapes = self.param_shapes(n_components, n_features)
        missing = set(shapes) - set(params)
        unknown = set(params) - set(shapes)
        if missing or unknown:
            raise ValueError(
                f"{type(self).__name__} parameters are {sorted(shapes)}; "
                + (f"missing {sorted(missing)}" if missing else "")
                + ("; " if missing and unknown else "")
                + (f"unknown {sorted(unknown)}" if unknown else "")
                + "."
            )
        out = {}
        for name, shape in shapes.items():
            try:
                value = np.array(params[name], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"parameter {name!r} must be numeric: {exc}") from None
            if value.shape != tuple(shape):
                raise ValueError(
                    f"parameter {name!r} has shape {value.shape}; expected {tuple(shape)} "
                    f"(n_components={n_components}, n_features={n_features})."
                )
            self.arg_constraints[name].validate(value, f"parameter {name!r}")
            out[name] = value
        return self.params_class(**out)
