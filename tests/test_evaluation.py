"""score_probabilities and its lazy (dask) form against scikit-learn's metrics."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score, log_loss, roc_auc_score

from discrim.evaluation import score_probabilities, score_probabilities_lazy


@pytest.fixture
def three_classes():
    rng = np.random.default_rng(0)
    return rng.choice(["a", "b", "c"], 40), rng.dirichlet([1, 1, 1], size=40), np.array(["a", "b", "c"])


def test_scores_equal_sklearn_metrics(three_classes):
    y, proba, classes = three_classes
    scores = score_probabilities(y, proba, classes)
    y_pred = classes[np.argmax(proba, axis=1)]
    assert scores["log_loss"] == pytest.approx(log_loss(y, proba, labels=classes), rel=1e-12)
    assert scores["accuracy"] == pytest.approx(accuracy_score(y, y_pred))
    assert scores["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, y_pred))
    assert scores["roc_auc"] == pytest.approx(roc_auc_score(y, proba, multi_class="ovr", labels=classes))


@pytest.mark.parametrize("order", [[2, 0, 1], [1, 0, 2], [2, 1, 0]])
def test_scores_do_not_depend_on_the_order_of_the_classes(three_classes, order):
    """The same probabilities with their columns and classes listed in another order score the
    same: scikit-learn's log_loss reads the columns in sorted label order (the log-loss was 1.944
    for 1.497 with columns c, a, b) and its multi-class ROC-AUC refuses unsorted labels (NaN)."""
    y, proba, classes = three_classes
    expected = score_probabilities(y, proba, classes)
    got = score_probabilities(y, proba[:, order], classes[order])
    assert got == pytest.approx(expected, rel=1e-12)


def test_binary_scores_do_not_depend_on_the_order_of_the_classes():
    rng = np.random.default_rng(1)
    y, proba = rng.choice([3, 7], 20), rng.dirichlet([1, 1], size=20)
    expected = score_probabilities(y, proba, np.array([3, 7]))
    assert expected["log_loss"] == pytest.approx(log_loss(y, proba, labels=[3, 7]), rel=1e-12)
    assert score_probabilities(y, proba[:, ::-1], np.array([7, 3])) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 0, 1]])
def test_lazy_scores_equal_the_in_memory_ones(three_classes, order):
    da = pytest.importorskip("dask.array")
    y, proba, classes = three_classes
    expected = score_probabilities(y, proba, classes)
    got = score_probabilities_lazy(da.from_array(y, chunks=7), da.from_array(proba[:, order], chunks=(7, 3)),
                                   classes[order])
    assert np.isnan(got.pop("roc_auc"))
    expected.pop("roc_auc")
    assert got == pytest.approx(expected, rel=1e-12)
