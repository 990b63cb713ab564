"""PrototypeClassifier on incomplete data (issue 21): a missing entry is the factor 1 of the product kernel."""

import functools

import array_api_compat.numpy as xp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.model_selection import PrototypeClassifierCV
from discrim.prototype import PrototypeClassifier
from discrim.prototype._likelihood import PrototypeLikelihood, kernel_matrix, reference_value_and_grad


def _brute_kernel(X, S, v):
    """``prod_d over observed d of exp(-1/2 (v_d (x_d - s_d))^2)``, term by term."""
    observed = ~np.isnan(X)
    diff = np.where(observed[:, None, :], X[:, None, :] - S[None], 0.0)
    return np.exp(-0.5 * ((v * diff) ** 2).sum(axis=2))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), d=st.integers(1, 6), j=st.integers(1, 8),
       share=st.floats(0.0, 1.0))
def test_kernel_of_rows_with_missing_entries_is_the_product_over_the_observed_ones(seed, n, d, j, share):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < share] = np.nan
    S, v = rng.normal(size=(j, d)), rng.random(d) * 2
    np.testing.assert_allclose(kernel_matrix(X, S, v, xp), _brute_kernel(X, S, v), rtol=1e-12, atol=1e-14)


def _batch_problem(seed, rows=300, d=4, j=12, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, d))
    X[rng.random(X.shape) < 0.3] = np.nan
    y = rng.integers(0, classes, rows)
    S = rng.normal(size=(j, d))
    target = np.sort(rng.integers(0, classes, j))
    coef, q0 = rng.random(rows), rng.random((rows, classes)) + 0.1
    theta = np.concatenate([rng.random(d), rng.random(j)])
    theta[1] = 0.0  # an inactive feature
    return X, y, coef, q0, S, target, classes, theta


def _brute_value(X, y, coef, q0, S, target, classes, theta):
    d = X.shape[1]
    K = _brute_kernel(X, S, theta[:d])
    q = q0 + K @ (np.eye(classes)[target] * theta[d:, None])
    return -(coef * np.log(q[np.arange(len(y)), y] / q.sum(axis=1))).sum()


@pytest.mark.parametrize("rows_per_chunk, n_threads", [(None, 1), (37, 2)])
def test_objective_and_gradient_with_missing_entries(rows_per_chunk, n_threads):
    X, y, coef, q0, S, target, classes, theta = _batch_problem(0)
    likelihood = PrototypeLikelihood(X, y, coef, q0, S, target, classes, xp, rows_per_chunk=rows_per_chunk,
                                     n_threads=n_threads)
    try:
        value, grad = likelihood.value_and_grad(theta)
        assert value == pytest.approx(_brute_value(X, y, coef, q0, S, target, classes, theta), rel=1e-12)
        # the reference path (torch's) finds the NaN itself
        ref_value, ref_grad = reference_value_and_grad(theta, X, np.eye(classes)[y], coef, q0, S,
                                                       np.eye(classes)[target], target, xp, 50)
        assert ref_value == pytest.approx(value, rel=1e-12)
        np.testing.assert_allclose(ref_grad, grad, rtol=1e-10, atol=1e-12)
        # central differences of the value (the inactive feature's gradient is 0 by construction)
        eps = 1e-6
        for i in [0, 2, 3, *range(4, theta.shape[0])]:
            up, down = theta.copy(), theta.copy()
            up[i] += eps
            down[i] -= eps
            numeric = (likelihood.value_and_grad(up)[0] - likelihood.value_and_grad(down)[0]) / (2 * eps)
            assert grad[i] == pytest.approx(numeric, rel=1e-5, abs=1e-6)
    finally:
        likelihood.close()


def test_large_chunks_with_missing_entries_use_the_class_free_reduction():
    X, y, coef, q0, S, target, classes, theta = _batch_problem(1, rows=4000, j=40, classes=2)
    likelihood = PrototypeLikelihood(X, y, coef, q0, S, target, classes, xp)
    complete = PrototypeLikelihood(np.nan_to_num(X), y, coef, q0, S, target, classes, xp)
    assert complete._per_class and not likelihood._per_class
    value, _ = likelihood.value_and_grad(theta)
    assert value == pytest.approx(_brute_value(X, y, coef, q0, S, target, classes, theta), rel=1e-12)


def _incomplete_data(n=400, share=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < share] = np.nan
    return X, y


@functools.lru_cache(maxsize=None)
def _model():
    X, y = _incomplete_data()
    return PrototypeClassifier(n_batches=2, n_candidates=80, random_state=0).fit(X, y), X, y


def _brute_scores(model, X):
    q = np.tile(model.marginals_, (X.shape[0], 1))
    for batch in model.batches_:
        if batch.n_prototypes:
            K = _brute_kernel(X[:, batch.feature_index], batch.prototypes, batch.feature_weights)
            q += K @ (np.eye(len(model.classes_))[batch.target] * batch.prototype_weights[:, None])
    return q


