"""shrinkage= of LinearDiscriminant and QuadraticDiscriminant: fixed or OAS towards the scaled identity (issue 22)."""

import numpy as np
import pytest
from sklearn.covariance import OAS
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from discrim.discriminant import LinearDiscriminant, QuadraticDiscriminant


def _scaled_identity_shrink(cov, s):
    d = cov.shape[-1]
    return (1 - s) * cov + s * np.trace(cov) / d * np.eye(d)


def test_oas_intensities_are_scikit_learns():
    X, y = load_wine(return_X_y=True)
    qda = QuadraticDiscriminant(shrinkage="oas").fit(X, y)
    plain = QuadraticDiscriminant().fit(X, y)
    for k, label in enumerate(qda.classes_):
        expected = OAS().fit(X[y == label]).shrinkage_
        assert qda.shrinkage_[k] == pytest.approx(expected, rel=1e-10)
        np.testing.assert_allclose(qda.covariance_[k], _scaled_identity_shrink(plain.covariance_[k], expected),
                                   rtol=1e-10)
    # the pooled covariance: OAS on the class-centred rows
    lda = LinearDiscriminant(shrinkage="oas").fit(X, y)
    centred = X - LinearDiscriminant().fit(X, y).means_[np.searchsorted(lda.classes_, y)]
    assert lda.shrinkage_ == pytest.approx(OAS(assume_centered=True).fit(centred).shrinkage_, rel=1e-10)


@pytest.mark.parametrize("s", [0.0, 0.3, 1.0])
def test_a_fixed_intensity_then_reg_param(s):
    X, y = load_wine(return_X_y=True)
    plain = LinearDiscriminant().fit(X, y)
    lda = LinearDiscriminant(shrinkage=s, reg_param=0.1).fit(X, y)
    expected = 0.9 * _scaled_identity_shrink(plain.covariance_, s) + 0.1 * np.eye(X.shape[1])
    np.testing.assert_allclose(lda.covariance_, expected, rtol=1e-10)
    assert lda.shrinkage_ == s


def test_oas_helps_a_small_class():
    # 10 rows per class in 13 dimensions: the plain QDA covariances are singular
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)  # the target is a multiple of the identity
    keep = np.concatenate([np.flatnonzero(y == k)[:10] for k in range(3)])
    with pytest.raises(ValueError, match="reg_param"):
        QuadraticDiscriminant().fit(X[keep], y[keep])
    model = QuadraticDiscriminant(shrinkage="oas").fit(X[keep], y[keep])
    assert model.score(X, y) > 0.8


def test_bad_shrinkage_names_the_parameter():
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match="shrinkage"):
        LinearDiscriminant(shrinkage="ledoit").fit(X, y)


def test_any_scikit_learn_covariance_estimator():
    from sklearn.covariance import LedoitWolf

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    lda = LinearDiscriminant(covariance_estimator=LedoitWolf()).fit(X, y)
    centred = X - LinearDiscriminant().fit(X, y).means_[y]
    np.testing.assert_allclose(lda.covariance_, LedoitWolf().fit(centred).covariance_, rtol=1e-12)
    qda = QuadraticDiscriminant(covariance_estimator=OAS()).fit(X, y)
    for k in range(3):
        np.testing.assert_allclose(qda.covariance_[k], OAS().fit(X[y == k]).covariance_, rtol=1e-12)
    assert lda.score(X, y) > 0.95 and qda.score(X, y) > 0.95


@pytest.mark.parametrize("pooling", [0.3, 1.0])
def test_pooling_pools_the_covariance_estimators_pooled_covariance(pooling):
    """With pooling, the pooled part is the estimator's on the class-centred rows, as LinearDiscriminant's
    with the same estimator: it was the plain pooled covariance (LedoitWolf had no effect at pooling=1,
    0.26 from LinearDiscriminant(covariance_estimator=LedoitWolf())'s)."""
    from sklearn.covariance import LedoitWolf

    rng = np.random.default_rng(14)
    X = rng.normal(size=(40, 8))
    y = np.repeat([0, 1], 20)
    X[y == 1] += 0.5
    rda = QuadraticDiscriminant(covariance_estimator=LedoitWolf(), pooling=pooling).fit(X, y)
    lda = LinearDiscriminant(covariance_estimator=LedoitWolf()).fit(X, y)
    for k in range(2):
        own = LedoitWolf().fit(X[y == k]).covariance_
        np.testing.assert_allclose(rda.covariance_[k], (1 - pooling) * own + pooling * lda.covariance_,
                                   rtol=1e-12, atol=1e-15)
    if pooling == 1:
        np.testing.assert_allclose(rda.predict_proba(X), lda.predict_proba(X), atol=1e-12)


