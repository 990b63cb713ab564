"""PrototypeClassifierCV: the cross-validated search over alpha_feature (and alpha_prototype) and the batch count."""

from __future__ import annotations

import logging
import time
from numbers import Integral, Real
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Self, overload

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold, check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples, check_is_fitted

from discrim._typing import Array, ArrayLike, BatchCounts, Device, PathLike, RandomStateLike
from discrim.model_selection._search import SCORES, fit_path, plan_chains, plan_tasks, refit_path, select_one_se
from discrim.utils import _fitted_state as state
from discrim.utils._parallel import run_unordered
from discrim.utils._param_validation import HasMethods, Interval, StrOptions, fit_context
from discrim.utils._dask import blockwise, check_feature_names, is_dask
from discrim.utils._random import as_seed_sequence
from discrim.prototype._candidates import check_min_cases, min_cases_violations, stratified_take
from discrim.prototype._solver import TRIVIAL_CHECK_ITER
from discrim.prototype.classifier import MAX_BATCHES, PrototypeClassifier
from discrim.utils.validation import (
    check_labels,
    check_no_unlabelled_marker,
    check_numeric_table,
    check_observed_columns,
    check_sample_weight,
    plain_label,
    validated_training_data,
)

if TYPE_CHECKING:
    import pandas as pd

    from discrim.prototype import Explanation

logger = logging.getLogger(__name__)

# Most values in alpha_feature_grid: every value is one fit per fold (and a row per batch count
# in cv_results_).
MAX_ALPHAS = 1000

# Parameters handed unchanged to every PrototypeClassifier of the search and the refit, validated
# by the search's own fit with the classifier's constraints (so before any work, and the error
# names PrototypeClassifierCV). alpha_prototype is replaced by each value of alpha_prototype_grid
# when that is given.
_PASSTHROUGH = (
    "n_candidates",
    "max_fraction",
    "l1_ratio_feature",
    "alpha_prototype",
    "l1_ratio_prototype",
    "max_iter",
    "empty_check_iter",
    "max_samples",
    "dtype",
    "backend",
    "device",
)


def _grid_values(name, grid):
    """The values of a grid parameter as a float array of one dimension.

    A nested grid (``[[1e-3, 1e-2]]``) is refused rather than flattened: its shape says the
    user meant something else than one list of values (a grid per axis, a pairing), and a
    silent flattening would search a grid they did not ask for.

    Parameters
    ----------
    name : str
        The parameter, for the message.
    grid : array-like

    Returns
    -------
    values : ndarray of shape (n_values,)
    """
    values = np.asarray(grid, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"{name} must be one list of values (1-D), e.g. [1e-3, 1e-2]; got an array of shape "
                         f"{values.shape}: {grid!r}.")
    return values


class SearchProgress(NamedTuple):
    """What the ``callback`` of :class:`PrototypeClassifierCV` receives after each finished task.

    Parameters
    ----------
    n_done : int
        Tasks finished so far.
    n_tasks : int
        Tasks of the search (folds x chunks of the alpha_feature path).
    fold : int
        Cross-validation split of the finished task.
    alpha_features : tuple of float
        alpha_feature values the task fitted, in order.
    seconds : float
        Time the task spent fitting and scoring.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.model_selection import PrototypeClassifierCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
    >>> progress = []
    >>> search = PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2], max_batches=1, cv=2,
    ...                                n_candidates=20, random_state=0,
    ...                                callback=progress.append).fit(X, y)
    >>> last = progress[-1]
    >>> last.n_done == last.n_tasks == len(progress)
    True
    >>> sorted({p.fold for p in progress})
    [0, 1]
    """

    n_done: int
    n_tasks: int
    fold: int
    alpha_features: tuple
    seconds: float


