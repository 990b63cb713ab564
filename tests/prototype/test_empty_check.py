"""PrototypeClassifier's empty_check_iter: when a batch that does not beat the empty batch is given up."""

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from discrim.datasets import load_benchmark, make_checkerboard
from discrim.prototype import PrototypeClassifier

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _same_model(a, b):
    assert len(a.batches_) == len(b.batches_)
    for x, y in zip(a.batches_, b.batches_):
        for field in ("prototypes", "target", "feature_index", "feature_weights", "prototype_weights", "sample_index"):
            np.testing.assert_array_equal(getattr(x, field), getattr(y, field), err_msg=field)


def test_early_give_up_equals_the_full_solve_where_the_solver_ends_empty():
    # the checkerboard's second and third batches end empty when solved in full (the default)
    X, y = make_checkerboard(n_per_square=20, random_state=0)
    X = StandardScaler().fit_transform(X)
    full = PrototypeClassifier(n_batches=3, n_candidates=300, random_state=0).fit(X, y)
    assert full.batches_[0].n_prototypes > 0
    assert [b.n_prototypes for b in full.batches_[1:]] == [0, 0]
    early = PrototypeClassifier(n_batches=3, n_candidates=300, random_state=0, empty_check_iter=10).fit(X, y)
    _same_model(full, early)  # the same model, found with fewer iterations
    np.testing.assert_array_equal(full.predict_proba(X), early.predict_proba(X))
    assert early.n_iter_[0] == full.n_iter_[0]
    assert all(e < f for e, f in zip(early.n_iter_[1:], full.n_iter_[1:]))


def test_a_bound_beyond_the_solve_changes_nothing():
    # iris-2f's batches beat the empty batch: the bound is never reached and the fits are identical
    X, _, y, _ = load_benchmark("iris-2f")
    a = PrototypeClassifier(n_batches=3, n_candidates=40, random_state=0).fit(X, y)
    b = PrototypeClassifier(n_batches=3, n_candidates=40, random_state=0, empty_check_iter=10**6).fit(X, y)
    assert all(batch.n_prototypes for batch in a.batches_)
    _same_model(a, b)
    assert a.n_iter_ == b.n_iter_


def test_a_model_without_prototypes_says_so_and_how_to_fix_it():
    """Unscaled checkerboard features (in [0, 1]) leave every batch empty: fit warns and names the fix."""
    import warnings

    X, y = make_checkerboard(n_per_square=20, random_state=0)
    with pytest.warns(UserWarning, match="StandardScaler"):
        model = PrototypeClassifier(n_batches=1, random_state=0).fit(X, y)
    assert model.batches_[0].n_prototypes == 0
    np.testing.assert_allclose(model.predict_proba(X[:3]), np.full((3, 2), 0.5), atol=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        scaled = PrototypeClassifier(n_batches=1, random_state=0).fit(StandardScaler().fit_transform(X), y)
    assert scaled.batches_[0].n_prototypes > 0
