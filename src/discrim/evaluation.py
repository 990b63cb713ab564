"""Hold-out metrics of probabilistic classifiers, computed the same way everywhere in discrim."""

import numpy as np
from sklearn.metrics import accuracy_score, balanced_accuracy_score, log_loss, roc_auc_score


def score_probabilities(y_true, proba, classes):
    """Log-loss, accuracy, balanced accuracy and ROC-AUC of predicted class probabilities.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    proba : ndarray of shape (n_samples, n_classes)
        Columns in the order of ``classes``.
    classes : array-like of shape (n_classes,)

    Returns
    -------
    scores : dict of str to float
        ``log_loss``, ``accuracy``, ``balanced_accuracy`` and ``roc_auc`` (one-vs-rest macro
        average for more than two classes; NaN when the test set lacks a class).
    """
    y_true = np.asarray(y_true)
    classes = np.asarray(classes)
    y_pred = classes[np.argmax(proba, axis=1)]
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
