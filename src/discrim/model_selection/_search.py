"""The search engine for prototype sets: one fit per (fold, alpha_feature) scores every batch count."""

import logging
import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from discrim.prototype._solver import START_FEATURE_WEIGHT

logger = logging.getLogger(__name__)

# Tasks per stretch of the alpha_feature path (see split_stretch).
PIECES_PER_STRETCH = 3


@dataclass(frozen=True)
class PathResult:
    """Validation scores of one task: a run along part of the alpha_feature path on one fold.

    Attributes
    ----------
    fold : int
        Index of the cross-validation split.
    alpha_index : ndarray of shape (n_alphas,) of int
        Positions in the alpha_feature grid, in the order they were fitted.
    log_loss : ndarray of shape (n_alphas, max_batches + 1)
        Sample-weighted validation log-loss of the model truncated after b batches, b = 0..max_batches;
        NaN for the counts after a fit stopped early (``n_batches_no_change``).
    n_prototypes : ndarray of shape (n_alphas, max_batches + 1)
        Prototypes in the first b batches (NaN for a count not fitted, see ``log_loss``).
    n_features : ndarray of shape (n_alphas, max_batches + 1)
        Features with positive weight in at least one of the first b batches (NaN likewise).
    n_iter : ndarray of shape (n_alphas,) of int
        L-BFGS-B iterations summed over the batches of each fit.
    fit_time : ndarray of shape (n_alphas,)
        Seconds spent on each fit and its scoring.
    score : ndarray of shape (n_alphas, max_batches + 1) or None
        The validation score named by ``scoring`` (ROC-AUC or balanced accuracy, higher is
        better) of the model truncated after b batches; None when the search scores by log-loss.
    path_state : PathWarmStart or None
        The warm start after the last fit (None without warm starts): passed to the task that
        continues the path, it makes the continuation take the same steps as one long task.
    """

    fold: int
    alpha_index: np.ndarray
    log_loss: np.ndarray
    n_prototypes: np.ndarray
    n_features: np.ndarray
    n_iter: np.ndarray
    fit_time: np.ndarray
    score: object = None
    path_state: object = None


def weighted_log_loss(proba, y_idx, sample_weight, classes):
    """Sample-weighted mean negative log-probability of the true classes.

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_fitted_classes)
        Probabilities with columns in the order of ``classes``.
    y_idx : ndarray of shape (n_samples,) of int
        True classes as indices into the classes of the whole search.
    sample_weight : ndarray of shape (n_samples,)
    classes : ndarray of shape (n_fitted_classes,) of int
        The (sorted) class indices the fold's model was trained on; a class missing from the
        training fold gets probability 0, clipped like scikit-learn's ``log_loss`` at machine epsilon.

    Returns
    -------
    loss : float
    """
    col = np.searchsorted(classes, y_idx)
    col_ok = col < classes.shape[0]
    col = np.minimum(col, classes.shape[0] - 1)
    known = col_ok & (classes[col] == y_idx)
    p = np.where(known, proba[np.arange(y_idx.shape[0]), col], 0.0)
    p = np.clip(p, np.finfo(np.float64).eps, 1.0)
    return float(-np.sum(sample_weight * np.log(p)) / np.sum(sample_weight))


# Validation scores the search can select by besides the log-loss (higher is better for both).
SCORES = ("roc_auc", "balanced_accuracy")
# How reports and plots name each scoring
SCORE_LABELS = {"log_loss": "log-loss", "roc_auc": "ROC-AUC", "balanced_accuracy": "balanced accuracy"}


def best_mean_index(mean, scoring):
    """Index of the best mean score of a search (the lowest log-loss, the highest other score),
    over the points some fold scored (NaN: none did).

    Parameters
    ----------
    mean : ndarray of shape (n_points,)
    scoring : {"log_loss", "roc_auc", "balanced_accuracy"}

    Returns
    -------
    index : int
    """
    return int(np.nanargmin(mean) if scoring == "log_loss" else np.nanargmax(mean))


