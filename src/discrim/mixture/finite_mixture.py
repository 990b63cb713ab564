"""FiniteMixture: a mixture of K components of any family, fitted by EM."""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from dataclasses import dataclass, replace
from numbers import Integral, Real
from typing import TYPE_CHECKING, Literal, Self

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from discrim._typing import Array, ArrayLike, Device, RandomStateLike
from discrim._posterior import PosteriorMixin, check_joint, listed_indices, log_posterior, map_log_probability
from discrim.backend import ops, to_numpy
from discrim.backend._device import device_type, is_tensor, rows_on_device
from discrim.distributions._base import ComponentFamily, Params, mask_patterns, slice_rows
from discrim.exceptions import CollapsingComponentWarning, DataScaleWarning
from discrim.mixture._em import (
    DaskRowBlocks,
    RowBlocks,
    default_chunk_size,
    joint_log_likelihood,
    run_em,
    stats_from_assignment,
)
from discrim.mixture._init import (
    INIT_METHODS,
    InitialAssignment,
    LabelledRowsStart,
    check_enough_distinct_rows,
    given_assignment,
    initial_assignment,
)
from discrim.mixture._noise import default_noise_rows, noise_region
from discrim.utils import _fitted_state as state
from discrim.utils._param_validation import HasMethods, Interval, StrOptions, fit_context
from discrim.utils._random import as_seed_sequence, side_stream, spawn_generators
from discrim.utils._dask import (
    align_rows,
    blockwise,
    checked_rows,
    chunk_rows,
    gather_sample,
    is_dask,
    lazy_completion,
    map_row_chunks_seeded,
    prepared_rows,
    weighted_total,
)
from discrim.utils._threads import row_threads
from discrim.utils._warnings import user_stacklevel
from discrim.utils.validation import (
    ENCODE_CATEGORIES,
    check_feature_magnitude,
    check_mixture_table,
    check_observed_columns,
    check_observed_weight,
    check_sample_weight,
    partial_labels,
    label_codes,
    observed_mask,
    pairs_never_observed,
    refuse_text_array,
    rescale_weights,
    weighted_feature_variance,
)

if TYPE_CHECKING:
    from discrim.mixture._summary import MixtureSummary

__all__ = ["FiniteMixture", "MAX_N_INIT"]

# More restarts than this is never useful and, unbounded, a typo (n_init=10**9) runs for ever.
MAX_N_INIT = 10_000
# FiniteMixture.sample refuses draws whose rows alone would take more memory than this.
_MAX_SAMPLE_BYTES = 2**34
# Rows of a dask X that the initialisation (k-means++ seeding) sees on the client: all of them up
# to this many (the fit then starts exactly as in memory), else a uniform sample of this size.
_INIT_SAMPLE_ROWS = 1 << 17
# Rows with missing values are split among the threads down to blocks of this many rows (below it,
# a block's hundred array operations cost more than its rows).
_MIN_MASKED_BLOCK = 4096


def _one_component(X, first_row=0):
    """Responsibilities of a single component: a column of ones (n_block, 1), where X lives."""
    return ops.like(np.ones((X.shape[0], 1)), X)


def _refuse_noise_with_missing_values(blocks):
    """Refuse rows with missing values where a noise component scores them.

    The noise density ``1 / V`` is a density in all the features, the components' marginals a
    density in a row's observed ones: compared, they sent every incomplete row to the noise in small
    units and none in large ones. (``V`` is mclust's volume, of a box along the principal axes
    where that is smaller: it has no marginal of its own over some of the features.)
    """
    if blocks.mask is not None:
        raise ValueError("X has missing values (NaN), which a model with a noise component cannot score: the noise "
                         "density 1 / V is a density in all the features, the components' in a row's observed ones. "
                         "Impute the missing values first, or fit without noise.")


class _OutsideNoise:
    """A start's responsibilities with the initial noise rows taken out (they start in the noise)."""

    def __init__(self, assign, noise_rows):
        self.assign = assign
        self.keep = (~noise_rows).astype(np.float64)

    def __call__(self, X, first_row=0):
        resp = self.assign(X, first_row)
        return resp * ops.like(self.keep[first_row : first_row + X.shape[0], None], resp)


def _chunk_row_data(family, n_samples):
    """The family's per-row data (:meth:`ComponentFamily.row_data`) of ``n_samples`` rows, or of a row
    chunk of a dask X (:func:`discrim.utils._dask.chunk_rows`): its share of the data of all rows."""
    window = chunk_rows()
    if window is None:
        return family.row_data(n_samples)
    start, stop, n_rows = window
    rows = family.row_data(n_rows)
    return None if rows is None else {name: np.asarray(value)[start:stop] for name, value in rows.items()}


