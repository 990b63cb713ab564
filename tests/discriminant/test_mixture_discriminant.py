"""Tests of MixtureDiscriminant against hand-computed Gaussian and Poisson rules and scikit-learn's checks."""

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from discrim._registry import make_model
from discrim.discriminant import MixtureDiscriminant
from discrim.discriminant.mixture import _n_distinct_rows
from discrim.distributions import Binomial, Gaussian, Poisson
from discrim.exceptions import CollapsingComponentWarning
from discrim.mixture import FiniteMixture


def _three_classes(rng, n=(40, 60, 50)):
    means = np.array([[0.0, 0.0], [3.0, 1.0], [-1.0, 4.0]])
    scales = [np.array([[1.0, 0.3], [0.3, 0.5]]), np.eye(2) * 0.7, np.array([[2.0, -0.5], [-0.5, 1.0]])]
    X = np.vstack([rng.multivariate_normal(m, s, size=k) for m, s, k in zip(means, scales, n)])
    y = np.repeat(np.array(["a", "b", "c"]), n)
    return X, y


def _mle_gaussian_log_density(X_train, y_train, X, classes):
    """Oracle: per-class Gaussian log-density with the MLE (divisor n_k) covariance."""
    cols = []
    for c in classes:
        Xc = X_train[y_train == c]
        cov = np.cov(Xc, rowvar=False, bias=True)
        cols.append(scipy.stats.multivariate_normal(Xc.mean(axis=0), cov).logpdf(X))
    return np.column_stack(cols)


def test_one_gaussian_component_is_the_quadratic_rule_with_mle_covariances(rng):
    X, y = _three_classes(rng)
    X_new = rng.normal(1.0, 2.5, size=(30, 2))
    mda = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=1, reg_covar=0.0,
                              priors="empirical", random_state=0).fit(X, y)
    expected = _mle_gaussian_log_density(X, y, X_new, mda.classes_)
    np.testing.assert_allclose(mda.log_density(X_new), expected, rtol=1e-9, atol=1e-9)

    log_prior = np.log(np.array([40, 60, 50]) / 150)
    joint = expected + log_prior
    proba = np.exp(joint - scipy.special.logsumexp(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(mda.predict_proba(X_new), proba, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(mda.predict(X_new), mda.classes_[np.argmax(joint, axis=1)])
    np.testing.assert_allclose(mda.priors_, np.array([40, 60, 50]) / 150)


def test_ml_rule_ignores_class_sizes_and_bayes_rule_uses_given_priors(rng):
    X, y = _three_classes(rng)
    X_new = rng.normal(1.0, 2.5, size=(40, 2))
    ml = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=1, random_state=0).fit(X, y)
    np.testing.assert_allclose(ml.priors_, np.full(3, 1 / 3))
    np.testing.assert_array_equal(ml.predict(X_new), ml.classes_[np.argmax(ml.log_density(X_new), axis=1)])

    priors = np.array([0.7, 0.2, 0.1])
    bayes = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=1, priors=priors,
                                random_state=0).fit(X, y)
    joint = bayes.log_density(X_new) + np.log(priors)
    np.testing.assert_array_equal(bayes.predict(X_new), bayes.classes_[np.argmax(joint, axis=1)])


def test_poisson_family_one_component_is_the_poisson_plug_in_rule(rng):
    X = np.vstack([rng.poisson([2.0, 6.0], size=(80, 2)), rng.poisson([5.0, 1.5], size=(70, 2))]).astype(float)
    y = np.repeat([0, 1], [80, 70])
    mda = MixtureDiscriminant(Poisson(), n_components=1, random_state=0).fit(X, y)
    X_new = np.array([[0, 0], [3, 4], [7, 1], [2, 9]], dtype=float)
    expected = np.column_stack(
        [scipy.stats.poisson(X[y == k].mean(axis=0)).logpmf(X_new).sum(axis=1) for k in (0, 1)]
    )
    np.testing.assert_allclose(mda.log_density(X_new), expected, rtol=1e-9)


def test_binomial_family_one_component_is_the_binomial_plug_in_rule(rng):
    # The seed's coin model as a classifier: heads in 10 tosses of coin 0 or coin 1.
    X = np.concatenate([rng.binomial(10, 0.3, 60), rng.binomial(10, 0.75, 40)])[:, None].astype(float)
    y = np.repeat(["coin 0", "coin 1"], [60, 40])
    mda = MixtureDiscriminant(Binomial(n_trials=10), n_components=1, random_state=0).fit(X, y)
    heads = np.arange(11.0)[:, None]
    p_hat = [X[y == c].mean() / 10 for c in ("coin 0", "coin 1")]
    expected = np.column_stack([scipy.stats.binom(10, p).logpmf(heads[:, 0]) for p in p_hat])
    np.testing.assert_allclose(mda.log_density(heads), expected, rtol=1e-9)
    # Equal priors: the ML rule switches coin where the likelihood ratio crosses one.
    np.testing.assert_array_equal(mda.predict(heads), np.where(expected[:, 1] > expected[:, 0], "coin 1", "coin 0"))


def test_row_order_does_not_change_a_one_component_fit(rng):
    X, y = _three_classes(rng)
    order = rng.permutation(X.shape[0])
    X_new = rng.normal(1.0, 2.0, size=(20, 2))
    a = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=1).fit(X, y)
    b = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=1).fit(X[order], y[order])
    np.testing.assert_allclose(a.predict_proba(X_new), b.predict_proba(X_new), rtol=1e-10, atol=1e-14)


