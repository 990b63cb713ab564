"""Explaining a fitted prototype set model: export, per-prediction explanation, shrinking, familiarity."""

from __future__ import annotations

import copy
import dataclasses
import warnings

import numpy as np
import pandas as pd
from scipy.integrate import quad_vec
from sklearn.utils.validation import check_is_fitted, validate_data

from discrim.backend import host_input
from discrim.exceptions import UnfamiliarDataWarning
from discrim.prototype._likelihood import chunk_rows, kernel_matrix
from discrim.prototype._prototype_set import check_finite_scores, check_n_batches
from discrim.utils._warnings import user_stacklevel
from discrim.utils.validation import check_feature_magnitude, plain_label

# Accuracy of the adaptive quadrature behind the feature contributions; the contributions add up
# to their total to about this absolute accuracy.
_QUAD_EPSABS = 1e-11
_QUAD_EPSREL = 1e-10

# A row is unfamiliar when its familiarity is below this share of the total prototype weight
# (every kernel at most about this small); most rows unfamiliar raises UnfamiliarDataWarning.
UNFAMILIAR_SHARE = 1e-10
# ... or below this share of the familiarity typical of the training data (that of the prototypes
# themselves, :func:`_typical_familiarity`): a model with few, wide prototypes (iris, one batch) gives
# rows in other units a familiarity a hundred million times below its own, yet above the share of
# the total weight
UNFAMILIAR_RELATIVE = 1e-6
# ... or when most rows lie more than this many bandwidths 1 / v_bd from every prototype along a feature
# (its factor of the kernel below exp(-7^2 / 2), about 2e-11).
UNFAMILIAR_BANDWIDTHS = 7.0


def _typical_familiarity(batches, max_points=200):
    """The familiarity typical of the training data: that of the prototypes themselves.

    Per batch, the median over (up to ``max_points`` evenly spaced of) its prototypes of the batch's
    kernel sum ``sum_j w_j K_v(s_i - s_j)`` there, summed over the batches. A prototype's own term
    counts (it is a training row); another batch's features are unknown at a prototype, hence per
    batch.

    Parameters
    ----------
    batches : list of PrototypeBatch
    max_points : int, default=200

    Returns
    -------
    familiarity : float
    """
    total = 0.0
    for batch in batches:
        S = np.asarray(batch.prototypes, dtype=np.float64)
        if S.shape[0] == 0:
            continue
        at = S[np.linspace(0, S.shape[0] - 1, min(S.shape[0], max_points)).astype(np.intp)]
        centre = S.mean(axis=0)  # the GEMM-expanded square keeps its digits about the prototypes' centre
        K = kernel_matrix(at - centre, S - centre, np.asarray(batch.feature_weights, dtype=np.float64), np)
        total += float(np.median(K @ np.asarray(batch.prototype_weights, dtype=np.float64)))
    return total
