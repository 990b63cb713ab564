"""PrototypeClassifier: the model's invariants, the fit engine, and scikit-learn's contract."""

import logging

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from discrim.datasets import make_checkerboard
from discrim.prototype import PrototypeBatch, PrototypeClassifier

EXPECTED_FAILED_CHECKS = {
    # The fit draws candidates at random from bins whose sizes depend on the number of rows, so
    # integer weights and repeated rows give different (equally valid) random draws; and the
    # check's data give a class a single row of positive weight, which the minimum-cases
    # condition rejects.
    "check_sample_weight_equivalence_on_dense_data": "random candidate draws depend on row counts",
}


@parametrize_with_checks(
    [PrototypeClassifier(n_candidates=50, random_state=0)],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _checker_data():
    return make_checkerboard(n_per_square=12, n_squares=4, random_state=0)


@pytest.fixture(scope="module")
def checker():
    return _checker_data()


@pytest.fixture(scope="module")
def fitted(checker):
    X, y = checker
    return PrototypeClassifier(n_batches=2, n_candidates=100, random_state=0).fit(X, y)


def _three_classes(rng, n=90):
    X = rng.normal(size=(n, 3))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3] + 0.3 * rng.normal(size=(n, 3)), axis=1)]
    return X, y


def test_no_batches_gives_the_marginals(rng):
    X, y = _three_classes(rng)
    w = rng.uniform(0.5, 2.0, X.shape[0])
    clf = PrototypeClassifier(n_batches=0).fit(X, y, sample_weight=w)
    expected = np.array([w[y == k].sum() for k in clf.classes_]) / w.sum()
    np.testing.assert_allclose(clf.marginals_, expected)
    np.testing.assert_allclose(clf.predict_proba(X), np.tile(expected, (X.shape[0], 1)))
    assert clf.batches_ == []


def test_probabilities_sum_to_one_and_match_the_model(fitted, checker):
    X, _ = checker
    proba = fitted.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(fitted.predict_log_proba(X)), proba, rtol=1e-12)
    np.testing.assert_array_equal(fitted.predict(X), fitted.classes_[np.argmax(proba, axis=1)])
    # eq. (p_k(x)) evaluated directly from the fitted batches
    q = np.tile(fitted.marginals_, (X.shape[0], 1))
    for b in fitted.batches_:
        Xa = X[:, b.feature_index]
        K = np.exp(-0.5 * (((Xa[:, None, :] - b.prototypes[None]) * b.feature_weights) ** 2).sum(axis=2))
        for k in range(2):
            q[:, k] += (K * b.prototype_weights)[:, b.target == k].sum(axis=1)
    np.testing.assert_allclose(proba, q / q.sum(axis=1, keepdims=True), rtol=1e-10)


def test_far_from_prototypes_probabilities_tend_to_marginals(fitted):
    far = np.array([[1e3, -1e3], [-1e4, 1e4]])
    # a batch whose feature weights are all zero has a constant kernel: it shifts the classes
    # everywhere; every other batch's contribution vanishes far away
    q = fitted.marginals_.copy()
    for b in fitted.batches_:
        if b.feature_index.size == 0:
            q += np.bincount(b.target, weights=b.prototype_weights, minlength=2)
    assert any(b.feature_index.size for b in fitted.batches_)
    np.testing.assert_allclose(fitted.predict_proba(far), np.tile(q / q.sum(), (2, 1)), atol=1e-12)
    one = PrototypeClassifier(n_candidates=100, random_state=0).fit(*_checker_data())
    assert one.batches_[0].feature_index.size
    np.testing.assert_allclose(one.predict_proba(far), np.tile(one.marginals_, (2, 1)), atol=1e-12)


