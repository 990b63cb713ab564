"""The Bayes rule under other priors at prediction time, without refitting (issue 21, deliverable 5)."""

import numpy as np
import pytest
from scipy import stats

from discrim.discriminant import (
    KnownDensityClassifier,
    LinearDiscriminant,
    MixtureDiscriminant,
    QuadraticDiscriminant,
)
from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture
from discrim.prototype import PrototypeClassifier


def _data(rng, n_classes=3, n=300):
    y = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n, 2)) + y[:, None] * [1.0, 0.5]
    return X, y


RULES = [
    lambda priors: LinearDiscriminant(priors=priors),
    lambda priors: QuadraticDiscriminant(priors=priors),
    lambda priors: MixtureDiscriminant(Gaussian("full"), 1, priors=priors, random_state=0),
]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("make", RULES)
def test_priors_at_predict_equal_a_fit_with_those_priors(make, n_classes, rng):
    X, y = _data(rng, n_classes)
    priors = rng.dirichlet(np.ones(n_classes))
    fitted = make("equal").fit(X, y)
    refit = make(priors).fit(X, y)
    for method in ("predict_proba", "predict_log_proba", "decision_function"):
        np.testing.assert_allclose(getattr(fitted, method)(X, priors=priors), getattr(refit, method)(X),
                                   rtol=1e-10, atol=1e-12, err_msg=method)
    np.testing.assert_array_equal(fitted.predict(X, priors=priors), refit.predict(X))
    # and "equal" at predict time undoes empirical priors
    empirical = make("empirical").fit(X, y)
    np.testing.assert_allclose(empirical.predict_proba(X, priors="equal"), fitted.predict_proba(X), rtol=1e-10)


def test_known_density_classifier_takes_priors_at_predict(rng):
    X, y = _data(rng, 2)
    densities = [stats.multivariate_normal([0.0, 0.0]), stats.multivariate_normal([1.0, 0.5])]
    fitted = KnownDensityClassifier(densities).fit(X, y)
    refit = KnownDensityClassifier(densities, priors=[0.2, 0.8]).fit(X, y)
    np.testing.assert_allclose(fitted.predict_proba(X, priors=[0.2, 0.8]), refit.predict_proba(X), rtol=1e-12)


def test_a_mixture_takes_other_mixing_weights(rng):
    X, _ = _data(rng, 2)
    fm = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    weights = np.array([0.9, 0.1])
    joint = np.log(fm.predict_proba(X)) - np.log(fm.weights_) + np.log(weights)
    expected = np.exp(joint - np.log(np.exp(joint).sum(axis=1, keepdims=True)))
    np.testing.assert_allclose(fm.predict_proba(X, priors=weights), expected, rtol=1e-10)


def test_a_prototype_set_shifts_its_class_frequencies(rng):
    X, y = _data(rng, 3)
    y[:200] = 0  # unbalanced classes: the model's frequencies are far from equal
    model = PrototypeClassifier(n_batches=1, n_candidates=50, random_state=0).fit(X, y)
    frequencies = model.marginals_ / model.marginals_.sum()
    shifted = model.predict_proba(X) / frequencies
    np.testing.assert_allclose(model.predict_proba(X, priors="equal"), shifted / shifted.sum(axis=1, keepdims=True),
                               rtol=1e-10)


def test_bad_priors_at_predict_name_the_parameter(rng):
    X, y = _data(rng, 3)
    model = LinearDiscriminant().fit(X, y)
    with pytest.raises(ValueError, match="priors has shape"):
        model.predict(X, priors=[0.5, 0.5])
    with pytest.raises(ValueError, match="priors must sum to one"):
        model.predict_proba(X, priors=[0.5, 0.5, 0.5])
    # the model keeps no training frequencies: the message says how to give them
    with pytest.raises(ValueError, match=r"must be 'equal' or an array of 3 probabilities in the order of classes_; "
                                         r"got 'empirical'\. The training frequencies are priors='empirical' at fit"):
        model.decision_function(X, priors="empirical")
    with pytest.raises(ValueError, match=r"in the order of classes_; got 'uniform'\.$"):
        model.predict(X, priors="uniform")


