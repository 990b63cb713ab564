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


def test_pooling_out_of_range_names_the_parameter():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="pooling"):
        QuadraticDiscriminant(pooling=1.5).fit(X, y)