def test_a_covariance_estimator_refuses_what_it_cannot_fit():
    from sklearn.covariance import LedoitWolf

    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match="takes no sample weights"):
        LinearDiscriminant(covariance_estimator=LedoitWolf()).fit(X, y, sample_weight=np.arange(1.0, 179.0))
    gaps = X.copy()
    gaps[0, 0] = np.nan
    with pytest.raises(ValueError, match="complete in-memory rows"):
        QuadraticDiscriminant(covariance_estimator=LedoitWolf()).fit(gaps, y)
    with pytest.raises(ValueError, match="covariance_estimator"):
        LinearDiscriminant(covariance_estimator="ledoit").fit(X, y)


@pytest.mark.parametrize("Rule, params", [(LinearDiscriminant, {}), (QuadraticDiscriminant, {}),
                                           (QuadraticDiscriminant, {"pooling": 1.0})])
def test_an_estimator_without_covariance_is_refused_by_name(Rule, params):
    """An estimator with fit but no covariance_ (StandardScaler) is refused with a ValueError that names
    covariance_estimator: it failed with "AttributeError: 'StandardScaler' object has no attribute
    'covariance_'" from deep in fit."""
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match=r"covariance_estimator must expose covariance_ once fitted .*LedoitWolf\(\), "
                                         r"OAS\(\).*; StandardScaler has none"):
        Rule(covariance_estimator=StandardScaler(), **params).fit(X, y)


@pytest.mark.parametrize("Rule", [LinearDiscriminant, QuadraticDiscriminant])
def test_allow_nan_tag_follows_what_fit_accepts(Rule):
    """The allow_nan tag must be true exactly when fit takes NaN: not with a covariance_estimator.

    scikit-learn's checks and meta-estimators feed NaN to estimators whose tag allows it; with a
    covariance_estimator fit refuses incomplete rows, so the tag must say so.
    """
    from sklearn.covariance import LedoitWolf

    X, y = load_wine(return_X_y=True)
    X[0, 0] = np.nan
    plain, estimated = Rule(), Rule(covariance_estimator=LedoitWolf())
    assert plain.__sklearn_tags__().input_tags.allow_nan
    plain.fit(X, y)
    assert not estimated.__sklearn_tags__().input_tags.allow_nan
    with pytest.raises(ValueError, match="complete in-memory rows"):
        estimated.fit(X, y)


