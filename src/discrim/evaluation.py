"""Hold-out metrics of probabilistic classifiers, computed the same way everywhere in discrim."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score, balanced_accuracy_score, log_loss, roc_auc_score

from discrim._typing import ArrayLike

__all__ = ["score_probabilities", "score_probabilities_lazy"]


def score_probabilities(y_true: ArrayLike, proba: ArrayLike, classes: ArrayLike) -> dict:
    """Log-loss, accuracy, balanced accuracy and ROC-AUC of predicted class probabilities.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    proba : ndarray of shape (n_samples, n_classes)
        Columns in the order of ``classes``.
    classes : array-like of shape (n_classes,)
        In any order (scikit-learn's metrics take the columns in sorted order: they are sorted
        with ``classes`` before those are called).

    Returns
    -------
    scores : dict of str to float
        ``log_loss``, ``accuracy``, ``balanced_accuracy`` and ``roc_auc`` (one-vs-rest macro
        average for more than two classes; NaN when the test set lacks a class).

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.evaluation import score_probabilities
    >>> proba = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    >>> scores = score_probabilities(np.array([0, 1, 1]), proba, np.array([0, 1]))
    >>> round(scores["log_loss"], 4), scores["accuracy"], scores["roc_auc"]
    (0.4987, 0.6666666666666666, 1.0)
    """
    y_true = np.asarray(y_true)
    classes = np.asarray(classes)
    y_pred = classes[np.argmax(proba, axis=1)]
    # log_loss and the multi-class roc_auc_score read the columns in sorted label order (with
    # classes [7, 3] the log-loss was that of the swapped columns)
    order = np.argsort(classes, kind="stable")
    classes, proba = classes[order], np.asarray(proba)[:, order]
    scores = {
        "log_loss": float(log_loss(y_true, proba, labels=classes)),
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "balanced_accuracy": float(balanced_accuracy_score(y_true, y_pred)),
    }
    try:
        if classes.shape[0] == 2:
            scores["roc_auc"] = float(roc_auc_score(y_true == classes[1], proba[:, 1]))
        else:
            scores["roc_auc"] = float(roc_auc_score(y_true, proba, multi_class="ovr", labels=classes))
    except ValueError:
        scores["roc_auc"] = float("nan")
    return scores


def _score_chunk(classes, proba, y_true):
    """Sums over one chunk: log-loss, rows, and per class (in the order of ``classes``, any) its
    rows and its correct predictions."""
    proba = np.asarray(proba, dtype=np.float64)
    order = np.argsort(classes, kind="stable")
    position = np.minimum(np.searchsorted(classes[order], np.asarray(y_true)), classes.shape[0] - 1)
    known = classes[order][position] == np.asarray(y_true)
    index = order[position]  # the column of each row's label
    p_true = np.where(known, proba[np.arange(proba.shape[0]), index], 0.0)
    eps = np.finfo(np.float64).eps
    correct = known & (np.argmax(proba, axis=1) == index)
    n = classes.shape[0]
    return np.concatenate([[-np.log(np.clip(p_true, eps, 1.0)).sum(), proba.shape[0]],
                           np.bincount(index[known], minlength=n), np.bincount(index[correct], minlength=n)])


def score_probabilities_lazy(y_true: ArrayLike, proba: ArrayLike, classes: ArrayLike) -> dict:
    """:func:`score_probabilities` of dask arrays, in one pass over their chunks (no ROC-AUC).

    Parameters
    ----------
    y_true : dask.array.Array of shape (n_samples,)
        Chunked like the rows of ``proba``.
    proba : dask.array.Array of shape (n_samples, n_classes)
        Columns in the order of ``classes``.
    classes : ndarray of shape (n_classes,)
        In any order.

    Returns
    -------
    scores : dict of str to float
        ``log_loss`` (probabilities clipped at machine epsilon, as scikit-learn does), ``accuracy``,
        ``balanced_accuracy`` and ``roc_auc`` (NaN: it needs all rows sorted by score).

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from discrim.evaluation import score_probabilities_lazy
    >>> proba = da.from_array(np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]), chunks=(2, 2))
    >>> y_true = da.from_array(np.array([0, 1, 1]), chunks=2)
    >>> scores = score_probabilities_lazy(y_true, proba, np.array([0, 1]))
    >>> round(scores["log_loss"], 4), scores["accuracy"]
    (0.4987, 0.6666666666666666)
    """
    from discrim.utils._dask import map_row_chunks

    classes = np.asarray(classes)
    totals = map_row_chunks(lambda p, y, first: _score_chunk(classes, p, y), proba, y_true, reduce=np.add)
    n = classes.shape[0]
    loss, rows, per_class, correct = totals[0], totals[1], totals[2 : 2 + n], totals[2 + n :]
    present = per_class > 0
    return {
        "log_loss": float(loss / rows),
        "accuracy": float(correct.sum() / rows),
        "balanced_accuracy": float(np.mean(correct[present] / per_class[present])),
        "roc_auc": float("nan"),
    }