def test_batches_are_populated(fitted, checker):
    X, _ = checker
    assert len(fitted.batches_) == 2 and len(fitted.n_iter_) == 2 and len(fitted.objective_values_) == 2
    for b in fitted.batches_:
        assert isinstance(b, PrototypeBatch)
        assert b.prototypes.shape == (b.n_prototypes, b.feature_index.size)
        assert np.all(b.prototype_weights > 0) and np.all(b.feature_weights > 0)
        assert np.all(np.diff(b.target) >= 0)
        np.testing.assert_array_equal(b.prototypes, X[b.sample_index][:, b.feature_index])
    # checkerboard: the model should separate the squares well on its training data
    assert fitted.score(*checker) > 0.8


def test_staged_predict_proba(fitted, checker):
    X, _ = checker
    stages = list(fitted.staged_predict_proba(X))
    assert len(stages) == 3
    np.testing.assert_allclose(stages[0], np.tile(fitted.marginals_, (X.shape[0], 1)))
    np.testing.assert_allclose(stages[-1], fitted.predict_proba(X), rtol=1e-12)
    one = PrototypeClassifier(n_batches=1, n_candidates=100, random_state=0).fit(*checker)
    np.testing.assert_allclose(stages[1], one.predict_proba(X), rtol=1e-10)


def test_same_random_state_same_model(checker):
    a = PrototypeClassifier(n_candidates=80, random_state=3).fit(*checker)
    b = PrototypeClassifier(n_candidates=80, random_state=3).fit(*checker)
    for ba, bb in zip(a.batches_, b.batches_):
        np.testing.assert_array_equal(ba.sample_index, bb.sample_index)
        np.testing.assert_array_equal(ba.prototype_weights, bb.prototype_weights)
        np.testing.assert_array_equal(ba.feature_weights, bb.feature_weights)


def test_warm_start_adds_batches_like_a_cold_fit(checker, fitted):
    X, y = checker
    clf = PrototypeClassifier(n_batches=1, n_candidates=100, warm_start=True, random_state=0).fit(X, y)
    clf.set_params(n_batches=2).fit(X, y)
    assert len(clf.batches_) == 2
    np.testing.assert_allclose(clf.predict_proba(X), fitted.predict_proba(X), rtol=1e-10)
    with pytest.raises(ValueError, match="n_batches=1 is smaller"):
        clf.set_params(n_batches=1).fit(X, y)


def test_zero_weight_rows_are_ignored(rng):
    X, y = _three_classes(rng)
    extra = rng.normal(size=(10, 3)) * 5
    Xw = np.vstack([X, extra])
    yw = np.concatenate([y, np.array(["a"] * 10)])
    w = np.r_[np.ones(X.shape[0]), np.zeros(10)]
    a = PrototypeClassifier(n_candidates=40, random_state=1).fit(X, y)
    b = PrototypeClassifier(n_candidates=40, random_state=1).fit(Xw, yw, sample_weight=w)
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), rtol=1e-10)


def test_minimum_cases_error_names_class_and_count(rng):
    X = rng.normal(size=(12, 2))
    y = np.array(["x"] * 10 + ["rare"] * 2)
    with pytest.raises(ValueError, match=r"class 'rare' has 2 row\(s\)"):
        PrototypeClassifier().fit(X, y)


def test_pandas_input_keeps_feature_names(checker):
    X, y = checker
    df = pd.DataFrame(X, columns=["u", "v"])
    clf = PrototypeClassifier(n_candidates=60, random_state=0).fit(df, pd.Series(y))
    np.testing.assert_array_equal(clf.feature_names_in_, ["u", "v"])
    plain = PrototypeClassifier(n_candidates=60, random_state=0).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(df), plain.predict_proba(X))


def test_float32_matches_float64(checker):
    X, y = checker
    a = PrototypeClassifier(n_candidates=60, random_state=0).fit(X, y)
    b = PrototypeClassifier(n_candidates=60, random_state=0, dtype="float32").fit(X, y)
    # a non-convex problem solved to tol in two precisions: close solutions, not equal ones
    assert b.objective_values_[0] == pytest.approx(a.objective_values_[0], rel=0.02)
    assert np.abs(b.predict_proba(X) - a.predict_proba(X)).mean() < 0.02
    assert b.predict_proba(X).dtype == np.float64