def test_rows_with_missing_values_are_scored_but_never_prototypes():
    model, X, y = _model()
    used = np.concatenate([b.sample_index for b in model.batches_])
    assert used.size > 0
    assert not np.isnan(X[used]).any()
    q = _brute_scores(model, X)
    np.testing.assert_allclose(model.predict_proba(X), q / q.sum(axis=1, keepdims=True), rtol=1e-10)
    incomplete = np.isnan(X).any(axis=1)
    assert (model.predict(X[incomplete]) == y[incomplete]).mean() > 0.7


def test_familiarity_and_explain_of_a_row_with_a_missing_feature():
    model, X, _ = _model()
    row = np.array([0.4, np.nan, -0.2])
    q = _brute_scores(model, row[None])
    assert model.familiarity(row[None])[0] == pytest.approx(q.sum() - 1.0, rel=1e-10)
    explanation = model.explain(row)
    np.testing.assert_allclose(explanation.proba.to_numpy(), q[0] / q.sum(), rtol=1e-10)
    features = explanation.features.set_index("feature")
    if "x1" in features.index:  # the feature's weight is positive in some batch
        assert np.isnan(features.loc["x1", "value"])
        assert features.loc["x1", "contribution"] == 0.0
        assert (explanation.prototypes["x1_similarity"].dropna() == 1.0).all()


def test_a_feature_missing_everywhere_is_named():
    X, y = _incomplete_data()
    X[:, 2] = np.nan
    with pytest.raises(ValueError, match=r"feature\(s\) \[2\] of X are missing"):
        PrototypeClassifier(n_batches=1, random_state=0).fit(X, y)


def test_no_complete_row_is_an_error_that_says_why():
    # every row has a missing value: no candidate can be drawn, and the model would be the class
    # frequencies alone (before: a warning blaming the features' scale)
    X, y = _incomplete_data()
    X[np.arange(X.shape[0]), np.arange(X.shape[0]) % 3] = np.nan
    with pytest.raises(ValueError, match="every row of positive weight has a missing value.*Impute"):
        PrototypeClassifier(n_batches=1, random_state=0).fit(X, y)
    # the complete rows count only with positive weight
    X, y = _incomplete_data()
    weight = np.isnan(X).any(axis=1).astype(float)
    with pytest.raises(ValueError, match="every row of positive weight has a missing value"):
        PrototypeClassifier(n_batches=1, random_state=0).fit(X, y, sample_weight=weight)


def test_a_class_without_a_complete_row_is_named():
    X, y = _incomplete_data()
    ones = np.flatnonzero(y == 1)
    X[ones, ones % 3] = np.nan
    with pytest.warns(UserWarning, match=r"class\(es\) \[1\] have no complete row"):
        model = PrototypeClassifier(n_batches=1, random_state=0).fit(X, y)
    assert set(np.concatenate([b.target for b in model.batches_])) <= {0}


def test_search_on_incomplete_data():
    X, y = _incomplete_data(n=300)
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-4, 1e-2], max_batches=1, cv=2, random_state=0).fit(X, y)
    assert search.score(X, y) > 0.7


def test_torch_path_with_missing_values_equals_numpy():
    torch = pytest.importorskip("torch")
    from array_api_compat import array_namespace

    X, y, coef, q0, S, target, classes, theta = _batch_problem(2)
    value, grad = PrototypeLikelihood(X, y, coef, q0, S, target, classes, xp).value_and_grad(theta)
    t = torch.as_tensor
    on_torch = PrototypeLikelihood(t(X), y, t(coef), t(q0), t(S), target, classes, array_namespace(t(X)))
    torch_value, torch_grad = on_torch.value_and_grad(t(theta))
    assert float(torch_value) == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(torch_grad.numpy(), grad, rtol=1e-10, atol=1e-12)
    # a whole fit: the same candidates, and optima of the same value to the solver's tolerance
    # (the objective is not convex: paths that part at rounding level may end at different
    # optima of nearly equal value, so their probabilities are not compared)
    X, y = _incomplete_data(n=200)
    a = PrototypeClassifier(n_batches=1, n_candidates=50, random_state=0).fit(X, y)
    b = PrototypeClassifier(n_batches=1, n_candidates=50, random_state=0, device="cpu").fit(X, y)
    np.testing.assert_array_equal(a.batches_[0].sample_index, b.batches_[0].sample_index)
    np.testing.assert_allclose(a.objective_values_, b.objective_values_, rtol=1e-3)
    # the torch model's probabilities are those of its batches computed by numpy
    on_torch = b.predict_proba(X)
    np.testing.assert_allclose(b.set_params(device=None).predict_proba(X), on_torch, rtol=1e-12, atol=1e-15)


def test_score_refuses_missing_true_labels():
    # a NaN label failed inside scikit-learn's accuracy ("Input y_true contains NaN.")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] > 0).astype(int)
    model = PrototypeClassifier(n_batches=1, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"y has 1 unlabelled row\(s\) \(NaN or None; first index 5\).*y\[labelled\]"):
        model.score(X, np.where(np.arange(120) == 5, np.nan, y))