def threshold_label(scoring):
    """What a search's ``threshold_`` is, in words: the best mean and its standard deviation."""
    if scoring == "log_loss":
        return "min mean CV log-loss + std"
    return f"max mean CV {SCORE_LABELS[scoring]} - std"


def validation_score(scoring, proba, y_idx, sample_weight, classes, n_classes):
    """scikit-learn's ROC-AUC or balanced accuracy of one truncated model on the validation rows.

    Parameters
    ----------
    scoring : {"roc_auc", "balanced_accuracy"}
        ROC-AUC is one-vs-rest with the macro average for more than two classes
        (``roc_auc_score(..., multi_class="ovr", average="macro")``), of the positive class's
        probability for two. The macro average runs over the classes with rows of positive
        weight in ``y_idx``: a class the validation rows lack has no one-vs-rest curve (scikit-learn
        gives NaN for it, and a NaN mean for the fold).
    proba : ndarray of shape (n_samples, n_fitted_classes)
        Probabilities with columns in the order of ``classes``.
    y_idx : ndarray of shape (n_samples,) of int
        True classes as indices into the classes of the whole search.
    sample_weight : ndarray of shape (n_samples,)
    classes : ndarray of shape (n_fitted_classes,) of int
        The (sorted) class indices the fold's model was trained on; the others get probability 0.
    n_classes : int
        Classes of the whole search.

    Returns
    -------
    score : float
    """
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    full = np.zeros((proba.shape[0], n_classes))
    full[:, classes] = proba
    if scoring == "balanced_accuracy":
        return float(balanced_accuracy_score(y_idx, np.argmax(full, axis=1), sample_weight=sample_weight))
    if n_classes == 2:
        return float(roc_auc_score(y_idx == 1, full[:, 1], sample_weight=sample_weight))
    # scikit-learn's macro one-vs-rest average, bit for bit where every class is present, over the
    # present classes only
    present = np.flatnonzero(np.bincount(y_idx, weights=sample_weight, minlength=n_classes) > 0)
    return float(np.mean([roc_auc_score(y_idx == c, full[:, c], sample_weight=sample_weight) for c in present]))