def test_a_model_with_a_covariance_estimator_saves_and_loads(tmp_path):
    from sklearn.covariance import LedoitWolf

    from discrim.persistence import load_model, save_model

    X, y = load_wine(return_X_y=True)
    model = QuadraticDiscriminant(covariance_estimator=LedoitWolf(), pooling=0.2).fit(X, y)
    save_model(model, tmp_path / "m.skops")
    np.testing.assert_array_equal(load_model(tmp_path / "m.skops").predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_oas_on_one_feature_leaves_the_covariance_and_is_scale_free(cls):
    """With one feature the target is the covariance itself: OAS's intensity is 0, as scikit-learn's (the denominator
    0 rounded to 1e-10 gave an intensity of -2e15 and a covariance 18 % off, at some scales only)."""
    X = np.array([[2000.0], [-2100], [1400], [-600], [0], [800]])
    y = [0, 1, 2, 0, 1, 2]
    plain = cls().fit(X, y)
    for scale in (1.0, 7e-3, 1e-3):
        model = cls(shrinkage="oas").fit(X * scale, y)
        assert np.all(model.shrinkage_ == 0.0)
        np.testing.assert_allclose(model.covariance_, plain.covariance_ * scale**2, rtol=1e-12)
        np.testing.assert_allclose(model.predict_proba(X * scale), plain.predict_proba(X), atol=1e-12)


def test_auto_is_oas_on_the_correlations_towards_the_diagonal():
    # "auto" (scikit-learn's name, which new users type) shrinks the correlations and keeps the
    # variances: its intensity is scikit-learn's OAS of the standardised rows
    X, y = load_wine(return_X_y=True)
    qda = QuadraticDiscriminant(shrinkage="auto").fit(X, y)
    plain = QuadraticDiscriminant().fit(X, y)
    for k, label in enumerate(qda.classes_):
        rows = X[y == label]
        expected = OAS().fit((rows - rows.mean(axis=0)) / rows.std(axis=0)).shrinkage_
        assert qda.shrinkage_[k] == pytest.approx(expected, rel=1e-10)
        cov = plain.covariance_[k]
        np.testing.assert_allclose(qda.covariance_[k], (1 - expected) * cov + expected * np.diag(np.diag(cov)),
                                   rtol=1e-10)
    lda = LinearDiscriminant(shrinkage="auto").fit(X, y)
    centred = X - LinearDiscriminant().fit(X, y).means_[np.searchsorted(lda.classes_, y)]
    standardised = centred / np.sqrt((centred**2).mean(axis=0))
    assert lda.shrinkage_ == pytest.approx(OAS(assume_centered=True).fit(standardised).shrinkage_, rel=1e-10)


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_auto_does_not_depend_on_the_features_units(cls):
    # "oas" shrinks towards a multiple of the identity: on raw wine (proline in the thousands) the
    # helper saw QDA's training accuracy fall to 0.65; "auto" gives the same model in any units
    X, y = load_wine(return_X_y=True)
    units = np.logspace(-3, 3, X.shape[1])
    raw = cls(shrinkage="auto").fit(X, y)
    rescaled = cls(shrinkage="auto").fit(X * units, y)
    np.testing.assert_allclose(rescaled.predict_proba(X * units), raw.predict_proba(X), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(rescaled.shrinkage_, raw.shrinkage_, rtol=1e-10)
    assert raw.score(X, y) >= cls(shrinkage="oas").fit(X, y).score(X, y)


def test_constant_features_under_shrinkage_towards_the_diagonal_are_named():
    # digits' blank pixels have no variance within the classes: "auto" (towards the diagonal) keeps
    # it at 0, and the refusal named no feature; "oas" (towards the identity) fits
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    with pytest.raises(ValueError, match=r"3 feature\(s\) \(index 0, 32, 39\) are constant within every class: "
                                         r"remove them, or shrink towards the identity"):
        LinearDiscriminant(shrinkage="auto").fit(X, y)
    assert LinearDiscriminant(shrinkage="oas").fit(X, y).score(X, y) > 0.95
    kept = X[:, [j for j in range(64) if j not in (0, 32, 39)]]
    assert LinearDiscriminant(shrinkage="auto").fit(kept, y).score(kept, y) > 0.95


@pytest.mark.parametrize("Rule", [LinearDiscriminant, QuadraticDiscriminant])
def test_a_refit_leaves_no_attribute_of_the_earlier_fit(Rule):
    """A refit without shrinkage kept the earlier fit's shrinkage_ (0.5), and LinearDiscriminant
    refitted on three classes kept a_, h_ (and the log-odds coefficients) of two, as if they
    described the new fit; a fresh fit's attributes are now the refit's."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    two, three = np.arange(60) % 2, np.arange(60) % 3
    model = Rule(shrinkage=0.5).fit(X, two)
    model.set_params(shrinkage=None).fit(X, three)
    fresh = Rule().fit(X, three)
    assert sorted(vars(model)) == sorted(vars(fresh))
    assert not hasattr(model, "shrinkage_") and not hasattr(model, "a_")
    np.testing.assert_array_equal(model.predict_proba(X), fresh.predict_proba(X))
