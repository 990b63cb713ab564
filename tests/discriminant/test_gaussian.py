"""LinearDiscriminant and QuadraticDiscriminant: estimates, rules, oracles and input errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist
from scipy.stats import multivariate_normal
from sklearn.datasets import load_iris
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.utils.estimator_checks import parametrize_with_checks

from discrim.discriminant import LinearDiscriminant, QuadraticDiscriminant
from discrim.discriminant import _gaussian_math as gm
from discrim.distributions._gaussian_linalg import cholesky_factors, inverse_factors

ESTIMATORS = [LinearDiscriminant, QuadraticDiscriminant]

_SINGULAR = (
    "the check fits tiny or integer-valued data whose covariance is singular; the seed's rule is "
    "undefined there and the estimator raises, asking for reg_param > 0 (the reg_param=0.1 "
    "instance passes this check)"
)


def _expected_failures(estimator):
    out = {}
    if estimator.reg_param == 0:
        out.update(dict.fromkeys(
            ["check_sample_weights_shape", "check_sample_weights_not_overwritten",
             "check_sample_weight_equivalence_on_dense_data"],
            _SINGULAR,
        ))
    return out


@parametrize_with_checks(
    [LinearDiscriminant(), QuadraticDiscriminant(), LinearDiscriminant(reg_param=0.1),
     QuadraticDiscriminant(reg_param=0.1, priors="empirical")],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _gaussian_classes(rng, n_per_class=(60, 90, 120), d=3):
    means = rng.normal(scale=2.0, size=(len(n_per_class), d))
    X = np.vstack([rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) * 0.5 + m
                   for n, m in zip(n_per_class, means)])
    y = np.repeat(np.arange(len(n_per_class)), n_per_class)
    return X, y


# ---------------------------------------------------------------- estimates


def test_lda_pooled_covariance_is_unbiased_form(rng):
    X, y = _gaussian_classes(rng)
    lda = LinearDiscriminant().fit(X, y)
    g, n = 3, X.shape[0]
    pooled = sum((np.sum(y == k) - 1) * np.cov(X[y == k].T) for k in range(g)) / (n - g)
    np.testing.assert_allclose(lda.covariance_, pooled, rtol=1e-12)
    np.testing.assert_allclose(lda.means_, [X[y == k].mean(0) for k in range(g)], rtol=1e-12)


def test_qda_covariances_are_unbiased(rng):
    X, y = _gaussian_classes(rng)
    qda = QuadraticDiscriminant().fit(X, y)
    for k in range(3):
        np.testing.assert_allclose(qda.covariance_[k], np.cov(X[y == k].T), rtol=1e-12)


def test_lda_matches_sklearn_up_to_the_divisor(rng):
    X, y = _gaussian_classes(rng)
    n, g = X.shape[0], 3
    ours = LinearDiscriminant(priors="empirical").fit(X, y)
    ref = LinearDiscriminantAnalysis(solver="lsqr", store_covariance=True).fit(X, y)
    # scikit-learn divides the within-class scatter by n, the unbiased estimate by n - g.
    np.testing.assert_allclose(ours.covariance_ * (n - g) / n, ref.covariance_, rtol=1e-12)
    np.testing.assert_allclose(ours.coef_ * n / (n - g), ref.coef_, rtol=1e-10)
    np.testing.assert_allclose(ours.priors_, ref.priors_)
    # Equal class sizes and equal priors: the divisor rescales all scores alike, same decisions.
    Xb, yb = _gaussian_classes(rng, n_per_class=(100, 100, 100))
    ours = LinearDiscriminant().fit(Xb, yb)
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(Xb, yb)
    grid = rng.normal(scale=3, size=(500, 3))
    np.testing.assert_array_equal(ours.predict(grid), ref.predict(grid))


def test_qda_matches_sklearn_up_to_the_divisor(rng):
    X, y = _gaussian_classes(rng)
    ours = QuadraticDiscriminant(priors="empirical").fit(X, y)
    ref = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y)
    counts = np.bincount(y)
    # scikit-learn 1.9 divides each class scatter by n_k; the unbiased S_k by n_k - 1.
    for k in range(3):
        np.testing.assert_allclose(ours.covariance_[k] * (counts[k] - 1) / counts[k],
                                   ref.covariance_[k], rtol=1e-10)
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-12)
    grid = rng.normal(scale=3, size=(2000, 3))
    assert np.mean(ours.predict(grid) == ref.predict(grid)) > 0.99
    np.testing.assert_allclose(ours.predict_proba(grid), ref.predict_proba(grid), atol=0.05)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_probabilities_match_scipy_oracle(Est, rng):
    X, y = _gaussian_classes(rng)
    priors = np.array([0.5, 0.2, 0.3])
    est = Est(priors=priors).fit(X, y)
    cov = est.covariance_ if est.covariance_.ndim == 3 else [est.covariance_] * 3
    grid = rng.normal(scale=3, size=(200, 3))
    logf = np.column_stack([multivariate_normal(est.means_[k], cov[k]).logpdf(grid) for k in range(3)])
    np.testing.assert_allclose(est.log_density(grid), logf, rtol=1e-10)
    joint = logf + np.log(priors)
    post = np.exp(joint - joint.max(1, keepdims=True))
    post /= post.sum(1, keepdims=True)
    np.testing.assert_allclose(est.predict_proba(grid), post, rtol=1e-9, atol=1e-14)
    np.testing.assert_array_equal(est.predict(grid), est.classes_[np.argmax(joint, axis=1)])


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_mahalanobis_matches_scipy(Est, rng):
    X, y = _gaussian_classes(rng)
    est = Est().fit(X, y)
    grid = rng.normal(scale=3, size=(40, 3))
    cov = est.covariance_ if est.covariance_.ndim == 3 else [est.covariance_] * 3
    expected = np.column_stack([
        cdist(grid, est.means_[k : k + 1], "mahalanobis", VI=np.linalg.inv(cov[k]))[:, 0] ** 2
        for k in range(3)
    ])
    np.testing.assert_allclose(est.mahalanobis(grid), expected, rtol=1e-10)


def test_lda_linear_scores_and_corollary(rng):
    X, y = _gaussian_classes(rng, n_per_class=(70, 50))
    lda = LinearDiscriminant(priors=[0.3, 0.7]).fit(X, y)
    S_inv = np.linalg.inv(lda.covariance_)
    mu = lda.means_
    np.testing.assert_allclose(lda.coef_, mu @ S_inv, rtol=1e-10)
    np.testing.assert_allclose(lda.a_, S_inv @ (mu[0] - mu[1]), rtol=1e-10)
    np.testing.assert_allclose(lda.h_, (mu[0] + mu[1]) / 2)
    grid = rng.normal(scale=3, size=(300, 3))
    # delta_k(x) = 2 mu_k' S^-1 x - mu_k' S^-1 mu_k; the scores are delta_k / 2 + log pi_k.
    delta = 2 * grid @ S_inv @ mu.T - np.einsum("kd,de,ke->k", mu, S_inv, mu)
    scores = grid @ lda.coef_.T + lda.intercept_
    np.testing.assert_allclose(scores, delta / 2 + np.log([0.3, 0.7]), rtol=1e-9, atol=1e-9)
    # Binary decision function: log odds of classes_[1] = -(a'(x - h)) + log(pi_2 / pi_1).
    np.testing.assert_allclose(lda.decision_function(grid),
                               -(grid - lda.h_) @ lda.a_ + np.log(0.7 / 0.3), rtol=1e-9, atol=1e-9)
    to_first = (grid - lda.h_) @ lda.a_ > np.log(0.7 / 0.3)
    np.testing.assert_array_equal(lda.predict(grid) == 0, to_first)


def test_lda_multiclass_has_no_corollary_attributes(rng):
    X, y = _gaussian_classes(rng)
    lda = LinearDiscriminant().fit(X, y)
    assert not hasattr(lda, "a_") and not hasattr(lda, "h_")


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_reg_param_shrinks_towards_identity(Est, rng):
    X, y = _gaussian_classes(rng)
    plain = Est().fit(X, y).covariance_
    np.testing.assert_allclose(Est(reg_param=0.3).fit(X, y).covariance_,
                               0.7 * plain + 0.3 * np.eye(3), rtol=1e-12)


# ---------------------------------------------------------------- weights and input types


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), est_index=st.sampled_from([0, 1]))
def test_integer_weights_equal_repeated_rows(seed, est_index):
    rng = np.random.default_rng(seed)
    X, y = _gaussian_classes(rng, n_per_class=(12, 15), d=2)
    w = rng.integers(0, 4, size=y.shape[0])
    w[[0, 1, -1, -2]] = 2  # each class keeps enough rows for its covariance
    Est = ESTIMATORS[est_index]
    a = Est(priors="empirical").fit(X, y, sample_weight=w)
    b = Est(priors="empirical").fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(a.means_, b.means_, rtol=1e-10)
    np.testing.assert_allclose(a.covariance_, b.covariance_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.priors_, b.priors_, rtol=1e-12)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_float32_and_pandas_input(Est, rng):
    pd = pytest.importorskip("pandas")
    X, y = _gaussian_classes(rng)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    est = Est().fit(frame, pd.Series(y))
    np.testing.assert_array_equal(est.feature_names_in_, ["a", "b", "c"])
    ref = Est().fit(X, y)
    np.testing.assert_allclose(est.predict_proba(frame), ref.predict_proba(X))
    np.testing.assert_allclose(ref.predict_proba(X.astype(np.float32)), ref.predict_proba(X), atol=1e-5)


@pytest.mark.parametrize("block_rows", [None, 1, 7, 700])
def test_distances_in_any_blocks_equal_scipys_mahalanobis(rng, block_rows):
    """The blocked, centred distance kernels against scipy's definition, one row at a time."""
    from scipy.spatial.distance import mahalanobis

    X = rng.normal(size=(50, 3)) * [1.0, 3.0, 0.5] + 100.0
    means = rng.normal(size=(3, 3)) + 100.0
    covs = np.stack([np.cov(rng.normal(size=(40, 3)), rowvar=False) + 0.1 * np.eye(3) for _ in range(3)])
    inv, _ = inverse_factors(cholesky_factors(covs))
    origin = X[0]
    full = gm.mahalanobis_full(X, means - origin, inv, origin, block_rows=block_rows)
    tied = gm.mahalanobis_tied(X, means - origin, inv[0], origin, block_rows=block_rows)
    for i in range(0, 50, 7):
        for k in range(3):
            expected_full = mahalanobis(X[i], means[k], np.linalg.inv(covs[k])) ** 2
            expected_tied = mahalanobis(X[i], means[k], np.linalg.inv(covs[0])) ** 2
            assert full[i, k] == pytest.approx(expected_full, rel=1e-10)
            assert tied[i, k] == pytest.approx(expected_tied, rel=1e-10)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 4, np.inf, X), y), "infinity"),
        (lambda X, y: (X, np.zeros_like(y)), "only one class"),
        (lambda X, y: (X[:-1], y), "inconsistent numbers of samples"),
        (lambda X, y: (X.astype(str), y), "numeric"),
    ],
    ids=["inf", "one-class", "lengths", "text"],
)
def test_bad_training_data(Est, mutate, match, rng):
    X, y = _gaussian_classes(rng)
    X, y = mutate(X, y)
    with pytest.raises(ValueError, match=match):
        Est().fit(X, y)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_non_numeric_column_is_named(Est, rng):
    pd = pytest.importorskip("pandas")
    X, y = _gaussian_classes(rng)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(colour="red")
    with pytest.raises(ValueError, match=r"non-numeric column\(s\) \['colour'\]"):
        Est().fit(frame, y)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_negative_weights(Est, rng):
    X, y = _gaussian_classes(rng)
    w = np.ones(y.shape[0])
    w[3] = -1
    with pytest.raises(ValueError, match="sample_weight contains negative values"):
        Est().fit(X, y, sample_weight=w)