def test_bad_priors_at_a_mixtures_predict_speak_of_its_components(rng):
    # a mixture has no classes_: its messages name the components and weights_
    X, _ = _data(rng, 2)
    fm = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"there are 2 components: give one prior per component in the order of "
                                         r"weights_"):
        fm.predict(X, priors=[0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match=r"for label in range\(len\(weights_\)\)"):
        fm.predict_proba(X, priors={0: 0.5, 1: 0.5})


def test_a_mixtures_priors_as_a_series_indexed_otherwise_than_by_position_are_refused(rng):
    # a mixture's components have no labels to read a Series by: numpy read its values in the Series'
    # order, whatever its index (the classifiers read a Series indexed by their labels by label, below)
    import pandas as pd

    X, _ = _data(rng, 3)
    fm = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"Series indexed by \[1, 0\].*priors\.reindex\(range\(len\(weights_\)\)\)"):
        fm.predict(X, priors=pd.Series([0.7, 0.3], index=[1, 0]))
    np.testing.assert_array_equal(fm.predict_proba(X, priors=pd.Series([0.7, 0.3])), fm.predict_proba(X, priors=[0.7, 0.3]))


@pytest.mark.parametrize("model", [
    LinearDiscriminant(), QuadraticDiscriminant(), MixtureDiscriminant(Gaussian("full"), 1),
    KnownDensityClassifier([stats.multivariate_normal(np.zeros(2)), stats.multivariate_normal(np.ones(2))]),
    FiniteMixture(Gaussian(), 2),
])
@pytest.mark.parametrize("method", ["predict", "predict_proba", "predict_log_proba", "decision_function"])
def test_priors_at_predict_on_an_unfitted_model_raise_not_fitted(model, method):
    # the priors were checked against classes_ first: AttributeError 'no attribute classes_'
    from sklearn.exceptions import NotFittedError

    if not hasattr(model, method):
        pytest.skip(f"{type(model).__name__} has no {method}")
    with pytest.raises(NotFittedError):
        getattr(model, method)(np.zeros((2, 2)), priors=[0.5, 0.5])


KNOWN = lambda priors: KnownDensityClassifier(  # noqa: E731
    [stats.multivariate_normal([0, 0]), stats.multivariate_normal([1, 0.5]), stats.multivariate_normal([2, 1])],
    priors=priors)


@pytest.mark.parametrize("make", [*RULES, KNOWN])
def test_a_pandas_series_of_priors_is_read_by_its_labels(make, rng):
    """``y.value_counts(normalize=True)`` lists the most frequent label first: its values were read
    in that order, so with labels 'a' (20 %) and 'b' (80 %) priors_ came out [0.8, 0.2]."""
    pd = pytest.importorskip("pandas")
    X, y = _data(rng)
    labels = np.array(["a", "b", "c"])[y]
    series = pd.Series([0.5, 0.2, 0.3], index=["c", "a", "b"])
    expected = make(np.array([0.2, 0.3, 0.5])).fit(X, labels)
    model = make(series).fit(X, labels)
    np.testing.assert_array_equal(model.priors_, [0.2, 0.3, 0.5])
    np.testing.assert_allclose(model.predict_proba(X), expected.predict_proba(X), rtol=1e-12)
    at_predict = make("equal").fit(X, labels).predict_proba(X, priors=series)
    np.testing.assert_allclose(at_predict, expected.predict_proba(X), rtol=1e-10, atol=1e-12)
    counts = pd.Series(labels).value_counts(normalize=True)  # most frequent first
    np.testing.assert_allclose(make(counts).fit(X, labels).priors_, make("empirical").fit(X, labels).priors_)
    # a Series of the default index is a list; one of other labels is refused, naming them
    np.testing.assert_array_equal(make(pd.Series([0.5, 0.2, 0.3])).fit(X, labels).priors_, [0.5, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"priors is a pandas Series indexed by \['x', 'a', 'b'\], which are not"):
        make(pd.Series([0.5, 0.2, 0.3], index=["x", "a", "b"])).fit(X, labels)
