"""QuadraticDiscriminant(pooling=...): Friedman's regularised discriminant analysis (issue 22)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris, load_wine

from discrim.discriminant import LinearDiscriminant, QuadraticDiscriminant


@settings(max_examples=20, deadline=None)
@given(pooling=st.floats(0.0, 1.0), reg=st.sampled_from([0.0, 0.1]))
def test_class_covariances_are_the_convex_combination_with_the_pooled_one(pooling, reg):
    X, y = load_wine(return_X_y=True)
    qda = QuadraticDiscriminant(reg_param=0.0).fit(X, y)
    lda = LinearDiscriminant().fit(X, y)
    rda = QuadraticDiscriminant(pooling=pooling, reg_param=reg).fit(X, y)
    mixed = (1 - pooling) * qda.covariance_ + pooling * lda.covariance_
    expected = (1 - reg) * mixed + reg * np.eye(X.shape[1])
    np.testing.assert_allclose(rda.covariance_, expected, rtol=1e-9, atol=1e-12)


def test_full_pooling_is_lda():
    X, y = load_iris(return_X_y=True)
    rda = QuadraticDiscriminant(pooling=1.0, priors="empirical").fit(X, y)
    lda = LinearDiscriminant(priors="empirical").fit(X, y)
    np.testing.assert_allclose(rda.predict_proba(X), lda.predict_proba(X), rtol=1e-9, atol=1e-12)
    # a class of one row gets the pooled covariance
    rda = QuadraticDiscriminant(pooling=1.0).fit(np.vstack([X, [[9.0, 9.0, 9.0, 9.0]]]), np.append(y, 3))
    np.testing.assert_allclose(rda.covariance_[3], rda.covariance_[0])
    with pytest.raises(ValueError, match="set pooling=1"):
        QuadraticDiscriminant(pooling=0.5).fit(np.vstack([X, [[9.0, 9.0, 9.0, 9.0]]]), np.append(y, 3))


@pytest.mark.parametrize("regularisation", [{}, {"reg_param": 0.1}, {"shrinkage": "oas"}])
@pytest.mark.parametrize("incomplete", ["unlabelled", "missing", "both"])
def test_full_pooling_is_lda_on_incomplete_data(regularisation, incomplete):
    """pooling=1 is LDA's model on rows without labels or with missing values too.

    Its EM estimated one covariance per class and pooled them afterwards: with the labels of iris's
    rows 101-149 dropped, the unlabelled virginica rows were assigned under per-class covariances
    and the posteriors were 0.998 off LDA's (0.76 with 70 % of the labels dropped at random); with
    missing values the pooled covariance entered every E-step with the divisor n - g (LDA's EM: n),
    6e-4 off.
    """
    X, y = load_iris(return_X_y=True)
    kwargs = dict(regularisation)
    if incomplete != "missing":
        y = np.where(np.arange(150) > 100, -1, y)
        kwargs["unlabeled"] = -1
    rows = X.copy()
    if incomplete != "unlabelled":
        rows[::7, 1] = np.nan
        rows[3::11, 2] = np.nan
    rda = QuadraticDiscriminant(pooling=1.0, **kwargs).fit(rows, y)
    lda = LinearDiscriminant(**kwargs).fit(rows, y)
    np.testing.assert_allclose(rda.means_, lda.means_, rtol=1e-9)
    for k in range(3):
        np.testing.assert_allclose(rda.covariance_[k], lda.covariance_, rtol=1e-9)
    np.testing.assert_allclose(rda.predict_proba(X), lda.predict_proba(X), atol=1e-9)


def test_pooling_out_of_range_names_the_parameter():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="pooling"):
        QuadraticDiscriminant(pooling=1.5).fit(X, y)


@pytest.mark.parametrize("shrinkage", ["oas", "auto"])
def test_full_pooling_with_a_data_driven_shrinkage_is_lda(shrinkage):
    """pooling=1 shrinks the pooled covariance with LDA's intensity, for every class: it was each
    class's own, so a one-row class got intensity 1 (a sphere for "oas", diag(S_pooled) for "auto")
    and the posteriors were 0.41 ("oas") and 0.20 ("auto") off LDA's, with a 0 / 0 RuntimeWarning."""
    import warnings

    rng = np.random.default_rng(10)
    X = rng.normal(size=(61, 3)) @ np.array([[2, 1, 0], [0, 1, 0.5], [0, 0, 0.3]])
    y = np.r_[np.repeat([0, 1], 30), 2]  # class 2 has one row
    X[y == 1] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rda = QuadraticDiscriminant(pooling=1.0, shrinkage=shrinkage).fit(X, y)
    lda = LinearDiscriminant(shrinkage=shrinkage).fit(X, y)
    np.testing.assert_allclose(rda.shrinkage_, np.full(3, lda.shrinkage_), rtol=1e-12)
    for k in range(3):
        np.testing.assert_allclose(rda.covariance_[k], lda.covariance_, rtol=1e-12)
    np.testing.assert_allclose(rda.predict_proba(X), lda.predict_proba(X), atol=1e-12)


def test_normalised_weights_are_explained_as_frequency_weights():
    """A class of 20 rows whose weights sum to 1/3 is told what frequency weights are: the error
    asked to add samples, set pooling=1 or use LinearDiscriminant, which all fail with such weights."""
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(60, 2)), np.repeat([0, 1, 2], 20)
    with pytest.raises(ValueError, match=r"class 0 has 20 samples but a total sample_weight of 0\.333333; .*"
                                         r"frequency weights .* scale them to sum to the number of samples\.$") as err:
        QuadraticDiscriminant().fit(X, y, sample_weight=np.full(60, 1 / 60))
    assert "add samples" not in str(err.value) and "pooling" not in str(err.value)
    QuadraticDiscriminant().fit(X, y, sample_weight=np.full(60, 1.0))  # scaled to the number of samples
    with pytest.raises(ValueError, match=r"class 2 has 1 sample\(s\) .*: add samples, set pooling=1"):
        QuadraticDiscriminant().fit(X[:41], y[:41])  # one row: adding samples is the fix
