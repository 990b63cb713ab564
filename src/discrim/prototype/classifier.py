"""PrototypeClassifier: the prototype set ("proset") classifier, fitted batch by batch."""

from __future__ import annotations

import logging
import warnings
from functools import partial
from collections.abc import Iterator, Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Literal, Self, overload

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from discrim._posterior import PosteriorMixin, rule_from_joint
from discrim._typing import Array, ArrayLike, BatchCounts, Device, PathLike, RandomStateLike
from discrim.backend import array_namespace, ops, to_numpy
from discrim.backend._device import check_device, compute_device, is_tensor, rows_on_device
from discrim.exceptions import DataScaleWarning
from discrim.optim import NonNegElasticNet, PenalizedObjective
from discrim.prototype._candidates import (
    assign_bins,
    candidates_per_bin,
    check_complete_candidates,
    check_min_cases,
    draw_candidates,
    stratified_subsample,
)
from discrim.prototype._explain import warn_if_unfamiliar
from discrim.prototype._likelihood import CHUNK_ELEMENTS, DEVICE_CHUNK_ELEMENTS, PrototypeLikelihood, chunk_rows
from discrim.prototype._prototype_set import PrototypeBatch, check_finite_scores, check_n_batches, merge_equivalent
from discrim.prototype._solver import (
    SCREEN_DTYPE,
    START_FEATURE_WEIGHT,
    START_PROTOTYPE_WEIGHT,
    TRIVIAL_CHECK_ITER,
    screen_rows,
    solve_batch,
)
from discrim.utils._dask import (
    align_rows,
    blockwise,
    gather_sample,
    is_dask,
    labelled_statistics,
    lazy_accuracy,
    lazy_weighted_means,
    validated_rows,
    weight_totals,
)
from discrim.utils import _fitted_state as state
from discrim.utils._param_validation import Interval, StrOptions, fit_context
from discrim.utils._random import as_seed_sequence, side_stream
from discrim.utils._threads import row_threads, single_threaded_blas
from discrim.utils._warnings import user_stacklevel
from discrim.utils.validation import (
    check_feature_magnitude,
    check_labels,
    check_no_missing_labels,
    check_no_unlabelled_marker,
    check_observed_columns,
    check_observed_weight,
    check_numeric_table,
    check_sample_weight,
    check_true_labels,
    label_index,
    plain_label,
    validated_training_data,
)

if TYPE_CHECKING:
    import pandas as pd

    from discrim.prototype._explain import Explanation

logger = logging.getLogger(__name__)

# Largest n_batches (PrototypeClassifier) and max_batches (PrototypeClassifierCV): every batch is
# at least one L-BFGS-B solve, and a random stream per batch is spawned up front.
MAX_BATCHES = 10_000