class FiniteMixture(PosteriorMixin, DensityMixin, BaseEstimator):
    """Finite mixture of components from one family, fitted by expectation-maximisation.

    The density is ``f(x) = sum_k pi_k f(x; theta_k)``. EM alternates the E-step, which
    computes the responsibilities ``w_ik = P(z_i = k | x_i, theta_t)`` in log space, and the
    M-step, which maximises ``h_t(theta)``, the expected complete-data log-likelihood: the
    weighted maximum-likelihood estimate of each component and ``pi_k = sum_i w_ik / n``.

    Parameters
    ----------
    family : ComponentFamily
        The component family, e.g. ``Gaussian(covariance_type="full")``, ``Binomial(n_trials=10)``,
        ``Poisson()``, ``Bernoulli()`` or ``Categorical(n_categories=3)``.
    n_components : int, default=2
        Number of components K.
    weights_init : array-like of shape (n_components,), default=None
        Initial mixing weights (non-negative, summing to one). None: estimated from the
        initial responsibilities (uniform when ``fix_weights=True``).
    fix_weights : bool, default=False
        Keep the mixing weights at their initial value instead of estimating them.
    params_init : dict, default=None
        Initial component parameters by parameter name, each with a leading component axis
        (e.g. ``{"prob": [[0.6], [0.5]]}`` for a two-component Binomial). None: from
        ``init_params``.
    init_params : {"kmeans++", "kmeans", "hierarchical", "random", "random_from_data"} or array-like, \
            default="kmeans++"
        How the initial responsibilities are drawn when ``params_init`` is None: k-means++
        seeding then nearest-center assignment; the clusters of a full (weighted) k-means fit;
        mclust's model-based hierarchical agglomeration (its default start, on mclust's scaled
        SVD coordinates; at most 2,000 rows agglomerated, the others assigned to the nearest
        cluster mean; each row of positive weight counts once there, as mclust's ``hc`` takes no
        weights; on one feature, mclust's quantile classes ``qclass``, its start there); random
        soft assignments; or distinct random rows as centers then
        nearest-center assignment. An array gives the start: a partition (n_samples,) of
        component indices, or responsibilities (n_samples, n_components) with rows summing to
        one (mclust's ``z``). The initial parameters are the weighted MLE under those
        responsibilities.
    n_init : int, default=1
        Number of initialisations, at most ``MAX_N_INIT`` (10,000); the fit with the highest
        final log-likelihood is kept. With a deterministic ``init_params`` ("hierarchical" or an
        array) the first start is that one and the others are k-means++ seedings. Ignored when
        ``params_init`` is given (the start is then deterministic).
    max_iter : int, default=100
        Maximum number of EM iterations; 0 keeps the initial parameters (useful to inspect or
        reuse a start).
    tol : float, default=1e-3
        Convergence threshold on the change of the mean weighted log-likelihood between
        iterations; ``tol=0`` runs exactly ``max_iter`` iterations (and does not warn).
    accelerate : bool, default=False
        SQUAREM-accelerated EM (Varadhan and Roland, 2008): after every two EM steps, one EM step
        from the point extrapolated along them, kept only when its log-likelihood is at least
        the second step's (plain EM goes on otherwise), so ``lower_bounds_`` stays
        non-decreasing. It reaches EM's fixed point in fewer EM steps when EM is slow; the
        stopping rule is unchanged (one plain EM step changing the mean log-likelihood by less
        than ``tol``). ``n_iter_`` counts every EM step, the ones from extrapolated points among
        them; ``lower_bounds_`` and ``history_`` hold the kept parameter sets only.
    reg_covar : float or None, default=None
        Added to the diagonal of Gaussian covariances: a float sets the ``reg_covar`` option of
        the family for this mixture (ignored by families without one, the discrete ones); None
        keeps the family's own (``Gaussian(reg_covar=1e-6)`` by default). It is an absolute
        variance, in the squared units of X: the fit is invariant to translations of X, and to a
        rescaling of X by ``s`` when ``reg_covar`` is rescaled by ``s**2`` too.
    keep_history : bool, default=False
        Store the weights and parameters of every iteration in ``history_``.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the initialisations and :meth:`sample`.
    warm_start : bool, default=False
        Start a new fit from the previous fit's parameters (``n_init`` is then ignored).
    dtype : {"float64", "float32"}, default="float64"
        Floating type of the data in the E-step and the statistics' matrix products; float32
        roughly halves memory traffic. Parameters and accumulated statistics stay float64.
    chunk_size : int, default=None
        Rows per block in the E-step; None picks a size that keeps the block's temporaries in
        cache.
    n_threads : int, default=None
        Threads that run row blocks of the E-step in parallel (BLAS is held to one thread per
        block meanwhile). None uses the BLAS thread budget of the context: every core at the top
        level, a worker's share of them inside a parallel search. Results do not depend on it.
        Ignored on a device (torch parallelises each block itself).
    device : str, torch.device or None, default=None
        Where the E-step runs: None with numpy on the host (or, for a torch tensor X, with
        torch on X's device); "cpu", "cuda", "cuda:1" or a ``torch.device`` with torch there
        (needs PyTorch). X goes to the device once per fit; the statistics of each block of rows
        come back to the host, where the M-step runs in float64 (they are of size K d^2). Fitted
        attributes are numpy on the host; prediction methods return in the namespace and on the
        device of their input.
    component_labels : array-like of int of shape (n_components,), default=None
        The label of each component, when the ``y`` of :meth:`fit` labels groups of components
        (a class that is itself a mixture, as in :class:`~discrim.discriminant.MixtureDiscriminant`):
        a row labelled ``c`` then belongs to one of the components labelled ``c``; ``y`` is read
        only with ``unlabeled`` set (fit refuses ``y`` with ``component_labels`` otherwise).
        None: ``y`` holds component indices.
    unlabeled : int, float or None, default=None
        The value of ``y`` that marks an unlabelled row (e.g. -1; NaN marks one too): :meth:`fit`
        then keeps the labelled rows' responsibilities on their components, and (one component
        per label, each with labelled rows) its first start is the labelled rows' own moments, as
        mclust's ``MclustSSC``; further ``n_init`` starts are k-means++ seedings. None: ``y`` is
        ignored, as by every scikit-learn mixture.
    noise : bool or float, default=False
        Add a uniform noise component of density ``1 / V`` (Banfield and Raftery, 1993), with
        its own mixing weight estimated by EM, as mclust's ``Vinv``: False, none; True, ``V`` is
        mclust's ``hypvol(X)``, the smaller of the volumes of the data's bounding box and of its
        box along the principal axes; a positive float, ``V`` itself. The noise is the last
        column of ``weights_``, :meth:`predict_proba` and :meth:`predict_log_proba`, and the
        label -1 of :meth:`predict`; :meth:`score_samples` includes it (``1 / V`` everywhere, as
        mclust), and it counts one free parameter (its weight) in :meth:`bic`, two with
        ``noise=True`` (its weight and ``V``, estimated from the data: mclust's count).
    noise_init : array-like of bool of shape (n_samples,) or None, default=None
        With ``noise``: the rows that start in the noise component (mclust's
        ``initialization=list(noise=...)``); the other rows give the components' start by
        ``init_params``. None: the rows that the nearest-neighbour clutter removal of Byers and
        Raftery (1998) calls clutter (5 neighbours, see
        :func:`discrim.mixture._noise.default_noise_rows`).

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,) or (n_components + 1,)
        Mixing weights ``pi_k`` (``lambda`` and ``1 - lambda`` in the two-coin example); with
        ``noise``, the noise component's weight last.
    params_ : dict of str to ndarray
        Component parameters by name, each with a leading component axis: ``prob`` (Binomial,
        Bernoulli), ``rate`` (Poisson), ``probs`` (Categorical), ``mean`` and ``covariance``
        (Gaussian).
    means_, covariances_ : ndarray
        A Gaussian family's ``params_["mean"]`` and ``params_["covariance"]`` under
        scikit-learn's GaussianMixture names and shapes (other families: AttributeError).
    converged_ : bool
        Whether the best initialisation converged before ``max_iter``.
    n_iter_ : int
        Number of EM iterations of the best initialisation.
    lower_bounds_ : ndarray of shape (n_iter_ + 1,)
        Mean weighted log-likelihood of the initial parameters and after every iteration; never
        decreases (up to rounding). With a Gaussian ``prior`` it is the data's log-likelihood at
        each MAP estimate (mclust's ``loglik``), without the log prior: EM increases the posterior,
        and this may fall slightly. The same where ``reg_covar`` is not negligible beside a
        component's spread (a component on one or two rows): the M-step adding it maximises the
        likelihood less a penalty of ``reg_covar`` (:meth:`ComponentFamily.log_penalty`), which EM
        increases, and the likelihood alone may fall. And with ``Gaussian(..., m_step="mclust")``
        for EVE and VVE, whose VVE M-step (mclust's) does not maximise the likelihood.
    lower_bound_ : float
        ``lower_bounds_[-1]``.
    family_ : ComponentFamily
        The family as fitted: ``family`` with the mixture's ``reg_covar`` and its data-dependent
        defaults filled in (a Gaussian prior's mean and scale, from this fit's rows).
    noise_volume_ : float or None
        ``V``, the hypervolume of the noise component (None without ``noise``).
    history_ : list of dict
        Only with ``keep_history=True``: ``{"weights": ..., <parameter name>: ...}`` for the
        initial parameters and every iteration (length ``n_iter_ + 1``).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.

    See Also
    --------
    sklearn.mixture.GaussianMixture : The Gaussian case; ``FiniteMixture(Gaussian())`` takes the
        same EM steps from the same initial parameters. At the same ``tol`` it stops one step
        earlier, as its ``lower_bound_`` is the log-likelihood of the parameters it returns, where
        scikit-learn's is that of the parameters before its last M-step.

    Notes
    -----
    Mapping to the two-coin example of EM (Do and Batzoglou, Nature Biotechnology 26, 2008, with
    an unknown mixing weight ``lambda``; :func:`discrim.datasets.coin_tosses`): ``weights_[0]``
    is ``lambda``, ``params_["prob"][k, 0]`` is ``p_k``, ``predict_proba(X)[i, k]`` is ``w_ik``.
    Each iteration applies the closed forms ``p_k = sum_i w_ik x_i / sum_i 10 w_ik`` and
    ``lambda = sum_i w_i0 / 5``. Two misprints of the lecture notes that discrim's EM follows
    (not of that paper) are corrected: the second binomial term of ``h_t`` has exponent ``10 - x_i``, and ``g_t`` bounds
    ``log P(x | theta)`` (not ``P``). By EM's lower-bound argument the log-likelihood never
    decreases; ``lower_bounds_`` records it per row.

    A component that receives no responsibility keeps its previous parameters (with weight
    zero) and a warning is emitted; ``reg_covar`` keeps Gaussian covariances positive
    definite. X with fewer distinct rows than components is rejected.

    Examples
    --------
    >>> from discrim.datasets import coin_tosses
    >>> from discrim.distributions import Binomial
    >>> from discrim.mixture import FiniteMixture
    >>> X = coin_tosses()
    >>> fm = FiniteMixture(Binomial(n_trials=10), 2, params_init={"prob": [[0.6], [0.5]]},
    ...                    weights_init=[0.5, 0.5], tol=1e-8).fit(X)
    >>> fm.predict_proba(X).shape
    (5, 2)
    """

    # Whether fit warns of a collapsing component when EM stops at tol. Callers that judge the fit
    # themselves and name it in their own terms (select_mixture's degenerate column, the classes of
    # a discriminant) set it False on their instance; not a parameter, so clone does not carry it.
    _warn_collapsing = True
    _warn_reg_covar = True  # select_mixture warns once for its grid instead (warn_reg_covar_once)
    _warn_unobserved_pairs = True  # a start fitted to some rows only (weight 0 elsewhere) does not

    _parameter_constraints = {
        "family": [HasMethods(["log_prob", "suff_stats", "params_from_stats", "check_options"])],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "weights_init": ["array-like", None],
        "fix_weights": ["boolean"],
        "params_init": [dict, None],
        "init_params": [StrOptions(set(INIT_METHODS)), "array-like"],
        "n_init": [Interval(Integral, 1, MAX_N_INIT, closed="both")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "accelerate": ["boolean"],
        "reg_covar": [Interval(Real, 0, None, closed="left"), None],
        "keep_history": ["boolean"],
        "random_state": ["random_state", np.random.Generator],
        "warm_start": ["boolean"],
        "dtype": [StrOptions({"float64", "float32"})],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "n_threads": [Interval(Integral, 1, None, closed="left"), None],
        "device": "no_validation",  # check_device names what is wrong, in fit and predict
        "component_labels": ["array-like", None],
        "unlabeled": [Real, None],
        "noise": ["boolean", Interval(Real, 0, None, closed="neither")],
        "noise_init": ["array-like", None],
    }

    # Defaults for models restored from files written before the noise component was an option.
    noise = False
    noise_init = None

    def __init__(
        self,
        family: ComponentFamily,
        n_components: int = 2,
        *,
        weights_init: ArrayLike | None = None,
        fix_weights: bool = False,
        params_init: dict[str, ArrayLike] | None = None,
        init_params: str | ArrayLike = "kmeans++",
        n_init: int = 1,
        max_iter: int = 100,
        tol: float = 1e-3,
        accelerate: bool = False,
        reg_covar: float | None = None,
        keep_history: bool = False,
        random_state: RandomStateLike = None,
        warm_start: bool = False,
        dtype: Literal["float64", "float32"] = "float64",
        chunk_size: int | None = None,
        n_threads: int | None = None,
        device: Device = None,
        component_labels: ArrayLike | None = None,
        unlabeled: float | None = None,
        noise: bool | float = False,
        noise_init: ArrayLike | None = None,
    ) -> None:
        self.family = family
        self.n_components = n_components
        self.weights_init = weights_init
        self.fix_weights = fix_weights
        self.params_init = params_init
        self.init_params = init_params
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.accelerate = accelerate
        self.reg_covar = reg_covar
        self.keep_history = keep_history
        self.random_state = random_state
        self.warm_start = warm_start
        self.dtype = dtype
        self.chunk_size = chunk_size
        self.n_threads = n_threads
        self.device = device
        self.component_labels = component_labels
        self.unlabeled = unlabeled
        self.noise = noise
        self.noise_init = noise_init

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # NaN is a missing value, handled by the marginal densities, except where the model has no
        # marginal: a noise component (a density in all the features) or a family that refuses a mask
        takes = getattr(self.family, "takes_missing_values", None)  # a family object of any kind: no check here
        tags.input_tags.allow_nan = not self.noise and (takes is None or bool(takes()))
        return tags

    # --- validation -----------------------------------------------------------------------

    def _family(self):
        """A copy of the family with its options checked and the mixture's ``reg_covar`` applied.

        A copy: the fit keeps it as ``family_``, which the fitted methods use, so that a later
        ``set_params`` on the mixture (or on a family object shared with other estimators) changes
        nothing until the next fit, as scikit-learn's fitted attributes.
        """
        family = clone(self.family)
        if self.reg_covar is not None and "reg_covar" in family.get_params(deep=False):
            family = family.set_params(reg_covar=self.reg_covar)
        return family.check_options()

    def _rows(self, X, family, reset):
        """Validated rows of X as :class:`RowBlocks` where the mixture computes, with unit weights.

        NaN entries of host input are missing values: they become 0 (a value in every family's
        support, which the masked densities and statistics never read) and the blocks carry the
        mask of observed entries; without NaN the mask is None and nothing changes.
        """
        dtype = np.dtype(self.dtype)

        def validate(X):
            refuse_text_array(X, "encode it first, as numbers (X.astype(float) for numbers written as text) or as "
                                 "category codes (Categorical(categories=...).encode(X)).")
            X = check_mixture_table(X)  # a DataFrame's text, string or category columns, named
            try:
                X = validate_data(self, X, reset=reset, dtype=dtype, ensure_all_finite="allow-nan")
            except ValueError as exc:
                # numpy's "could not convert string to float" (an object array of text)
                if not any(text in str(exc) for text in ("could not convert", "Cannot cast", "cannot convert")):
                    raise
                raise ValueError(f"X holds values that are not numbers ({exc}). {ENCODE_CATEGORIES}") from None
            return check_feature_magnitude(X, training=reset)

        # the masked E- and M-steps are host code: fit refuses such rows on a device; a fitted
        # model (its parameters on the host) scores them there, as numpy
        X = rows_on_device(self, X, validate, reset=reset, dtype=dtype, nan_on_host=not reset, nan_on_device=(
            "X has missing values (NaN), which are handled on the host (numpy) path only: fit with device=None, "
            "or impute them first."))
        X, mask = observed_mask(X)
        # per-row data (a Binomial's trial counts) belong to the rows: new rows take them from the
        # family parameter as set now (family__n_trials=...), the fitted family_ keeps the rest
        rows = _chunk_row_data(family if reset else self.family, X.shape[0])
        family.check_data(X, rows)
        weights = ops.like(np.ones(X.shape[0]), X)
        return RowBlocks(X, weights, self._chunk_size(family, X.shape[1], X, masked=mask is not None), mask=mask,
                         rows=rows)

    def _labels(self, y, blocks, n_labels):
        """Known labels of the rows (-1: unknown), or None when y labels no row.

        For a dask X they stay lazy, chunked like its rows, and are checked chunk by chunk.
        """
        if not isinstance(blocks, DaskRowBlocks):
            return partial_labels(y, blocks.n_rows, n_labels, self.unlabeled)
        if y is None:
            return None
        y = align_rows(y, blocks.X, name="y")
        return y.map_blocks(label_codes, n_labels, self.unlabeled, dtype=np.int64)

    def _chunk_size(self, family, n_features, X=None, masked=False):
        if self.chunk_size:
            return self.chunk_size
        on_device = device_type(X) == "cuda"
        size = default_chunk_size(self.n_components, n_features, family, on_device=on_device, masked=masked)
        if masked and X is not None and not on_device:
            # rows with missing values take large blocks (see default_chunk_size); of a few tens of
            # thousands of rows that left one block, and every thread but one idle (20,000 x 10,
            # 30 % missing, K = 3, 2 threads: one block 2.53-2.69x the complete rows' time per
            # iteration, two blocks 2.42-2.51x; medians of 5, three runs each)
            per_thread = -(-X.shape[0] // row_threads(self.n_threads))
            if per_thread >= _MIN_MASKED_BLOCK:
                size = min(size, per_thread)
        return size

    @staticmethod
    def _block_threads(blocks, n_threads):
        # a GPU parallelises each (large) block itself; on a CPU the blocks run in threads, numpy's
        # and torch's alike, with their own threads held at one (single_threaded_blas)
        return 1 if is_tensor(blocks.X) and device_type(blocks.X) != "cpu" else row_threads(n_threads)

    def _training_rows(self, X, family, sample_weight, reset):
        """The rows EM runs over, and the rows (all, or a sample) that the initialisation sees.

        Returns
        -------
        blocks : RowBlocks or DaskRowBlocks
            With the sample weights rescaled by a power of two, in X's dtype.
        sample : tuple of (ndarray, ndarray)
            Rows and float64 weights in memory: all rows of in-memory X; of a dask X, all rows
            when they number at most ``_INIT_SAMPLE_ROWS``, else a uniform sample of about that
            many, gathered to the client.
        """
        if not is_dask(X):
            blocks = self._rows(X, family, reset=reset)
            # Only the ratios of the weights matter; a power-of-two rescale keeps the sums in range.
            w = rescale_weights(check_sample_weight(sample_weight, blocks.n_rows))
            blocks = replace(blocks, sample_weight=ops.like(w, blocks.X))
            if blocks.mask is not None:
                check_observed_columns(blocks.mask, w)
                if self._warn_unobserved_pairs:
                    _warn_if_pairs_never_observed(family, blocks.mask, w)
                blocks = replace(blocks, fill=family.start_completion(blocks.X, blocks.mask, w, blocks.rows))
                return blocks, (blocks.completed().X, w)
            return blocks, self._host_sample(blocks.X, w)
        dtype = np.dtype(self.dtype)
        X = prepared_rows(self, X, dtype=dtype, reset=reset)
        rows = family.row_data(X.shape[0])

        def block_rows(Xb, first_row):
            return slice_rows(rows, slice(first_row, first_row + Xb.shape[0]))

        def check(Xb, first_row):
            family.check_data(Xb, block_rows(Xb, first_row))

        def completion_stats(Xb, observed, wb, first_row):
            return family.completion_stats(Xb, observed, wb, block_rows(Xb, first_row))

        checked = checked_rows(self, X, dtype=dtype, sample_weight=sample_weight, check=check, allow_nan=True,
                               stats=completion_stats)
        largest = checked.max_weight
        scale = rescale_weights(np.array([largest]))[0] / largest  # the same power of two as in memory
        w = checked.sample_weight * scale
        dask_rows = {name: align_rows(value, X, name=f"family.{name}") for name, value in (rows or {}).items()}
        mask = fill = None
        if checked.n_missing:  # as in memory: 0 in the missing entries, and the mask of observed ones
            check_observed_weight(checked.observed_weight)
            import dask.array as da

            missing = da.isnan(X)
            X, mask = da.where(missing, X.dtype.type(0), X), ~missing
            fill = lazy_completion(family, checked.stats, X, dask_rows or None)
        blocks = DaskRowBlocks(X, w.astype(dtype), self._chunk_size(family, X.shape[1]), mask=mask,
                               rows=dask_rows or None, total_weight=checked.total_weight * scale, fill=fill)
        # the seeding sees the rows completed as the first M-step sees them
        sample_X, sample_w = gather_sample(blocks.completed().X if mask is not None else X, w, _INIT_SAMPLE_ROWS,
                                           side_stream(self.random_state))
        return blocks, (sample_X, sample_w)

    def _host_sample(self, rows, sample_weight):
        """The rows the initialisation sees, on the host (k-means++ seeding runs there).

        Parameters
        ----------
        rows : ndarray or torch.Tensor of shape (n_samples, n_features)
            Validated rows, where the mixture computes.
        sample_weight : ndarray of shape (n_samples,) of float64

        Returns
        -------
        sample : tuple of (ndarray, ndarray)
            Rows and weights: all of them, except that rows on a device cross to the host only
            up to ``_INIT_SAMPLE_ROWS`` of them, drawn uniformly (as from a dask X).
        """
        if not is_tensor(rows):
            return rows, sample_weight
        n = rows.shape[0]
        if n <= _INIT_SAMPLE_ROWS:
            return to_numpy(rows), sample_weight
        index = np.sort(side_stream(self.random_state).choice(n, _INIT_SAMPLE_ROWS, replace=False))
        return to_numpy(ops.take_rows(rows, index)), sample_weight[index]

    def _component_groups(self):
        """The label of every component: ``component_labels``, or the component indices."""
        if self.component_labels is None:
            return np.arange(self.n_components)
        groups = np.asarray(self.component_labels)
        if groups.shape != (self.n_components,) or groups.dtype.kind not in "iu" or groups.min() < 0:
            raise ValueError(f"component_labels must hold one non-negative int per component ({self.n_components}); "
                             f"got {self.component_labels!r}.")
        return groups.astype(np.int64)

    def _check_weights_init(self):
        k = self.n_components + (self._has_noise())
        if self.weights_init is None:
            return None
        w = np.asarray(self.weights_init, dtype=np.float64)
        if w.shape != (k,):
            raise ValueError(f"weights_init has shape {w.shape}; expected ({k},) (one weight per component"
                             + (", the noise's last)." if self._has_noise() else ")."))
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.isclose(w.sum(), 1.0, rtol=0, atol=1e-6):
            raise ValueError("weights_init must be non-negative and sum to one.")
        return w / w.sum()

    # --- fitting --------------------------------------------------------------------------

    def _initial(self, family, blocks, sample, rng, noise_rows=None, init=None):
        """Starting (weights, params) for one initialisation; ``sample`` the rows the seeding sees.

        ``noise_rows`` (n_samples,) of bool: the rows that start in the noise component (the
        other rows give the components' start), or None without noise. ``init``: the method or
        array of this start (``init_params`` when None).
        """
        init = self.init_params if init is None else init
        k, d = self.n_components, blocks.X.shape[1]
        n_weights = k + (noise_rows is not None)
        weights0 = self._check_weights_init()
        if self.params_init is not None:
            params0 = family.make_params(self.params_init, k, d)
            if weights0 is None:
                weights0 = np.full(n_weights, 1.0 / n_weights)
            return weights0, params0
        if isinstance(init, str) and init == "labelled":
            assign = LabelledRowsStart(k)
        elif isinstance(init, str) and self._every_row_labelled(blocks.labels, blocks.groups):
            # the labels give every row its component: any responsibilities start the same M-step
            # (seeding would need as many distinct rows as components, which labelled rows need not be)
            assign = InitialAssignment(k, seed=0)
        elif isinstance(init, str):
            sample_X, sample_w = sample
            if noise_rows is not None:  # the noise is in memory: the sample is all rows
                sample_w = np.where(noise_rows, 0.0, sample_w)
            assign = initial_assignment(sample_X, sample_w, k, init, rng, n_rows=blocks.n_rows)
        else:
            assign = given_assignment(init, blocks.n_rows, k)
        if noise_rows is not None:
            assign = _OutsideNoise(assign, noise_rows)
        if blocks.mask is not None:  # the first M-step sees the rows completed by the family's start_completion
            blocks = blocks.completed()
        stats = stats_from_assignment(family, blocks, assign, self._block_threads(blocks, self.n_threads))
        params0 = family.params_from_stats(stats)
        if weights0 is None:
            totals = stats.weight
            if noise_rows is not None:
                totals = np.append(totals, np.asarray(to_numpy(blocks.sample_weight), dtype=np.float64)[noise_rows].sum())
            weights0 = np.full(n_weights, 1.0 / n_weights) if self.fix_weights else totals / totals.sum()
        return weights0, params0

    def _has_noise(self):
        return not (self.noise is None or self.noise is False)

    def _check_loaded_state(self):
        """Check the fitted state a model file gave this mixture; raise FittedStateError naming the attribute.

        The parameters must be the family's (``family_.make_params``: their shapes by the number of
        components and ``n_features_in_``, and each parameter's constraint, finite); ``weights_`` one
        non-negative weight per component (and the noise's last) summing to 1; ``params_`` the
        parameters the mixture computes with. See :func:`discrim.persistence.load_model`.

        Returns
        -------
        n_features : int
        n_components : int
            Without the noise component.
        """
        n_features, family, params, weights, public = state.fitted_attributes(
            self, "n_features_in_", "family_", "_params", "weights_", "params_")
        n_features = state.count(n_features, "n_features_in_", minimum=1)
        if getattr(self, "feature_names_in_", None) is not None:
            state.array(self.feature_names_in_, "feature_names_in_", (n_features,), kind=None, dims="(n_features_in_,)")
        if not isinstance(family, ComponentFamily):
            raise state.FittedStateError(f"family_ is a {type(family).__name__}, not a component family")
        if not isinstance(params, Params):
            raise state.FittedStateError(f"_params is a {type(params).__name__}, not a component family's parameters")
        try:
            n_components = params.n_components
            family.make_params(params, n_components, n_features)
        except (TypeError, ValueError, IndexError) as exc:
            raise state.FittedStateError(f"_params are not parameters of {family!r} for n_features_in_ = "
                                         f"{n_features}: {str(exc).strip().rstrip('.')}") from None
        noise = getattr(self, "_noise_log_density", None)
        if noise is not None:
            state.scalar(noise, "_noise_log_density")
        state.probabilities(weights, "weights_", n_components + (noise is not None),
                            dims="(n_components + 1,)" if noise is not None else "(n_components,)")
        computed = params.as_dict()
        if not (isinstance(public, dict) and public.keys() == computed.keys()
                and all(np.array_equal(public[name], value) for name, value in computed.items())):
            raise state.FittedStateError("params_ differs from the parameters the mixture computes with (_params)")
        region = getattr(self, "_noise_region", None)
        if region is not None:
            for name, shape in (("rotation", (n_features, n_features)), ("lower", (n_features,)),
                                ("upper", (n_features,))):
                state.array(getattr(region, name, None), f"_noise_region.{name}", shape)
        return n_features, n_components

    def _noise_start(self, blocks, labels):
        """(log-density of the noise, its region or None, the initial noise rows) of a fit with noise."""
        if isinstance(blocks, DaskRowBlocks):
            raise ValueError("noise needs X in memory (numpy or torch): compute the dask array first, or fit "
                             "without noise.")
        _refuse_noise_with_missing_values(blocks)
        X = np.asarray(to_numpy(blocks.completed().X if blocks.mask is not None else blocks.X), dtype=np.float64)
        if self.noise is True:
            region = noise_region(X)
            log_volume = region.log_volume
        else:
            region, log_volume = None, float(np.log(self.noise))
        if self.noise_init is None:
            rows = default_noise_rows(X)
            if (~rows).sum() < self.n_components:
                # the two intensities did not separate (small or evenly spread data): no clutter found
                warnings.warn(f"the clutter detection behind noise=True marked {int(rows.sum())} of {rows.shape[0]} "
                              "rows as noise, too many to start the components: the noise component starts (and "
                              "stays) empty. Pass noise_init to mark the rows that start as noise.", UserWarning,
                              stacklevel=user_stacklevel())
                rows = np.zeros_like(rows)
        else:
            rows = np.asarray(self.noise_init)
            if rows.shape != (blocks.n_rows,) or rows.dtype.kind != "b":
                raise ValueError(f"noise_init must be a bool array with one entry per row of X ({blocks.n_rows}); "
                                 f"got shape {rows.shape} and dtype {rows.dtype}.")
        if labels is not None:
            rows = rows & (np.asarray(labels) < 0)  # a labelled row is not noise
        if (~rows).sum() < self.n_components:
            raise ValueError(f"noise_init leaves {int((~rows).sum())} rows for n_components={self.n_components}: "
                             "mark fewer rows as noise.")
        return -log_volume, region, rows

    def _with_data_defaults(self, family, blocks):
        """The family with its data-dependent defaults set from all rows (one pass, additive statistics)."""
        if not family.uses_data_defaults():
            return family
        rows = replace(blocks.completed() if blocks.mask is not None else blocks, labels=None, groups=None)
        return family.fill_data_defaults(stats_from_assignment(family, rows, _one_component), self.n_components)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike | None = None, sample_weight: ArrayLike | None = None) -> Self:
        """Estimate the mixture by EM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a missing value (missing at random): rows are scored by the marginal
            density of their observed entries.
        y : array-like of shape (n_samples,), default=None
            Ignored unless ``unlabeled`` is set (scikit-learn passes the targets of a pipeline to
            every step, and a mixture must not take them for components). With ``unlabeled``:
            known components (semi-supervised EM, as mclust's ``MclustSSC``), a component index
            in ``[0, n_components)`` (or a value of ``component_labels``) for a labelled row,
            whose responsibility stays there, and ``unlabeled`` or NaN for an unlabelled one.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights; integer weights give the same fit as repeated rows from the
            same start (the "hierarchical" start agglomerates each row of positive weight once, so
            its partition, and then the fit, can differ from that of the rows repeated).

        Returns
        -------
        self : FiniteMixture
        """
        warm = self.warm_start and hasattr(self, "weights_")
        family = self._family()
        if warm:
            self._check_warm_start(family)
        blocks, sample = self._training_rows(X, family, sample_weight, reset=not warm)
        groups = self._component_groups()
        if self.unlabeled is None and self.component_labels is not None and y is not None:
            raise ValueError("component_labels groups the components by the labels y, which fit reads only with "
                             "unlabeled set (otherwise y is ignored, as by every scikit-learn mixture): pass "
                             "unlabeled=-1 (or the value that marks an unlabelled row), or leave y out.")
        labels = None if self.unlabeled is None else self._labels(y, blocks, int(groups.max()) + 1)
        if labels is not None:
            blocks = replace(blocks, labels=labels, groups=groups)
        if self.n_components > blocks.n_rows:
            raise ValueError(
                f"n_components={self.n_components} exceeds n_samples={blocks.n_rows}: a mixture needs at least "
                "one row per component. Reduce n_components."
            )
        if not self._every_row_labelled(labels, groups):  # otherwise the labels place every row
            check_enough_distinct_rows(*sample, self.n_components)
        if self._warn_reg_covar:
            _warn_if_reg_covar_dominates(family, *sample)
            _warn_if_spread_undefined(family, *sample)
        family = self._with_data_defaults(family, blocks)
        noise, region, noise_rows = None, None, None
        if self._has_noise():
            family = family.beside_noise()
            noise, region, noise_rows = self._noise_start(blocks, labels)
        if warm:
            starts = [(self.weights_, self._params)]
            rngs = [None]
        else:
            # Given starting parameters leave nothing random: one run is enough.
            n_init = 1 if self.params_init is not None else self.n_init
            rngs = spawn_generators(self.random_state, n_init)
            starts = [None] * n_init
        # A deterministic start (an agglomeration, a given partition) is made once; the further
        # starts of n_init are k-means++ seedings.
        labelled = isinstance(self.init_params, str) and self._labelled_start(blocks, noise_rows)
        deterministic = not isinstance(self.init_params, str) or self.init_params == "hierarchical" or labelled
        best = None
        for run, (start, rng) in enumerate(zip(starts, rngs)):
            init = ("labelled" if labelled else None) if run == 0 else ("kmeans++" if deterministic else None)
            weights0, params0 = (start if start is not None else
                                 self._initial(family, blocks, sample, rng, noise_rows, init))
            result = run_em(
                family,
                blocks,
                weights0,
                params0,
                tol=self.tol,
                max_iter=self.max_iter,
                fix_weights=self.fix_weights,
                keep_history=self.keep_history,
                n_threads=self._block_threads(blocks, self.n_threads),
                noise=noise,
                accelerate=self.accelerate,
            )
            if best is None or result.lower_bounds[-1] > best.lower_bounds[-1]:
                best = result
        if not np.isfinite(best.lower_bounds[-1]):
            raise ValueError(
                f"EM reached a log-likelihood of {best.lower_bounds[-1]} on X: the data are outside what "
                f"{family!r} can represent (e.g. extreme counts or values); rescale X or choose another family."
            )
        unconverged = not best.converged and self.tol > 0 and self.max_iter > 0
        # a collapsing component names the cause of an unconverged fit, and is worth a warning of its
        # own where EM stopped at tol (a component on few rows gains likelihood too slowly to move the
        # mean log-likelihood while its variance still sinks)
        collapsing = (family.collapsing_components(best.params)
                      if unconverged or (self._warn_collapsing and self.max_iter > 0) else np.zeros(0, dtype=int))
        why = (f"Component(s) {collapsing.tolist()} are collapsing: a variance has sunk to near the family's "
               "reg_covar, as where the likelihood grows without bound (a component with too few rows for its "
               "covariance, or rows with missing values that leave a direction unobserved), and the fit means "
               "nothing along it. Raise reg_covar, set a prior, or use fewer components.")
        if "reg_covar" not in family.get_params(deep=False):  # a Gamma, LogNormal or Exponential on tied values
            why = (f"Component(s) {collapsing.tolist()} are collapsing onto (nearly) one value: their variance is "
                   "far below the others', as where many rows repeat a value (rounding, a detection limit, zeros) "
                   "and the likelihood grows without bound; the fit means nothing there. Use fewer components, "
                   "another family, or leave out the repeated values.")
        if unconverged:
            advice = "Increase max_iter or tol, or check the initialisation." if not collapsing.size else why
            change = best.lower_bounds[-1] - best.lower_bounds[-2]
            warnings.warn(
                f"EM did not converge in max_iter={self.max_iter} iterations (the mean log-likelihood last "
                f"changed by {change:.3g}, |change| >= tol={self.tol}). {advice}",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
        elif collapsing.size:
            warnings.warn(f"EM stopped at tol={self.tol}, but its fit is degenerate. {why}", CollapsingComponentWarning,
                          stacklevel=user_stacklevel())
        self.weights_ = best.weights
        self.family_ = family
        self.noise_volume_ = None if noise is None else float(np.exp(-noise))
        self._noise_log_density = noise
        self._noise_region = region
        self._params = best.params
        self.params_ = {k: np.array(v, copy=True) for k, v in best.params.as_dict().items()}
        self.converged_ = best.converged
        self.n_iter_ = best.n_iter
        self.lower_bounds_ = np.asarray(best.lower_bounds)
        self.lower_bound_ = float(best.lower_bounds[-1])
        # ICL's term on the training rows, from the last E-step (select_mixture's table reads it)
        self._train_map_log_probability = float(best.map_log_probability)
        if self.keep_history:
            self.history_ = best.history
        elif hasattr(self, "history_"):
            del self.history_
        return self

    def _labelled_start(self, blocks, noise_rows):
        """Whether the first start is the labelled rows' (:class:`~discrim.mixture._init.LabelledRowsStart`):
        some rows unlabelled, one component per label, and every component with labelled rows of
        positive weight (a label without rows leaves its component to a seeding), without noise."""
        labels, groups = blocks.labels, blocks.groups
        if labels is None or noise_rows is not None or np.unique(groups).shape[0] != groups.shape[0]:
            return False
        if is_dask(labels):
            import dask
            import dask.array as da

            w = da.where(labels >= 0, blocks.sample_weight, 0).astype(np.float64)
            counts, unlabelled = dask.compute(da.bincount(da.maximum(labels, 0), weights=w, minlength=len(groups)),
                                              (labels < 0).any())
        else:
            labels = np.asarray(labels)
            w = np.where(labels >= 0, np.asarray(to_numpy(blocks.sample_weight), dtype=np.float64), 0.0)
            counts, unlabelled = np.bincount(np.maximum(labels, 0), weights=w, minlength=len(groups)), (labels < 0).any()
        return bool(unlabelled) and bool(np.all(np.asarray(counts)[groups] > 0))

    @staticmethod
    def _every_row_labelled(labels, groups):
        """Whether known labels (in memory) give every row its one component."""
        return (isinstance(labels, np.ndarray) and bool(np.all(labels >= 0))
                and np.unique(groups).shape[0] == groups.shape[0])

    def _check_warm_start(self, family):
        """Refuse a warm start from a fit whose parameters cannot start this one (another count or shape)."""
        fitted = {name: np.shape(value) for name, value in self._params.as_dict().items()}
        wanted = family.param_shapes(self.n_components, self.n_features_in_)
        if self._params.n_components != self.n_components or fitted != dict(wanted):
            raise ValueError(
                f"warm_start=True continues the last fit ({self._params.n_components} component(s) of "
                f"{self.family_!r}), whose parameters cannot start n_components={self.n_components} of "
                f"{family!r}: set them back, or set warm_start=False to start afresh."
            )

    def fit_predict(self, X: ArrayLike, y: ArrayLike | None = None, sample_weight: ArrayLike | None = None) -> Array:
        """Fit, then return the most responsible component of every row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
            As :meth:`fit` takes it: ignored unless ``unlabeled`` is set, then the known
            components of the labelled rows.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return self.fit(X, y, sample_weight=sample_weight).predict(X)

    # --- scoring --------------------------------------------------------------------------

    def _log_weights(self):
        with np.errstate(divide="ignore"):
            return np.log(self.weights_)

    def _posterior(self, X):
        """(log responsibilities, log mixture density) of validated rows of X."""
        return log_posterior(self._joint_log_likelihood(X), 0.0)  # the weights are in the joint

    @blockwise
    def score_samples(self, X: ArrayLike) -> Array:
        """Log mixture density ``log sum_k pi_k f_k(x)`` of every row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
        """
        log_density = self._posterior(X)[1]
        if np.isnan(log_density).any():
            bad = int(np.flatnonzero(np.isnan(log_density))[0])
            raise ValueError(f"the log-density of row {bad} of X is NaN: check that row for extreme values.")
        return log_density

    def score(self, X: ArrayLike, y: ArrayLike | None = None, sample_weight: ArrayLike | None = None) -> float:
        """Mean (sample-weighted) log mixture density of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        total, size = self._log_likelihood_and_size(X, sample_weight)
        return total / size

    # predict, predict_proba (the responsibilities, the seed's w_ik) and predict_log_proba come
    # from PosteriorMixin: the mixing weights are the priors, the components the labels.
    _rule_label_kind = "component"

    def _rule_labels(self):
        labels = np.arange(self.weights_.shape[0])
        if self._fitted_noise() is not None:
            labels[-1] = -1  # the noise component
        return labels

    def _fitted_noise(self):
        return getattr(self, "_noise_log_density", None)

    def _joint_log_likelihood(self, X, log_prior=None):
        check_is_fitted(self)
        family = self.family_
        blocks = self._rows(X, family, reset=False)
        if self._has_noise():
            _refuse_noise_with_missing_values(blocks)
        log_weights = self._log_weights() if log_prior is None else log_prior
        return joint_log_likelihood(family, blocks, log_weights, self._params,
                                    self._block_threads(blocks, self.n_threads), noise=self._fitted_noise())

    # --- missing values -------------------------------------------------------------------

    def impute(self, X: ArrayLike, *, draw: bool = False, random_state: int | np.random.RandomState | np.random.Generator | None = None) -> Array:
        """Complete the missing values (NaN) of X from the fitted mixture; observed values are kept.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a missing value (missing at random).
        draw : bool, default=False
            False: each missing value becomes its conditional expectation given the row's observed
            values, ``E[x_m | x_o] = sum_k P(k | x_o) E_k[x_m | x_o]`` (for a full or tied
            Gaussian the regression of ``x_m`` on ``x_o``, otherwise the component means); a
            categorical feature, whose codes have no meaningful average, becomes its most
            probable category, the largest of ``sum_k P(k | x_o) probs_k``. An expectation need not
            lie in the support: a Bernoulli flag becomes a probability, a Poisson count a fraction.
            True: a draw from the conditional distribution, a component from ``P(k | x_o)`` and
            then ``x_m`` from that component given ``x_o``; several calls give multiple
            imputations.
        random_state : int, numpy.random.Generator or None, default=None
            Seeds the draws (``draw=True``).

        Returns
        -------
        X_completed : ndarray of shape (n_samples, n_features) of float64
            A dask array, computed lazily chunk by chunk, for a dask X (the draws then come from
            one stream per chunk, spawned from ``random_state``).
        """
        check_is_fitted(self)
        if is_dask(X):
            return map_row_chunks_seeded(type(self).impute, self, X, random_state, draw=draw)
        family = self.family_
        blocks = self._rows(X, family, reset=False)
        X0 = np.array(to_numpy(blocks.X), dtype=np.float64)
        if blocks.mask is None:
            return X0
        jll = joint_log_likelihood(family, blocks, self._log_weights(), self._params, 1, noise=self._fitted_noise())
        check_joint(jll, "component")
        resp = np.exp(log_posterior(jll, 0.0)[0])
        if self._fitted_noise() is not None:  # the noise says nothing of the missing values
            resp = resp[:, :-1] / np.maximum(resp[:, :-1].sum(axis=1, keepdims=True), np.finfo(float).tiny)
        rng = np.random.default_rng(as_seed_sequence(random_state)) if draw else None
        for observed, index in mask_patterns(blocks.mask):
            if observed.all():
                continue
            rows = slice_rows(blocks.rows, index)
            if draw:
                u = rng.random(index.shape[0])[:, None]
                components = np.minimum((np.cumsum(resp[index], axis=1) < u).sum(axis=1), self._params.n_components - 1)
                X0[index] = family.conditional_sample(X0[index], self._params, observed, components, rng, rows)
            else:
                X0[index] = family.conditional_estimate(X0[index], self._params, observed, resp[index], rows)
        return X0

    # --- scikit-learn's GaussianMixture names -----------------------------------------------

    @property
    def means_(self) -> np.ndarray:
        """``params_["mean"]`` of a Gaussian family, (n_components, n_features): GaussianMixture's name."""
        return self._gaussian_parameter("mean", "means_")

    @property
    def covariances_(self) -> np.ndarray:
        """``params_["covariance"]`` of a Gaussian family: GaussianMixture's name and shapes.

        (n_components, n_features, n_features) for "full" and mclust's ellipsoidal models,
        (n_features, n_features) "tied", (n_components, n_features) "diag" and the diagonal
        models, (n_components,) "spherical" and the spherical models.
        """
        return self._gaussian_parameter("covariance", "covariances_")

    def _gaussian_parameter(self, name, attribute):
        from discrim.distributions import Gaussian

        family = getattr(self, "family_", None)
        if family is None:  # unfitted: hasattr is False, as for any fitted attribute
            raise AttributeError(f"{attribute} exists after fit; call fit first.")
        if not isinstance(family, Gaussian):
            raise AttributeError(f"{attribute} is a Gaussian mixture's attribute; this {type(family).__name__} "
                                 f"mixture's parameters are params_: {sorted(self.params_)}.")
        return self.params_[name]

    # --- model size and sampling ----------------------------------------------------------

    def _n_parameters(self):
        n = self.family_.n_parameters(self.n_features_in_, self._params.n_components)
        # noise=True estimates V from the data too: mclust's count (nMclustParams(noise=TRUE), + 2)
        estimated_volume = getattr(self, "_noise_region", None) is not None
        return n + (0 if self.fix_weights else self.weights_.shape[0] - 1) + estimated_volume

    def _log_likelihood_and_size(self, X, sample_weight):
        return weighted_total(self.score_samples(X), sample_weight)

    def bic(self, X: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Bayesian information criterion ``-2 log L + p log n`` on X (lower is better).

        ``L`` is the mixture's likelihood of the rows, whatever their labels: after a
        semi-supervised fit (``unlabeled``) it is not the objective EM maximised, which holds each
        labelled row to its components, nor mclust's ``MclustSSC`` BIC (that objective's); its
        final value is ``lower_bound_`` (the mean over the rows).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights: ``log L = sum_i w_i log f(x_i)`` and ``n = sum_i w_i``.

        Returns
        -------
        bic : float
        """
        log_lik, n = self._log_likelihood_and_size(X, sample_weight)
        return float(-2.0 * log_lik + self._n_parameters() * np.log(n))

    def aic(self, X: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Akaike information criterion ``-2 log L + 2 p`` on X (lower is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights: ``log L = sum_i w_i log f(x_i)``.

        Returns
        -------
        aic : float
        """
        log_lik, _ = self._log_likelihood_and_size(X, sample_weight)
        return -2.0 * log_lik + 2.0 * self._n_parameters()

    def icl(self, X: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Integrated completed likelihood criterion ``BIC + 2 E`` on X (lower is better).

        ``E = -sum_i w_i log r_i,map(i)``, minus the log-probability of each row's MAP
        assignment: ICL (Biernacki, Celeux and Govaert 2000) scores the likelihood of the data
        completed by their MAP classification, and so prefers well-separated clusters. This is
        mclust's ``icl``; mclust reports ``-ICL`` (higher is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        icl : float
        """
        log_map, _ = weighted_total(map_log_probability(self.predict_proba(X)), sample_weight)
        return float(self.bic(X, sample_weight) - 2.0 * log_map)

    def summary(self, X: ArrayLike, sample_weight: ArrayLike | None = None) -> MixtureSummary:
        """The fitted model's summary on X, as mclust's ``summary(Mclust)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        summary : MixtureSummary
            Log-likelihood, n, df, BIC, ICL, the model's name and a component table; printed as
            text (``str``), or ``to_markdown()``/``to_frame()``. See
            :func:`~discrim.mixture.summarize_mixture`.
        """
        from discrim.mixture._summary import summarize_mixture

        return summarize_mixture(self, X, sample_weight)

    def sample(self, n_samples: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Draw rows from the fitted mixture.

        Parameters
        ----------
        n_samples : int, default=1

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        labels : ndarray of shape (n_samples,)
            The component of every row (rows are grouped by component; -1, last, for the noise,
            drawn uniformly from the region behind ``noise=True``).
        """
        check_is_fitted(self)
        if not isinstance(n_samples, Integral) or isinstance(n_samples, bool) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive int; got {n_samples!r}.")
        needed = int(n_samples) * self.n_features_in_ * 8
        if needed > _MAX_SAMPLE_BYTES:
            raise ValueError(
                f"n_samples={n_samples} would need {needed / 2**30:,.0f} GiB for the rows (limit "
                f"{_MAX_SAMPLE_BYTES / 2**30:.0f} GiB): draw in batches of fewer rows."
            )
        rng = np.random.default_rng(as_seed_sequence(self.random_state))
        counts = rng.multinomial(n_samples, self.weights_)
        X = self.family_.sample(self._params, counts[: self._params.n_components], rng)
        if self._fitted_noise() is not None:
            region = getattr(self, "_noise_region", None)
            if region is None and counts[-1] > 0:
                raise ValueError("sample cannot draw the noise of a mixture fitted with noise=<a volume> (no region "
                                 "is known): fit with noise=True.")
            X = np.concatenate([X, region.sample(int(counts[-1]), rng)]) if counts[-1] else X
        return X, np.repeat(self._rule_labels(), counts)


# reg_covar above this share of a feature's variance warns (_warn_if_reg_covar_dominates)
_REG_COVAR_SHARE = 0.1
# a variance below this share of the squared mean is rounding error: the feature is constant
_CONSTANT_SHARE = 1e-20


@dataclass(frozen=True)
class RegCovarFindings:
    """The features along which a Gaussian family's ``reg_covar`` is not small beside the variance.

    Attributes
    ----------
    reg_covar : float
    constant : ndarray of shape (n_features,) of bool
        Constant over their observed values: their variance is ``reg_covar`` alone.
    small : ndarray of shape (n_features,) of bool
        Not constant, with a variance below ten times ``reg_covar``.
    variance : ndarray of shape (n_features,)
        Each feature's weighted variance.
    """

    reg_covar: float
    constant: np.ndarray
    small: np.ndarray
    variance: np.ndarray


# Where _warn_if_reg_covar_dominates puts its findings instead of warning in X's words: a list, set
# by a caller that fits mixtures to parts of its data (see reg_covar_findings_collected)
_COLLECTED_FINDINGS = contextvars.ContextVar("discrim_reg_covar_findings", default=None)


@contextlib.contextmanager
def reg_covar_findings_collected():
    """Within it, the mixtures fitted (in this thread) report their :class:`RegCovarFindings` in the
    list it yields instead of warning about "X": for a caller that fits them to parts of its data
    (a class's rows) and words the warning for those parts, once for all."""
    found = []
    token = _COLLECTED_FINDINGS.set(found)
    try:
        yield found
    finally:
        _COLLECTED_FINDINGS.reset(token)


def _warn_if_pairs_never_observed(family, mask, sample_weight):
    """Warn where a Gaussian family's covariances have entries that no row informs.

    A covariance between two features that no row observes together does not enter the
    likelihood of the observed data: EM keeps it at its start (from the rows completed by the
    columns' means: 0 for one component), and the density of a new row that observes both, or a conditional expectation of
    one given the other, is invented (two features of correlation 0.9, each row observing one: the
    fitted correlation 0, silently). Only models with off-diagonal covariances are concerned.

    Parameters
    ----------
    family : ComponentFamily
    mask : ndarray of shape (n_samples, n_features) of bool
        True where observed.
    sample_weight : ndarray of shape (n_samples,)
    """
    from discrim.distributions import Gaussian

    name = family.model_name if isinstance(family, Gaussian) else ""
    if len(name) != 3 or name[2] == "I":  # one feature, or diagonal covariances
        return
    pairs = pairs_never_observed(mask, sample_weight)
    if pairs.shape[0]:
        shown = ", ".join(f"({j}, {k})" for j, k in pairs[:5].tolist()) + (" ..." if pairs.shape[0] > 5 else "")
        warnings.warn(
            f"{pairs.shape[0]} pair(s) of features of X (index {shown}) are never observed together in a row of "
            "positive weight: the data say nothing about their covariance, which EM leaves at its starting value (of "
            "the rows completed by the columns' means), so densities and conditional expectations that involve both "
            "are not estimated from the data. Give rows "
            "that observe both, or fit a model with diagonal covariances (covariance_type='diag').",
            UserWarning, stacklevel=user_stacklevel())


def _constant_features(X, sample_weight):
    """The features constant over their observed values, and every feature's weighted variance.

    A constant feature (its missing values filled alike) has a variance of rounding errors beside
    its mean: it is not in small units, and rescaling would not help.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    sample_weight : ndarray of shape (n_samples,)

    Returns
    -------
    constant : ndarray of shape (n_features,) of bool
    var : ndarray of shape (n_features,)
    """
    var, mean = weighted_feature_variance(X, sample_weight, return_mean=True)
    return var <= _CONSTANT_SHARE * np.asarray(mean, dtype=np.float64) ** 2, var


def _warn_if_spread_undefined(family, X, sample_weight):
    """Warn where a continuous family other than the Gaussian meets features it cannot estimate a spread of.

    A Gamma's, LogNormal's or Student-t's spread is estimated from each feature's variation: a
    feature constant over its observed values (one row, or tied rows) drives it to the family's
    bound (a Gamma shape of 5e12, a LogNormal sigma of 0) and the likelihood without bound, silently.
    The Gaussian's case is :func:`_warn_if_reg_covar_dominates`'s but for a single row; families
    that need a single row per component (Exponential, the discrete ones) and composite ones are
    left out.

    Parameters
    ----------
    family : ComponentFamily
    X : ndarray of shape (n_samples, n_features)
        The rows the initialisation sees (missing values filled).
    sample_weight : ndarray of shape (n_samples,)
    """
    from discrim.distributions import Fixed, Gaussian, Product

    if isinstance(family, (Product, Fixed)) or family.is_discrete or family.rows_per_component(1) < 2:
        return
    if X.shape[0] < 2:  # one row: every feature (the Gaussian's too, whose reg_covar check needs two)
        constant = np.ones(X.shape[1], dtype=bool)
    elif isinstance(family, Gaussian):
        return
    else:
        constant = _constant_features(X, sample_weight)[0]
    count, shown = listed_indices(constant)
    if count:
        warnings.warn(
            f"{count} feature(s) of X (index {shown}) are constant over their observed values: {family!r} cannot "
            "estimate their spread, which goes to its bound (a degenerate fit with an unbounded likelihood). "
            "Leave them out of X, or fit more rows.",
            DataScaleWarning, stacklevel=user_stacklevel())


def _warn_if_reg_covar_dominates(family, X, sample_weight):
    """Warn where a Gaussian family's ``reg_covar`` is not small beside the variance of some feature.

    ``reg_covar`` is an absolute variance added to every covariance: on data in small units (a
    variance of 1e-10) it swamps the covariances, the components spread over each other and the fit
    is silently wrong (adjusted Rand index 0 on four well-separated blobs scaled by 1e-5). Within
    :func:`reg_covar_findings_collected`, the findings go to its list instead.

    Parameters
    ----------
    family : ComponentFamily
    X : ndarray of shape (n_samples, n_features)
        The rows the initialisation sees (missing values filled).
    sample_weight : ndarray of shape (n_samples,)
    """
    from discrim.distributions import Gaussian

    reg = float(family.reg_covar) if isinstance(family, Gaussian) else 0.0
    if reg <= 0 or X.shape[0] < 2:
        return
    constant, var = _constant_features(X, sample_weight)
    findings = RegCovarFindings(reg, constant & (reg > _REG_COVAR_SHARE * var),
                                (var > 0) & ~constant & (reg > _REG_COVAR_SHARE * var), var)
    collected = _COLLECTED_FINDINGS.get()
    if collected is not None:
        collected.append(findings)
        return
    count, shown = listed_indices(findings.constant)
    if count:
        warnings.warn(
            f"{count} feature(s) of X (index {shown}) are constant over their observed values: they say nothing "
            f"about the components, and their variance is reg_covar={reg:g} alone. Leave them out of X.",
            DataScaleWarning, stacklevel=user_stacklevel())
    small = findings.small
    count, shown = listed_indices(small)
    if count:
        warnings.warn(
            f"reg_covar={reg:g} exceeds a tenth of the variance of {count} feature(s) of X (index {shown}; "
            f"smallest variance {var[small].min():.3g}): added to every covariance, it dominates the fit along "
            "them. Rescale X (e.g. StandardScaler) or lower reg_covar, an absolute variance.",
            DataScaleWarning, stacklevel=user_stacklevel())