class PrototypeClassifierCV(ClassifierMixin, BaseEstimator):
    """Prototype set classifier with alpha_feature and the batch count chosen by cross-validation.

    This is the updated fit strategy of the proset technical report: a grid of feature-weight
    penalties ``alpha_feature`` (optionally times a grid of prototype-weight penalties
    ``alpha_prototype``) times the batch counts 0..``max_batches``, scored by stratified k-fold
    cross-validation with the log-loss (or ROC-AUC or balanced accuracy); the 1-SE rule picks the
    sparsest model whose mean score lies within one standard deviation of the best; the chosen
    model is refitted on all the training data. An optional ``transformer`` (e.g. a
    ``StandardScaler``) is fitted inside every fold on its training part and refitted with the
    final model, which then predicts raw rows.

    Parameters
    ----------
    alpha_feature_grid : array-like of shape (n_alphas,), default=None
        Positive candidate values of ``alpha_feature`` (the proset report's lambda_v), at most 1000; None
        means ``np.logspace(-6, -1, 11)``.
    max_batches : int in [0, 10000], default=10
        Largest batch count tried; every count from 0 to ``max_batches`` is scored from the one
        fit with ``max_batches`` batches (the cost grows linearly with it, unless
        ``n_batches_no_change`` stops the fits earlier).
    n_batches_no_change : int or None, default=None
        Stop each fit of the search (one fold, one penalty) once this many batches in a row did
        not lower its validation loss (the ``scoring`` one) below the best so far by more than
        ``no_change_tol`` times its absolute value: the cost then follows the batch counts that
        still improve instead of ``max_batches``. The counts after
        a fold's stop are not scored (NaN in ``cv_results_``) and a grid point is only selected
        when every fold scored it. A fit's scored counts are exactly those of the same fit
        continued to ``max_batches`` (a batch never depends on later ones); with warm starts the
        next penalty's batches after a stop start cold, so the rest of the path can differ from
        a search without stops. With ``max_batches <= n_batches_no_change`` the search is the
        same as with None. None fits ``max_batches`` batches every time.
    no_change_tol : float, default=0.01
        Relative decrease of a fit's best validation loss that counts as an improvement for
        ``n_batches_no_change`` (0: any decrease). On digits' smallest penalties the validation
        log-loss creeps down by 0.1-0.3 % per batch for 40 batches and more, far below the spread
        over the folds that the 1-SE rule allows; such creeping counts as no change.
    alpha_prototype_grid : array-like of shape (n_alpha_prototypes,), default=None
        Non-negative candidate values of ``alpha_prototype`` (the proset report's lambda_w), a second grid
        axis: each value is an alpha_feature path of its own (fits of one value are exactly those
        of a search with ``alpha_prototype`` set to it). None keeps ``alpha_prototype`` fixed.
    selection : {"one_se", "best"}, default="one_se"
        How the grid point is chosen from the mean validation scores: ``"one_se"`` is the
        original proset's rule (the sparsest point within one standard deviation of the best,
        see Notes); ``"best"`` takes the point with the best mean (scikit-learn's
        ``GridSearchCV``). On digits, where the folds' standard deviation (about 0.02) exceeds
        what later batches gain, the 1-SE rule takes one batch at a large penalty whatever the
        search finds beyond it; ``"best"`` keeps the many-batch models the search was raised for.
    scoring : {"log_loss", "roc_auc", "balanced_accuracy"}, default="log_loss"
        Validation score the 1-SE rule selects by: the sample-weighted log-loss (lower is
        better), or scikit-learn's ``roc_auc_score`` (one-vs-rest, macro average for more than
        two classes, over the classes a fold's validation part has; a part with fewer than two
        classes is refused) or ``balanced_accuracy_score`` with the sample weights (higher is better).
        The log-loss is recorded in ``cv_results_`` in every case.
    transformer : scikit-learn transformer or None, default=None
        Applied to X before the classifier: a clone is fitted on the training part of every fold
        (``fit(X_train, y_train)``) and transforms the fold's rows, and a clone fitted on all the
        rows is kept as ``transformer_`` and applied by the prediction methods, so the fitted
        search predicts raw rows (equal to a per-fold ``make_pipeline(transformer, classifier)``).
        None uses X as given. The transformer runs on the host. (Not named ``transform``: an
        estimator with a ``transform`` attribute is taken for a transformer by scikit-learn's
        duck typing, e.g. by its estimator checks and as a pipeline step.)
    cv : int, cross-validation splitter or iterable, default=5
        An int k gives ``StratifiedKFold(k, shuffle=True)``, or ``StratifiedGroupKFold(k,
        shuffle=True)`` when ``groups`` is passed to :meth:`fit`, seeded from ``random_state``;
        a splitter or an iterable of (train, test) index arrays is used as given.
    n_jobs : int, default=None
        Parallel search tasks, in joblib's convention (None means 1 unless inside a
        ``joblib.parallel_config`` context, -1 means all cores). Inside
        ``joblib.parallel_config(backend="dask")`` the tasks run on the Dask cluster of the active
        ``distributed.Client``; any other configured joblib backend is used likewise. Without
        one, on Linux the tasks run in this process and ``n_jobs - 1`` forked worker processes,
        which start in milliseconds where joblib's default workers take seconds to import the
        scientific stack (see :func:`discrim.utils._parallel.run_unordered`).
    search_tol : float, default=1e-5
        ``tol`` of the classifiers fitted during the search (the projected-gradient bound of
        L-BFGS-B). It is an absolute bound on gradient entries that shrink with the number of rows,
        so loosening it is unsafe on large data (at 1e-3 the solver stops before its first step on
        the checkerboard); the search is loosened by ``search_ftol`` and ``search_max_iter``
        instead.
    search_max_iter : int or None, default=30
        L-BFGS-B iteration limit per batch and solver stage during the search, a cap on top of
        ``search_ftol`` (the original proset's search, with ``factr = 1e10``, stops after a median
        of 26 iterations on iris-2f). Warm starts continue from the last iterate of the previous
        alpha_feature, so the path keeps improving on it. On digits, 20 instead of 30 selected a
        sparser model with a worse test log-loss (0.19 against 0.16). None uses ``max_iter``. The
        limit's ConvergenceWarnings are silenced in the search.

        The limit decides whether batches after the first count in the search: a batch whose
        loosely solved objective is not below the empty batch's is left empty, and a later batch
        starts far above it (every candidate at weight 1 on top of a fitted model). On digits
        (5 folds of the training part), with 30 the second batch ended empty on every fold for
        alpha_feature >= 3.2e-3 and the validation log-loss stayed at its 1-batch value, while
        with 100 the second batch kept 130-160 prototypes there (fold losses 0.148 -> 0.141 and
        0.190 -> 0.164), and the mean over the folds at the small penalties fell from 0.16 to
        0.14 within 10 batches instead of staying flat. Raising it makes every batch dearer
        (empty batches included): with a large ``max_batches`` pair it with
        ``n_batches_no_change``.
    search_ftol : float or None, default=2.2e-6
        ``ftol`` of the classifiers fitted during the search: L-BFGS-B stops a batch when one
        iteration lowers its objective by a relative amount of at most this. The default is the
        original proset's search setting (``solver_factr = 1e10`` times machine epsilon), applied
        from the 4th iteration of each solver stage on (the first steps on a new batch can be
        tiny; applied from the first, the test stopped digits' later batches after one iteration
        with every candidate kept). None uses scipy's default (about 2.2e-9).
    refit_tol : float, default=1e-5
        ``tol`` of the final refit on all the data (which uses ``max_iter`` and scipy's default
        ``ftol``).
    warm_start : bool, default=True
        Start each fit of a fold from the solution for the previous (smaller) alpha_feature.
    n_candidates, max_fraction, l1_ratio_feature, alpha_prototype, l1_ratio_prototype, max_iter, \
empty_check_iter, max_samples, dtype, backend, device
        Passed unchanged to every :class:`~discrim.prototype.PrototypeClassifier`; see there.
        They are validated by :meth:`fit` with the classifier's constraints, before any work.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the fold assignment, the candidate sampling of every fold and of the refit. A
        RandomState or Generator is advanced once per fit to draw the search's seeds, so two
        generators seeded alike give the same search.
    verbose : int, default=0
        When positive, log each finished task at INFO level (logger ``discrim.model_selection``).
    callback : callable, default=None
        Called in the calling process as ``callback(progress)`` with a :class:`SearchProgress`
        after each finished task, e.g. to drive a progress bar.

    Attributes
    ----------
    cv_results_ : dict of str to ndarray
        One entry per grid point (alpha_prototype major if it has a grid, then alpha_feature,
        batch count minor), loadable with ``pandas.DataFrame(cv_results_)``: ``params`` (list of
        dict), ``alpha_feature``, ``alpha_prototype``, ``n_batches`` (also as
        ``param_alpha_feature``, ``param_alpha_prototype`` and ``param_n_batches``),
        ``split{i}_test_log_loss``, ``mean_test_log_loss``, ``std_test_log_loss``,
        ``rank_test_log_loss``, the same four for ``scoring`` when it is not the log-loss (e.g.
        ``mean_test_roc_auc``; rank 1 is the highest), ``mean_n_prototypes``,
        ``mean_n_features`` and ``mean_fit_time`` (seconds per fit with ``max_batches`` batches,
        the same for every batch count of one alpha). With ``n_batches_no_change``, a point
        that some fold did not score (its fit stopped earlier) has NaN means and standard
        deviations and ranks after every scored point.
    best_index_ : int
        Row of ``cv_results_`` selected by the 1-SE rule (``selection="best"``: of the best mean).
    best_params_ : dict
        ``{"alpha_feature": ..., "n_batches": ...}`` of the selected point, with
        ``"alpha_prototype"`` when it has a grid.
    threshold_ : float
        Lowest mean validation log-loss plus its standard deviation over the folds (ddof=1); with
        another ``scoring``, its highest mean less its standard deviation.
    transformer_ : transformer or None
        ``transformer`` fitted on all the rows (None without one).
    best_estimator_ : PrototypeClassifier
        Refitted on all the data with the selected parameters and ``tol=refit_tol`` (with warm
        starts, at the end of the same stretch of the alpha_feature path as in the search, see
        Notes).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X has string column names.
    n_splits_ : int
        Number of cross-validation splits.
    n_iter_ : ndarray of shape (n_batches,) of int
        L-BFGS-B iterations per batch of the refitted model.
    search_time_ : float
        Seconds spent on the cross-validated search.
    refit_time_ : float
        Seconds spent on the refit.

    See Also
    --------
    discrim.prototype.PrototypeClassifier : The model being tuned.

    Notes
    -----
    Each task fits one fold along (a stretch of) the alpha_feature path, from the smallest value
    to the largest: a classifier with ``max_batches`` batches per alpha, whose
    ``staged_predict_proba`` on the validation rows gives the log-loss for every batch count at
    once. The path is fitted in increasing order because the likelihood's gradient in a feature
    weight v_d is proportional to v_d: a zero feature weight is never revived, so warm starts
    must move towards sparser solutions. A warm start takes the previous alpha's feature weights
    and, for candidates that were prototypes before (matched by training row), their weights;
    candidates the previous fit dropped start at 0 and new candidates at 1 as in a cold start. A
    batch that was empty at the previous alpha starts empty (``w = 0``): unless a prototype
    weight wants to grow there, it stays empty after one evaluation (see
    :class:`discrim.model_selection._search.PathWarmStart`). A batch whose loosely solved
    objective is not below that of the empty batch is left empty. The objective is not convex, so a warm start
    can end in a better optimum than a cold start at the same alpha_feature (at large penalties a
    cold start often collapses to the marginal model); the refit therefore repeats the selected
    alpha's stretch of the path on all the data (intermediate fits as in the search, only the
    selected number of batches), so that the refitted model is the one the search scored. Its last
    fit is solved to ``refit_tol`` and ``max_iter``, and a batch that the loosely solved path left
    empty starts cold there instead of from the empty solution, so that a batch which needs more
    iterations than ``search_max_iter`` to fill is not left empty by the search's budget (see
    :func:`discrim.model_selection._search.refit_path`).

    With ``n_batches_no_change``, each fit grows one batch at a time (the classifier's warm
    continuation, which draws batch ``b`` from the same random stream as the one fit would) and
    stops once its validation loss has not improved for that many batches; the counts it
    scored are those of the same fit continued to ``max_batches``, the later ones are missing
    from the selection.

    Folds run in parallel. Each fold's path runs as a chain of tasks of a few alphas each, a task
    handing its warm start over to the next (possibly in another process): the fits are those of
    one long task, and the workers share the work more evenly than whole folds would allow (five
    folds on two workers take about 2.5 fold lengths instead of 3). When ``n_jobs`` exceeds the
    number of folds, each fold's path is cut into stretches that start cold, so results can
    differ slightly with the number of workers beyond the number of folds; up to it they are
    identical, and they never depend on the joblib backend.

    The selection follows the report: ``threshold_`` is the lowest mean log-loss plus its
    standard deviation (the sample standard deviation over the folds, ddof=1, as in the original
    proset; scikit-learn's ``std_test_score`` uses ddof=0); among the grid points whose mean is
    within it, the largest alpha_feature is taken, then the largest alpha_prototype, then the
    fewest batches. With ``scoring="roc_auc"`` or ``"balanced_accuracy"`` the same rule runs on
    the negated score. With ``selection="best"`` the point of the best mean is taken instead
    (``threshold_`` is still reported).

    Symbols of the proset report: alpha_feature is lambda_v; the batch count is B.

    Examples
    --------
    >>> from discrim.datasets import load_benchmark
    >>> from discrim.model_selection import PrototypeClassifierCV
    >>> X_train, X_test, y_train, y_test = load_benchmark("iris-2f")
    >>> search = PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2], max_batches=2, cv=3,
    ...                                random_state=0).fit(X_train, y_train)
    >>> sorted(search.best_params_)
    ['alpha_feature', 'n_batches']
    """

    _parameter_constraints = {
        "alpha_feature_grid": ["array-like", None],
        "max_batches": [Interval(Integral, 0, MAX_BATCHES, closed="both")],
        "n_batches_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "no_change_tol": [Interval(Real, 0, None, closed="left")],
        "alpha_prototype_grid": ["array-like", None],
        "scoring": [StrOptions({"log_loss", *SCORES})],
        "selection": [StrOptions({"one_se", "best"})],
        "transformer": [HasMethods(["fit", "transform"]), None],
        "cv": ["cv_object"],
        # joblib has no meaning for 0 ("n_jobs == 0 in Parallel has no meaning"): refuse it here
        "n_jobs": [Interval(Integral, None, -1, closed="right"), Interval(Integral, 1, None, closed="left"), None],
        "search_tol": [Interval(Real, 0, None, closed="neither")],
        "search_max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "search_ftol": [Interval(Real, 0, None, closed="left"), None],
        "refit_tol": [Interval(Real, 0, None, closed="neither")],
        "warm_start": ["boolean"],
        # a Generator as PrototypeClassifier takes: as_seed_sequence draws the search's seeds from it
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["verbose"],
        "callback": [callable, None],
        **{name: PrototypeClassifier._parameter_constraints[name] for name in _PASSTHROUGH},
    }

    def __init__(
        self,
        alpha_feature_grid: ArrayLike | None = None,
        max_batches: int = 10,
        *,
        n_batches_no_change: int | None = None,
        no_change_tol: float = 0.01,
        alpha_prototype_grid: ArrayLike | None = None,
        selection: Literal["one_se", "best"] = "one_se",
        scoring: Literal["log_loss", "roc_auc", "balanced_accuracy"] = "log_loss",
        transformer: Any = None,
        cv: int | Any | Iterable[Any] = 5,
        n_jobs: int | None = None,
        search_tol: float = 1e-5,
        search_max_iter: int | None = 30,
        search_ftol: float | None = 2.2e-6,
        refit_tol: float = 1e-5,
        warm_start: bool = True,
        n_candidates: int = 1000,
        max_fraction: float = 0.5,
        l1_ratio_feature: float = 0.05,
        alpha_prototype: float = 1e-8,
        l1_ratio_prototype: float = 0.05,
        max_iter: int = 15000,
        empty_check_iter: int = TRIVIAL_CHECK_ITER,
        max_samples: int | float | None = None,
        dtype: Literal["float64", "float32"] = "float64",
        backend: Literal["numpy", "torch"] = "numpy",
        device: Device = None,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        callback: Callable[[SearchProgress], Any] | None = None,
    ) -> None:
        self.alpha_feature_grid = alpha_feature_grid
        self.max_batches = max_batches
        self.n_batches_no_change = n_batches_no_change
        self.no_change_tol = no_change_tol
        self.alpha_prototype_grid = alpha_prototype_grid
        self.selection = selection
        self.scoring = scoring
        self.transformer = transformer
        self.cv = cv
        self.n_jobs = n_jobs
        self.search_tol = search_tol
        self.search_max_iter = search_max_iter
        self.search_ftol = search_ftol
        self.refit_tol = refit_tol
        self.warm_start = warm_start
        self.n_candidates = n_candidates
        self.max_fraction = max_fraction
        self.l1_ratio_feature = l1_ratio_feature
        self.alpha_prototype = alpha_prototype
        self.l1_ratio_prototype = l1_ratio_prototype
        self.max_iter = max_iter
        self.empty_check_iter = empty_check_iter
        self.max_samples = max_samples
        self.dtype = dtype
        self.backend = backend
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.callback = callback

    def _alpha_grid(self):
        if self.alpha_feature_grid is None:
            return np.logspace(-6, -1, 11)
        grid = _grid_values("alpha_feature_grid", self.alpha_feature_grid)
        if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
            raise ValueError(
                "alpha_feature_grid must be a non-empty list of positive, finite values (every one of them: a "
                f"penalty of 0 is not searched), e.g. np.logspace(-6, -1, 11); got {self.alpha_feature_grid!r}."
            )
        if grid.size > MAX_ALPHAS:
            raise ValueError(
                f"alpha_feature_grid holds {grid.size} values; at most {MAX_ALPHAS} are supported (each "
                "is one fit per fold): pass a coarser grid, e.g. np.logspace(-6, -1, 11)."
            )
        if np.unique(grid).size != grid.size:
            raise ValueError("alpha_feature_grid holds a value twice: give distinct values.")
        return grid

    def _prototype_grid(self):
        """alpha_prototype per path: the grid's values, or the one fixed value."""
        if self.alpha_prototype_grid is None:
            return np.array([self.alpha_prototype], dtype=np.float64)
        grid = _grid_values("alpha_prototype_grid", self.alpha_prototype_grid)
        if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
            raise ValueError(
                "alpha_prototype_grid must be a non-empty list of non-negative, finite values (every one of "
                f"them), e.g. [1e-8, 1e-4]; got {self.alpha_prototype_grid!r}."
            )
        if grid.size > MAX_ALPHAS:
            raise ValueError(f"alpha_prototype_grid holds {grid.size} values; at most {MAX_ALPHAS} are supported.")
        if np.unique(grid).size != grid.size:
            raise ValueError("alpha_prototype_grid holds a value twice: give distinct values.")
        return grid

    def _template(self, tol, max_iter=None, ftol=None, alpha_prototype=None):
        params = {name: getattr(self, name) for name in _PASSTHROUGH}
        if max_iter is not None:
            params["max_iter"] = max_iter
        if alpha_prototype is not None:
            params["alpha_prototype"] = float(alpha_prototype)
        return PrototypeClassifier(**params, tol=tol, ftol=ftol)

    def _fold_rows(self, X, y, splits):
        """X transformed by a clone of ``transformer`` fitted on each fold's training part, or None."""
        if self.transformer is None:
            return None
        return tuple(_transformed(clone(self.transformer).fit(_safe_indexing(X, train), y[train]), X)
                     for train, _ in splits)

    def _splitter(self, seed, groups):
        if isinstance(self.cv, Integral):
            if groups is not None:
                return StratifiedGroupKFold(n_splits=self.cv, shuffle=True, random_state=seed)
            return StratifiedKFold(n_splits=self.cv, shuffle=True, random_state=seed)
        return check_cv(self.cv, classifier=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is a missing value: the factor 1 in every kernel
        return tags

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
            groups: ArrayLike | None = None) -> Self:
        """Run the cross-validated search and refit the selected model on all the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, best scaled to unit spread (the penalty treats all features alike); an
            offset does not matter (see :class:`~discrim.prototype.PrototypeClassifier`'s Notes).
            The search splits the rows on the host: a dask array or DataFrame is computed into
            memory (fit :class:`~discrim.prototype.PrototypeClassifier` with chosen parameters
            on data larger than memory).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights used in every fit and in the validation log-loss.
        groups : array-like of shape (n_samples,), default=None
            Group labels: rows of one group stay in one fold (with an int ``cv``,
            ``StratifiedGroupKFold`` is used).

        Returns
        -------
        self : PrototypeClassifierCV
        """
        from joblib import effective_n_jobs

        X_in = X
        # the search splits rows on the host; each fit moves its rows to the device once
        # NaN is a missing value, as in PrototypeClassifier: scored, never drawn as a prototype
        if self.transformer is None:
            X = check_numeric_table(X)  # a text or categorical column named, as PrototypeClassifier does
            X, y = validated_training_data(self, X, y, dtype=np.float64, on_host=True, allow_nan=True)
        else:
            # the transformer reads X as given (a ColumnTransformer encodes a DataFrame's text and
            # categories in every fold): only its output must be numbers, which the folds check
            X, y = _raw_training_data(self, X, y)
        check_no_unlabelled_marker(y, fix="the search learns from labelled rows only, so leave those rows out")
        classes, y_idx = check_labels(y)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        if self.transformer is None and np.isnan(X).any():
            check_observed_columns(~np.isnan(X), sample_weight)
        alphas = self._alpha_grid()
        prototype_alphas = self._prototype_grid()
        n_a, n_p = alphas.shape[0], prototype_alphas.shape[0]
        # one search template per alpha_prototype (path p of every fold uses templates[p])
        templates = [self._template(self.search_tol, self.search_max_iter, self.search_ftol, a) for a in prototype_alphas]

        seeds = [int(s.generate_state(1)[0]) for s in as_seed_sequence(self.random_state).spawn(3)]
        splitter = self._splitter(seeds[0], groups)
        splits = list(splitter.split(X, y_idx, groups))
        n_splits = len(splits)
        if n_splits < 2:
            raise ValueError(f"cv must give at least 2 splits; it gave {n_splits}.")
        _check_fold_class_counts(splits, y_idx, sample_weight, classes, self.max_fraction,
                                 None if self.max_samples is None else templates[0]._subsample_size)
        _check_validation_parts(splits, y_idx, sample_weight, classes, self.scoring)
        fold_seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seeds[1]).spawn(n_splits)]
        X_folds = self._fold_rows(X, y, splits)

        # Grid points c = p * n_a + a (alpha_prototype p, alpha_feature a); every p is a path of
        # its own that runs up alpha_feature (see Notes)
        feature_order = np.argsort(alphas, kind="stable")
        order = np.concatenate([p * n_a + feature_order for p in range(n_p)])
        alpha_f, alpha_p = np.tile(alphas, n_p), np.repeat(prototype_alphas, n_a)
        tasks = plan_tasks(n_splits, n_a, effective_n_jobs(self.n_jobs), n_paths=n_p)
        B = self.max_batches
        split_losses = np.empty((n_splits, n_p * n_a, B + 1))
        split_scores = None if self.scoring == "log_loss" else np.empty_like(split_losses)
        n_proto = np.zeros_like(split_losses)
        n_feat = np.zeros_like(split_losses)
        fit_time = np.zeros((n_splits, n_p * n_a))

        def job(fold, piece, path_state=None):
            grid = order[piece]
            return (templates[int(grid[0]) // n_a], splits[fold][0], splits[fold][1], fold, alpha_f[grid], grid,
                    fold_seeds[fold], B, self.warm_start, path_state, self.scoring, self.n_batches_no_change,
                    self.no_change_tol)

        first_jobs, follow_up, n_tasks = plan_chains(tasks, order, self.warm_start, job)

        start = time.perf_counter()
        results = run_unordered(fit_path, first_jobs, self.n_jobs, fork_safe=self.backend == "numpy" and self.device is None,
                                shared={"X": X, "y_idx": y_idx, "sample_weight": sample_weight, "X_folds": X_folds},
                                follow_up=follow_up)
        for n_done, res in enumerate(results, start=1):
            split_losses[res.fold, res.alpha_index] = res.log_loss
            if split_scores is not None:
                split_scores[res.fold, res.alpha_index] = res.score
            n_proto[res.fold, res.alpha_index] = res.n_prototypes
            n_feat[res.fold, res.alpha_index] = res.n_features
            fit_time[res.fold, res.alpha_index] = res.fit_time
            seconds = float(np.sum(res.fit_time))
            logger.log(
                logging.INFO if self.verbose else logging.DEBUG,
                "search task %d/%d done: fold %d, alpha_feature %s, alpha_prototype %.3g, %.2f s, %d L-BFGS-B iterations",
                n_done, n_tasks, res.fold, ", ".join(f"{a:.3g}" for a in alpha_f[res.alpha_index]),
                alpha_p[res.alpha_index[0]], seconds, int(np.sum(res.n_iter)),
            )
            if self.callback is not None:
                self.callback(SearchProgress(n_done, n_tasks, res.fold, tuple(map(float, alpha_f[res.alpha_index])),
                                             seconds))
        self.search_time_ = time.perf_counter() - start

        # the 1-SE rule on a loss: the log-loss, or the negated score
        selected = split_losses if split_scores is None else -split_scores
        mean = selected.mean(axis=0)
        std = selected.std(axis=0, ddof=1)  # as the original proset
        # rows ordered from the least to the most sparse: alpha_feature, then alpha_prototype
        sparsity = np.empty(n_p * n_a, dtype=np.int64)
        sparsity[np.lexsort((alpha_p, alpha_f))] = np.arange(n_p * n_a)
        best, (c_sel, b_sel), threshold = select_one_se(mean, std, sparsity)
        if self.selection == "best":
            c_sel, b_sel = best
        self.threshold_ = threshold if split_scores is None else -threshold
        self.cv_results_ = _cv_results(alpha_f, alpha_p, B, split_losses, n_proto, n_feat, fit_time,
                                       None if split_scores is None else (self.scoring, split_scores),
                                       with_prototype=self.alpha_prototype_grid is not None)
        self.best_index_ = c_sel * (B + 1) + b_sel
        self.best_params_ = dict(self.cv_results_["params"][self.best_index_])
        self.n_splits_ = n_splits

        start = time.perf_counter()
        self.transformer_ = None
        X_refit = X_in
        if self.transformer is not None:
            # a DataFrame as given, so that its column names stay with the transformer and
            # predictions on a DataFrame pass scikit-learn's feature-name check; other input
            # (a device tensor among it) as the host array the folds' transformers saw
            rows = X_in if hasattr(X_in, "columns") else X
            self.transformer_ = clone(self.transformer).fit(rows, y)
            X_refit = _transformed(self.transformer_, rows)
        # the task that fitted the selected point: the refit repeats its stretch of the path
        chunk = next(order[c] for fold, c in tasks if fold == 0 and c_sel in order[c])
        path = alpha_f[chunk[: int(np.flatnonzero(chunk == c_sel)[0]) + 1]]
        p_sel = alpha_p[c_sel]
        self.best_estimator_ = refit_path(
            templates[c_sel // n_a], self._template(self.refit_tol, alpha_prototype=p_sel), X_refit, y, sample_weight,
            path, b_sel, seeds[2], self.warm_start, X.shape[1] if X_folds is None else X_folds[0].shape[1],
        )
        self.n_iter_ = np.asarray(self.best_estimator_.n_iter_, dtype=int)
        self.refit_time_ = time.perf_counter() - start
        self.classes_ = classes
        logger.log(
            logging.INFO if self.verbose else logging.DEBUG,
            "selected alpha_feature=%.3g, n_batches=%d (threshold %.4f); search %.1f s, refit %.1f s",
            self.best_params_["alpha_feature"], b_sel, self.threshold_, self.search_time_, self.refit_time_,
        )
        return self

    def set_params(self, **params: Any) -> Self:
        """Set the search's parameters (scikit-learn's ``set_params``); ``device`` moves the refitted model too.

        The search predicts with ``best_estimator_``, which kept the fit's device: ``set_params(device=None)``
        after loading a model fitted on "cuda" (the documented way to use it on a machine without one)
        still computed there, and failed.

        Parameters
        ----------
        **params : dict
            Parameter names and values, as ``get_params`` lists them.

        Returns
        -------
        self : PrototypeClassifierCV
        """
        super().set_params(**params)
        if "device" in params and hasattr(self, "best_estimator_"):
            self.best_estimator_.set_params(device=self.device)
        return self

    def _check_loaded_state(self):
        """Check the fitted state a model file gave this search: ``best_estimator_`` a fitted
        PrototypeClassifier (which checks its own state before this, see
        :func:`discrim.persistence.load_model`) of the search's classes, taking the search's
        ``n_features_in_`` features, or ``transformer_``'s; raise FittedStateError naming the attribute."""
        n_features, classes, best, transformer = state.fitted_attributes(
            self, "n_features_in_", "classes_", "best_estimator_", "transformer_")
        n_features = state.count(n_features, "n_features_in_", minimum=1)
        if not isinstance(best, PrototypeClassifier) or not state.is_fitted(best):
            raise state.FittedStateError(f"best_estimator_ is a {type(best).__name__}, not a fitted "
                                         "PrototypeClassifier")
        state.array(classes, "classes_", (None,), kind=None)
        if not np.array_equal(classes, best.classes_):
            raise state.FittedStateError("classes_ differs from best_estimator_.classes_")
        if transformer is None and best.n_features_in_ != n_features:
            raise state.FittedStateError(f"best_estimator_ takes {best.n_features_in_} features, not "
                                         f"n_features_in_ = {n_features}")
        if transformer is not None:
            if not hasattr(transformer, "transform"):
                raise state.FittedStateError(f"transformer_ is a {type(transformer).__name__}, not a transformer")
            if getattr(transformer, "n_features_in_", n_features) != n_features:
                raise state.FittedStateError(f"transformer_ takes {transformer.n_features_in_} features, not "
                                             f"n_features_in_ = {n_features}")
        if getattr(self, "feature_names_in_", None) is not None:
            state.array(self.feature_names_in_, "feature_names_in_", (n_features,), kind=None, dims="(n_features_in_,)")

    def _fitted_model(self):
        check_is_fitted(self)
        # X goes to the refitted classifier as given: it was fitted on the same input as this
        # search (so with the same feature names) and runs scikit-learn's checks itself.
        return self.best_estimator_

    def _rows(self, X):
        """X as the refitted classifier takes it: through ``transformer_`` when there is one."""
        check_is_fitted(self)
        if getattr(self, "transformer_", None) is None:
            return X
        if is_dask(X) and hasattr(X, "columns"):
            # partition by partition, as the pandas DataFrames the transformer was fitted on: their text
            # and category columns too (a ColumnTransformer encodes them), which a dask array cannot hold
            import pandas as pd

            check_feature_names(self, X, reset=False)
            width = self._fitted_model().n_features_in_
            return X.map_partitions(_transformed_partition, self.transformer_,
                                    meta=pd.DataFrame(np.empty((0, width)), columns=range(width)))
        return self._transformed_rows(X)

    @blockwise
    def _transformed_rows(self, X):
        """``transformer_`` on X: chunk by chunk for a dask X (which stays lazy, so that the predictions
        are dask arrays), on the host for a tensor, whose transformed rows return to its device."""
        return _transformed(self.transformer_, X)

    @overload
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None = None, n_batches: int | None = None) -> Array: ...
    @overload
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None, n_batches: BatchCounts) -> list[Array]: ...
    @overload
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                *, n_batches: BatchCounts) -> list[Array]: ...
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None = None,
                n_batches: int | BatchCounts | None = None) -> Array | list[Array]:
        """Predict classes with the refitted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_classes,), default=None
            Prior probabilities of the classes for this call (Bayes' rule with other priors, without
            refitting), in the order of ``classes_``; None uses the fitted ones.
        n_batches : int, list of int or None, default=None
            Use only the first ``n_batches`` batches of the refitted model; a list gives one result
            per count (see :meth:`discrim.prototype.PrototypeClassifier.predict_proba`).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._fitted_model().predict(self._rows(X), priors=priors, n_batches=n_batches)

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
        """Class probabilities of the refitted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors, n_batches : see :meth:`predict`

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        return self._fitted_model().predict_proba(self._rows(X), priors=priors, n_batches=n_batches)

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
        """Log class probabilities of the refitted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors, n_batches : see :meth:`predict`

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return self._fitted_model().predict_log_proba(self._rows(X), priors=priors, n_batches=n_batches)

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
        """Accuracy of the refitted model (scikit-learn's ``score`` of a classifier).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        n_batches : int, list of int or None, default=None
            See :meth:`predict`.

        Returns
        -------
        score : float, or ndarray of shape (len(n_batches),) for a list
        """
        return self._fitted_model().score(self._rows(X), y, sample_weight=sample_weight, n_batches=n_batches)

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
        """Mean log-probability of the true classes under the refitted model, proset's score.

        See :meth:`discrim.prototype.PrototypeClassifier.log_likelihood`.

        Parameters
        ----------
        X, y, sample_weight, n_batches
            As for :meth:`score`.

        Returns
        -------
        log_likelihood : float, or ndarray of shape (len(n_batches),) for a list
        """
        return self._fitted_model().log_likelihood(self._rows(X), y, sample_weight=sample_weight, n_batches=n_batches)

    def staged_predict_proba(self, X: ArrayLike, n_batches: int | None = None) -> Iterator[Array]:
        """Class probabilities of the refitted model's first ``b`` batches, ``b = 0, ..., n_batches``.

        See :meth:`discrim.prototype.PrototypeClassifier.staged_predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        n_batches : int or None, default=None

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._fitted_model().staged_predict_proba(self._rows(X), n_batches=n_batches)

    def staged_predict(self, X: ArrayLike, n_batches: int | None = None) -> Iterator[Array]:
        """Predicted classes of the refitted model's first ``b`` batches, ``b = 0, ..., n_batches``.

        Parameters
        ----------
        X, n_batches
            As for :meth:`staged_predict_proba`.

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._fitted_model().staged_predict(self._rows(X), n_batches=n_batches)

    def familiarity(self, X: ArrayLike, n_batches: int | None = None) -> Array:
        """How well the refitted model's prototypes cover each row.

        See :meth:`discrim.prototype.PrototypeClassifier.familiarity`.

        Parameters
        ----------
        X, n_batches
            As for :meth:`staged_predict_proba`.

        Returns
        -------
        familiarity : ndarray of shape (n_samples,)
        """
        return self._fitted_model().familiarity(self._rows(X), n_batches=n_batches)

    def export(self, *, n_batches: int | None = None, feature_names: Sequence[str] | None = None,
               sample_names: ArrayLike | None = None, report: PathLike | None = None) -> pd.DataFrame:
        """Tabulate the refitted model's prototypes, in the model's units and, with a ``transformer``,
        the search's input units (see :func:`discrim.prototype.export`).

        Parameters
        ----------
        n_batches, feature_names, sample_names, report
            See :meth:`discrim.prototype.PrototypeClassifier.export`.

        Returns
        -------
        table : pandas.DataFrame
        """
        from discrim.prototype import export

        return export(self, n_batches=n_batches, feature_names=feature_names, sample_names=sample_names, report=report)

    def explain(self, X: ArrayLike, y: object = None, reference: ArrayLike | None = None, *,
                n_prototypes: int | None = 10, n_batches: int | None = None, feature_names: Sequence[str] | None = None,
                sample_names: ArrayLike | None = None, report: PathLike | None = None) -> Explanation:
        """Explain the refitted model's prediction for one row given in the search's input units
        (see :func:`discrim.prototype.explain`).

        Parameters
        ----------
        X : array-like of shape (n_features,) or (1, n_features)
        y, reference, n_prototypes, n_batches, feature_names, sample_names, report
            See :meth:`discrim.prototype.PrototypeClassifier.explain`.

        Returns
        -------
        explanation : Explanation
        """
        from discrim.prototype import explain

        return explain(self, X, y, reference=reference, n_prototypes=n_prototypes, n_batches=n_batches,
                       feature_names=feature_names, sample_names=sample_names, report=report)


def _check_validation_parts(splits, y_idx, sample_weight, classes, scoring):
    """Refuse a fold whose validation part scores nothing: no row of positive weight (every
    weighted score is 0 / 0 there), or, for ``scoring="roc_auc"``, rows of positive weight of
    fewer than two classes (no ROC curve). Its score would be NaN at every grid point, and so
    would every mean over the folds.

    Parameters
    ----------
    splits : list of (ndarray of int, ndarray of int)
        Training and validation rows of each fold.
    y_idx : ndarray of shape (n_samples,) of int
    sample_weight : ndarray of shape (n_samples,)
    classes : ndarray of shape (n_classes,)
        The user's labels, for the message.
    scoring : str
    """
    for fold, (_, test) in enumerate(splits):
        present = np.flatnonzero(np.bincount(y_idx[test], weights=sample_weight[test], minlength=classes.shape[0]))
        where = f"the validation part of fold {fold + 1} of {len(splits)}"
        if present.size == 0:
            raise ValueError(
                f"{where} has no rows of positive sample_weight, so its validation {scoring} is undefined: "
                "pass a cv whose validation parts each hold rows of positive weight (for example an iterable of "
                "(train, test) index arrays), or give rows there positive weight.")
        if scoring == "roc_auc" and present.size < 2:
            only = plain_label(classes[present[0]])
            raise ValueError(
                f'scoring="roc_auc": {where} has rows of positive weight of class {only!r} only, where ROC-AUC '
                "is not defined. Use fewer folds in cv (larger validation parts), a stratified cv, or "
                'scoring="log_loss" or "balanced_accuracy".')


def _check_fold_class_counts(splits, y_idx, sample_weight, classes, max_fraction, subsample_size=None):
    """Refuse a fold whose training part has too few rows of a class, naming the label and the fold.

    The same minimum-cases condition each fold's PrototypeClassifier checks (there on class
    indices, without knowing it fits a fold), checked for every fold before any fit. A class
    absent from a fold's training part is not checked: that fold's model predicts it with
    probability 0.

    Parameters
    ----------
    splits : list of (ndarray of int, ndarray of int)
        Training and validation rows of each fold.
    y_idx : ndarray of shape (n_samples,) of int
    sample_weight : ndarray of shape (n_samples,)
    classes : ndarray of shape (n_classes,)
        The user's labels, for the message.
    max_fraction : float
    subsample_size : callable or None, default=None
        ``max_samples`` set: the rows of a training part's class-stratified subsample given its
        rows of positive weight (:meth:`PrototypeClassifier._subsample_size`), whose class counts
        every batch of that fold's fits checks the same way.
    """
    n_classes = classes.shape[0]
    positive = sample_weight > 0
    # More folds make the training parts larger (k - 1 of k parts): with k >= N_k a stratified
    # split leaves all but at most one of a class's N_k rows for training, so the advice is
    # offered where N_k - 1 rows would be enough.
    all_but_one = np.bincount(y_idx[positive], minlength=n_classes) - 1
    more_helps = ~min_cases_violations(np.maximum(all_but_one, 0), max_fraction)
    for fold, (train, _) in enumerate(splits):
        present = np.flatnonzero(np.bincount(y_idx[train], minlength=n_classes))
        counts = np.bincount(y_idx[train[positive[train]]], minlength=n_classes)[present]
        bad = np.flatnonzero(min_cases_violations(counts, max_fraction))
        if bad.size:
            more = ["use more folds in cv (larger training parts)"] if more_helps[present[bad[0]]] else []
            check_min_cases(counts, max_fraction, classes[present],
                            what=f"training part of fold {fold + 1} of {len(splits)} of the cross-validated search",
                            fixes=more + ["add rows of that class", "merge rare classes"])
        take = None if subsample_size is None else stratified_take(counts, subsample_size(int(counts.sum())))
        if take is not None:
            check_min_cases(take, max_fraction, classes[present],
                            what=f"subsample of max_samples={subsample_size.__self__.max_samples} rows of the training "
                                 f"part of fold {fold + 1} of {len(splits)} of the cross-validated search",
                            fixes=["raise max_samples (or set it to None)", "add rows of that class", "merge rare classes"])


def _raw_training_data(search, X, y):
    """X as given (its number of columns and names recorded on ``search``) and y as a 1-D array."""
    from sklearn.utils.validation import check_consistent_length, column_or_1d, validate_data

    from discrim.backend import to_numpy

    if is_dask(X):  # the search splits rows on the host: a dask DataFrame becomes a pandas one, as an array does numpy
        X = X.compute()
    if not hasattr(X, "columns"):  # a DataFrame stays one (its column names select the transformer's columns)
        X = np.asarray(to_numpy(X))  # host rows, as the folds' transformers take them
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional (n_samples, n_features); got shape {X.shape}.")
    validate_data(search, X, skip_check_array=True)  # n_features_in_ and feature_names_in_
    y = column_or_1d(np.asarray(y), warn=True)
    check_consistent_length(X, y)
    return X, y


def _transformed_partition(partition, transform):
    """:func:`_transformed` of a pandas partition, as a DataFrame on the partition's index."""
    import pandas as pd

    return pd.DataFrame(_transformed(transform, partition), index=partition.index)


def _transformed(transform, X):
    """``transform.transform(X)`` as a float64 ndarray (what the classifiers of the search take)."""
    out = transform.transform(X)
    if hasattr(out, "toarray"):  # a sparse result
        out = out.toarray()
    out = np.asarray(out, dtype=np.float64)
    n_rows = _num_samples(X)
    if out.ndim != 2 or out.shape[0] != n_rows:
        raise ValueError(f"transform gave an array of shape {out.shape} for {n_rows} rows; it must give "
                         "one row per input row.")
    return out


def _cv_results(alpha_f, alpha_p, max_batches, split_losses, n_proto, n_feat, fit_time, scored=None,
                with_prototype=False):
    """Flatten the (fold, grid point, batch count) arrays into scikit-learn's ``cv_results_`` layout.

    ``scored`` is ``(name, split_scores)`` for a score other than the log-loss (higher is better).
    """
    n_points, n_counts = split_losses.shape[1:]
    alpha_col = np.repeat(alpha_f, n_counts)
    proto_col = np.repeat(alpha_p, n_counts)
    batch_col = np.tile(np.arange(n_counts), n_points)
    if with_prototype:
        params = [{"alpha_feature": float(a), "alpha_prototype": float(p), "n_batches": int(b)}
                  for a, p, b in zip(alpha_col, proto_col, batch_col)]
    else:
        params = [{"alpha_feature": float(a), "n_batches": int(b)} for a, b in zip(alpha_col, batch_col)]
    results = {
        "params": params,
        "alpha_feature": alpha_col,
        "alpha_prototype": proto_col,
        "n_batches": batch_col,
        "param_alpha_feature": alpha_col.copy(),
        "param_alpha_prototype": proto_col.copy(),
        "param_n_batches": batch_col.copy(),
    }
    metrics = [("log_loss", split_losses, 1.0)] + ([] if scored is None else [(scored[0], scored[1], -1.0)])
    for name, splits, sign in metrics:
        for i in range(splits.shape[0]):
            results[f"split{i}_test_{name}"] = splits[i].ravel()
        flat_mean = splits.mean(axis=0).ravel()
        results[f"mean_test_{name}"] = flat_mean
        results[f"std_test_{name}"] = splits.std(axis=0, ddof=1).ravel()
        # Rank like scikit-learn: 1 is the best (lowest loss, highest score), ties share the smallest rank;
        # NaN (a point some fold did not score) sorts last, so those points share the rank after the scored ones.
        results[f"rank_test_{name}"] = (np.searchsorted(np.sort(sign * flat_mean), sign * flat_mean) + 1).astype(np.int32)
    results["mean_n_prototypes"] = n_proto.mean(axis=0).ravel()
    results["mean_n_features"] = n_feat.mean(axis=0).ravel()
    results["mean_fit_time"] = np.repeat(fit_time.mean(axis=0), n_counts)
    return results
