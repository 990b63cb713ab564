"""LinearDiscriminant.transform: the canonical variates of MASS's lda and scikit-learn's LDA (issue 22)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline

from discrim.discriminant import LinearDiscriminant

# R 4.x, MASS: f <- lda(Species ~ ., iris); f$scaling; f$svd^2 / sum(f$svd^2)
MASS_IRIS_SCALING = np.array([[0.829377642266006, -0.0241021488769521],
                              [1.534473067700012, -2.1645212346584399],
                              [-2.201211655561773, 0.9319212100293717],
                              [-2.810460308843104, -2.8391878529827346]])
MASS_IRIS_TRACE = np.array([0.99121260496536723, 0.00878739503463279])


def test_scalings_and_proportion_of_trace_are_mass_lda():
    X, y = load_iris(return_X_y=True)
    lda = LinearDiscriminant().fit(X, y)  # iris is balanced: equal priors are MASS's proportions
    np.testing.assert_allclose(lda.scalings_, MASS_IRIS_SCALING, rtol=1e-10)
    np.testing.assert_allclose(lda.explained_variance_ratio_, MASS_IRIS_TRACE, rtol=1e-10)


@pytest.mark.parametrize("load", [load_iris, load_wine])
def test_variates_are_scikit_learns_up_to_sign_and_offset(load):
    X, y = load(return_X_y=True)
    ours = LinearDiscriminant(priors="empirical").fit(X, y)
    theirs = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    np.testing.assert_allclose(ours.explained_variance_ratio_, theirs.explained_variance_ratio_, rtol=1e-8)
    Z, T = ours.transform(X), theirs.transform(X)
    for j in range(Z.shape[1]):
        assert abs(np.corrcoef(Z[:, j], T[:, j])[0, 1]) == pytest.approx(1.0, abs=1e-10)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(2, 5), n_features=st.integers(1, 6))
def test_variates_are_whitened_and_ordered_by_separation(seed, n_classes, n_features):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), 30)
    X = rng.normal(size=(y.shape[0], n_features)) @ rng.normal(size=(n_features, n_features)) \
        + rng.normal(size=(n_classes, n_features))[y] * 2
    lda = LinearDiscriminant(priors="empirical").fit(X, y)
    Z = lda.transform(X)
    rank = min(n_classes - 1, n_features)
    assert Z.shape == (X.shape[0], rank)
    # unit within-class covariance (the pooled divisor n - g), uncorrelated variates
    within = sum((Z[y == k] - Z[y == k].mean(axis=0)).T @ (Z[y == k] - Z[y == k].mean(axis=0))
                 for k in range(n_classes)) / (y.shape[0] - n_classes)
    np.testing.assert_allclose(within, np.eye(rank), atol=1e-8)
    # the weighted class means of the variates are centred; their variances are the eigenvalues
    weights = np.bincount(y) / y.shape[0]
    means = np.stack([Z[y == k].mean(axis=0) for k in range(n_classes)])
    np.testing.assert_allclose(weights @ means, 0.0, atol=1e-8)
    between = (weights[:, None] * means).T @ means
    eigen = np.sort(np.linalg.eigvals(np.linalg.solve(lda.covariance_, (weights[:, None] * (
        lda.means_ - weights @ lda.means_)).T @ (lda.means_ - weights @ lda.means_))).real)[::-1][:rank]
    np.testing.assert_allclose(np.diag(between), eigen, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(lda.explained_variance_ratio_, eigen / eigen.sum(), rtol=1e-7, atol=1e-10)


def test_n_components_keeps_the_leading_variates_and_names_the_limit():
    X, y = load_wine(return_X_y=True)
    full = LinearDiscriminant().fit(X, y)
    one = LinearDiscriminant(n_components=1).fit(X, y)
    np.testing.assert_allclose(one.transform(X), full.transform(X)[:, :1], rtol=1e-12)
    assert list(one.get_feature_names_out()) == ["lineardiscriminant0"]
    with pytest.raises(ValueError, match=r"n_components=3 exceeds min\(n_classes - 1, n_features\) = 2"):
        LinearDiscriminant(n_components=3).fit(X, y)


def test_transform_in_a_pipeline():
    X, y = load_iris(return_X_y=True)
    Z = make_pipeline(LinearDiscriminant()).fit_transform(X, y)
    assert Z.shape == (150, 2)


def test_a_row_with_missing_values_gives_its_expected_variates():
    # E[z | x_o] = scalings' (sum_k p(k | x_o) E_k[x | x_o] - xbar), with the textbook conditional means
    X, y = load_iris(return_X_y=True)
    lda = LinearDiscriminant().fit(X, y)
    row = np.array([5.9, np.nan, 4.2, np.nan])
    o, m = ~np.isnan(row), np.isnan(row)
    S = lda.covariance_
    expected = np.zeros(4)
    for k, p in enumerate(lda.predict_proba(row[None])[0]):
        x = row.copy()
        x[m] = lda.means_[k, m] + S[np.ix_(m, o)] @ np.linalg.solve(S[np.ix_(o, o)], row[o] - lda.means_[k, o])
        expected += p * x
    np.testing.assert_allclose(lda.transform(row[None])[0], (expected - lda.xbar_) @ lda.scalings_, rtol=1e-10)
    np.testing.assert_allclose(lda.transform(X[:5]), (X[:5] - lda.xbar_) @ lda.scalings_, rtol=1e-10, atol=1e-12)


def test_rows_with_missing_values_of_a_frame_transform_without_a_feature_name_warning():
    # the expected rows' posteriors went through predict_proba again, on the validated array,
    # which warned that it had no feature names
    import warnings

    frame = load_iris(as_frame=True)
    X, y = frame.data, frame.target
    gaps = X.copy()
    gaps.iloc[::5, 1] = np.nan
    by_array = LinearDiscriminant().fit(X.to_numpy(), y).transform(gaps.to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_frame = LinearDiscriminant().fit(X, y).transform(gaps)
    np.testing.assert_array_equal(by_frame, by_array)
    assert np.isfinite(by_frame).all()


@pytest.mark.filterwarnings("ignore:divide by zero encountered in log")  # scikit-learn's log of the prior 0
def test_variates_without_between_class_variance_are_left_out():
    # A class of prior 0 leaves two prior-weighted class means, one dimension: the second variate
    # had a share of 1e-33 and a direction set by rounding (rows moved by 1e-12 flipped and turned
    # it). MASS's lda(prior = c(.5, .5, 0)) and scikit-learn keep one variate.
    X, y = load_iris(return_X_y=True)
    lda = LinearDiscriminant(priors=[0.5, 0.5, 0.0]).fit(X, y)
    assert lda.scalings_.shape == (4, 1)
    np.testing.assert_allclose(lda.explained_variance_ratio_, [1.0])
    reference = LinearDiscriminantAnalysis(priors=[0.5, 0.5, 0.0]).fit(X, y).transform(X)
    assert reference.shape == (150, 1)
    assert abs(np.corrcoef(lda.transform(X)[:, 0], reference[:, 0])[0, 1]) == pytest.approx(1.0, abs=1e-10)
    with pytest.raises(ValueError, match=r"n_components=2 exceeds the 1 canonical variate\(s\)"):
        LinearDiscriminant(priors=[0.5, 0.5, 0.0], n_components=2).fit(X, y)
    # class means on a line: one variate
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(90, 3))
    Z -= np.stack([Z[k * 30:(k + 1) * 30].mean(axis=0) for k in range(3)]).repeat(30, axis=0)
    labels = np.repeat([0, 1, 2], 30)
    assert LinearDiscriminant().fit(Z + np.outer(labels, [1.0, 2.0, 0.5]), labels).transform(Z).shape == (90, 1)