def _far_features(X, batches, n_bandwidths=UNFAMILIAR_BANDWIDTHS, max_rows=1000):
    """Features along which most rows lie far from the values of every prototype that uses them.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Rows in the model's units (NaN: missing, never far).
    batches : list of PrototypeBatch
    n_bandwidths : float, default=UNFAMILIAR_BANDWIDTHS
        Far means more than this many bandwidths ``1 / v_bd`` from the nearest prototype's value.
    max_rows : int, default=1000
        Only this many evenly spaced rows are checked.

    Returns
    -------
    far : dict of int to float
        Feature index to the share of the checked rows far along it, for shares above 90%.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] > max_rows:
        X = X[np.linspace(0, X.shape[0] - 1, max_rows).astype(np.intp)]
    near = {}
    for batch in batches:
        if batch.n_prototypes == 0:
            continue
        for i, d in enumerate(np.asarray(batch.feature_index)):
            values = np.sort(np.asarray(batch.prototypes, dtype=np.float64)[:, i])
            x = X[:, d]
            at = np.clip(np.searchsorted(values, x), 1, values.shape[0]) if values.shape[0] > 1 else np.zeros(
                x.shape[0], dtype=np.intp)
            gap = np.abs(x - values[at - 1 if values.shape[0] > 1 else at])
            if values.shape[0] > 1:
                gap = np.minimum(gap, np.abs(x - values[np.minimum(at, values.shape[0] - 1)]))
            ok = ~(gap * batch.feature_weights[i] > n_bandwidths)  # NaN (missing) counts as near
            near[d] = near.get(d, np.zeros(x.shape[0], dtype=bool)) | ok
    return {d: float(1.0 - ok.mean()) for d, ok in near.items() if X.shape[0] and ok.mean() < 0.1}


def warn_if_unfamiliar(familiarity, batches, X=None, names=None):
    """Warn when most rows lie far from every prototype (familiarity about 0), or nearly all along a
    feature, and when rows observe none of the batches' features.

    Parameters
    ----------
    familiarity : ndarray of shape (n_samples,)
        ``sum_bj w_bj K_vb(x - s_bj)`` over ``batches``.
    batches : list of PrototypeBatch
        The batches the familiarity sums over (no warning without prototypes).
    X : ndarray of shape (n_samples, n_features) or None, default=None
        The rows in the model's units, for the check feature by feature (see :func:`_far_features`).
    names : sequence of str or None, default=None
        The features' names (``feature_names_in_``), for the messages; None: their indices.
    """
    total = float(sum(np.sum(b.prototype_weights) for b in batches))
    familiarity = np.asarray(familiarity, dtype=np.float64)
    if total <= 0 or familiarity.shape[0] == 0:
        return
    label = (lambda d: str(d)) if names is None else (lambda d: str(names[d]))
    if X is not None:
        _warn_if_nothing_observed(X, batches, label)
    unfamiliar = familiarity <= UNFAMILIAR_SHARE * total
    how = "familiarity about 0"
    # the typical familiarity is at most the total weight (every kernel at most 1): computed only
    # where most rows could lie below its share
    if unfamiliar.mean() <= 0.5 and np.mean(familiarity <= UNFAMILIAR_RELATIVE * total) > 0.5:
        typical = _typical_familiarity(batches)
        unfamiliar = familiarity <= UNFAMILIAR_RELATIVE * typical
        how = (f"familiarity below {UNFAMILIAR_RELATIVE:g} times the {typical:.3g} typical of the prototypes "
               "themselves")
    far = _far_features(X, batches) if X is not None else {}
    if unfamiliar.mean() <= 0.5 and not far:
        return
    along = ", ".join(f"{label(d)} ({100 * share:.0f}% of rows)" for d, share in far.items())
    if unfamiliar.mean() > 0.5:
        where = (f"{int(unfamiliar.sum())} of {familiarity.shape[0]} rows of X lie far from every prototype "
                 f"({how})" + (f", far along feature(s) {along}" if far else ""))
    else:
        where = (f"nearly all rows of X lie far (more than {UNFAMILIAR_BANDWIDTHS:g} bandwidths) from every prototype "
                 f"along feature(s) {along}")
    warnings.warn(
        f"{where}, so the prototypes there barely count. The likely cause: X is not in the units the model was "
        "fitted in, e.g. a model fitted on scaled features given rows in their original units: transform X as "
        "for fit (e.g. scaler.transform(X)) or fit a Pipeline(scaler, model) that takes raw rows.",
        UnfamiliarDataWarning, stacklevel=user_stacklevel(),
    )


def _warn_if_nothing_observed(X, batches, label):
    """Warn about rows whose every active feature is missing: each kernel is then 1 (the factor of a
    missing feature), so the row scores as if it lay on every prototype."""
    active = np.unique(np.concatenate([b.feature_index for b in batches if b.prototype_weights.shape[0]]))
    if not active.size:
        return
    blank = np.isnan(np.asarray(X, dtype=np.float64)[:, active]).all(axis=1)
    if blank.any():
        shown = ", ".join(label(d) for d in active[:8]) + (", ..." if active.size > 8 else "")
        warnings.warn(
            f"{int(blank.sum())} of {blank.shape[0]} rows of X observe none of the model's active features "
            f"({shown}): a missing feature contributes the factor 1 to every prototype's kernel, so such a row "
            "scores as if it lay on every prototype (familiarity at its largest, the probabilities the prototypes' "
            "weighted class mix). Their predictions carry no information from the row.",
            UnfamiliarDataWarning, stacklevel=user_stacklevel(),
        )


def _check_model(model):
    if not hasattr(model, "batches_") or not hasattr(model, "marginals_"):
        if hasattr(model, "steps"):
            raise TypeError(
                "this function takes the fitted PrototypeClassifier itself, not a Pipeline: pass "
                "pipeline[-1] and transform X with pipeline[:-1] first."
            )
        check_is_fitted(model)
        raise TypeError(f"expected a fitted PrototypeClassifier, got {type(model).__name__}.")
    check_is_fitted(model, ["batches_", "marginals_", "classes_"])


def _check_feature_names(model, feature_names):
    """``feature_names`` as a list of str (default :func:`_feature_names`), one per model feature."""
    if feature_names is None:
        return _feature_names(model)
    names = [str(name) for name in feature_names]
    if len(names) != model.n_features_in_:
        raise ValueError(f"feature_names has {len(names)} names but the model takes {model.n_features_in_} features.")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"feature_names must be distinct (as text); {repeated!r} appear more than once in {names!r}.")
    return names


def export_columns(names, sample_names=False, original=False):
    """The columns of an export table (:func:`export_model`), each with the feature it is made from.

    Parameters
    ----------
    names : list of str
        The feature names.
    sample_names : bool, default=False
        Whether a ``sample_name`` column is shown.
    original : bool, default=False
        Whether ``<f>_weight_original`` and ``<f>_original`` follow each feature's pair (through a
        pipeline, :func:`discrim.prototype.export`).

    Returns
    -------
    columns : list of (str, str or None)
        In the table's order, for :func:`check_distinct_columns`.
    """
    fixed = ["batch", "sample_index"] + (["sample_name"] if sample_names else []) + ["target", "prototype_weight"]
    kinds = ("weight", "value") + (("weight_original", "original") if original else ())
    return [(c, None) for c in fixed] + [(f"{name}_{kind}", name) for name in names for kind in kinds]


def prototype_columns(names, classes, sample_names=False, original=False):
    """The columns of :attr:`Explanation.prototypes`, each with the feature it is made from.

    Parameters
    ----------
    names : list of str
        The feature names (all of them, so that the check does not depend on the active features).
    classes : ndarray of shape (n_classes,)
    sample_names : bool, default=False
        Whether a ``sample_name`` column is shown.
    original : bool, default=False
        Whether ``<f>_original`` columns are added (through a pipeline).

    Returns
    -------
    columns : list of (str, str or None)
        For :func:`check_distinct_columns`.
    """
    fixed = ["batch", "sample_index"] + (["sample_name"] if sample_names else [])
    fixed += ["target", "prototype_weight", "similarity", "impact", "contribution", "dominant_set"]
    fixed += [f"p_{label}" for label in classes]
    kinds = ("weight", "value", "similarity") + (("original",) if original else ())
    return [(c, None) for c in fixed] + [(f"{name}_{kind}", name) for name in names for kind in kinds]


def check_distinct_columns(columns, table):
    """Refuse a table in which two columns would share a name (pandas would keep both, or a dict one).

    Column names derive from the feature names (``<f>_weight``, ``<f>_value``, ...), so a feature
    called ``prototype`` would give a second ``prototype_weight``, and features ``a`` and ``a_weight``
    would both give ``a_weight_original``.

    Parameters
    ----------
    columns : list of (str, str or None)
        Each column's name and the feature whose name it is made from (None: a fixed column).
    table : str
        The table, for the message.

    Raises
    ------
    ValueError
        One line naming the clashing feature names, the repeated columns and the fix.
    """
    sources = {}
    for column, feature in columns:
        sources.setdefault(column, []).append(feature)
    repeated = [column for column, given in sources.items() if len(given) > 1]
    if not repeated:
        return
    features = sorted({f for column in repeated for f in sources[column] if f is not None})
    raise ValueError(
        f"the feature name(s) {features!r} would give the {table} the column(s) {repeated!r} twice (each "
        "feature f gives columns such as f_weight and f_value beside fixed ones such as prototype_weight, "
        "sample_index, target and batch): pass other names with feature_names=, one per feature, or rename "
        "the columns of X before fitting."
    )


def _feature_names(model):
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        return [str(name) for name in names]
    return [f"x{d}" for d in range(model.n_features_in_)]


def _validate_X(model, X, name="X"):
    # in the model's dtype, as predict_proba takes X (float32 rows to a float64 model computed in float32);
    # NaN is a missing value: the factor 1 in every prototype's kernel
    # (a tensor's values on the host: scikit-learn's numpy conversion refuses one on a GPU or requiring grad)
    X = validate_data(model, host_input(X), reset=False, dtype=np.dtype(model.dtype), ensure_all_finite="allow-nan")
    return check_feature_magnitude(X, name)


def _sample_names(sample_names, index):
    """The names of the training rows ``index`` (ndarray of int); one-line ValueError if out of range."""
    names = np.asarray(sample_names, dtype=object).ravel()
    if index.size and index.max() >= names.shape[0]:
        raise ValueError(f"sample_names has {names.shape[0]} names but a prototype is training row "
                         f"{int(index.max())}: give one name per row of the X the model was fitted on.")
    return names[index]


def _active_features(model, n_batches=None):
    """Union over batches (the first ``n_batches``) of the columns with positive feature weight, sorted."""
    parts = [np.asarray(b.feature_index)[np.asarray(b.feature_weights) > 0] for b in model.batches_[:n_batches]]
    if not parts:
        return np.zeros(0, dtype=np.intp)
    return np.unique(np.concatenate(parts)).astype(np.intp)


def export_model(model, n_batches=None, feature_names=None, sample_names=None):
    """Tabulate the prototypes of a fitted model, one row per prototype.

    Parameters
    ----------
    model : PrototypeClassifier
        Fitted.
    n_batches : int or None, default=None
        Export the first ``n_batches`` batches; None: all.
    feature_names : list of str or None, default=None
        Names of the model's features; default ``feature_names_in_`` or ``x0``, ``x1``, ...
    sample_names : array-like of shape (n_training_samples,) or None, default=None
        Names of the training rows: adds a column ``sample_name`` after ``sample_index``.

    Returns
    -------
    table : DataFrame of shape (n_prototypes_total, 4 + 2 * n_features_in)
        Columns, in order:

        - ``batch`` (int): batch number, 1 for the first batch (0 would be the marginals);
        - ``sample_index`` (int): row of the training X that the prototype carries;
        - ``target``: class label (an element of ``classes_``);
        - ``prototype_weight`` (float): ``w_bj``;
        - for every feature ``f`` of the model (``feature_names_in_``, else ``x0``, ``x1``, ...):
          ``<f>_weight``, the batch's feature weight ``v_bd`` (0 where the feature is inactive in
          the batch), and ``<f>_value``, the prototype's value of the feature in the units of the X
          passed to fit (NaN where the feature is inactive: a batch stores only its active
          features).

        Rows are ordered by batch, then by decreasing prototype weight. The marginal class
        probabilities ``p_0k`` (the baseline every prediction starts from, i.e. "batch 0") are
        not rows of the table: they are in ``table.attrs["marginals"]``, a dict of class label to
        probability, equal to ``model.marginals_``.

    Notes
    -----
    ``predict_proba`` can be rebuilt from this table alone:
    ``q_k(x) = p_0k + sum over rows with target k of prototype_weight * exp(-1/2 sum_f
    (<f>_weight * (x_f - <f>_value))^2)`` over the features with positive weight, and
    ``p_k(x) = q_k(x) / sum_l q_l(x)``.
    """
    _check_model(model)
    n_batches = check_n_batches(n_batches, len(model.batches_))
    names = _check_feature_names(model, feature_names)
    columns = export_columns(names, sample_names is not None)
    check_distinct_columns(columns, "export table")
    columns = [column for column, _ in columns]
    D = len(names)
    classes = np.asarray(model.classes_)
    parts = []
    for b, batch in enumerate(model.batches_[:n_batches], start=1):
        J = len(batch.target)
        weights = np.zeros((J, D))
        values = np.full((J, D), np.nan)
        index = np.asarray(batch.feature_index)
        weights[:, index] = np.asarray(batch.feature_weights, dtype=np.float64)
        values[:, index] = np.asarray(batch.prototypes, dtype=np.float64)
        order = np.argsort(-np.asarray(batch.prototype_weights), kind="stable")
        part = {
            "batch": np.full(J, b, dtype=np.int64),
            "sample_index": np.asarray(batch.sample_index, dtype=np.int64),
            "target": classes[np.asarray(batch.target, dtype=np.intp)],
            "prototype_weight": np.asarray(batch.prototype_weights, dtype=np.float64),
        }
        if sample_names is not None:
            part["sample_name"] = _sample_names(sample_names, part["sample_index"])
        part = {key: value[order] for key, value in part.items()}
        for d, name in enumerate(names):
            part[f"{name}_weight"] = weights[order, d]
            part[f"{name}_value"] = values[order, d]
        parts.append(pd.DataFrame(part))
    parts = [p for p in parts if len(p)]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    table = table[columns]
    table.attrs["marginals"] = {label: float(p) for label, p in zip(classes.tolist(), model.marginals_)}
    return table


@dataclasses.dataclass(frozen=True)
class Explanation:
    """The explanation of one prediction of a prototype set model.

    Attributes
    ----------
    proba : Series of shape (n_classes,)
        Predicted probabilities ``p_k(x)``, indexed by class label.
    predicted : object
        The class with the largest probability.
    familiarity : float
        ``sum_bj w_bj K_vb(x - s_bj)``, the total kernel weight of all prototypes at x (low: x is
        far from the training data).
    marginal : Series of shape (n_classes,)
        The marginals' share of each class probability, ``p_0k / (1 + familiarity)``.
    prototypes : DataFrame
        The prototypes with the largest impact ``w_bj K_vb(x - s_bj)`` on this prediction, in
        decreasing order of impact: ``batch``, ``sample_index`` (and ``sample_name`` when the
        training rows were named), ``target``, ``prototype_weight``, ``similarity`` (the kernel
        value, in (0, 1]), ``impact``, ``contribution`` (``impact / (1 + familiarity)``, the amount
        the prototype adds to the probability of its target class), ``dominant_set`` (see Notes),
        ``p_<class>`` for every class (the prototype's contribution to that class's probability:
        ``contribution`` in its target's column, 0 elsewhere), then for each active feature ``f``
        ``<f>_weight`` (its batch's feature weight, 0 where inactive), ``<f>_value`` (the
        prototype's value), ``<f>_similarity`` (``exp(-1/2 (v_bf (x_f - s_bjf))^2)``; NaN where f
        is inactive in the prototype's batch) and, explained through a pipeline, ``<f>_original``
        (the value in the pipeline's input units).
    features : DataFrame
        One row per active feature (union over batches): ``feature``, ``value`` (x_f),
        ``contribution`` (see Notes), in decreasing order of absolute contribution; through a
        pipeline also ``original`` (x_f in the input units) and ``slope`` (the model's units per
        input unit, ``|dz_f / dx_f|``: a feature weight times it is that weight in input units).
    log_proba : float
        ``log p_c(x)`` of the predicted class c.
    baseline_log_proba : float
        ``log p_c`` when x matches every prototype on every active feature (all kernels equal 1).
    n_prototypes_total : int
        Number of prototypes in the model; ``prototypes`` may show fewer.
    true_class : object or None, default=None
        The row's true class, when given.
    familiarity_quantile : float or None, default=None
        Share of the reference rows whose familiarity is at most this row's (their empirical
        distribution function at ``familiarity``), when reference rows were given.
    name : str or None, default=None
        The row's name (its index label in a DataFrame), when known.
    n_batches : int or None, default=None
        The number of batches explained (None: all).

    Notes
    -----
    Two identities hold exactly, up to rounding:

    - ``marginal[k] + sum of contribution over all prototypes with target k == proba[k]``,
      the decomposition of proset's ``explain`` (so ``marginal[k]`` plus the column ``p_<k>``
      summed over all prototypes is ``proba[k]``);
    - ``features.contribution.sum() == log_proba - baseline_log_proba``.

    The dominant set is proset's: the prototypes in decreasing order of contribution (ties
    together) up to the last point at which the gap between the two largest accumulated class
    probabilities (marginals included) is no larger than the probability still to come; the
    prototypes outside it cannot change the predicted class. A row far from all prototypes has
    an empty dominant set (the marginals decide).

    The feature contributions attribute ``log p_c(x)`` of the predicted class by integrated
    gradients along the path that scales every kernel exponent by ``s`` from 0 to 1:
    ``K_j(s) = exp(-s e_j)``, ``e_j = sum_f e_jf``, ``e_jf = 1/2 (v_bf (x_f - s_jf))^2``. Then

    ``contribution_f = -sum_j e_jf int_0^1 (d log p_c / d u_j) u_j(s) ds``, ``u_j = w_j K_j(s)``,

    which add up to ``log p_c(x) - log p_c(s = 0)`` by the fundamental theorem of calculus.
    At ``s = 0`` every prototype counts with its full weight (the feature-free vote of the
    prototypes); a negative contribution means that the distance of x from the prototypes along
    feature f lowers the probability of the predicted class (it is far from prototypes that
    support it), a positive one that it raises it (it is far from prototypes of other classes).
    The integral is computed by adaptive quadrature (``scipy.integrate.quad_vec``).

    Examples
    --------
    :func:`discrim.prototype.explain` returns one for a row; both identities of the Notes hold:

    >>> import numpy as np
    >>> from discrim.prototype import PrototypeClassifier, explain
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = PrototypeClassifier(n_batches=1, n_candidates=20, random_state=0).fit(X, y)
    >>> ex = explain(clf, X[:1], n_prototypes=100)
    >>> bool(ex.predicted == ex.proba.idxmax())
    True
    >>> by_class = ex.prototypes.groupby("target")["contribution"].sum()
    >>> bool(np.allclose(ex.marginal + by_class.reindex(ex.proba.index, fill_value=0), ex.proba))
    True
    >>> bool(np.isclose(ex.features["contribution"].sum(), ex.log_proba - ex.baseline_log_proba))
    True
    >>> sorted(ex.to_frames())
    ['classes', 'features', 'prototypes', 'summary']
    """

    proba: pd.Series
    predicted: object
    familiarity: float
    marginal: pd.Series
    prototypes: pd.DataFrame
    features: pd.DataFrame
    log_proba: float
    baseline_log_proba: float
    n_prototypes_total: int
    true_class: object = None
    familiarity_quantile: float | None = None
    name: str | None = None
    n_batches: int | None = None

    def to_frames(self) -> dict[str, pd.DataFrame]:
        """The explanation as tables, one per sheet of a report.

        Returns
        -------
        frames : dict of str to DataFrame
            ``summary`` (one row per figure: the row's name, the predicted and true class, its
            probability, the familiarity and its quantile, the log-probabilities),
            ``classes`` (per class: ``proba``, ``marginal``, ``prototypes`` = their difference),
            ``prototypes`` and ``features`` (the attributes of the same names).
        """
        summary = pd.DataFrame({
            "item": ["row", "predicted", "true class", "probability of predicted", "familiarity",
                     "familiarity quantile", "log_proba", "baseline_log_proba", "prototypes in the model",
                     "prototypes listed", "batches"],
            "value": [self.name, self.predicted, self.true_class, float(self.proba[self.predicted]),
                      self.familiarity, self.familiarity_quantile, self.log_proba, self.baseline_log_proba,
                      self.n_prototypes_total, len(self.prototypes), "all" if self.n_batches is None else self.n_batches],
        })
        summary["value"] = summary["value"].map(lambda v: "" if v is None else v).astype(object)
        classes = pd.DataFrame({"class": self.proba.index, "proba": self.proba.to_numpy(),
                                "marginal": self.marginal.to_numpy(),
                                "prototypes": self.proba.to_numpy() - self.marginal.to_numpy()})
        return {"summary": summary, "classes": classes, "prototypes": self.prototypes, "features": self.features}


def _as_single_row(model, X_row):
    if isinstance(X_row, pd.Series):
        X_row = X_row.to_frame().T
    if not isinstance(X_row, pd.DataFrame):
        X_row = np.asarray(X_row)
        if X_row.ndim == 1:
            X_row = X_row[None, :]
    X = _validate_X(model, X_row, "X_row")
    if X.shape[0] != 1:
        raise ValueError(f"X_row must hold exactly one row; got {X.shape[0]} rows.")
    return X[0].astype(np.float64)


def _check_true_class(y, classes):
    """The row's true class ``y`` as one label among ``classes``; a sequence of one label gives its element.

    Parameters
    ----------
    y : object
        A label, or a list, tuple, 1-D array, tensor or Series holding exactly one label (as ``X``
        may be a one-row frame).
    classes : ndarray of shape (n_classes,)

    Returns
    -------
    label : object
        An element of ``classes``.
    """
    given = y
    y = host_input(y)  # a tensor's values (numpy's reductions fail inside torch on a tensor)
    if not isinstance(y, (str, bytes)) and np.ndim(y) > 0:
        values = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y, dtype=object)
        if values.shape != (1,):
            raise ValueError(f"y must be the row's true class, one label (or a sequence of one label); got "
                             f"{type(given).__name__} of shape {values.shape}: {given!r}.")
        y = values[0]
    if np.ndim(y) != 0 or not np.any(classes == y):
        raise ValueError(f"y must be one of the model's classes {classes.tolist()}; got {given!r}.")
    return classes[np.flatnonzero(classes == y)[0]]


def _stack_prototypes(model, x, active, n_batches=None):
    """All prototypes of the first ``n_batches`` batches (None: all), with their exponents on the active features.

    Parameters
    ----------
    model : PrototypeClassifier
    x : ndarray of shape (n_features_in,)
    active : ndarray of shape (n_active,) of int
        Union of the active features, sorted.
    n_batches : int or None, default=None

    Returns
    -------
    parts : dict of ndarray
        ``E`` (J_total, n_active): ``e_jf = 1/2 (v_bf (x_f - s_jf))^2``, 0 where f is inactive in
        the prototype's batch; ``values`` (J_total, n_active): ``s_jf``, NaN where inactive;
        ``weights`` (J_total, n_active): ``v_bf``, 0 where inactive; ``batch`` (1-based),
        ``sample_index``, ``target`` (int) and ``weight``, each (J_total,).
    """
    position = np.searchsorted(active, np.arange(model.n_features_in_))
    n_active = len(active)
    keys = ("E", "values", "weights", "batch", "sample_index", "target", "weight")
    parts = {key: [] for key in keys}
    for b, batch in enumerate(model.batches_[:n_batches], start=1):
        J = len(batch.target)
        if J == 0:
            continue
        index = np.asarray(batch.feature_index, dtype=np.intp)
        cols = position[index]
        v = np.asarray(batch.feature_weights, dtype=np.float64)
        S = np.asarray(batch.prototypes, dtype=np.float64)
        E = np.zeros((J, n_active))
        values = np.full((J, n_active), np.nan)
        weights = np.zeros((J, n_active))
        # a missing feature of x contributes the factor 1 (its exponent 0) to every kernel
        E[:, cols] = np.nan_to_num(0.5 * (v * (x[index] - S)) ** 2, nan=0.0)
        values[:, cols] = S
        weights[:, cols] = v
        parts["E"].append(E)
        parts["values"].append(values)
        parts["weights"].append(weights)
        parts["batch"].append(np.full(J, b, dtype=np.int64))
        parts["sample_index"].append(np.asarray(batch.sample_index, dtype=np.int64))
        parts["target"].append(np.asarray(batch.target, dtype=np.intp))
        parts["weight"].append(np.asarray(batch.prototype_weights, dtype=np.float64))
    if not parts["E"]:
        return {"E": np.zeros((0, n_active)), "values": np.zeros((0, n_active)), "weights": np.zeros((0, n_active)),
                "batch": np.zeros(0, np.int64), "sample_index": np.zeros(0, np.int64), "target": np.zeros(0, np.intp),
                "weight": np.zeros(0)}
    return {key: np.concatenate(value) for key, value in parts.items()}


def dominant_set(impact, target, marginals):
    """proset's dominant set: the prototypes that decide the predicted class.

    Parameters
    ----------
    impact : ndarray of shape (J,)
        ``w_j K_j(x)`` of every prototype at the row.
    target : ndarray of shape (J,) of int
        Index of each prototype's class.
    marginals : ndarray of shape (n_classes,)
        ``p_0k``.

    Returns
    -------
    dominant : ndarray of shape (J,) of bool
        The prototypes, in decreasing order of impact (ties together), up to and including the
        group after the last prefix at which the two largest accumulated probabilities
        (``(p_0k + sum of the prefix's impacts of class k) / (1 + sum of all impacts)``) differ by
        at most the probability not yet accumulated. Empty when the marginals alone decide, or
        when every impact underflows to 0.
    """
    J = impact.shape[0]
    scale = 1.0 + impact.sum()
    if J == 0 or scale == 1.0:
        return np.zeros(J, dtype=bool)
    share = impact / scale
    order = np.argsort(-share, kind="stable")
    ordered = share[order]
    group = np.cumsum(np.r_[True, ordered[1:] != ordered[:-1]]) - 1  # 0-based rank of each sorted prototype
    per_group = np.zeros((group[-1] + 1, marginals.shape[0]))
    np.add.at(per_group, (group, target[order]), ordered)
    accumulated = np.vstack([marginals / scale, marginals / scale + np.cumsum(per_group, axis=0)])
    remainder = 1.0 - accumulated.sum(axis=1)
    top_two = np.sort(accumulated, axis=1)[:, -2:]
    undecided = np.flatnonzero(top_two[:, 1] - top_two[:, 0] <= remainder)
    dominant = np.zeros(J, dtype=bool)
    if undecided.size:
        dominant[order] = group <= undecided[-1]
    return dominant


def familiarity_quantile(value, reference_familiarity):
    """Share of the reference familiarities at most ``value`` (their empirical distribution function).

    Parameters
    ----------
    value : float
    reference_familiarity : ndarray of shape (n_reference,)

    Returns
    -------
    quantile : float in [0, 1]
    """
    reference_familiarity = np.asarray(reference_familiarity, dtype=np.float64)
    if reference_familiarity.shape[0] == 0:
        raise ValueError("reference must hold at least one row.")
    return float(np.count_nonzero(reference_familiarity <= value) / reference_familiarity.shape[0])


def explain_prediction(model, X_row, n_prototypes=10, feature_names=None, *, y=None, reference=None, n_batches=None,
                       sample_names=None, name=None):
    """Explain the prediction for one row: marginals, the most influential prototypes, the features.

    Parameters
    ----------
    model : PrototypeClassifier
        Fitted.
    X_row : array-like of shape (n_features,) or (1, n_features)
        The row to explain, in the units of the X the model was fitted on (a one-row DataFrame
        or a Series keeps the feature names).
    n_prototypes : int or None, default=10
        How many prototypes to list, by decreasing impact; None lists all.
    feature_names : list of str or None, default=None
        Names to show for the model's features; default ``feature_names_in_`` or ``x0``, ``x1``, ...
        (useful when the model is the last step of a pipeline).
    y : object, default=None
        The row's true class (one of ``classes_``), or a list, array or Series holding just it.
    reference : array-like of shape (n_reference, n_features), default=None
        Rows in the model's units (e.g. the training rows): ``familiarity_quantile`` is the share
        of them whose familiarity is at most the row's.
    n_batches : int or None, default=None
        Explain the model of the first ``n_batches`` batches; None: all.
    sample_names : array-like of shape (n_training_samples,) or None, default=None
        Names of the training rows, shown as ``sample_name`` next to ``sample_index``.
    name : str or None, default=None
        The row's name; default its index label when X_row is a DataFrame or Series.

    Returns
    -------
    explanation : Explanation
        See :class:`Explanation` for the fields and the definition of the contributions.
    """
    _check_model(model)
    if n_prototypes is not None and (
        isinstance(n_prototypes, bool) or not isinstance(n_prototypes, (int, np.integer)) or n_prototypes < 0
    ):
        raise ValueError(f"n_prototypes must be a non-negative integer or None; got {n_prototypes!r}.")
    n_batches = check_n_batches(n_batches, len(model.batches_))
    if name is None and isinstance(X_row, (pd.DataFrame, pd.Series)):
        name = X_row.index[0] if isinstance(X_row, pd.DataFrame) and len(X_row) else X_row.name
    x = _as_single_row(model, X_row)
    names = _check_feature_names(model, feature_names)
    classes = np.asarray(model.classes_)
    check_distinct_columns(prototype_columns(names, classes, sample_names is not None), "explanation's prototype table")
    if y is not None:
        y = _check_true_class(y, classes)
    K = classes.shape[0]
    p0 = np.asarray(model.marginals_, dtype=np.float64)
    active = _active_features(model, n_batches)
    stack = _stack_prototypes(model, x, active, n_batches)
    E, target, w = stack["E"], stack["target"], stack["weight"]
    e = E.sum(axis=1)
    similarity = np.exp(-e)
    impact = w * similarity
    row_familiarity = float(impact.sum())
    warn_if_unfamiliar(np.array([row_familiarity]), model.batches_[:n_batches], x[None, :],
                       getattr(model, "feature_names_in_", None))
    quantile = None
    if reference is not None:
        quantile = familiarity_quantile(row_familiarity, familiarity(model, reference, n_batches=n_batches))
    scale = 1.0 + row_familiarity
    q = p0 + np.bincount(target, weights=impact, minlength=K)
    proba = q / scale
    c = int(np.argmax(proba))
    onehot_c = (target == c).astype(np.float64)

    def integrand(s):
        # d log p_c / d u_j * u_j along the path u_j(s) = w_j exp(-s e_j)
        u = w * np.exp(-s * e)
        return (onehot_c / (p0[c] + onehot_c @ u) - 1.0 / (1.0 + u.sum())) * u

    if len(w):
        G, _ = quad_vec(integrand, 0.0, 1.0, epsabs=_QUAD_EPSABS, epsrel=_QUAD_EPSREL)
        contribution = -(E.T @ G) + 0.0  # + 0.0: a missing feature shows 0, not -0
    else:
        contribution = np.zeros(len(active))
    baseline = np.log((p0[c] + onehot_c @ w) / (1.0 + w.sum()))
    dominant = dominant_set(impact, target, p0)

    order = np.argsort(-impact, kind="stable")
    if n_prototypes is not None:
        order = order[:n_prototypes]
    rows = {"batch": stack["batch"][order], "sample_index": stack["sample_index"][order]}
    if sample_names is not None:
        rows["sample_name"] = _sample_names(sample_names, rows["sample_index"])
    rows.update({
        "target": classes[target[order]],
        "prototype_weight": w[order],
        "similarity": similarity[order],
        "impact": impact[order],
        "contribution": impact[order] / scale,
        "dominant_set": dominant[order],
    })
    for k, label in enumerate(classes):
        rows[f"p_{label}"] = np.where(target[order] == k, impact[order] / scale, 0.0)
    values = stack["values"][order]
    inactive = np.isnan(values)
    for i, d in enumerate(active):
        rows[f"{names[d]}_weight"] = stack["weights"][order, i]
        rows[f"{names[d]}_value"] = values[:, i]
        rows[f"{names[d]}_similarity"] = np.where(inactive[:, i], np.nan, np.exp(-E[order, i]))
    features = pd.DataFrame({
        "feature": [names[d] for d in active],
        "value": x[active] if len(active) else np.zeros(0),
        "contribution": contribution,
    })
    features = features.iloc[np.argsort(-np.abs(contribution), kind="stable")].reset_index(drop=True)
    return Explanation(
        proba=pd.Series(proba, index=classes, name="proba"),
        predicted=plain_label(classes[c]),
        familiarity=row_familiarity,
        marginal=pd.Series(p0 / scale, index=classes, name="marginal"),
        prototypes=pd.DataFrame(rows),
        features=features,
        log_proba=float(np.log(proba[c])),
        baseline_log_proba=float(baseline),
        n_prototypes_total=int(len(w)),
        true_class=plain_label(y) if y is not None else None,
        familiarity_quantile=quantile,
        name=None if name is None else str(name),
        n_batches=n_batches,
    )


def shrink_model(model):
    """An equivalent fitted model that takes only the active features.

    Parameters
    ----------
    model : PrototypeClassifier
        Fitted.

    Returns
    -------
    shrunk : PrototypeClassifier
        A deep copy whose batches index the reduced columns: ``shrunk.predict_proba(X[:, a])``
        equals ``model.predict_proba(X)`` with ``a = shrunk.active_features_``. It has
        ``n_features_in_ = len(a)``, ``feature_names_in_`` reduced to those columns (when the model
        had names) and ``active_features_``, the indices of the kept columns among the columns
        of the data the original model was fitted on (composed when shrinking twice). The model
        passed in is not changed.

    Raises
    ------
    ValueError
        If no feature is active (every batch is empty): the shrunk model would take no input.
    """
    _check_model(model)
    active = _active_features(model)
    if active.size == 0:
        raise ValueError("the model has no active features (all batches are empty); there is nothing to shrink to.")
    shrunk = copy.deepcopy(model)
    shrunk.batches_ = [
        dataclasses.replace(batch, feature_index=np.searchsorted(active, np.asarray(batch.feature_index)))
        for batch in model.batches_
    ]
    shrunk.n_features_in_ = int(active.size)
    if getattr(model, "center_", None) is not None:
        shrunk.center_ = np.asarray(model.center_)[active]
    if getattr(model, "feature_names_in_", None) is not None:
        shrunk.feature_names_in_ = np.asarray(model.feature_names_in_)[active]
    previous = getattr(model, "active_features_", None)
    shrunk.active_features_ = np.asarray(previous)[active] if previous is not None else active
    return shrunk


def familiarity(model, X, n_batches=None):
    """Total kernel weight of all prototypes at each row, ``sum_bj w_bj K_vb(x - s_bj)``.

    Parameters
    ----------
    model : PrototypeClassifier
        Fitted.
    X : array-like of shape (n_samples, n_features)
        Taken in the model's ``dtype``, as :meth:`PrototypeClassifier.predict_proba` takes it.
    n_batches : int or None, default=None
        Sum over the first ``n_batches`` batches; None: all.

    Returns
    -------
    familiarity : ndarray of shape (n_samples,)
        Non-negative. Low values mean the row is far from every prototype, i.e. from the training
        data the model has seen, so that its prediction falls back to the marginals
        (``p_k(x) = (p_0k + ...) / (1 + familiarity)``); compare with the familiarity of the
        training or validation rows to judge what is low.
    """
    _check_model(model)
    n_batches = check_n_batches(n_batches, len(model.batches_))
    X = _validate_X(model, X)
    total = np.zeros(X.shape[0], dtype=np.float64)
    # the model's centre, subtracted before the kernel's GEMM (None: a model from before it)
    center = getattr(model, "center_", None)
    for batch in model.batches_[:n_batches]:
        J = len(batch.target)
        if J == 0:
            continue
        w = np.asarray(batch.prototype_weights, dtype=X.dtype)
        step = chunk_rows(J)  # bounded (rows x J) kernel chunks
        for start in range(0, X.shape[0], step):
            stop = min(start + step, X.shape[0])
            total[start:stop] += batch.kernel(X[start:stop], center) @ w
    check_finite_scores(total[:, None], center)
    return total
