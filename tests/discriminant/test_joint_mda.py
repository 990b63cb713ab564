"""MixtureDiscriminant(joint=True): Hastie and Tibshirani's MDA, subclasses sharing one covariance (issue 22)."""

import numpy as np
from scipy.special import softmax
from scipy.stats import multivariate_normal
from sklearn.datasets import load_iris

from discrim.discriminant import LinearDiscriminant, MixtureDiscriminant
from discrim.distributions import Gaussian


def test_every_subclass_of_every_class_shares_one_covariance():
    X, y = load_iris(return_X_y=True)
    model = MixtureDiscriminant(Gaussian("tied"), n_components=2, joint=True, random_state=0).fit(X, y)
    shared = model.mixtures_[0].params_["covariance"]
    for mixture in model.mixtures_:
        np.testing.assert_array_equal(mixture.params_["covariance"], shared)
    alone = MixtureDiscriminant(Gaussian("tied"), n_components=2, random_state=0).fit(X, y)
    assert not np.allclose(alone.mixtures_[0].params_["covariance"], alone.mixtures_[1].params_["covariance"])
    assert model.score(X, y) > 0.95


def test_one_subclass_per_class_is_the_maximum_likelihood_lda():
    # closed form: class means, and the pooled within-class scatter divided by n
    X, y = load_iris(return_X_y=True)
    model = MixtureDiscriminant(Gaussian("tied", reg_covar=0.0), n_components=1, joint=True, tol=1e-12,
                                max_iter=500, random_state=0).fit(X, y)
    lda = LinearDiscriminant().fit(X, y)
    ml_cov = lda.covariance_ * (150 - 3) / 150
    np.testing.assert_allclose(model.mixtures_[0].params_["covariance"], ml_cov, rtol=1e-10)
    joint = np.stack([multivariate_normal(mean, ml_cov).logpdf(X) for mean in lda.means_], axis=1)
    np.testing.assert_allclose(model.predict_proba(X), softmax(joint, axis=1), rtol=1e-8, atol=1e-12)