def test_qda_class_too_small_is_named(rng):
    X, y = _gaussian_classes(rng)
    y = y.astype(object)
    y[0] = "lonely"
    with pytest.raises(ValueError, match=r"class 'lonely' has 1 sample\(s\)"):
        QuadraticDiscriminant().fit(X, y.astype(str))


def test_qda_singular_class_covariance_names_class_and_reg_param(rng):
    X, y = _gaussian_classes(rng, n_per_class=(3, 50), d=4)  # class 0: 3 rows, 4 features
    with pytest.raises(ValueError, match="covariance of class 0 is") as err:
        QuadraticDiscriminant().fit(X, y)
    assert "reg_param" in str(err.value) and "3 samples for 4 features" in str(err.value)
    QuadraticDiscriminant(reg_param=0.05).fit(X, y)  # the suggested fix works


def test_qda_collinear_features_in_one_class(rng):
    X, y = _gaussian_classes(rng, n_per_class=(40, 40))
    X[y == 1, 2] = 2 * X[y == 1, 0] - X[y == 1, 1]  # exact linear dependence in class 1
    with pytest.raises(ValueError, match="collinear"):
        QuadraticDiscriminant().fit(X, y)


def test_lda_singular_pooled_covariance(rng):
    X, y = _gaussian_classes(rng)
    X[:, 2] = X[:, 0] * 1e3 + 5  # collinear, whatever the units
    with pytest.raises(ValueError, match="pooled covariance .* collinear .* reg_param"):
        LinearDiscriminant().fit(X, y)
    X, y = _gaussian_classes(rng, n_per_class=(2, 3), d=4)  # n - g = 3 <= 4 features
    with pytest.raises(ValueError, match=r"n - g = 3 for 4 features"):
        LinearDiscriminant().fit(X, y)