def centre_of(X, sample_weight):
    """The fixed centre subtracted from rows and prototypes before the kernel's GEMM.

    The GEMM expands ``|v (x - s)|^2 = |v x|^2 + |v s|^2 - 2 (v x)'(v s)``, which loses the digits
    of the rows' spread that an offset takes (every digit at an offset of 1e8 on unit-scale data);
    the kernel itself only depends on ``x - s``. Per feature, the centre is the median of the
    rows with positive weight rounded to a multiple of ``q = 2^floor(log2(range))`` (the median
    where the range is 0): centred rows are within about one and a half ranges of zero, and on
    data that is centred already (``|median| < q / 2``) the centre is exactly 0, so that the
    arithmetic is that of the uncentred model, bit for bit.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite or NaN (missing: the statistics are those of each feature's observed rows).
    sample_weight : ndarray of shape (n_samples,)
        Non-negative, some positive.

    Returns
    -------
    center : ndarray of shape (n_features,) of float64
    """
    rows = np.asarray(X, dtype=np.float64)[sample_weight > 0]
    if np.isnan(rows).any():
        median = np.nanmedian(rows, axis=0)
        spread = np.nanmax(rows, axis=0) - np.nanmin(rows, axis=0)
        q = np.exp2(np.floor(np.log2(np.where(spread > 0, spread, 1.0))))
        return np.where(spread > 0, np.round(median / q) * q, median)
    n = rows.shape[0]
    # the median as np.median computes it (the mean of the middle two for even n), without its
    # overhead (the search computes a centre per fit)
    middle = np.partition(rows, [(n - 1) // 2, n // 2], axis=0)
    median = (middle[(n - 1) // 2] + middle[n // 2]) / 2.0
    spread = rows.max(axis=0) - rows.min(axis=0)
    q = np.exp2(np.floor(np.log2(np.where(spread > 0, spread, 1.0))))
    return np.where(spread > 0, np.round(median / q) * q, median)


# check_no_unlabelled_marker's remedy: -1 beside 0 must not become a class silently
_LABELLED_ONLY = "PrototypeClassifier learns from labelled rows only, so leave those rows out"


class PrototypeClassifier(PosteriorMixin, ClassifierMixin, BaseEstimator):
    """Prototype set classifier: a sparse kernel model of P(y | x) built from batches of prototypes.

    The model is

    ``p_k(x) = q_k(x) / sum_l q_l(x)``,
    ``q_k(x) = p_0k + sum_b sum_{j: y_bj = k} w_bj K_{v_b}(x - s_bj)``,
    ``K_v(z) = exp(-1/2 sum_d (v_d z_d)^2)``,

    with ``p_0k`` the (sample-weighted) class frequencies. Batches are added greedily: for each,
    candidates are drawn from the training rows by the bins algorithm, the remaining rows are
    used for scoring, and the feature weights ``v_b >= 0`` and prototype weights ``w_b >= 0``
    minimise a class-reweighted negative log-likelihood with elastic-net penalties (L-BFGS-B
    with the analytic gradient); earlier batches stay frozen.

    Parameters
    ----------
    n_batches : int in [0, 10000], default=1
        Number of batches ``B``. ``0`` gives the marginal model.
    n_candidates : int, default=1000
        Candidates per batch, ``M``.
    max_fraction : float in (0, 1), default=0.5
        Largest share of a bin drawn as candidates, ``eta``.
    alpha_feature : float, default=1e-3
        Penalty strength on the feature weights, ``lambda_v``.
    l1_ratio_feature : float in [0, 1], default=0.05
        L1 share of the feature penalty, ``1 - alpha_v``.
    alpha_prototype : float, default=1e-8
        Penalty strength on the prototype weights, ``lambda_w``.
    l1_ratio_prototype : float in [0, 1], default=0.05
        L1 share of the prototype penalty, ``1 - alpha_w``.
    tol : float, default=1e-5
        L-BFGS-B stops when the largest entry of the projected gradient of the batch objective
        is at most ``tol`` (scipy's ``gtol``), or by the relative-decrease test of ``ftol``. The
        solver works on the scaled variables ``(v sqrt(J), w)`` (J candidates), so the gradient in
        the test is ``(dl/dv / sqrt(J), dl/dw)``: see Notes.
    ftol : float or None, default=None
        L-BFGS-B also stops when one iteration lowers the batch objective by a relative amount of
        at most ``ftol`` (scipy's ``ftol``, the original proset's ``solver_factr`` times machine
        epsilon). None keeps scipy's default, about 2.2e-9 (``factr = 1e7``, proset's default);
        the original proset's search uses ``factr = 1e10``, i.e. ``ftol`` about 2.2e-6.
    max_iter : int, default=15000
        L-BFGS-B iteration limit per batch; reaching it warns with a ConvergenceWarning.
    empty_check_iter : int, default=1000
        A batch whose penalised objective is not below that of the empty batch (the frozen
        model's loss) after this many iterations of the solver's second stage is left empty.
        Batches that end empty (typical after the first few on low-dimensional data, e.g. the
        checkerboard's second and later batches) are mostly ended earlier by the emptiness test
        of the solver (see Notes); those it does not decide run this many iterations; a smaller
        value ends them sooner but can also empty a batch that would have got below the empty
        batch later: at small penalties on xor-4f to xor-6f some batches fill only after 250-560
        iterations, which the earlier default 200 left empty (xor-6f at ``alpha_feature=3.16e-4``
        on the proset report's split, 6 batches: test log-loss 0.503 with 1000, 0.522 with 200;
        benchmarks/results/prototype_empty_check.md). The cost is the only thing this changes
        where a batch would end empty anyway.
    max_samples : int, float or None, default=None
        Bound on the rows used per batch: a class-stratified subsample of this many rows (an
        int) or of this share of the rows (a float in (0, 1]) is drawn for every batch and split
        into candidates and scoring rows. None uses all rows. The objective's memory is bounded
        by chunks in any case; this bounds its time.
    warm_start : bool, default=False
        If True and the model is fitted, ``fit`` keeps the existing batches and adds batches
        until there are ``n_batches`` (scikit-learn's convention for ``n_estimators``). Batch
        ``b`` always uses random stream ``b`` of ``random_state``, so with an int seed growing a
        model in steps gives the same model as fitting it at once.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the kernel computations. float32 halves memory traffic; the optimiser
        always works in float64.
    backend : {"numpy", "torch"}, default="numpy"
        Array namespace for the batch objective: "torch" without a ``device`` is torch on the
        CPU (``device="cpu"``).
    device : str, torch.device or None, default=None
        Where the batch objective and the kernel scores run: None with ``backend`` on the host
        (or, for a torch tensor X, with torch on X's device); "cpu", "cuda", "cuda:1" or a
        ``torch.device`` with torch there (needs PyTorch). X goes to the device once per fit;
        the optimiser (L-BFGS-B), the candidate draws and the fitted batches stay on the host.
        Prediction methods return in the namespace and on the device of their input.
    random_state : int, RandomState, Generator or None, default=None
        Seeds one independent stream per batch (candidate draws and subsamples).
    verbose : int, default=0
        With ``verbose > 0`` the candidate breakdown by bin and the solver's message are logged at
        INFO as well; a one-line summary per batch is always logged at INFO on the logger
        ``discrim.prototype.classifier``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only with pandas input whose columns are all strings.
    marginals_ : ndarray of shape (n_classes,)
        ``p_0k``, sample-weighted class frequencies.
    batches_ : list of PrototypeBatch
        One per fitted batch (a batch can hold zero prototypes if the penalty removed all).
    n_iter_ : list of int
        Solver iterations per batch: L-BFGS-B's of both stages, plus the projected method's
        where the emptiness test ended the batch (see Notes).
    objective_values_ : list of float
        Penalised objective at the solution, per batch.
    center_ : ndarray of shape (n_features_in_,)
        Subtracted from rows and prototypes before every kernel evaluation (see Notes); the
        prototypes themselves (``batches_``, :meth:`export`, :meth:`explain`) stay in the units of
        the X passed to fit.

    Notes
    -----
    Parameter names and the symbols of the proset technical report (Nikolaus Ruf's ``proset``
    package):

    ====================== ====================================================
    parameter              report
    ====================== ====================================================
    ``n_batches``          ``B``
    ``n_candidates``       ``M``
    ``max_fraction``       ``eta``
    ``alpha_feature``      ``lambda_v``
    ``l1_ratio_feature``   ``1 - alpha_v`` (the report's ``alpha_v`` is the L2 share)
    ``alpha_prototype``    ``lambda_w``
    ``l1_ratio_prototype`` ``1 - alpha_w``
    ====================== ====================================================

    Penalty per batch: ``alpha * (l1_ratio * sum t + (1 - l1_ratio) / 2 * sum t^2)`` on ``v`` and
    on ``w``, equal to the report's with ``alpha_report = 1 - l1_ratio``.

    With sample weights the report's ``1 / N`` is ``1 / W`` (total weight of the rows used for the
    batch), ``N_k`` the weighted class total and ``J_ck`` the weight of the candidates of class
    ``k``: each reference row carries ``c_n = weight_n / W * N_k / (N_k - J_ck)``. Rows with zero
    weight take no part in fitting (neither as candidates nor for scoring); within a bin,
    candidates are drawn uniformly without replacement. The minimum-cases
    condition (the report's lemma, compact form ``ceil(N_k / 2) eta >= 0.5`` and
    ``ceil(N_k / 2) (1 - eta) > 0.5``) is checked on the number of rows per class.

    Corrections to the report: the indicator in ``p_0k`` is ``1_k(y_n)``; the kernel is
    ``exp(-1/2 sum_d (v_d z_d)^2)``; the penalty gradient uses ``lambda_v`` and ``lambda_w`` (the
    stray ``beta`` is a misprint); in step [4] of the bins algorithm ``R`` is reduced by
    ``eta g_i`` before ``i`` advances. Bin counts are rounded half up, the rounding the lemma
    assumes.

    Solver: L-BFGS-B (scipy) with the analytic gradient, started at ``v = 10 / D``, ``w = 1``
    like the report, in two stages: at most 20 iterations on ``v`` alone (``w`` fixed, ``v`` kept
    at or above half its start), then all parameters, iterating on ``u = (v sqrt(J), w)``. A
    batch whose objective is not below that of the empty batch (``v = 0``, ``w = 0``, the
    frozen model's loss) after ``empty_check_iter`` (1000) iterations, or when the solver stops, is left empty. So is one
    that is not below it at the fifth iteration of the second stage if a projected quasi-Newton method
    (:func:`discrim.optim.minimize_projected`, which can move many weights onto the bound 0 per step) started there
    converges without getting below it; if that method gets below it instead, the test is dropped and L-BFGS-B goes on
    unchanged (:func:`discrim.prototype._solver.solve_batch`). With at least 2,048 scoring rows that
    test (stage 1 and the first five stage-2 iterations included) runs first on an eighth of them (at least
    512, at most 8,192) in float32, and
    its empty verdict ends the batch where one evaluation on all rows confirms a stationary point not below the
    empty batch; a batch it does not end is solved on all rows as without it. Stage and
    scaling change the path and the stopping test, not the problem; against the unscaled
    single-stage solve (the original proset's, with the same ``tol``) they cut iterations 3-25x
    on the benchmark cases, with test log-loss within about 0.01 (often lower). ``n_iter_`` counts both stages. A batch
    warm-started by :class:`discrim.model_selection.PrototypeClassifierCV` skips stage 1.

    Offsets and scales: the kernel depends on ``x - s`` only, but its GEMM expands the square
    (``|v x|^2 + |v s|^2 - 2 (v x)'(v s)``), which at an offset of 1e8 on unit-scale data keeps
    none of the spread's digits. Every evaluation (the fit's objective with either backend,
    ``predict_proba``, :meth:`familiarity`) therefore subtracts a fixed centre ``center_``, a
    round number near the training median (0 on data that is centred already, see
    :func:`centre_of`), from the rows and the prototypes first: translating X translates the
    prototypes and leaves the feature weights, the prototype weights and the probabilities
    unchanged, bit for bit where the shifted data are exact (tested over offsets up to 1e9). Where
    they are not, shifting rounds the rows themselves by about ``eps * |offset|``: a fitted
    model's predictions move by about ``eps * |offset| * v^2 * spread``, and a fit sees that
    perturbation of its data (which its stopping tolerance can amplify, as for any perturbation
    of the data). Features beyond
    :func:`discrim.utils.validation.max_feature_magnitude` (1e102 for float64, 1e12 for float32)
    are refused. Scaling is different: feature ``d`` multiplied by ``a_d`` with ``v_d`` divided by
    ``a_d`` gives the same kernel, so the unpenalised objective is invariant under that change
    of variables, but the penalty on ``v``, the start ``v = 10 / D`` (and the lower bound of the
    solver's first stage, derived from it) and the merge tolerance are not, so the fitted model
    is not scale-invariant, even with ``alpha_feature=0``. Standardise the features (the CLI does).

    Clean-up: prototypes of a batch whose active features and target agree within
    :data:`discrim.prototype._prototype_set.MERGE_TOL` (max norm) are merged through connected
    components, with the combined weight and the features of the first sample in training order.

    Examples
    --------
    >>> from discrim.datasets import load_benchmark
    >>> from discrim.prototype import PrototypeClassifier
    >>> X_train, X_test, y_train, y_test = load_benchmark("iris-2f")  # doctest: +SKIP
    >>> clf = PrototypeClassifier(random_state=0).fit(X_train, y_train)  # doctest: +SKIP
    >>> clf.predict_proba(X_test).shape  # doctest: +SKIP
    (45, 3)
    """

    _parameter_constraints = {
        "n_batches": [Interval(Integral, 0, MAX_BATCHES, closed="both")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "max_fraction": [Interval(Real, 0, 1, closed="neither")],
        "alpha_feature": [Interval(Real, 0, None, closed="left")],
        "l1_ratio_feature": [Interval(Real, 0, 1, closed="both")],
        "alpha_prototype": [Interval(Real, 0, None, closed="left")],
        "l1_ratio_prototype": [Interval(Real, 0, 1, closed="both")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "ftol": [Interval(Real, 0, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "empty_check_iter": [Interval(Integral, 1, None, closed="left")],
        "max_samples": [
            None,
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="right"),
        ],
        "warm_start": ["boolean"],
        "dtype": [StrOptions({"float64", "float32"})],
        "backend": [StrOptions({"numpy", "torch"})],
        "device": "no_validation",  # check_device names what is wrong, in fit and predict
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_batches: int = 1,
        *,
        n_candidates: int = 1000,
        max_fraction: float = 0.5,
        alpha_feature: float = 1e-3,
        l1_ratio_feature: float = 0.05,
        alpha_prototype: float = 1e-8,
        l1_ratio_prototype: float = 0.05,
        tol: float = 1e-5,
        ftol: float | None = None,
        max_iter: int = 15000,
        empty_check_iter: int = TRIVIAL_CHECK_ITER,
        max_samples: int | float | None = None,
        warm_start: bool = False,
        dtype: Literal["float64", "float32"] = "float64",
        backend: Literal["numpy", "torch"] = "numpy",
        device: Device = None,
        random_state: RandomStateLike = None,
        verbose: int = 0,
    ) -> None:
        self.n_batches = n_batches
        self.n_candidates = n_candidates
        self.max_fraction = max_fraction
        self.alpha_feature = alpha_feature
        self.l1_ratio_feature = l1_ratio_feature
        self.alpha_prototype = alpha_prototype
        self.l1_ratio_prototype = l1_ratio_prototype
        self.tol = tol
        self.ftol = ftol
        self.max_iter = max_iter
        self.empty_check_iter = empty_check_iter
        self.max_samples = max_samples
        self.warm_start = warm_start
        self.dtype = dtype
        self.backend = backend
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fitting

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is a missing value: the factor 1 in every kernel
        return tags

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the batches of prototypes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, ideally scaled to unit spread (the start value ``v = 10 / D``, the penalty
            and the merge tolerance assume unit scale); an offset does not matter (see Notes).
            Values beyond :func:`discrim.utils.validation.max_feature_magnitude` are refused.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : PrototypeClassifier
        """
        warm = self.warm_start and hasattr(self, "batches_")
        if is_dask(X):
            self._fit_dask(X, y, sample_weight, warm)
        else:
            X, classes, y_idx, w = self._validate_training_data(X, y, sample_weight, reset=not warm)
            self._fit_validated(X, classes, y_idx, w, warm=warm)
        self._warn_if_all_empty()
        return self

    def _warn_if_all_empty(self):
        """Say so when every batch ended empty: the model is then the class frequencies alone.

        Not raised by the cross-validated search, whose fits go through ``_fit_validated``: an
        empty model is one of the candidates it compares there.
        """
        if self.batches_ and not any(batch.n_prototypes for batch in self.batches_):
            warnings.warn(
                f"PrototypeClassifier: all {len(self.batches_)} batch(es) ended without prototypes, so the "
                "model predicts the class frequencies alone. The kernel's start bandwidth and the penalties "
                "assume features on unit scale: put a StandardScaler before the model (or use "
                "PrototypeClassifierCV(transformer=StandardScaler())), or lower alpha_feature and "
                "alpha_prototype.", DataScaleWarning, stacklevel=user_stacklevel())

    def _fit_dask(self, X, y, sample_weight, warm):
        """Fit from a dask X: the rows stay on the workers (see :mod:`discrim.prototype._distributed`).

        The same batches as the in-memory fit of the same rows: the same draws, and objectives that
        differ only by the order of their sums. ``center_`` is computed from all rows when they
        number at most 2^17, else from a uniform sample of that many (it only moves the origin of
        the kernel's arithmetic).
        """
        from discrim.mixture.finite_mixture import _INIT_SAMPLE_ROWS
        from discrim.prototype._distributed import DaskTrainingRows

        dtype = np.dtype(self.dtype)
        X, checked = validated_rows(self, X, dtype=dtype, sample_weight=sample_weight, reset=not warm, min_samples=2,
                                    allow_nan=True)
        w = checked.sample_weight
        if checked.n_missing:
            check_observed_weight(checked.observed_weight)
        y = align_rows(y, X, name="y")
        classes, stats, counts = labelled_statistics(X, y, w, weight_totals)
        check_no_missing_labels(classes, self)
        check_no_unlabelled_marker(classes, fix=_LABELLED_ONLY)  # y's distinct values, as in memory
        check_labels(classes)
        y_idx = y.map_blocks(lambda block: np.searchsorted(classes, np.asarray(block)).astype(np.int64),
                             dtype=np.int64)
        self._start_from(classes, stats.weight, counts,
                         lambda: centre_of(*gather_sample(X, w, _INIT_SAMPLE_ROWS, side_stream(self.random_state))),
                         warm)
        rows = DaskTrainingRows(X, y_idx, w, classes.shape[0])
        if checked.n_missing:
            check_complete_candidates(rows.complete_counts(), classes)
        rows.set_scores(self)
        streams = as_seed_sequence(self.random_state).spawn(self.n_batches)
        with single_threaded_blas():
            for b in range(len(self.batches_), self.n_batches):
                self._record_batch(b, *self._fit_one_dask_batch(rows, np.random.default_rng(streams[b]), b),
                                   logging.INFO)
                rows.add_batch(self, self.batches_[-1])
        return self

    def _fit_one_dask_batch(self, rows, rng, b):
        """Batch ``b`` of a fit over :class:`~discrim.prototype._distributed.DaskTrainingRows`."""
        n_classes = self.classes_.shape[0]
        ranks, n_drawn = rows.draw(self, rng, b)
        if n_drawn == 0:
            logger.warning("batch %d: no candidates were drawn (n_candidates=%d); the batch is empty.",
                           b + 1, self.n_candidates)
            return self._empty_batch(rows.X.shape[1]), 0, float("nan")
        X_cand, y_cand, cand, class_total, ref_total = rows.candidates(ranks)
        factor = np.divide(class_total, ref_total, out=np.zeros(n_classes), where=ref_total > 0)
        center = self._center()
        S = np.ascontiguousarray(X_cand if center is None else X_cand - center, dtype=np.dtype(self.dtype))
        datafit = rows.likelihood(self, ranks, class_total.sum(), factor, S, y_cand)
        return self._solve_batch(datafit, X_cand, y_cand, cand, b, None)

    def _validate_training_data(self, X, y, sample_weight, reset=True):
        """Checked X (in the fitted dtype), sorted classes, class indices and weights."""
        X = check_numeric_table(X)  # a text or categorical column named, not numpy's float conversion error
        # on the host: the draws and the centre are computed there; X moves to the device in _fit_batches
        X, y = validated_training_data(self, X, y, dtype=np.dtype(self.dtype), reset=reset, on_host=True,
                                       allow_nan=True)
        # it learns from labelled rows only: -1 beside 0 must not become a class silently
        check_no_unlabelled_marker(y, fix=_LABELLED_ONLY)
        classes, y_idx = check_labels(y)
        w = check_sample_weight(sample_weight, X.shape[0])
        missing = np.isnan(X)
        if missing.any():
            check_observed_columns(~missing, w)
            complete = ~missing.any(axis=1) & (w > 0)
            check_complete_candidates(np.bincount(y_idx[complete], minlength=classes.shape[0]), classes)
        return X, classes, y_idx, w

    def _fit_validated(self, X, classes, y_idx, sample_weight, warm=False, initial_solution=None,
                       log_level=logging.INFO):
        """The fit of validated data: the marginal model, then batches until there are ``n_batches``.

        The one fitting entry of :meth:`fit` and of the cross-validated search (which validates
        its data once for all its fits and warm-starts them through ``initial_solution``; see
        :meth:`_fit_batches`). Batch ``b`` always draws from stream ``b`` of ``random_state``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Finite, within :func:`discrim.utils.validation.max_feature_magnitude`.
        classes : ndarray of shape (n_classes,)
            Sorted labels.
        y_idx : ndarray of shape (n_samples,) of int
        sample_weight : ndarray of shape (n_samples,)
            Validated weights.
        warm : bool, default=False
            Continue the fitted batches (``warm_start``).
        initial_solution : callable or None, default=None
        log_level : int, default=logging.INFO

        Returns
        -------
        self : PrototypeClassifier
        """
        self._start(X, classes, y_idx, sample_weight, warm)
        start = len(self.batches_)
        streams = as_seed_sequence(self.random_state).spawn(self.n_batches)
        rngs = [np.random.default_rng(s) for s in streams[start:]]
        X = np.ascontiguousarray(X, dtype=np.dtype(self.dtype))
        self._fit_batches(X, y_idx, sample_weight, rngs, initial_solution=initial_solution, log_level=log_level)
        return self

    def _start(self, X, classes, y_idx, sample_weight, warm=False):
        """Check the classes' weights and counts, and set the marginal model and the centre
        (a fit's first step).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Validated features (finite, within :func:`discrim.utils.validation.max_feature_magnitude`).
        classes : ndarray of shape (n_classes,)
            Sorted labels.
        y_idx : ndarray of shape (n_samples,) of int
            Index of each row's label in ``classes``.
        sample_weight : ndarray of shape (n_samples,)
            Validated weights.
        warm : bool, default=False
            Continue the fitted batches (``warm_start``) instead of starting afresh.
        """
        w = sample_weight
        totals = np.bincount(y_idx, weights=w, minlength=classes.shape[0])
        counts = np.bincount(y_idx[w > 0], minlength=classes.shape[0])
        self._start_from(classes, totals, counts, lambda: centre_of(X, w), warm)

    def _start_from(self, classes, totals, counts, center, warm=False):
        """:meth:`_start` from the classes' total weights and row counts (any data path).

        ``counts`` are the rows of positive weight per class; ``center()`` computes ``center_``.
        """
        if np.any(totals <= 0):
            label = plain_label(classes[np.argmax(totals <= 0)])
            raise ValueError(
                f"class {label!r} has zero total sample_weight: give it "
                "positive weight or remove its rows."
            )
        marginals = totals / totals.sum()
        if np.any(marginals <= 0):
            k = int(np.argmax(marginals <= 0))
            label = plain_label(classes[k])
            raise ValueError(
                f"class {label!r} has a share of the total sample_weight that underflows to 0 "
                f"({totals[k]:.3g} against a total of {totals.sum():.3g}): weights whose ratios "
                "span more than the float64 range cannot be fitted; bound their ratio, e.g. by "
                "clipping to a narrower range."
            )
        check_min_cases(counts, self.max_fraction, classes)
        if warm:
            if not np.array_equal(classes, self.classes_):
                raise ValueError(
                    f"warm_start=True but y has classes {classes.tolist()} while the fitted model "
                    f"has {self.classes_.tolist()}: fit with the same classes or set warm_start=False."
                )
            if self.n_batches < len(self.batches_):
                raise ValueError(
                    f"n_batches={self.n_batches} is smaller than the {len(self.batches_)} batches "
                    "already fitted; with warm_start=True n_batches is the total to reach."
                )
        else:
            self.classes_ = classes
            self.marginals_ = marginals
            self.center_ = center()
            self.batches_, self.n_iter_, self.objective_values_ = [], [], []
            # records of an earlier fit that a new one makes wrong: shrink's columns of the data it was
            # shrunk from, and the CSV rows a command-line fit was made on (the names of sample_index)
            for stale in ("active_features_", "training_rows_"):
                if stale in vars(self):
                    delattr(self, stale)

    def _fit_batches(self, X, y_idx, sample_weight, rngs, initial_solution=None, log_level=logging.INFO):
        """Append one batch per generator in ``rngs`` to ``batches_`` (the fit engine).

        Expects ``classes_``, ``marginals_``, ``batches_``, ``n_iter_`` and
        ``objective_values_`` to be set (empty lists for a fresh fit).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Validated features in the fitted dtype.
        y_idx : ndarray of shape (n_samples,) of int
            Class indices into ``classes_``.
        sample_weight : ndarray of shape (n_samples,)
            Validated weights (zeros allowed; those rows are ignored).
        rngs : list of numpy.random.Generator
            One independent stream per new batch.
        initial_solution : callable or None, default=None
            ``initial_solution(batch_number, candidate_sample_index)`` returning ``(v0, w0)``
            (shapes (n_features,) and (J,)) or None for the report's start values ``10 / D`` and
            ``1``. ``batch_number`` counts batches from 0; ``candidate_sample_index`` holds the
            rows of X of the candidates, in the order of ``w0`` (sorted by class, then row). Used
            by :class:`discrim.model_selection.PrototypeClassifierCV` to warm-start along a
            penalty path.
        log_level : int, default=logging.INFO
            Level of the one-line summary logged per batch (the search's fits use DEBUG: their
            hundreds of batches are not progress a user follows).

        Returns
        -------
        None
        """
        rows = np.flatnonzero(sample_weight > 0)
        # X crosses to the device once; the candidates' rows are read from the host copy
        X_dev = self._on_device(X)
        # unscaled probabilities of the current model on every row used for fitting
        q_all = self._unscaled(ops.take_rows(X_dev, rows))
        # the batch objectives see the rows centred once for the whole fit (see centre_of)
        Xc = self._centred(X_dev)
        # Threads for the objective's row chunks, read before the BLAS is limited to one thread
        # for the whole fit: the objective is many small GEMMs on cache-sized row chunks run in
        # parallel threads, where a multi-threaded BLAS only adds synchronisation (and on a busy
        # machine its spinning threads slow it 10-50x).
        n_threads = row_threads()
        # rows with missing values are never candidates (found once for all batches)
        incomplete = np.isnan(X).any(axis=1)
        incomplete = incomplete if incomplete.any() else None
        with single_threaded_blas():
            for rng in rngs:
                self._add_batch(X, X_dev, Xc, y_idx, sample_weight, rows, incomplete, q_all, rng, initial_solution,
                                n_threads, log_level)

    def _compute_device(self, X=None):
        """The torch device of the fit's and the predictions' array work, or None for numpy."""
        device = compute_device(self.device, X)
        if device is None and self.backend == "torch":
            return check_device("cpu")
        return device

    def _on_device(self, X):
        """Host rows X where the model computes (X itself for numpy)."""
        device = self._compute_device()
        if device is None:
            return X
        import torch

        return torch.as_tensor(X, device=device)

    def _add_batch(self, X, X_dev, Xc, y_idx, sample_weight, rows, incomplete, q_all, rng, initial_solution,
                   n_threads, log_level):
        """Fit the next batch, append it and add its scores to ``q_all`` (in place).

        ``X_dev`` is ``X`` where the model computes, ``Xc`` the same centred by ``center_``
        (:meth:`_centred`); ``incomplete`` marks the rows with missing values (None: none has).
        """
        b = len(self.batches_)
        batch, n_iter, value = self._fit_one_batch(
            X, Xc, y_idx, sample_weight, rows, incomplete, q_all, rng, b, initial_solution, n_threads
        )
        self._record_batch(b, batch, n_iter, value, log_level)
        if batch.n_prototypes:
            q_all += self._chunked_scores(batch, ops.take_rows(X_dev, rows), self.classes_.shape[0], self._center())

    def _record_batch(self, b, batch, n_iter, value, log_level):
        """Append batch ``b`` and its solve's figures, and log them."""
        self.batches_.append(batch)
        self.n_iter_.append(n_iter)
        self.objective_values_.append(value)
        logger.log(
            log_level, "batch %d: %d L-BFGS-B iterations, objective %.6g, %d active features, %d prototypes",
            b + 1, n_iter, value, batch.feature_index.shape[0], batch.n_prototypes,
        )

    def _split(self, y_idx, rows, q_all, rng, b, incomplete=None):
        """Candidates and scoring rows of batch ``b`` by the bins algorithm.

        ``incomplete`` (n_samples,) of bool marks the rows with missing values, which are never
        candidates (None: every row is complete).

        Returns ``sub`` (rows used by the batch), ``cand`` (candidate rows, grouped by class and
        then in training order) and ``ref_pos`` (positions into ``rows``/``q_all`` of the scoring
        rows).
        """
        n_classes = self.classes_.shape[0]
        pos = np.arange(rows.shape[0])  # positions into rows / q_all
        if self.max_samples is not None:
            pos = stratified_subsample(y_idx[rows], n_classes, self._subsample_size(rows.shape[0]), rng)
            counts = np.bincount(y_idx[rows[pos]], minlength=n_classes)
            check_min_cases(counts, self.max_fraction, self.classes_,
                            what=f"subsample of max_samples={self.max_samples} rows",
                            fixes=("raise max_samples (or set it to None)", "add rows of that class", "merge rare classes"))
        sub = rows[pos]
        bins = assign_bins(q_all[pos], y_idx[sub])
        if incomplete is not None:
            # a row with missing values scores candidates but is never one: it waits in a bin of its own
            bins = np.where(incomplete[sub], 2 * n_classes, bins)
        g = np.bincount(bins, minlength=2 * n_classes + 1)[: 2 * n_classes]
        h = candidates_per_bin(g, self.n_candidates, self.max_fraction)
        drawn = draw_candidates(bins, 2 * n_classes + 1, np.append(h, 0), rng)
        self._log_bins(b, g, h)
        is_cand = np.zeros(sub.shape[0], dtype=bool)
        is_cand[drawn] = True
        cand = sub[is_cand]
        cand = cand[np.lexsort((cand, y_idx[cand]))]  # grouped by class, then training order
        return sub, cand, pos[~is_cand]

    def _subsample_size(self, n_rows):
        """Rows of the class-stratified subsample that ``max_samples`` asks for, of ``n_rows``."""
        if isinstance(self.max_samples, Integral):
            return self.max_samples
        return max(1, int(round(self.max_samples * n_rows)))

    def _log_bins(self, b, g, h):
        """With ``verbose``: the candidates and rows of every bin of batch ``b``."""
        if self.verbose > 0:
            logger.info(
                "batch %d candidates/samples by bin (class, correctly classified): %s",
                b + 1,
                ", ".join(f"({self.classes_[i // 2]!r}, {bool(i % 2)}): {h[i]}/{g[i]}" for i in range(len(g))),
            )

    def _fit_one_batch(self, X, Xc, y_idx, weight, rows, incomplete, q_all, rng, b, initial_solution, n_threads):
        n_classes = self.classes_.shape[0]
        D = X.shape[1]
        sub, cand, ref_pos = self._split(y_idx, rows, q_all, rng, b, incomplete)
        ref = rows[ref_pos]
        if cand.shape[0] == 0:
            logger.warning("batch %d: no candidates were drawn (n_candidates=%d); the batch is empty.",
                           b + 1, self.n_candidates)
            return self._empty_batch(D), 0, float("nan")

        w_sub = weight[sub]
        class_total = np.bincount(y_idx[sub], weights=w_sub, minlength=n_classes)
        # N_k - J_ck summed over the scoring rows themselves: the difference of the two totals
        # cancels to 0 when one candidate carries nearly all of its class's weight (1e308 among
        # ones), which made every c_n infinite
        ref_total = np.bincount(y_idx[ref], weights=weight[ref], minlength=n_classes)
        factor = np.divide(class_total, ref_total, out=np.zeros(n_classes), where=ref_total > 0)
        coef = weight[ref] / w_sub.sum() * factor[y_idx[ref]]

        # the rows from Xc where it lives; the host's per-row terms cross once per batch
        xp = array_namespace(Xc)
        as_xp = partial(ops.like, ref=Xc)
        datafit = PrototypeLikelihood(
            ops.contiguous(ops.take_rows(Xc, ref)), y_idx[ref], as_xp(coef), as_xp(q_all[ref_pos]),
            ops.contiguous(ops.take_rows(Xc, cand)), y_idx[cand], n_classes, xp, device=ops.device_of(Xc).get("device"),
            n_threads=n_threads,
        )
        # many scoring rows: the emptiness screen's objective over a few of them (see solve_batch)
        n_screen = screen_rows(ref.shape[0])
        make_screen = partial(datafit.subsample, n_screen, SCREEN_DTYPE) if n_screen else None
        return self._solve_batch(datafit, X[cand], y_idx[cand], cand, b, initial_solution, make_screen)

    def _solve_batch(self, datafit, X_cand, y_cand, cand, b, initial_solution, make_screen=None):
        """Solve batch ``b``'s penalised objective and build the batch from its candidates.

        Parameters
        ----------
        datafit : PrototypeLikelihood or any object with its interface
            The batch's data term over its scoring rows; closed here.
        X_cand : ndarray of shape (J, n_features)
            The candidates' rows (uncentred), grouped by class then row.
        y_cand : ndarray of shape (J,) of int
        cand : ndarray of shape (J,) of int
            The candidates' row indices in X.
        b : int
        initial_solution : callable or None
        make_screen : callable or None, default=None
            Builds the data term over a subset of the scoring rows, for the emptiness screen of
            :func:`~discrim.prototype._solver.solve_batch`; called (and the screen closed here)
            only for a batch that starts cold, the only one the screen serves.

        Returns
        -------
        batch : PrototypeBatch
        n_iter : int
        value : float
        """
        D = X_cand.shape[1]
        J = cand.shape[0]
        start = initial_solution(b, cand.copy()) if initial_solution is not None else None
        if start is None:
            v0, w0 = np.full(D, START_FEATURE_WEIGHT / D), np.full(J, START_PROTOTYPE_WEIGHT)
        else:
            v0, w0 = (np.asarray(a, dtype=np.float64) for a in start)
        penalties = [
            (slice(0, D), NonNegElasticNet(self.alpha_feature, self.l1_ratio_feature)),
            (slice(D, D + J), NonNegElasticNet(self.alpha_prototype, self.l1_ratio_prototype)),
        ]
        objective = PenalizedObjective(datafit, penalties, np.concatenate([v0, w0]))
        screen = make_screen() if make_screen is not None and start is None else None
        try:
            result = solve_batch(objective, D, J, self.max_iter, self.tol, ftol=self.ftol,
                                 fit_features_first=start is None, empty_check_iter=self.empty_check_iter,
                                 screen=None if screen is None else objective.with_datafit(screen))
        except FloatingPointError as exc:
            raise ValueError(
                f"batch {b + 1}: {exc}. The data or sample weights cannot be represented in "
                f"{self.dtype}: rescale X (e.g. with StandardScaler) and sample_weight (e.g. to mean 1)."
            ) from None
        finally:
            datafit.close()
            if screen is not None:
                screen.close()
        if self.verbose > 0:
            logger.info("batch %d solver: %s (%d evaluations)", b + 1, result.message, result.n_eval)
        v, w = result.theta[:D], result.theta[D:]
        active = np.flatnonzero(v > 0)
        keep = w > 0
        protos, target, weights, index = merge_equivalent(
            X_cand[keep][:, active].astype(np.float64), y_cand[keep], w[keep], cand[keep]
        )
        batch = PrototypeBatch(
            prototypes=protos,
            target=target.astype(np.int64),
            feature_index=active.astype(np.int64),
            feature_weights=v[active],
            prototype_weights=weights,
            sample_index=index.astype(np.int64),
        )
        return batch, result.n_iter, result.value

    @staticmethod
    def _empty_batch(n_features):
        return PrototypeBatch(
            prototypes=np.zeros((0, 0)),
            target=np.zeros(0, dtype=np.int64),
            feature_index=np.zeros(0, dtype=np.int64),
            feature_weights=np.zeros(0),
            prototype_weights=np.zeros(0),
            sample_index=np.zeros(0, dtype=np.int64),
        )

    # ------------------------------------------------------------------ scoring

    @staticmethod
    def _chunked_scores(batch, X, n_classes, center=None):
        """``batch.class_scores`` over row chunks of bounded size: (n, n_classes)."""
        out = np.empty((X.shape[0], n_classes), dtype=np.float64)
        elements = CHUNK_ELEMENTS if isinstance(X, np.ndarray) else DEVICE_CHUNK_ELEMENTS
        step = chunk_rows(batch.n_prototypes, elements)
        for start in range(0, X.shape[0], step):
            out[start : start + step] = to_numpy(batch.class_scores(X[start : start + step], n_classes, center))
        check_finite_scores(out, center)
        return out

    def _check_loaded_state(self):
        """Check the fitted state a model file gave this model; raise FittedStateError naming the attribute.

        ``n_features_in_`` an integer; ``classes_`` (K,); ``marginals_`` (K,) positive and summing to 1;
        ``center_`` and ``feature_names_in_`` (n_features_in_,); every batch consistent with them
        (:meth:`PrototypeBatch._check_state`). See :func:`discrim.persistence.load_model`.

        Returns
        -------
        n_features : int
        n_classes : int
        """
        n_features, classes, marginals, batches = state.fitted_attributes(
            self, "n_features_in_", "classes_", "marginals_", "batches_")
        n_features = state.count(n_features, "n_features_in_", minimum=1)
        n_classes = state.array(classes, "classes_", (None,), kind=None).shape[0]
        if n_classes == 0:
            raise state.FittedStateError("classes_ is empty")
        state.probabilities(marginals, "marginals_", n_classes, dims="(n_classes,)", positive=True)
        for name in ("center_", "feature_names_in_"):  # center_: None for a model fitted before it existed
            if getattr(self, name, None) is not None:
                state.array(getattr(self, name), name, (n_features,), kind="f" if name == "center_" else None,
                            dims="(n_features_in_,)")
        if not isinstance(batches, list):
            raise state.FittedStateError(f"batches_ is a {type(batches).__name__}, not a list")
        for b, batch in enumerate(batches):
            if not isinstance(batch, PrototypeBatch):
                raise state.FittedStateError(f"batches_[{b}] is a {type(batch).__name__}, not a PrototypeBatch")
            batch._check_state(n_features, n_classes, f"batches_[{b}]")
        return n_features, n_classes

    def _center(self):
        """``center_``, or None for a model fitted before it existed (nothing is subtracted)."""
        return getattr(self, "center_", None)

    def _centred(self, X):
        """``X - center_`` in the fitted dtype (differences taken in float64): (n, n_features).

        In X's namespace and on its device.
        """
        center = self._center()
        if center is None:
            return X
        return ops.contiguous(ops.like(ops.as_float64(X) - ops.like(center, X, "float64"), X))

    def _unscaled(self, X, n_batches=None):
        """``q_k(x)`` using the first ``n_batches`` batches (all by default): (n, n_classes)."""
        return self._add_batch_scores(self._marginal_scores(X), X, self.batches_[:n_batches])

    def _marginal_scores(self, X):
        """``q_k(x)`` of no batch, the class frequencies on every row: a new (n, n_classes) array."""
        return np.tile(self.marginals_, (X.shape[0], 1))

    def _add_batch_scores(self, q, X, batches):
        """Add the class scores of ``batches`` on the rows X to ``q`` (n, n_classes), in place; returns q."""
        for batch in batches:
            if batch.n_prototypes:
                q += self._chunked_scores(batch, X, self.classes_.shape[0], self._center())
        return q

    def _validate_for_predict(self, X):
        check_is_fitted(self)

        def validate(X):
            # NaN is a missing value: it contributes the factor 1 to every prototype's kernel
            X = validate_data(self, X, reset=False, dtype=np.dtype(self.dtype), ensure_all_finite="allow-nan")
            return check_feature_magnitude(X, "X")

        # a tensor holding NaN is validated on the host as numpy rows are (then sent to the model's device)
        X = rows_on_device(self, X, validate, reset=False, dtype=np.dtype(self.dtype), nan_on_host=True)
        return X if is_tensor(X) else self._on_device(X)

    def _joint_log_likelihood(self, X, log_prior=None, n_batches=None):
        """``log q_k(x)``: the class scores are the joint likelihoods of the posterior rule.

        ``p_k(x) = q_k(x) / sum_l q_l(x)``; the training rows' class frequencies (``marginals_``,
        normalised) are the model's priors: other priors ``pi`` shift the scores by
        ``log pi_k - log marginals_k``. ``n_batches`` (None: all) counts the batches used. Warns
        with :class:`UnfamiliarDataWarning` when most rows lie far from every prototype.
        """
        X = self._validate_for_predict(X)
        q = self._unscaled(X, n_batches)
        warn_if_unfamiliar(q.sum(axis=1) - self.marginals_.sum(), self._counted_batches(n_batches), to_numpy(X),
                           getattr(self, "feature_names_in_", None))
        jll = np.log(q)
        if log_prior is not None:
            with np.errstate(divide="ignore"):
                jll += log_prior - np.log(self.marginals_ / self.marginals_.sum())
        return jll

    # ------------------------------------------------------------------ prediction with n_batches

    def _counted_batches(self, n_batches):
        """The batches that ``n_batches`` (None or an int) uses."""
        return self.batches_[:n_batches]

    def _batch_counts(self, n_batches, allow_list=True):
        """``n_batches`` checked (:func:`~discrim.prototype._prototype_set.check_n_batches`): None (all
        batches), an int, or with ``allow_list`` a list of ints, in [0, len(batches_)]."""
        check_is_fitted(self)
        note = "" if allow_list else " (staged methods take one count, the last to yield)"
        return check_n_batches(n_batches, len(self.batches_), allow_list=allow_list, note=note)

    @blockwise
    def _rule_at(self, X, priors, n_batches, kind):
        """``kind`` ("predict", "proba" or "log_proba") of the first ``n_batches`` batches (an int or None)."""
        return rule_from_joint(self._joint_log_likelihood(X, self._log_prior(priors), n_batches), kind, self.classes_)

    def _predict_rule(self, X, priors, n_batches, kind):
        """One output per batch count: a single array for an int or None, a list for a list."""
        counts = self._batch_counts(n_batches)
        if not isinstance(counts, list):
            return self._rule_at(X, priors, counts, kind)
        if is_dask(X):
            return [self._rule_at(X, priors, n, kind) for n in counts]
        from discrim.backend._device import like_input

        log_prior = self._log_prior(priors)
        shift = None
        if log_prior is not None:
            with np.errstate(divide="ignore"):
                shift = log_prior - np.log(self.marginals_ / self.marginals_.sum())
        out = {}
        X_valid = self._validate_for_predict(X)
        for n, q in self._staged_unscaled(X_valid, sorted(set(counts))):
            warn_if_unfamiliar(q.sum(axis=1) - self.marginals_.sum(), self._counted_batches(n), to_numpy(X_valid),
                               getattr(self, "feature_names_in_", None))
            jll = np.log(q)
            if shift is not None:
                jll += shift
            out[n] = like_input(rule_from_joint(jll, kind, self.classes_), X)
        return [out[n] for n in counts]

    def _staged_unscaled(self, X, counts):
        """``(n, q)`` for each count of the sorted ``counts``: ``q_k(x)`` of the first n batches, each batch
        scored once (a fresh array per count)."""
        q = self._marginal_scores(X)
        done = 0
        for n in counts:
            self._add_batch_scores(q, X, self.batches_[done:n])
            done = n
            yield n, q.copy()

    @overload
    def predict_proba(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                      n_batches: int | None = None) -> Array: ...
    @overload
    def predict_proba(self, X: ArrayLike, priors: str | ArrayLike | None, n_batches: BatchCounts) -> list[Array]: ...
    @overload
    def predict_proba(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                      *, n_batches: BatchCounts) -> list[Array]: ...
    def predict_proba(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                      n_batches: int | BatchCounts | None = None) -> Array | list[Array]:
        """Class probabilities ``p_k(x)``, from all batches or the first ``n_batches``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_classes,), default=None
            Prior probabilities of the classes for this call, in the order of ``classes_``; None
            uses the fitted ones (``marginals_``).
        n_batches : int, list of int or None, default=None
            Use only the first ``n_batches`` batches (0: the marginals); a 0-d integer array
            counts as an int. A list (or tuple, or 1-D array) gives one result per count,
            computed in one pass as by a staged method; nested lists are refused. None uses all
            batches.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), or a list of them
            One array per count when ``n_batches`` is a list.
        """
        return self._predict_rule(X, priors, n_batches, "proba")

    @overload
    def predict_log_proba(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                          n_batches: int | None = None) -> Array: ...
    @overload
    def predict_log_proba(self, X: ArrayLike, priors: str | ArrayLike | None,
                          n_batches: BatchCounts) -> list[Array]: ...
    @overload
    def predict_log_proba(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                          *, n_batches: BatchCounts) -> list[Array]: ...
    def predict_log_proba(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                          n_batches: int | BatchCounts | None = None) -> Array | list[Array]:
        """Log of the class probabilities, computed in log space (see :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_classes,), default=None
            See :meth:`predict_proba`.
        n_batches : int, list of int or None, default=None
            See :meth:`predict_proba`.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes), or a list of them
        """
        return self._predict_rule(X, priors, n_batches, "log_proba")

    @overload
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None = None, n_batches: int | None = None) -> Array: ...
    @overload
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None, n_batches: BatchCounts) -> list[Array]: ...
    @overload
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                *, n_batches: BatchCounts) -> list[Array]: ...
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                n_batches: int | BatchCounts | None = None) -> Array | list[Array]:
        """The class of largest probability (see :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_classes,), default=None
            See :meth:`predict_proba`.
        n_batches : int, list of int or None, default=None
            See :meth:`predict_proba`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), or a list of them
        """
        return self._predict_rule(X, priors, n_batches, "predict")

    @overload
    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
              n_batches: int | None = None) -> float: ...
    @overload
    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None,
              n_batches: BatchCounts) -> np.ndarray: ...
    @overload
    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
              *, n_batches: BatchCounts) -> np.ndarray: ...
    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
              n_batches: int | BatchCounts | None = None) -> float | np.ndarray:
        """Mean (weighted) accuracy, scikit-learn's classifier score; see :meth:`log_likelihood` for proset's.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True labels; a missing one (NaN, None) is refused in memory.
        sample_weight : array-like of shape (n_samples,), default=None
        n_batches : int, list of int or None, default=None
            See :meth:`predict_proba`.

        Returns
        -------
        score : float, or ndarray of shape (len(n_batches),) for a list
        """
        from sklearn.metrics import accuracy_score

        pred = self.predict(X, n_batches=n_batches)
        if is_dask(X):  # one pass over X's chunks; two totals per batch count come to the client
            return lazy_accuracy(pred, y, sample_weight)
        y = to_numpy(y) if is_tensor(y) else y
        check_true_labels(y)
        if isinstance(pred, list):
            return np.array([accuracy_score(y, to_numpy(p), sample_weight=sample_weight) for p in pred])
        return float(accuracy_score(y, to_numpy(pred), sample_weight=sample_weight))

    @overload
    def log_likelihood(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
                       n_batches: int | None = None) -> float: ...
    @overload
    def log_likelihood(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None,
                       n_batches: BatchCounts) -> np.ndarray: ...
    @overload
    def log_likelihood(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
                       *, n_batches: BatchCounts) -> np.ndarray: ...
    def log_likelihood(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
                       n_batches: int | BatchCounts | None = None) -> float | np.ndarray:
        """Mean (weighted) log-probability of the true classes, proset's score: ``-log_loss``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels among ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
        n_batches : int, list of int or None, default=None
            See :meth:`predict_proba`.

        Returns
        -------
        log_likelihood : float, or ndarray of shape (len(n_batches),) for a list
            ``sum_i w_i log p_{y_i}(x_i) / sum_i w_i`` (computed in log space, not clipped).

        Examples
        --------
        >>> import numpy as np
        >>> from discrim.prototype import PrototypeClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
        >>> clf = PrototypeClassifier(n_batches=2, n_candidates=20, random_state=0).fit(X, y)
        >>> clf.log_likelihood(X, y, n_batches=[0, 2]).shape
        (2,)
        """
        check_is_fitted(self)
        if is_dask(X):
            return self._lazy_log_likelihood(X, y, sample_weight, n_batches)
        y = np.asarray(to_numpy(y) if is_tensor(y) else y)
        if y.ndim != 1:
            raise ValueError(f"y must be a 1-D array of labels, one per row of X; got shape {y.shape}"
                             + (" (use y.ravel() for a column)." if y.ndim == 2 and y.shape[1] == 1 else "."))
        index = label_index(self.classes_, y)
        w = check_sample_weight(sample_weight, y.shape[0])
        log_proba = self.predict_log_proba(X, n_batches=n_batches)

        def mean(lp):
            lp = np.asarray(to_numpy(lp), dtype=np.float64)
            if lp.shape[0] != y.shape[0]:
                raise ValueError(f"X has {lp.shape[0]} rows but y has {y.shape[0]}.")
            return float(np.sum(w * lp[np.arange(y.shape[0]), index]) / np.sum(w))

        if isinstance(log_proba, list):
            return np.array([mean(lp) for lp in log_proba])
        return mean(log_proba)

    def _lazy_log_likelihood(self, X, y, sample_weight, n_batches):
        """:meth:`log_likelihood` of a dask X: each chunk's log-probabilities of its true classes summed
        where the chunk lives, for every batch count in one pass over X's chunks."""
        import dask.array as da

        log_proba = self.predict_log_proba(X, n_batches=n_batches)
        each = log_proba if isinstance(log_proba, list) else [log_proba]
        index = align_rows(y, each[0], name="y").map_blocks(partial(label_index, self.classes_), dtype=np.int64)
        true_class = index[:, None] == np.arange(self.classes_.shape[0])
        # the one entry of the true class, exactly (-inf where its probability is 0)
        picked = [da.where(true_class, lp.astype(np.float64), 0.0).sum(axis=1) for lp in each]
        means = lazy_weighted_means(picked, sample_weight)
        return means if isinstance(log_proba, list) else float(means[0])

    def staged_predict_proba(self, X: ArrayLike, n_batches: int | None = None) -> Iterator[Array]:
        """Class probabilities using the first ``b`` batches, for ``b = 0, ..., n_batches``.

        Computed incrementally (each batch's contribution once), in row chunks. Rows far from every
        prototype warn as in :meth:`predict_proba` (:class:`UnfamiliarDataWarning`), once, when the
        last count is reached.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        n_batches : int or None, default=None
            Last batch count to yield; None: ``len(batches_)``.

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes)
            ``b = 0`` gives the marginals ``p_0k`` on every row. In the namespace and on the
            device of X, as :meth:`predict_proba` (a torch tensor for tensor input).
        """
        from discrim.backend._device import like_input

        return (like_input(proba, X) for proba in self._staged_host_proba(X, n_batches))

    def staged_predict(self, X: ArrayLike, n_batches: int | None = None) -> Iterator[Array]:
        """Predicted classes using the first ``b`` batches, for ``b = 0, ..., n_batches``.

        Warns as :meth:`staged_predict_proba` does.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        n_batches : int or None, default=None
            Last batch count to yield; None: ``len(batches_)``.

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
            In the namespace and on the device of X where the labels are numbers, as
            :meth:`predict`.
        """
        from discrim.backend._device import like_input

        staged = self._staged_host_proba(X, n_batches)  # checks that the model is fitted, before classes_
        classes = np.asarray(self.classes_)
        return (like_input(classes[np.argmax(proba, axis=1)], X) for proba in staged)

    def _staged_host_proba(self, X, n_batches):
        """The staged probabilities as numpy arrays; X and ``n_batches`` are checked at the call, not at
        the first ``next()``."""
        last = self._batch_counts(n_batches, allow_list=False)
        X = self._validate_for_predict(X)
        counts = range(len(self.batches_) + 1 if last is None else last + 1)

        def staged():
            for n, q in self._staged_unscaled(X, counts):
                if n == counts[-1]:  # once, on the model the last count gives (as predict_proba warns)
                    warn_if_unfamiliar(q.sum(axis=1) - self.marginals_.sum(), self._counted_batches(n), to_numpy(X),
                                       getattr(self, "feature_names_in_", None))
                yield q / q.sum(axis=1, keepdims=True)

        return staged()

    def _staged_proba(self, X):
        """:meth:`staged_predict_proba` of validated X (an ndarray in the fitted dtype)."""
        q = self._marginal_scores(X)
        yield q / q.sum(axis=1, keepdims=True)
        for batch in self.batches_:
            self._add_batch_scores(q, X, [batch])
            yield q / q.sum(axis=1, keepdims=True)

    # ------------------------------------------------------------------ explanation (delegates)

    def export(self, *, n_batches: int | None = None, feature_names: Sequence[str] | None = None,
               sample_names: ArrayLike | None = None, report: PathLike | None = None) -> pd.DataFrame:
        """Tabulate the prototypes, one row per prototype (see :func:`discrim.prototype.export`).

        Parameters
        ----------
        n_batches : int or None, default=None
            Export the first ``n_batches`` batches; None: all.
        feature_names : list of str or None, default=None
            Names of the features; default ``feature_names_in_`` or ``x0``, ``x1``, ...
        sample_names : array-like of shape (n_training_samples,) or None, default=None
            Names of the training rows, shown next to each prototype's ``sample_index``.
        report : str, path-like or None, default=None
            Also write the table to this ``.xlsx`` or ``.html`` file (atomically).

        Returns
        -------
        table : pandas.DataFrame
        """
        from discrim.prototype._report import export

        return export(self, n_batches=n_batches, feature_names=feature_names, sample_names=sample_names,
                      report=report)

    def explain(self, X: ArrayLike, y: object = None, reference: ArrayLike | None = None, *,
                n_prototypes: int | None = 10, n_batches: int | None = None, feature_names: Sequence[str] | None = None,
                sample_names: ArrayLike | None = None, report: PathLike | None = None) -> Explanation:
        """Explain the prediction for one row (see :func:`discrim.prototype.explain`).

        Parameters
        ----------
        X : array-like of shape (n_features,) or (1, n_features)
            The row.
        y : object, default=None
            Its true class, when known (or a sequence holding just it).
        reference : array-like of shape (n_reference, n_features), default=None
            Rows (e.g. the training rows) against whose familiarity the row's is ranked.
        n_prototypes : int or None, default=10
            How many prototypes to list, by decreasing impact; None lists all.
        n_batches : int or None, default=None
            Use the first ``n_batches`` batches; None: all.
        feature_names : list of str or None, default=None
            Names of the features.
        sample_names : array-like of shape (n_training_samples,) or None, default=None
            Names of the training rows, shown next to each prototype's ``sample_index``.
        report : str, path-like or None, default=None
            Also write the explanation to this ``.xlsx`` or ``.html`` file (atomically).

        Returns
        -------
        explanation : Explanation
            See :class:`discrim.prototype.Explanation`.
        """
        from discrim.prototype._report import explain

        return explain(self, X, y, reference=reference, n_prototypes=n_prototypes, n_batches=n_batches,
                       feature_names=feature_names, sample_names=sample_names, report=report)

    def shrink(self) -> PrototypeClassifier:
        """Model restricted to the features that some batch uses
        (see :func:`discrim.prototype._explain.shrink_model`).

        Returns
        -------
        model : PrototypeClassifier
        """
        from discrim.prototype._explain import shrink_model

        return shrink_model(self)

    @blockwise
    def familiarity(self, X: ArrayLike, n_batches: int | None = None) -> Array:
        """How well the prototypes cover each row (see :func:`discrim.prototype._explain.familiarity`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        n_batches : int or None, default=None
            Use the first ``n_batches`` batches; None: all.

        Returns
        -------
        familiarity : ndarray of shape (n_samples,)
        """
        from discrim.prototype._explain import familiarity

        return familiarity(self, X, n_batches=n_batches)