class PathWarmStart:
    """The ``initial_solution`` callback of ``PrototypeClassifier._fit_validated`` along a penalty path.

    Each fit of the path starts from the solution of the previous one (same training rows, a
    smaller alpha_feature). The callback records the candidates every batch draws, so that the
    next fit knows which of its candidates the previous fit dropped.

    Parameters
    ----------
    n_features : int
        Columns of X (the length D of the feature weights).
    restart_empty : bool, default=False
        Start a batch whose predecessor was empty cold (return None) instead of from the empty
        solution (see Notes). The refit's last fit sets it: see :func:`refit_path`.

    Notes
    -----
    For batch ``b`` with candidates ``cand``, the start is ``(v0, w0)``: ``v0`` of shape
    (n_features,) holds the previous batch's feature weights (0 for features it dropped);
    ``w0`` of shape (n_candidates,) holds a candidate's previous prototype weight if it was a
    prototype of the previous batch (matched by sample index; merged duplicates carry their
    combined weight on the first of them), 0 if it was a candidate there but not kept, and 1,
    the cold-start value, if it is a new candidate.

    A batch whose predecessor was empty starts from that empty solution, ``w0 = 0``, with the
    feature weights of the last non-empty solution of the batch along the path, or the cold-start
    feature weights if it never had one (all-zero feature weights are a stationary point that
    L-BFGS-B would never leave). At ``w = 0`` the data term's gradient in ``v`` vanishes, so the
    solver declares the batch empty after one evaluation unless some prototype weight wants to
    grow, and otherwise probes it briefly: an empty batch that stays empty costs a few
    evaluations instead of a cold solve. With ``restart_empty`` such a batch starts cold instead.
    """

    def __init__(self, n_features, restart_empty=False):
        self.n_features = n_features
        self.restart_empty = restart_empty
        self._batches = []
        self._last_feature_weights = {}  # batch number -> v of its last non-empty solution
        self._previous_candidates = {}
        self._current_candidates = {}

    def advance(self, batches):
        """Make a finished fit (its batches, and the candidates recorded during it) the previous one.

        Parameters
        ----------
        batches : list of PrototypeBatch
        """
        self._batches = list(batches)
        for b, batch in enumerate(self._batches):
            if batch.prototype_weights.shape[0] and batch.feature_index.shape[0]:
                v = np.zeros(self.n_features)
                v[batch.feature_index] = batch.feature_weights
                self._last_feature_weights[b] = v
        self._previous_candidates, self._current_candidates = self._current_candidates, {}

    def __call__(self, batch_number, candidate_sample_index):
        candidates = np.asarray(candidate_sample_index)
        self._current_candidates[batch_number] = candidates.copy()
        if batch_number >= len(self._batches):
            return None
        batch = self._batches[batch_number]
        if batch.prototype_weights.shape[0] == 0 or batch.feature_index.shape[0] == 0:
            if self.restart_empty:
                return None
            v_last = self._last_feature_weights.get(batch_number)
            if v_last is None:
                v_last = np.full(self.n_features, START_FEATURE_WEIGHT / self.n_features)
            return v_last.copy(), np.zeros(candidates.shape[0])
        v0 = np.zeros(self.n_features)
        v0[batch.feature_index] = batch.feature_weights
        w0 = np.ones(candidates.shape[0])
        dropped = self._previous_candidates.get(batch_number)
        if dropped is not None and dropped.size and candidates.size:
            was_candidate = np.zeros(max(int(candidates.max()), int(dropped.max())) + 1, dtype=bool)
            was_candidate[dropped] = True
            w0[was_candidate[candidates]] = 0.0  # the kept ones get their weight below
        order = np.argsort(batch.sample_index, kind="stable")
        known = batch.sample_index[order]
        pos = np.minimum(np.searchsorted(known, candidates), known.shape[0] - 1)
        matched = known[pos] == candidates
        w0[matched] = batch.prototype_weights[order[pos[matched]]]
        return v0, w0