def test_log_density_is_each_class_mixture_score(rng):
    X, y = _three_classes(rng)
    mda = MixtureDiscriminant(Gaussian(covariance_type="diag"), n_components=2, random_state=3).fit(X, y)
    assert len(mda.mixtures_) == 3
    assert all(isinstance(m, FiniteMixture) for m in mda.mixtures_)
    X_new = rng.normal(size=(10, 2))
    for k, m in enumerate(mda.mixtures_):
        np.testing.assert_allclose(mda.log_density(X_new)[:, k], m.score_samples(X_new))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), n_components=st.integers(1, 3), shift=st.floats(-50, 50))
def test_posteriors_are_a_distribution(seed, n_components, shift):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (15, 2)), rng.normal(2, 1, (15, 2))])
    y = np.repeat([0, 1], 15)
    mda = MixtureDiscriminant(Gaussian(covariance_type="spherical"), n_components=n_components,
                              random_state=seed).fit(X, y)
    X_new = rng.normal(shift, 3.0, size=(20, 2))
    proba = mda.predict_proba(X_new)
    assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    # below the smallest normal double, exp(log p) underflows where p itself is subnormal
    np.testing.assert_allclose(np.exp(mda.predict_log_proba(X_new)), proba, rtol=1e-12,
                               atol=np.finfo(np.float64).tiny)


def test_integer_sample_weights_equal_repeated_rows(rng):
    X, y = _three_classes(rng, n=(12, 15, 10))
    w = rng.integers(0, 4, size=X.shape[0])
    w[[0, 12, 27]] = 1  # every class keeps rows
    X_new = rng.normal(1.0, 2.0, size=(25, 2))
    kwargs = dict(n_components=1, priors="empirical", random_state=0)
    weighted = MixtureDiscriminant(Gaussian(covariance_type="full"), **kwargs).fit(X, y, sample_weight=w)
    repeated = MixtureDiscriminant(Gaussian(covariance_type="full"), **kwargs).fit(
        np.repeat(X, w, axis=0), np.repeat(y, w)
    )
    np.testing.assert_allclose(weighted.priors_, repeated.priors_)
    np.testing.assert_allclose(weighted.log_density(X_new), repeated.log_density(X_new), rtol=1e-8)
    np.testing.assert_allclose(weighted.predict_proba(X_new), repeated.predict_proba(X_new), atol=1e-10)


def test_n_components_per_class_from_a_dict(rng):
    X, y = _three_classes(rng)
    mda = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components={"a": 1, "b": 3, "c": 2},
                              random_state=0).fit(X, y)
    np.testing.assert_array_equal(mda.n_components_, [1, 3, 2])
    assert [np.asarray(m.weights_).shape[0] for m in mda.mixtures_] == [1, 3, 2]
    np.testing.assert_allclose([np.sum(m.weights_) for m in mda.mixtures_], 1.0)


