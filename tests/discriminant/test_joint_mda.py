"""MixtureDiscriminant(joint=True): Hastie and Tibshirani's MDA, subclasses sharing one covariance (issue 22)."""

import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import multivariate_normal
from sklearn.datasets import load_iris

from discrim.discriminant import LinearDiscriminant, MixtureDiscriminant
from discrim.distributions import Fixed, Gamma, Gaussian


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


@pytest.mark.parametrize("fixed, components", [({"shape": 2.0}, [0]), ({"shape": [[2.0, 2.5], [6.0, 7.0]]}, [0, 1])])
def test_a_fixed_family_fixes_its_components_in_every_class_of_a_joint_fit(fixed, components):
    """Fixed(components=[0]) fixes each class's component 0, jointly as class by class.

    The joint mixture numbered the classes' components one after the other and fixed component 0
    of the first class only: class 1's component 0 was fitted freely (its rate 0.668, beside 0.290
    class by class) and then held at the fixed shape, and EDDA's parameter count took 16 for 14.
    """
    rng = np.random.default_rng(11)
    X = np.vstack([rng.gamma(2, 1, (100, 2)), rng.gamma(6, 1, (100, 2))])
    y = np.r_[np.zeros(100), np.ones(100)]
    family = Fixed(Gamma(), fixed, components)
    kwargs = dict(n_components=2, random_state=0, tol=1e-12, max_iter=2000)
    joint = MixtureDiscriminant(family, joint=True, **kwargs).fit(X, y)
    apart = MixtureDiscriminant(family, joint=False, **kwargs).fit(X, y)
    # every row labelled: the joint likelihood is the classes' own, maximised by the class fits
    for a, b in zip(joint.mixtures_, apart.mixtures_):
        np.testing.assert_allclose(a.params_["shape"], b.params_["shape"], rtol=1e-5)
        np.testing.assert_allclose(a.params_["rate"], b.params_["rate"], rtol=1e-5)
        np.testing.assert_allclose(a.params_["shape"][components], np.broadcast_to(fixed["shape"], (len(components), 2)))
    assert joint.summary(X, y).df == sum(m._n_parameters() for m in apart.mixtures_)