def test_max_samples_subsamples_per_batch(checker):
    X, y = checker
    clf = PrototypeClassifier(n_batches=2, n_candidates=60, max_samples=0.5, random_state=0).fit(X, y)
    assert len(clf.batches_) == 2
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_initial_solution_callback_is_used(checker):
    X, y = checker
    seen = []

    def start(batch_number, candidates):
        seen.append((batch_number, candidates.size))
        return np.full(X.shape[1], 3.0), np.full(candidates.size, 0.5)

    clf = PrototypeClassifier(n_candidates=60, random_state=0)
    from discrim.utils.validation import check_labels

    classes, y_idx = check_labels(y)
    clf.classes_, clf.marginals_ = classes, np.bincount(y_idx) / y.size
    clf.batches_, clf.n_iter_, clf.objective_values_ = [], [], []
    clf._fit_batches(X, y_idx, np.ones(y.size), [np.random.default_rng(0)], initial_solution=start)
    assert seen and seen[0][0] == 0 and len(clf.batches_) == 1


def test_progress_is_logged(checker, caplog):
    with caplog.at_level(logging.INFO, logger="discrim.prototype.classifier"):
        PrototypeClassifier(n_batches=2, n_candidates=60, random_state=0, verbose=1).fit(*checker)
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("batch 2:") and "prototypes" in m for m in messages)
    assert any("candidates/samples by bin" in m for m in messages)


def test_loose_ftol_stops_batches_earlier(checker):
    X, y = checker
    strict = PrototypeClassifier(n_batches=2, n_candidates=60, random_state=0).fit(X, y)
    loose = PrototypeClassifier(n_batches=2, n_candidates=60, ftol=1e-3, random_state=0).fit(X, y)
    assert sum(loose.n_iter_) < sum(strict.n_iter_)
    np.testing.assert_allclose(loose.predict_proba(X).sum(axis=1), 1.0)


def _batch_objective(rng, alpha_prototype, w0):
    from discrim.optim import NonNegElasticNet, PenalizedObjective
    from discrim.prototype._likelihood import PrototypeLikelihood

    R, J, D = 30, 10, 2
    X, S = rng.normal(size=(R, D)), rng.normal(size=(J, D))
    y, target = rng.integers(0, 2, R), np.sort(rng.integers(0, 2, J))
    lik = PrototypeLikelihood(X, y, np.full(R, 1.0 / R), np.full((R, 2), 0.5), S, target, 2, np)
    penalties = [(slice(0, D), NonNegElasticNet(1e-3, 0.05)), (slice(D, D + J), NonNegElasticNet(alpha_prototype, 1.0))]
    return PenalizedObjective(lik, penalties, np.concatenate([np.full(D, 2.0), np.full(J, w0)])), D, J


def test_solve_started_empty_stays_empty_when_no_weight_wants_to_grow(rng):
    from discrim.prototype.classifier import _solve

    # an L1 penalty on w larger than any likelihood gradient: w = 0 is optimal, v then goes to 0
    objective, D, J = _batch_objective(rng, alpha_prototype=100.0, w0=0.0)
    result = _solve(objective, D, J, max_iter=100, tol=1e-6, fit_features_first=False)
    assert result.message == "empty batch" and result.n_eval == 1
    assert not np.any(result.theta)
    assert result.value == pytest.approx(objective.value_and_grad(np.zeros(D + J))[0])


def test_solve_never_returns_a_batch_worse_than_the_empty_one(rng):
    from discrim.prototype.classifier import _solve

    for alpha in (1e-8, 1e-2, 1.0):
        objective, D, J = _batch_objective(rng, alpha_prototype=alpha, w0=1.0)
        trivial = objective.value_and_grad(np.zeros(D + J))[0]
        for max_iter in (1, 3, 200):
            result = _solve(objective, D, J, max_iter=max_iter, tol=1e-6)
            assert result.value <= trivial
            assert result.value == pytest.approx(objective.value_and_grad(result.theta)[0])