@pytest.mark.parametrize("Est, params", [(LinearDiscriminant, {}), (QuadraticDiscriminant, {"pooling": 1.0})])
def test_pooled_divisor_error_names_the_total_weight_when_weighted(Est, params, rng):
    """Weights summing to 1 over 270 rows: the error must blame the total weight, not the sample count.

    The pooled divisor is the total weight minus the classes (frequency weights); the message
    said "add samples" to a user with plenty of them. Unweighted, it still counts samples.
    """
    X, y = _gaussian_classes(rng)
    with pytest.raises(ValueError, match=r"total sample_weight above the number of classes \(total weight 1 "
                                         r"over 270 samples, 3 classes") as err:
        Est(**params).fit(X, y, sample_weight=np.full(y.shape[0], 1.0 / y.shape[0]))
    assert "frequency weights" in str(err.value)
    X, y = X[[0, 60, 150]], y[[0, 60, 150]]  # one row per class: n - g = 0
    with pytest.raises(ValueError, match=r"more samples than classes \(3 samples, 3 classes; divisor n - g = 0\)"):
        Est(**params).fit(X, y)


def test_weights_summing_to_the_bound_up_to_rounding_are_refused():
    """150 weights of 0.02 sum to 3 + 4e-16 and 50 of 1/50 to 1 + 2e-16: LDA took the rounding as a
    divisor (covariances of 6e14) and QDA as a class total above 1; both are at the bound."""
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"total weight 3 over 150 samples, 3 classes; divisor n - g = 0\)"):
        LinearDiscriminant().fit(X, y, sample_weight=np.full(150, 0.02))
    with pytest.raises(ValueError, match=r"class 0 has 50 samples but a total sample_weight of 1; .*above 1"):
        QuadraticDiscriminant().fit(X, y, sample_weight=np.full(150, 1 / 50))
    # a little above the bound is a fit, its covariance the weighted scatter over the small divisor
    model = LinearDiscriminant().fit(X, y, sample_weight=np.full(150, 0.021))
    np.testing.assert_allclose(model.covariance_ * (150 * 0.021 - 3),
                               LinearDiscriminant().fit(X, y).covariance_ * (150 - 3) * 0.021, rtol=1e-9)


