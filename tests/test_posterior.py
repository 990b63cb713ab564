"""The ML/Bayes rule in log space: posteriors from joint log-likelihoods, never from NaN."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import softmax

from discrim._posterior import (
    check_joint,
    check_log_odds,
    check_some_density,
    proba_from_joint,
    proba_from_log_odds,
)

_finite = st.floats(-1e300, 1e300)


@settings(max_examples=100, deadline=None)
@given(jll=arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(2, 4)), elements=_finite))
def test_finite_scores_give_probabilities_like_softmax(jll):
    proba = proba_from_joint(jll.copy())
    assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    log_proba = proba_from_joint(jll.copy(), log=True)
    assert not np.isnan(log_proba).any()
    # The oracle, where its own computation does not overflow (differences within range).
    if np.all(np.isfinite(np.diff(jll, axis=1))):
        np.testing.assert_allclose(proba, softmax(jll, axis=1), atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_nan_score_is_refused_naming_rows_and_classes(n_classes):
    jll = np.zeros((4, n_classes))
    jll[2, 1] = np.nan
    for log in (False, True):
        with pytest.raises(ValueError, match=r"1 row\(s\) of X \(index 2\) have a NaN log-density under class index\(es\) \[1\]"):
            proba_from_joint(jll.copy(), log=log)
    with pytest.raises(ValueError, match="NaN"):
        check_joint(jll)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_infinite_score_is_refused(n_classes):
    jll = np.zeros((3, n_classes))
    jll[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"index 0\) have an infinite log-density"):
        proba_from_joint(jll.copy())


@pytest.mark.parametrize("n_classes", [2, 3])
def test_zero_density_under_every_class_is_refused_but_one_class_suffices(n_classes):
    jll = np.zeros((3, n_classes))
    jll[1] = -np.inf
    with pytest.raises(ValueError, match=r"index 1\) have zero density"):
        proba_from_joint(jll.copy())
    jll[1, -1] = -1e300  # one class with a (tiny) density: that class, with certainty
    proba = proba_from_joint(jll.copy())
    np.testing.assert_array_equal(proba[1], np.eye(n_classes)[-1])


def test_nan_log_odds_are_refused():
    with pytest.raises(ValueError, match=r"index 1\) have NaN log odds"):
        proba_from_log_odds(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="NaN log odds"):
        check_log_odds(np.array([np.nan]))
    np.testing.assert_array_equal(proba_from_log_odds(np.array([np.inf, -np.inf])), [[0, 1], [1, 0]])


# ----- one rule for every model (issue 18, deliverable 1) ------------------------------------------

def test_the_rule_module_is_a_leaf_and_every_package_imports_plainly():
    import subprocess
    import sys

    code = (
        "import sys; import discrim._posterior; "
        "mods = sorted(m for m in sys.modules if m.startswith('discrim.') and m != 'discrim._posterior'); "
        "print(mods)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # the array ops and the Dask data path (which imports neither dask nor other discrim modules)
    # (and discrim._typing, the annotations' aliases, which imports nothing of discrim)
    assert out.strip() == ("['discrim._typing', 'discrim.backend', 'discrim.backend._ops', 'discrim.utils', "
                           "'discrim.utils._dask']")
    for module in ("discrim.base", "discrim.mixture", "discrim.discriminant", "discrim.mixture._em"):
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)


def test_every_model_takes_its_posteriors_from_the_mixin():
    from discrim._posterior import PosteriorMixin
    from discrim.discriminant import KnownDensityClassifier, LinearDiscriminant, MixtureDiscriminant
    from discrim.mixture import FiniteMixture
    from discrim.prototype import PrototypeClassifier

    for cls in (LinearDiscriminant, KnownDensityClassifier, MixtureDiscriminant, FiniteMixture, PrototypeClassifier):
        assert issubclass(cls, PosteriorMixin)
        if cls is PrototypeClassifier:
            continue  # its methods take n_batches (below)
        for method in ("predict", "predict_proba", "predict_log_proba"):
            assert getattr(cls, method) is getattr(PosteriorMixin, method), (cls, method)
    # PrototypeClassifier's n_batches-aware methods give the mixin's answers for all batches
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    model = PrototypeClassifier(n_batches=2, random_state=0).fit(X, y)
    for method in ("predict", "predict_proba", "predict_log_proba"):
        np.testing.assert_array_equal(getattr(model, method)(X), getattr(PosteriorMixin, method)(model, X))
        np.testing.assert_array_equal(getattr(model, method)(X, priors="equal"),
                                      getattr(PosteriorMixin, method)(model, X, priors="equal"))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_mixture_responsibilities_are_the_softmax_of_weighted_densities(k):
    from scipy.special import softmax
    from scipy.stats import multivariate_normal

    from discrim.distributions import Gaussian
    from discrim.mixture import FiniteMixture

    rng = np.random.default_rng(k)
    X = np.vstack([rng.normal(3 * j, 1.0, (40, 2)) for j in range(k)])
    fm = FiniteMixture(Gaussian(), k, random_state=0).fit(X)
    logs = np.column_stack([
        np.log(fm.weights_[j]) + multivariate_normal(fm.params_["mean"][j], fm.params_["covariance"][j]).logpdf(X)
        for j in range(k)
    ])
    np.testing.assert_allclose(fm.predict_proba(X), softmax(logs, axis=1), rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(fm.predict(X), np.argmax(logs, axis=1))


def test_prototype_probabilities_are_the_normalised_scores():
    from discrim.prototype import PrototypeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, "same", "other")
    model = PrototypeClassifier(n_batches=2, random_state=0).fit(X, y)
    q = model._unscaled(model._validate_for_predict(X))
    np.testing.assert_allclose(model.predict_proba(X), q / q.sum(axis=1, keepdims=True), rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(q, axis=1)])


def test_zero_density_everywhere_names_the_kind_of_label():
    """One message for classifiers, mixtures and EM, naming classes or components."""
    from discrim.distributions import Gaussian
    from discrim.mixture import FiniteMixture

    with pytest.raises(ValueError, match=r"1 row\(s\) of X \(index 7\).*every component"):
        check_some_density(np.array([0.0, -np.inf]), "component", first_row=6)
    fm = FiniteMixture(Gaussian(), 2, random_state=0).fit(np.random.default_rng(0).normal(size=(20, 1)))
    fm._joint_log_likelihood = lambda X, log_prior=None: np.full((len(X), 2), -np.inf)  # no mass anywhere
    for method in (fm.predict_proba, fm.predict_log_proba, fm.predict):
        with pytest.raises(ValueError, match="under both components|every component"):
            method(np.zeros((3, 1)))


@pytest.mark.parametrize("n_labels", [2, 3])
def test_rule_from_joint_is_the_softmax_and_argmax(n_labels):
    """The one rule every classifier's predict methods go through, two labels by the log odds."""
    from scipy.special import log_softmax

    from discrim._posterior import rule_from_joint

    rng = np.random.default_rng(n_labels)
    jll = rng.normal(scale=30, size=(50, n_labels))
    labels = np.array(["a", "b", "c"][:n_labels])
    np.testing.assert_array_equal(rule_from_joint(jll.copy(), "predict", labels), labels[np.argmax(jll, axis=1)])
    np.testing.assert_allclose(rule_from_joint(jll.copy(), "log_proba", labels), log_softmax(jll, axis=1),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rule_from_joint(jll.copy(), "proba", labels), np.exp(log_softmax(jll, axis=1)),
                               rtol=1e-12, atol=1e-300)
    jll[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        rule_from_joint(jll, "predict", labels)