def test_bic_chooses_the_components_of_each_class(rng):
    # Class "one" is a single blob, class "three" three separated blobs.
    one = rng.normal([0.0, 0.0], 1.0, size=(120, 2))
    three = np.vstack([rng.normal(c, 0.5, size=(60, 2)) for c in ([8.0, 0.0], [0.0, 8.0], [8.0, 8.0])])
    X, y = np.vstack([one, three]), np.repeat(["one", "three"], [120, 180])
    mda = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=range(1, 5), random_state=0).fit(X, y)
    np.testing.assert_array_equal(mda.n_components_, [1, 3])
    for k, selection in enumerate(mda.selections_):
        assert list(selection.table["n_components"]) == [1, 2, 3, 4]
        assert selection.best_estimator is mda.mixtures_[k]
        rows = X[y == mda.classes_[k]]
        assert np.isclose(selection.table["bic"].iloc[selection.best_index], mda.mixtures_[k].bic(rows))

    mixed = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components={"one": 2, "three": [1, 3, 500]},
                                random_state=0).fit(X, y)
    np.testing.assert_array_equal(mixed.n_components_, [2, 3])
    assert mixed.selections_[0] is None
    assert list(mixed.selections_[1].table["n_components"]) == [1, 3]  # 500 > rows: skipped


def test_selections_are_the_select_mixture_results_and_survive_a_model_file(rng, tmp_path):
    """The BIC tables kept as plain containers give back select_mixture's own table, before and
    after save_model/load_model (skops cannot save a pandas table: issue 17)."""
    from discrim.mixture import select_mixture
    from discrim.persistence import load_model, save_model

    X, y = _three_classes(rng)
    mda = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components={"a": [1, 2], "b": 1, "c": [1, 2, 3]},
                              random_state=0).fit(X, y)
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(0).spawn(3)]
    path = tmp_path / "mda.skops"
    save_model(mda, path)
    loaded = load_model(path)
    for model in (mda, loaded):
        assert model.selections_[1] is None
        for k, candidates in [(0, [1, 2]), (2, [1, 2, 3])]:
            rows = X[y == model.classes_[k]]
            oracle = select_mixture(rows, {"family": Gaussian(covariance_type="full")}, candidates,
                                    random_state=seeds[k], n_init=1, max_iter=100, tol=1e-3, reg_covar=1e-6)
            selection = model.selections_[k]
            pd.testing.assert_frame_equal(selection.table, oracle.table, check_exact=True)
            assert (selection.criterion, selection.best_index, selection.best_params) == (
                oracle.criterion, oracle.best_index, oracle.best_params)
            assert selection.best_estimator is model.mixtures_[k]
            assert selection.estimators[selection.best_index] is selection.best_estimator
            assert list(selection.families) == list(oracle.families)
    np.testing.assert_array_equal(loaded.predict_proba(X), mda.predict_proba(X))
    # Each access builds new containers: changing one leaves the fitted model as it was.
    mda.selections_[0].estimators.clear()
    mda.selections_[0].table.drop(columns="bic", inplace=True)
    assert len(mda.selections_[0].estimators) == 2 and "bic" in mda.selections_[0].table


def test_selections_need_a_fitted_model():
    with pytest.raises(AttributeError):
        MixtureDiscriminant(Gaussian()).selections_


@pytest.mark.parametrize(
    "n_components, match",
    [
        ({"a": 1, "b": 1}, "missing classes"),
        ({"a": 1, "b": 1, "c": 1, "d": 1}, "unknown keys"),
        ({"a": 1, "b": 0, "c": 1}, r"n_components\['b'\]"),
        (20, "class 'a' has 10 distinct row"),
        ([20, 30], "class 'a' has 10 distinct row"),
        ([], "non-empty list"),
        ({"a": [1, 0], "b": 1, "c": 1}, r"n_components\['a'\] must be"),
    ],
)
def test_bad_n_components_are_rejected_with_the_fix(rng, n_components, match):
    X, y = _three_classes(rng, n=(10, 30, 30))
    with pytest.raises(ValueError, match=match):
        MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=n_components).fit(X, y)