def _fit_prototypes(classifier, X, y, sample_weight, initial_solution, quiet=True, validated=False, warm=False):
    """Fit ``classifier`` (with ``n_batches`` set) on (X, y), warm-started through ``initial_solution``.

    With ``warm`` the fitted batches are kept and batches are added until there are
    ``n_batches`` (the classifier's ``warm_start``): batch ``b`` draws from stream ``b`` of the
    seed either way, so a fit continued batch by batch equals one fit with all the batches.

    With ``quiet`` (the search's fits, whose iteration limit is the deliberate loose solve) their
    ConvergenceWarnings are silenced and their per-batch summaries logged at DEBUG.

    The fit goes through the classifier's own fitting entry ``_fit_validated`` (the one ``fit``
    uses, with the same random streams), so a cold start here equals ``classifier.fit``. With
    ``validated`` (the search's folds: a float ndarray and class indices, checked once for the
    whole search) the data are not checked again; otherwise they are checked as ``fit`` does.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    sample_weight = np.asarray(sample_weight, dtype=np.float64)
    if validated:
        classes = np.unique(y)
        classifier.n_features_in_ = X.shape[1]  # as validate_data sets it for an ndarray
        y_idx = np.searchsorted(classes, y)
    else:
        X, classes, y_idx, sample_weight = classifier._validate_training_data(X, y, sample_weight)
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore", ConvergenceWarning)
        classifier._fit_validated(X, classes, y_idx, sample_weight, warm=warm, initial_solution=initial_solution,
                                  log_level=logging.DEBUG if quiet else logging.INFO)
    return classifier


def _model_size(batches):
    """Cumulative prototypes and active features after b = 0..len(batches) batches."""
    n_proto = np.zeros(len(batches) + 1, dtype=int)
    n_feat = np.zeros(len(batches) + 1, dtype=int)
    active = set()
    for b, batch in enumerate(batches, start=1):
        if batch.prototype_weights.shape[0]:
            active.update(int(d) for d in batch.feature_index)
        n_proto[b] = n_proto[b - 1] + batch.prototype_weights.shape[0]
        n_feat[b] = len(active)
    return n_proto, n_feat


def _validation_loss(scoring, proba, y_idx, sample_weight, classes, n_classes):
    """The loss the 1-SE rule selects by for one truncated model: the log-loss, or the negated score."""
    if scoring == "log_loss":
        return weighted_log_loss(proba, y_idx, sample_weight, classes)
    return -validation_score(scoring, proba, y_idx, sample_weight, classes, n_classes)


def _fit_until_no_change(model, train, validation, initial_solution, max_batches, n_batches_no_change, scoring,
                         n_classes, no_change_tol=0.0):
    """Fit ``model`` batch by batch; stop once ``n_batches_no_change`` batches in a row did not
    lower the validation loss below the best so far by more than ``no_change_tol`` times its
    absolute value (or at ``max_batches``).

    Parameters
    ----------
    model : PrototypeClassifier
        Unfitted, with every parameter but ``n_batches`` set.
    train, validation : tuple of (X, y_idx, sample_weight)
        The fold's training and validation rows (validated: float rows, class indices).
    initial_solution : PathWarmStart or None
    max_batches : int
    n_batches_no_change : int
    scoring : str
        The score selected by (see :func:`_validation_loss`).
    n_classes : int
    no_change_tol : float, default=0.0
        Relative decrease of the best loss that counts as an improvement.

    Returns
    -------
    model : PrototypeClassifier
        Fitted with the batches up to the stop.

    Notes
    -----
    Batch ``b`` never depends on later batches and draws from its own random stream, so every
    batch count up to the stop scores exactly as in a fit with ``max_batches`` batches; the counts
    after it are not fitted. A batch that ends empty leaves the model (and its loss) unchanged and
    counts as a batch without improvement.
    """
    X_val, y_val, w_val = validation
    X_val = np.asarray(X_val, dtype=np.dtype(model.dtype))
    best, best_count = None, 0  # the first batch always sets the best
    q, scored = None, 0  # the validation rows' class scores of the first `scored` batches, each scored once
    for count in range(1, max_batches + 1):
        model.set_params(n_batches=count)
        _fit_prototypes(model, *train, initial_solution, validated=True, warm=count > 1)
        if q is None:
            q = model._marginal_scores(X_val)
        model._add_batch_scores(q, X_val, model.batches_[scored:])
        scored = len(model.batches_)
        proba = q / q.sum(axis=1, keepdims=True)
        loss = _validation_loss(scoring, proba, y_val, w_val, np.asarray(model.classes_), n_classes)
        if best is None or loss < best - no_change_tol * abs(best):
            best, best_count = loss, count
        elif count - best_count >= n_batches_no_change:
            break
    return model


def fit_path(template, train, test, fold, alphas, alpha_index, seed, max_batches, warm_start, path_state=None,
             scoring="log_loss", n_batches_no_change=None, no_change_tol=0.0, *, X, y_idx, sample_weight,
             X_folds=None):
    """Fit one fold along a stretch of the alpha_feature path and score every batch count.

    Parameters
    ----------
    template : PrototypeClassifier
        Unfitted; cloned for each alpha with ``alpha_feature``, ``n_batches=max_batches`` and
        ``random_state=seed`` set.
    train, test : ndarray of int
        Rows of the training and validation parts of the fold.
    fold : int
    alphas : ndarray of shape (n_alphas,)
        alpha_feature values in the order they are fitted (increasing, see Notes).
    alpha_index : ndarray of shape (n_alphas,) of int
        Their positions in the grid.
    seed : int
        Seed of every fit of this fold: batch 1 then draws the same candidates for every alpha,
        which is what makes the warm start effective.
    max_batches : int
    warm_start : bool
        Start each fit from the solution of the previous alpha.
    path_state : PathWarmStart or None, default=None
        With ``warm_start``, the ``path_state`` of the task that fitted the stretch of the path
        just before this one (None: this stretch starts cold).
    scoring : {"log_loss", "roc_auc", "balanced_accuracy"}, default="log_loss"
        Besides the log-loss (always computed), the score of :func:`validation_score` per batch
        count.
    n_batches_no_change : int or None, default=None
        Stop a fit once this many batches in a row did not improve its validation loss (the
        ``scoring`` one) on the best so far (see :func:`_fit_until_no_change`); the batch counts
        after the stop are not scored (NaN). None fits ``max_batches`` batches.
    no_change_tol : float, default=0.0
        Relative decrease of a fit's best validation loss that counts as an improvement.
    X : ndarray of shape (n_samples, n_features)
        All the rows of the search (keyword-only: the data every task shares, see
        :func:`discrim.utils._parallel.run_unordered`).
    y_idx : ndarray of shape (n_samples,) of int
    sample_weight : ndarray of shape (n_samples,)
    X_folds : sequence of ndarray of shape (n_samples, n_transformed_features) or None, default=None
        With a ``transformer``, all the rows transformed by the transformer fitted on each fold's
        training part: fold ``fold`` uses ``X_folds[fold]`` instead of ``X``.

    Returns
    -------
    result : PathResult
        Counts not scored (after an early stop) hold NaN in ``log_loss``, ``score``,
        ``n_prototypes`` and ``n_features``.

    Notes
    -----
    The path runs from the smallest to the largest alpha_feature. The likelihood's gradient with
    respect to a feature weight v_d is proportional to v_d, so v_d = 0 is a stationary point that
    the solver never leaves: a feature dropped at one alpha stays dropped in a warm start. Going
    up the path (more penalty, fewer features) only ever needs to drop features, so the warm
    start loses nothing; going down it would lock out features that a smaller penalty admits.
    """
    if X_folds is not None:
        X = X_folds[fold]
    X_train, y_train, w_train = X[train], y_idx[train], sample_weight[train]
    X_test, y_test, w_test = X[test], y_idx[test], sample_weight[test]
    n = len(alphas)
    n_classes = int(y_idx.max()) + 1
    losses = np.full((n, max_batches + 1), np.nan)
    scores = None if scoring == "log_loss" else np.full((n, max_batches + 1), np.nan)
    n_proto = np.full((n, max_batches + 1), np.nan)
    n_feat = np.full((n, max_batches + 1), np.nan)
    n_iter = np.zeros(n, dtype=int)
    fit_time = np.zeros(n)
    path = (path_state if path_state is not None else PathWarmStart(X.shape[1])) if warm_start else None
    # the template's parameters, read once: clone() would inspect its signature for every fit
    params = clone(template).get_params(deep=False)
    for i, alpha in enumerate(alphas):
        start = time.perf_counter()
        model = type(template)(**{**params, "alpha_feature": float(alpha), "n_batches": max_batches,
                                  "random_state": seed})
        if n_batches_no_change is None or max_batches == 0:
            _fit_prototypes(model, X_train, y_train, w_train, path, validated=True)
        else:
            _fit_until_no_change(model, (X_train, y_train, w_train), (X_test, y_test, w_test), path, max_batches,
                                 n_batches_no_change, scoring, n_classes, no_change_tol)
        classes = np.asarray(model.classes_)
        # X_test is validated already (the search's float64 rows): only the model's dtype applies
        staged = list(model._staged_proba(np.asarray(X_test, dtype=np.dtype(model.dtype))))
        fitted = len(staged)  # counts 0 .. fitted - 1 are scored
        losses[i, :fitted] = [weighted_log_loss(p, y_test, w_test, classes) for p in staged]
        if scores is not None:
            scores[i, :fitted] = [validation_score(scoring, p, y_test, w_test, classes, n_classes) for p in staged]
        n_proto[i, :fitted], n_feat[i, :fitted] = _model_size(model.batches_)
        n_iter[i] = int(np.sum(model.n_iter_)) if len(model.n_iter_) else 0
        fit_time[i] = time.perf_counter() - start
        if path is not None:
            path.advance(model.batches_)
    return PathResult(fold, np.asarray(alpha_index), losses, n_proto, n_feat, n_iter, fit_time, scores, path)


def refit_path(search_template, refit_template, X, y, sample_weight, alphas, n_batches, seed, warm_start,
               n_features):
    """Refit on all the data along the same stretch of the alpha_feature path as the search.

    With warm starts a fit's solution depends on the path that led to it, so the refit repeats
    the path of the selected alpha's task (same alphas, in the same order, one seed) and returns
    the last fit; without warm starts only the last alpha is fitted.

    In the last fit, a batch that the path's previous fit left empty starts cold instead of from
    the empty solution. The path's fits are solved as loosely as the search's (``search_max_iter``
    and ``search_ftol``), which leaves empty the batches that need hundreds of iterations to get
    below the empty batch (xor-6f at small penalties: 300-450), and a batch started empty gets only
    a short probe. The last fit, solved to ``tol`` and ``max_iter``, gives them the full solve.
    Where such a batch ends empty again (the emptiness test decides most within about 30
    iterations) the model is the path's; on the benchmark cases only xor-6f's many-batch search
    changed (the proset report's split: test log-loss 0.509 -> 0.504;
    benchmarks/results/report_split.md).

    Parameters
    ----------
    search_template, refit_template : PrototypeClassifier
        Unfitted; the first (loose ``tol``) for the intermediate fits, the second (strict ``tol``)
        for the returned model.
    X : array-like of shape (n_samples, n_features)
        Passed to ``fit`` as given, so the returned model keeps pandas feature names.
    y : array-like of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,)
    alphas : ndarray of shape (n_path,)
        The path up to and including the selected alpha_feature.
    n_batches : int
        The selected batch count; earlier batches never depend on later ones, so the path needs
        no more.
    seed : int
    warm_start : bool
    n_features : int
        Columns of X.

    Returns
    -------
    model : PrototypeClassifier
        Fitted with ``alpha_feature=alphas[-1]``.
    """
    steps = alphas if warm_start else alphas[-1:]
    path = PathWarmStart(n_features)
    for i, alpha in enumerate(steps):
        last = i == len(steps) - 1
        # The last fit is the one solved to refit_tol and max_iter: a batch the loosely solved
        # path left empty is solved from a cold start there, not probed from w = 0
        path.restart_empty = last
        model = clone(refit_template if last else search_template).set_params(
            alpha_feature=float(alpha), n_batches=n_batches, random_state=seed
        )
        _fit_prototypes(model, X, y, sample_weight, path, quiet=not last)
        path.advance(model.batches_)
    return model


def plan_tasks(n_folds, n_alphas, n_workers, n_paths=1):
    """Split the grid into tasks: every fold, with the alpha path cut into contiguous chunks.

    Parameters
    ----------
    n_folds, n_alphas : int
    n_workers : int
        Effective number of parallel workers. With more workers than folds the path of each
        fold is cut into ``ceil(n_workers / n_folds)`` chunks so that all workers get work;
        each chunk starts cold.
    n_paths : int, default=1
        Independent alpha_feature paths per fold (one per alpha_prototype): path ``p`` holds
        the positions ``p * n_alphas`` to ``(p + 1) * n_alphas - 1``, cut like the first, so
        each path is planned as it would be alone.

    Returns
    -------
    tasks : list of (fold, ndarray of alpha positions in increasing alpha order)
    """
    n_chunks = int(min(n_alphas, max(1, -(-n_workers // n_folds))))
    chunks = [c for c in np.array_split(np.arange(n_alphas), n_chunks) if c.size]
    return [(fold, chunk + p * n_alphas) for fold in range(n_folds) for p in range(n_paths) for chunk in chunks]


def split_stretch(stretch, warm_start, n_pieces=PIECES_PER_STRETCH):
    """Cut a stretch of the path into pieces that run as separate tasks, each after the last.

    With warm starts a piece continues from the state its predecessor hands over (so the fits
    are those of one task); shorter tasks let the workers share the work more evenly (five
    folds on two workers take three fold lengths as whole tasks, about 2.5 in pieces). Without
    warm starts every alpha_feature is a task of its own.

    Parameters
    ----------
    stretch : ndarray of int
        Alpha positions of one stretch, in path order.
    warm_start : bool
    n_pieces : int, default=PIECES_PER_STRETCH

    Returns
    -------
    pieces : list of ndarray of int
    """
    if not warm_start:
        return [stretch[i : i + 1] for i in range(stretch.shape[0])]
    return [p for p in np.array_split(stretch, min(n_pieces, stretch.shape[0])) if p.size]


def plan_chains(tasks, order, warm_start, make_job):
    """The search's first tasks and the rule that hands each finished piece its successor.

    With warm starts each stretch of a fold's path runs as a chain of pieces
    (:func:`split_stretch`), a piece's successor starting from the path state it hands over;
    without them every piece (one alpha) is independent and all start at once.

    Parameters
    ----------
    tasks : list of (fold, ndarray of int)
        From :func:`plan_tasks`: stretches as positions in increasing alpha order.
    order : ndarray of int
        Grid index of each position (the argsort of the alphas).
    warm_start : bool
    make_job : callable
        ``make_job(fold, piece, path_state=None)``: the arguments of one :func:`fit_path` task.

    Returns
    -------
    first_jobs : list of tuple
        Tasks that can start at once.
    follow_up : callable
        ``follow_up(result) -> list of tuple``: the task that continues ``result``'s chain.
    n_tasks : int
        Tasks in all, the follow-ups included.
    """
    first_jobs, successor, n_tasks = [], {}, 0
    for fold, stretch in tasks:
        pieces = split_stretch(stretch, warm_start)
        n_tasks += len(pieces)
        if warm_start:
            first_jobs.append(make_job(fold, pieces[0]))
            successor.update({(fold, int(order[a[-1]])): b for a, b in zip(pieces, pieces[1:])})
        else:
            first_jobs.extend(make_job(fold, piece) for piece in pieces)

    def follow_up(result):
        piece = successor.get((result.fold, int(result.alpha_index[-1])))
        return [] if piece is None else [make_job(result.fold, piece, result.path_state)]

    return first_jobs, follow_up, n_tasks


def select_one_se(mean, std, alphas):
    """The 1-SE rule of the proset report over an (alpha_feature x batch count) grid.

    Parameters
    ----------
    mean, std : ndarray of shape (n_alphas, n_batch_counts)
        Mean and standard deviation over folds of the validation log-loss (or of any loss:
        a score that is better higher is passed negated); NaN marks a point not scored on every
        fold (after a fit's early stop), which is never selected.
    alphas : ndarray of shape (n_alphas,)
        The penalties, or any key that orders the rows from the least to the most sparse (the
        largest is preferred).

    Returns
    -------
    best : tuple of (int, int)
        Grid position (alpha, batch count) of the lowest mean log-loss.
    selected : tuple of (int, int)
        Among points whose mean is at most ``threshold``, the largest alpha_feature and then,
        for it, the fewest batches.
    threshold : float
        The lowest mean plus its own standard deviation.
    """
    best = np.unravel_index(int(np.nanargmin(mean)), mean.shape)
    threshold = float(mean[best] + std[best])
    within = mean <= threshold  # False at NaN
    alpha_rows = np.flatnonzero(within.any(axis=1))
    a = int(alpha_rows[np.argmax(alphas[alpha_rows])])
    b = int(np.flatnonzero(within[a])[0])
    return (int(best[0]), int(best[1])), (a, b), threshold