def test_badly_scaled_but_regular_features_are_accepted(rng):
    X, y = _gaussian_classes(rng)
    X *= np.array([1e-6, 1.0, 1e7])
    for Est in ESTIMATORS:
        Est().fit(X, y).predict(X)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_predict_with_wrong_width(Est, rng):
    X, y = _gaussian_classes(rng)
    est = Est().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_far_points_get_finite_posteriors(Est, rng):
    X, y = _gaussian_classes(rng)
    est = Est().fit(X, y)
    far = np.array([[1e6, -1e6, 1e6], [-1e8, 0.0, 0.0]])
    assert np.all(np.isfinite(est.log_density(far)))
    assert np.all(np.exp(est.log_density(far)) == 0)  # every density underflows ...
    proba = est.predict_proba(far)  # ... but the posteriors do not
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.all(np.isfinite(est.predict_log_proba(far)))


# Issue 17: translation and scale invariance, magnitude limits, round trips.

def _grid_classes(seed, n=90, d=3):
    """Three classes on the grid of multiples of 1/8: translating by an integer up to 2^49 and
    scaling by a power of two are exact, so the shifted data are the same data."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = np.round(rng.normal(size=(n, d)) * 8) / 8
    X[y == 1] += 1.5
    X[y == 2, 0] -= 2.0
    return X, y


_METHODS = ["predict_proba", "predict_log_proba", "decision_function", "log_density", "mahalanobis"]


@pytest.mark.parametrize("Est", ESTIMATORS)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), offset=st.integers(-10**9, 10**9), k=st.integers(-20, 20))
def test_exact_translation_and_power_of_two_scaling_are_bit_identical(Est, seed, offset, k):
    X, y = _grid_classes(seed)
    scale = 2.0**k
    ref = Est().fit(X, y)
    moved = Est().fit(X + offset, y)
    np.testing.assert_array_equal(moved.predict_proba(X + offset), ref.predict_proba(X))
    np.testing.assert_array_equal(moved.predict(X + offset), ref.predict(X))
    # The reported means add the origin back: rounded once, at the size of the offset.
    np.testing.assert_allclose(moved.means_, ref.means_ + offset, rtol=0,
                               atol=2 * np.finfo(float).eps * (abs(offset) + 8))
    # Scaling adds -d log(scale) to every log-density: exact classes, rounding in the sums.
    scaled = Est().fit(X * scale, y)
    np.testing.assert_allclose(scaled.predict_proba(X * scale), ref.predict_proba(X), atol=1e-13)


@pytest.mark.parametrize("Est", ESTIMATORS)
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    offset=st.floats(-1e9, 1e9),
    log_scale=st.floats(-6, 6),
)
def test_translation_and_scaling_within_the_rounding_of_the_data(Est, seed, offset, log_scale):
    # Z = (X + offset) * scale is rounded; the oracle is the fit on Z - offset * scale computed
    # from Z itself, the same points up to rounding of eps |Z|. Posteriors may differ by
    # eps |offset| / spread times the size of the standardised scores.
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 30)
    X = rng.normal(size=(90, 2)) + np.array([[0, 0]] * 30 + [[1.5, 0]] * 30 + [[0, -1.5]] * 30)
    scale = 10.0**log_scale
    Z = (X + offset) * scale
    moved = Est().fit(Z, y)
    base = Est().fit(X, y)
    spread = scale * 1.0  # unit-variance classes
    tol = 32 * np.finfo(float).eps * (1 + abs(offset) * scale / spread)
    np.testing.assert_allclose(moved.predict_proba(Z), base.predict_proba(X), rtol=0, atol=tol)


def test_lda_far_from_the_origin_matches_the_centred_fit():
    # The case: uncentred linear scores were off by 2e-4 at 1e6 and flipped
    # predictions at 1e7; scikit-learn (which centres) stayed within 1e-9.
    X, y = _grid_classes(3, n=300)
    ref = LinearDiscriminant().fit(X, y).predict_proba(X)
    for offset in (1e6, 1e7, 1e9, 1e12):
        lda = LinearDiscriminant().fit(X + offset, y)
        np.testing.assert_array_equal(lda.predict_proba(X + offset), ref)
        # coef_ keeps the seed's definition.
        mu = lda.means_
        S_inv = np.linalg.inv(lda.covariance_)
        np.testing.assert_allclose(lda.coef_, mu @ S_inv, rtol=1e-8)


@pytest.mark.parametrize(
    "Est, Ref",
    [
        (LinearDiscriminant, LinearDiscriminantAnalysis),  # the svd solver centres
        (QuadraticDiscriminant, QuadraticDiscriminantAnalysis),
    ],
)
@pytest.mark.parametrize("offset", [1e6, 1e7, 1e9])
def test_far_from_the_origin_like_sklearn(Est, Ref, offset, rng):
    # scikit-learn centres each class and stays accurate far from the origin; its covariance
    # divisors differ from ours (n, n_k against n - g, n_k - 1), so the oracle is the
    # difference between the two rules, which translation must leave as it was (up to the
    # rounding of the shifted data, eps |offset| / spread).
    X, y = _gaussian_classes(rng)
    Z = X + offset
    ours_far = Est(priors="empirical").fit(Z, y).predict_proba(Z)
    ours_near = Est(priors="empirical").fit(X, y).predict_proba(X)
    ref_far = Ref().fit(Z, y).predict_proba(Z)
    ref_near = Ref().fit(X, y).predict_proba(X)
    tol = 1e-9 + 1e3 * np.finfo(float).eps * offset
    np.testing.assert_allclose(ours_far - ref_far, ours_near - ref_near, rtol=0, atol=tol)
    np.testing.assert_allclose(ours_far, ours_near, rtol=0, atol=tol)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("dtype, big", [(np.float64, 1e300), (np.float64, 1e103), (np.float32, 1e13)])
def test_values_beyond_the_magnitude_limit_are_refused(Est, dtype, big, rng):
    # They gave NaN probabilities while predict returned labels.
    X, y = _gaussian_classes(rng)
    if dtype == np.float64:  # fit works in float64: its limit applies to float32 input too
        with pytest.raises(ValueError, match=r"X has values of magnitude up to .*rescale"):
            Est().fit((X * big).astype(dtype), y)
    est = Est().fit(X, y)
    bad = X[:4].astype(dtype).copy()
    bad[2, 1] = big
    for method in _METHODS + ["predict"]:
        with pytest.raises(ValueError, match=r"X has values of magnitude up to"):
            getattr(est, method)(bad)


def test_a_feature_of_vanishing_values_is_refused_at_fit_not_called_constant(rng):
    """A feature in units of 1e-200 varies, but its squares vanish in float64: LDA refused it as 'constant within
    every class', a mixture warned it constant (advice: leave it out of X) and a Gamma mixture left a component
    empty. Fits name the feature and the fix; prediction takes such values (a row near 0 is fine)."""
    from discrim import FiniteMixture, PrototypeClassifier
    from discrim.distributions import Gamma

    X, y = _gaussian_classes(rng, d=2)
    tiny = X * [1.0, 1e-200]
    match = r"1 feature\(s\) of X \(index 1\) hold only values within \+-1e-102 .*rescale them"
    for est in (LinearDiscriminant(), QuadraticDiscriminant(), PrototypeClassifier(),
                FiniteMixture(Gamma(), 2)):
        with pytest.raises(ValueError, match=match):
            est.fit(np.abs(tiny) if isinstance(est, FiniteMixture) else tiny, y)
    fitted = LinearDiscriminant().fit(X, y)
    np.testing.assert_allclose(fitted.predict_proba(X[:3] * [1.0, 1e-200]), fitted.predict_proba(X[:3] * [1.0, 0.0]))


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_largest_accepted_values_give_finite_output(Est, rng):
    X, y = _gaussian_classes(rng)
    est = Est().fit(X * 1e100, y)
    rows = X[:6] * 1e100
    rows[0] = 1e102
    for method in _METHODS:
        assert np.all(np.isfinite(getattr(est, method)(rows))), method
    proba = est.predict_proba(rows)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_save_and_load_give_bit_identical_outputs(Est, n_classes, rng, tmp_path):
    from discrim.persistence import load_model, save_model

    X, y = _gaussian_classes(rng)
    keep = y < n_classes
    est = Est(reg_param=0.01).fit(X[keep], y[keep])
    path = tmp_path / "m.skops"
    save_model(est, path)
    loaded = load_model(path)
    grid = rng.normal(scale=4, size=(500, 3))
    for method in _METHODS + ["predict"]:
        np.testing.assert_array_equal(getattr(loaded, method)(grid), getattr(est, method)(grid))


def test_inverse_factors_are_c_contiguous(rng):
    # The layout a loaded array has: products over them then sum in the same order.
    A = rng.normal(size=(3, 4, 4))
    cov = A @ np.swapaxes(A, 1, 2) + np.eye(4)
    inv, _ = inverse_factors(cholesky_factors(cov))
    assert inv.flags["C_CONTIGUOUS"]


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_model_without_centred_statistics_asks_for_a_refit(Est, rng):
    # As a file saved before the statistics were kept about a data point would load.
    X, y = _gaussian_classes(rng)
    est = Est().fit(X, y)
    del est._origin
    with pytest.raises(ValueError, match="older version of discrim .* refit the model"):
        est.predict_proba(X)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("missing", [False, True])
def test_a_row_of_weight_zero_far_away_leaves_the_fit_as_without_it(Est, missing):
    # the statistics were taken about the first training row, weighted out or not: an outlier at
    # 1e8 given weight 0 before the iris rows carried the rounding of its distance into every other
    # row (posteriors 1e-7 off the fit without it)
    X, y = load_iris(return_X_y=True)
    if missing:
        X = X.copy()
        X[::7, 1] = np.nan
    far = np.vstack([np.full((1, 4), 1e8), X])
    w = np.r_[0.0, np.ones(150)]
    with_row = Est().fit(far, np.r_[0, y], sample_weight=w)
    without = Est().fit(X, y)
    np.testing.assert_allclose(with_row.predict_proba(load_iris().data), without.predict_proba(load_iris().data),
                               rtol=0, atol=1e-13)
