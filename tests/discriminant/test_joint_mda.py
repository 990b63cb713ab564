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


def _iris_subclass_start():
    """Each iris class split at the median of its first feature: two subclasses per class."""
    X, y = load_iris(return_X_y=True)
    upper = np.zeros(len(y), dtype=int)
    for k in range(3):
        rows = y == k
        upper[rows] = X[rows, 0] > np.median(X[rows, 0])
    return X, y, 2 * y + upper


# mda 0.5-3: the class posteriors of mda(Species ~ X, weights = <the start above, one 0/1 matrix per
# class>, iter = 500) at some rows of iris (row index: setosa, versicolor, virginica), deviance 13.8620366726006
_MDA_POSTERIOR = {
    0: [1.0, 3.15198017110800e-28, 7.40217679510537e-53],
    50: [2.98475059277305e-29, 9.99996711460669e-01, 3.28853933112409e-06],
    70: [2.44278383901608e-33, 2.90395069502402e-01, 7.09604930497598e-01],
    83: [1.01966110052769e-42, 1.32909504087728e-01, 8.67090495912272e-01],
    119: [1.09649186166525e-46, 3.64395983950973e-01, 6.35604016049027e-01],
    133: [2.00529441060115e-40, 9.19197294702244e-01, 8.08027052977558e-02],
    138: [8.56436779930215e-36, 1.10084512867059e-01, 8.89915487132941e-01],
}


def test_subclasses_sharing_one_covariance_from_a_given_start_are_mdas():
    # Hastie and Tibshirani's MDA is EM over the subclasses of every class, each row kept in its class,
    # with one covariance (divisor n): from the same start, mda's class posteriors and deviance
    from discrim.mixture import FiniteMixture

    X, y, start = _iris_subclass_start()
    fm = FiniteMixture(Gaussian("tied", reg_covar=0.0), 6, component_labels=[0, 0, 1, 1, 2, 2], unlabeled=-1,
                       init_params=start, tol=1e-14, max_iter=500).fit(X, y)
    posterior = fm.predict_proba(X).reshape(len(y), 3, 2).sum(axis=2)
    rows = list(_MDA_POSTERIOR)
    np.testing.assert_allclose(posterior[rows], [_MDA_POSTERIOR[i] for i in rows], rtol=1e-6, atol=1e-12)
    deviance = -2 * np.log(posterior[np.arange(len(y)), y]).sum()
    assert deviance == pytest.approx(13.8620366726006, rel=1e-6)


def test_component_labels_with_y_but_without_unlabeled_is_refused():
    # y was silently ignored: an unconstrained 6-component mixture, whose class posteriors (summed by
    # component_labels) were nothing like mda's (deviance 94 for mda's 4.4 on a five-feature set)
    from discrim.mixture import FiniteMixture

    X, y, start = _iris_subclass_start()
    model = FiniteMixture(Gaussian("tied"), 6, component_labels=[0, 0, 1, 1, 2, 2], init_params=start)
    with pytest.raises(ValueError, match="unlabeled=-1") as info:
        model.fit(X, y)
    assert "\n" not in str(info.value)
    model.fit(X)  # without y: an ordinary mixture, as before