@pytest.mark.parametrize("needed", [1, 2, 3, 50])
def test_distinct_row_count_looks_past_repeated_leading_rows(needed):
    X = np.vstack([np.zeros((100, 2)), np.ones((1, 2))])
    n = _n_distinct_rows(X, needed)
    assert n == 2 if needed >= 2 else n >= 1


def test_same_random_state_gives_identical_fits(rng):
    X, y = _three_classes(rng)
    fits = [MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=3, random_state=7).fit(X, y)
            for _ in range(2)]
    for a, b in zip(fits[0].mixtures_, fits[1].mixtures_):
        np.testing.assert_array_equal(a.weights_, b.weights_)
        np.testing.assert_array_equal(a.params_["mean"], b.params_["mean"])


def test_pandas_input_keeps_feature_names(rng):
    X, y = _three_classes(rng)
    frame = pd.DataFrame(X, columns=["height", "width"])
    mda = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=1).fit(frame, y)
    np.testing.assert_array_equal(mda.feature_names_in_, ["height", "width"])
    assert mda.predict(frame).shape == (X.shape[0],)


def test_registry_builds_a_gaussian_mda():
    model = make_model("mda", n_components=3)
    assert isinstance(model, MixtureDiscriminant)
    assert model.n_components == 3
    assert model.family.covariance_type == "full"


def test_rows_outside_every_class_support_are_rejected():
    X = np.array([[0.0], [1.0], [2.0], [5.0], [6.0], [7.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    mda = MixtureDiscriminant(Poisson(), n_components=1).fit(X, y)
    with pytest.raises(ValueError, match="support"):
        mda.predict(np.array([[-1.0]]))


def _expected_failures(estimator):
    out = {}
    if estimator.n_components == 2:
        out["check_sample_weight_equivalence_on_dense_data"] = (
            "its small classes repeat one row, fewer distinct rows than the 2 components asked for, "
            "so the repeated-rows fit is refused (a list of candidate counts passes: see the third instance)"
        )
    return out


@parametrize_with_checks(
    [
        MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=1, random_state=0),
        MixtureDiscriminant(Gaussian(covariance_type="diag"), n_components=2, random_state=0),
        MixtureDiscriminant(Gaussian(covariance_type="spherical"), n_components=[1, 2], random_state=0),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("joint", [False, True])
def test_collapsing_subclasses_are_named_by_class_once(joint):
    """Four full-covariance subclasses per wine class (48-71 rows, 13 features): some collapse onto a
    few rows. One warning names the classes and components, not one per class mixture."""
    import warnings

    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        MixtureDiscriminant(Gaussian("full"), 4, random_state=0, joint=joint).fit(X, y)
    degenerate = [w for w in record if "degenerate" in str(w.message)]
    assert len(degenerate) == 1 and degenerate[0].category is CollapsingComponentWarning
    assert "MixtureDiscriminant" in str(degenerate[0].message) and "class 0: component(s)" in str(degenerate[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one subclass per class: nothing collapses
        MixtureDiscriminant(Gaussian("full"), 1, random_state=0).fit(X, y)


def test_collapsing_subclasses_chosen_by_bic_are_named_by_class_once():
    """With component counts chosen by BIC per class (mclust's MclustDA), the selections' own
    warning about their chosen model is left to the one warning that names the classes."""
    import warnings

    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        MixtureDiscriminant(Gaussian("full"), [3, 4], random_state=0).fit(X, y)
    collapsing = [w for w in record if issubclass(w.category, CollapsingComponentWarning)]
    assert len(collapsing) == 1
    assert str(collapsing[0].message).startswith("MixtureDiscriminant: the mixture of some classes is degenerate")


def test_a_class_of_one_row_is_named_as_degenerate(rng):
    """Its covariance is reg_covar I in every direction: a spike, small beside the data's variance."""
    from discrim.distributions import Gaussian

    X = rng.normal(size=(20, 2))
    y = np.r_[np.zeros(19), 1]
    with pytest.warns(UserWarning, match=r"class 1.0: component\(s\) \[0\]") as record:
        MixtureDiscriminant(Gaussian(), n_components=1).fit(X, y)
    assert record[0].filename == __file__  # the user's line, not scikit-learn's fit wrapper


def test_a_feature_constant_within_a_class_is_named_by_class_not_dropped_from_x():
    """Feature 1 varies in X (it separates class 2) but is constant within class 2: one warning names
    the class and keeps the feature; the class fit's own warning called it constant in "X" and said
    to leave it out of X."""
    import warnings

    rng = np.random.default_rng(3)
    X = np.r_[rng.normal(size=(40, 3)), [[5, 5, 5], [6, 5, 4]]]
    y = np.r_[np.repeat([0, 1], 20), 2, 2]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        MixtureDiscriminant(Gaussian(), n_components=1).fit(X, y)
    said = [w for w in record if not issubclass(w.category, CollapsingComponentWarning)]
    assert len(said) == 1 and said[0].filename == __file__
    message = str(said[0].message)
    assert message.startswith("MixtureDiscriminant: feature(s) constant within a class (index 1 in class 2): ")
    assert "larger reg_covar" in message and "Leave them out of X" not in message
    assert not any("of X" in str(w.message) for w in record)


@pytest.mark.parametrize("n_components", [1, [1, 2]], ids=["one family", "chosen by BIC"])
def test_reg_covar_beside_small_within_class_variances_is_said_once_for_all_classes(n_components):
    """Feature 0 has a variance of 1e-6 within classes 0 and 1: one warning naming both, where each
    class fit warned in turn about "X"."""
    import warnings

    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(90, 3)), np.repeat([0, 1, 2], 30)
    X[y < 2, 0] *= 1e-3
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        MixtureDiscriminant(Gaussian(), n_components=n_components, random_state=0).fit(X, y)
    said = [str(w.message) for w in record if "reg_covar=1e-06 exceeds" in str(w.message)]
    assert len(said) == 1 and not any("of X" in str(w.message) for w in record)
    assert said[0].startswith("MixtureDiscriminant: reg_covar=1e-06 exceeds a tenth of the within-class variance of "
                              "feature(s) (index 0 in class 0; index 0 in class 1; smallest variance ")


@pytest.mark.parametrize("model, rows, log_lik, df, bic", [
    # mclust 6.0.0: summary(MclustDA(iris[, 1:4], iris$Species, G = 1, modelNames = "VVV"))
    ("VVV", np.arange(150), -182.9208486053, 42, -576.2883795626),
    # i <- c(1:50, 51:80, 101:150); summary(MclustDA(iris[i, 1:4], iris$Species[i], G = 1, modelNames = "VVI"))
    ("VVI", np.r_[0:80, 100:150], -261.3412482839, 24, -639.5033233787),
])
def test_mclustda_summary_log_likelihood_is_the_classes_as_one_mixture(model, rows, log_lik, df, bic):
    """The MclustDA kind (each class fitted on its own rows) reports mclust's log-likelihood: the
    classes as one mixture weighted by their proportions (logLik.MclustDA), not the sum of each
    class's own log-likelihood (-23.58 for the first case), with unequal classes in the second."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X, y = X[rows], y[rows]
    mda = MixtureDiscriminant(Gaussian(model, reg_covar=0.0), n_components=1).fit(X, y)
    summary = mda.summary(X, y)
    assert summary.kind == "MclustDA" and summary.df == df and summary.n == rows.size
    assert summary.log_likelihood == pytest.approx(log_lik, rel=1e-10)
    assert -summary.bic == pytest.approx(bic, rel=1e-10)


def test_summary_is_mclusts_summary_of_mclustda():
    # mclust 6.0.0: summary(MclustDA(iris[, 1:4], iris$Species, modelType = "EDDA", modelNames = "VEV")):
    # log-likelihood -187.7097444050, df 36, BIC -555.8023593975 (its sign), classification error 0.02,
    # BrierScore 0.0126509230
    import warnings

    from sklearn.datasets import load_iris

    frame = load_iris(as_frame=True)
    X, y = frame.data, frame.target.map(dict(enumerate(frame.target_names)))
    edda = MixtureDiscriminant(Gaussian("VEV", reg_covar=0.0), n_components=1, joint=True, priors="empirical")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no feature-name warnings from the class mixtures
        summary = edda.fit(X, y).summary(X, y)
    assert summary.kind == "EDDA" and summary.df == 36
    assert summary.log_likelihood == pytest.approx(-187.7097444050, rel=1e-9)
    assert -summary.bic == pytest.approx(-555.8023593975, rel=1e-9)
    assert summary.error == pytest.approx(0.02) and summary.brier == pytest.approx(0.0126509230, rel=1e-8)
    assert summary.confusion.loc["versicolor", "virginica"] == 3 and summary.confusion.to_numpy().sum() == 150
    text = str(summary)
    assert "EDDA model summary:" in text and "VEV" in text and "Classification error = 0.02" in text
    # each class on its own (MclustDA): the classes' parameters add up
    mda = MixtureDiscriminant(Gaussian("VVI"), n_components=[1, 2], random_state=0).fit(X, y)
    summary = mda.summary(X, y)
    assert summary.kind == "MclustDA" and summary.df == sum(m._n_parameters() for m in mda.mixtures_)
    assert list(summary.classes["G"]) == list(mda.n_components_)
    with pytest.raises(ValueError, match="y must hold one label per row among classes_"):
        mda.summary(X, y.replace("setosa", "rose"))


@pytest.mark.parametrize("joint", [False, True])
def test_summary_of_rows_lacking_a_class_equals_that_of_the_class_at_zero_weight(joint):
    """A summary of test rows without a class (the class of proportion 0 in the log-likelihood)
    equals the summary of all rows with that class's rows at weight 0, and the log-likelihood is
    ``sum_i log sum_k pi_k f_k(x_i)`` over the classes present; it crashed in the empty class's
    FiniteMixture ("Found array with 0 sample(s)")."""
    from scipy.special import logsumexp
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    mda = MixtureDiscriminant(Gaussian("VVV", reg_covar=0.0), n_components=1, joint=joint).fit(X, y)
    keep = y < 2
    part = mda.summary(X[keep], y[keep])
    whole = mda.summary(X, y, sample_weight=keep.astype(float))
    assert part.kind == whole.kind and part.df == whole.df and part.n == whole.n == 100
    for name in ("log_likelihood", "bic", "error", "brier"):
        assert getattr(part, name) == pytest.approx(getattr(whole, name), rel=1e-12)
    pd.testing.assert_frame_equal(part.confusion, whole.confusion)
    assert list(part.classes["n"]) == [50, 50, 0]
    log_dens = np.column_stack([m.score_samples(X[keep]) for m in mda.mixtures_[:2]])
    assert part.log_likelihood == pytest.approx(logsumexp(log_dens + np.log(0.5), axis=1).sum(), rel=1e-12)


def test_n_components_as_a_series_indexed_by_the_labels_is_read_per_class():
    """list() read a Series' values as candidates for every class, chosen by BIC: {'b': 1, 'a': 2}
    gave class 'a' (one blob) 1 component and 'b' (two blobs) 2, the opposite of what was asked.
    A Series of the default index stays a list of candidates."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(120, 2)), np.repeat(["a", "b"], 60)
    X[60:90] += 4.0
    per_class = MixtureDiscriminant(Gaussian(), pd.Series({"b": 1, "a": 2}), random_state=0).fit(X, y)
    as_dict = MixtureDiscriminant(Gaussian(), {"a": 2, "b": 1}, random_state=0).fit(X, y)
    assert per_class.n_components_.tolist() == as_dict.n_components_.tolist() == [2, 1]
    np.testing.assert_array_equal(per_class.predict_proba(X), as_dict.predict_proba(X))
    candidates = MixtureDiscriminant(Gaussian(), pd.Series([1, 2]), random_state=0).fit(X, y)
    assert candidates.n_components_.tolist() == [1, 2]  # chosen by BIC


def test_summary_of_a_fit_with_unlabelled_rows_counts_shared_parameters_once():
    """Unlabelled rows always fit the classes in one EM, whose tied covariance all classes share;
    the summary called it MclustDA and counted that covariance once per class (df 42 for 22 on
    iris with every fifth row unlabelled: 12 means and one covariance of 10)."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    partial = y.copy()
    partial[::5] = -1
    labelled = partial >= 0
    model = MixtureDiscriminant(Gaussian("tied"), 1, unlabeled=-1, random_state=0).fit(X, partial)
    shared = model.mixtures_[0].params_["covariance"]
    assert all(np.array_equal(m.params_["covariance"], shared) for m in model.mixtures_)
    summary = model.summary(X[labelled], partial[labelled])
    assert summary.kind == "EDDA" and summary.df == 4 * 3 + 10
    assert summary.bic == pytest.approx(-2 * summary.log_likelihood + 22 * np.log(120), rel=1e-12)
    # the same estimator with every row labelled fits class by class
    assert MixtureDiscriminant(Gaussian("tied"), 1, unlabeled=-1).fit(X, y).summary(X, y).kind == "MclustDA"

    # the partly labelled y itself is refused naming its unlabelled rows, not as "labels among classes_"
    with pytest.raises(ValueError, match=r"y has 30 unlabelled row\(s\) \(NaN or None, or unlabeled=-1; first index 0\): "
                                         r"the summary's error rate .* X\[labelled\], y\[labelled\]"):
        model.summary(X, partial)

def test_max_iter_and_n_init_take_finite_mixtures_bounds():
    # max_iter=0 (the start's parameters, as FiniteMixture(max_iter=0)) was refused, and n_init had no upper bound
    from sklearn.utils._param_validation import InvalidParameterError

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(80, 2)), np.repeat([0, 1], 40)
    model = MixtureDiscriminant(Gaussian(), 2, max_iter=0, random_state=0).fit(X, y)
    assert [m.n_iter_ for m in model.mixtures_] == [0, 0]
    with pytest.raises(InvalidParameterError, match="n_init"):
        MixtureDiscriminant(Gaussian(), 2, n_init=10**6).fit(X, y)


def test_summary_on_one_feature_names_mclusts_univariate_models():
    # mclust names the models of one feature "E" and "V" (as discrim's FiniteMixture summary does);
    # the MclustDA summary printed "VII", and its title said "Finite mixture" for such labels.
    # mclust 6.0.0: y <- as.integer(faithful$eruptions > 3);
    # summary(MclustDA(faithful$waiting, y, G = 2, modelNames = "V")): V and V, log-likelihood -1031.939, df 10
    from pathlib import Path

    import pandas as pd

    frame = pd.read_csv(Path(__file__).parents[1] / "mixture" / "data" / "faithful.csv")
    X, y = frame[["waiting"]].to_numpy(dtype=float), (frame["eruptions"] > 3).to_numpy(dtype=int)
    mda = MixtureDiscriminant(Gaussian("VII"), n_components=2, init_params="hierarchical").fit(X, y)
    summary = mda.summary(X, y)
    assert list(summary.classes["model"]) == ["V", "V"] and summary.df == 10
    assert summary.log_likelihood == pytest.approx(-1031.939070054, rel=1e-3)  # EM stops at other tolerances
    assert "Gaussian finite mixture model for classification" in str(summary)


def test_a_text_column_for_a_categorical_family_is_refused_with_its_encoding():
    # the refusal named one-hot encoding as the fix, which gives a Categorical family 0/1 columns of
    # two categories each instead of one column of codes; FiniteMixture named Product(...).encode
    from discrim.distributions import Categorical, Product

    family = Product([("size", Gaussian("diag"), [0]), ("colour", Categorical(categories=[["red", "blue"]]), [1])])
    X = pd.DataFrame({"size": [0.1, 0.3, 2.0, 2.2, 0.2, 2.1], "colour": ["red", "red", "blue", "blue", "red", "blue"]})
    y = [0, 0, 1, 1, 0, 1]
    with pytest.raises(ValueError, match=r"non-numeric column\(s\) \['colour'\].*Categorical family.*\.encode\(X\)"):
        MixtureDiscriminant(family, 1).fit(X, y)
    codes = family.encode(X.to_numpy(dtype=object))
    assert MixtureDiscriminant(family, 1).fit(codes, y).score(codes, y) == 1.0
