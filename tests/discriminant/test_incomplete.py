"""Classifiers on incomplete data (issue 21): missing values and unlabelled rows, by likelihood."""

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from discrim.discriminant import (
    KnownDensityClassifier,
    LinearDiscriminant,
    MixtureDiscriminant,
    QuadraticDiscriminant,
)
from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture


def _classes(rng, n=240):
    y = rng.integers(0, 3, n)
    cov = np.array([[1.0, 0.6, 0.2], [0.6, 1.0, 0.3], [0.2, 0.3, 1.0]])
    X = rng.multivariate_normal(np.zeros(3), cov, n) + np.array([[0, 0, 0], [2, 0, 1], [0, 2, -1]])[y]
    return X, y


def _knock_out(X, share, rng):
    out = X.copy()
    out[rng.random(X.shape) < share] = np.nan
    return out


@pytest.mark.parametrize("rule", [LinearDiscriminant, QuadraticDiscriminant])
def test_rows_with_missing_values_are_scored_by_their_marginal_densities(rule, rng):
    X, y = _classes(rng)
    model = rule().fit(X, y)
    X_test = _knock_out(X[:60], 0.3, rng)
    cov = model.covariance_ if model.covariance_.ndim == 3 else np.broadcast_to(model.covariance_, (3, 3, 3))
    expected = np.zeros((60, 3))
    for i, x in enumerate(X_test):
        o = ~np.isnan(x)
        for k in range(3):
            expected[i, k] = stats.multivariate_normal(model.means_[k, o], cov[k][np.ix_(o, o)]).logpdf(x[o]) if o.any() else 0.0
    np.testing.assert_allclose(model.log_density(X_test), expected, rtol=1e-10, atol=1e-12)
    posterior = np.exp(expected + np.log(model.priors_))
    posterior /= posterior.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict_proba(X_test), posterior, rtol=1e-9, atol=1e-12)
    # complete rows keep their probabilities, whatever else is in X
    complete = ~np.isnan(X_test).any(axis=1)
    np.testing.assert_allclose(model.predict_proba(X_test)[complete], model.predict_proba(X_test[complete]),
                               rtol=1e-10, atol=1e-13)


def test_qda_fitted_to_incomplete_rows_is_each_class_maximum_likelihood(rng):
    X, y = _classes(rng)
    Xm = _knock_out(X, 0.25, rng)
    with pytest.warns(UserWarning, match="have no observed value"):
        model = QuadraticDiscriminant().fit(Xm, y)
    floor = 1e-6 * np.mean(np.nanvar(Xm, axis=0))  # the rule's floor on the EM's covariances
    for k in range(3):
        rows = Xm[y == k]
        alone = FiniteMixture(Gaussian("full", reg_covar=floor), 1, tol=1e-13, max_iter=5000).fit(rows)
        np.testing.assert_allclose(model.means_[k], alone.params_["mean"][0], rtol=1e-4, atol=1e-5)
        # the rule's divisor n_k - 1 on the maximum-likelihood scatter, n_k the rows with an observed value
        n_k = (~np.isnan(rows).all(axis=1)).sum()
        np.testing.assert_allclose(model.covariance_[k], alone.params_["covariance"][0] * n_k / (n_k - 1),
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rule", [LinearDiscriminant, QuadraticDiscriminant])
def test_every_row_labelled_is_the_supervised_fit(rule, rng):
    X, y = _classes(rng)
    supervised = rule().fit(X, y)
    marked = rule(unlabeled=-1).fit(X, y)  # nothing is unlabelled: the closed-form path
    np.testing.assert_array_equal(marked.covariance_, supervised.covariance_)


def _iris_with_few_labels(keep, seed=0):
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.default_rng(seed)
    test = rng.random(y.shape[0]) < 0.3
    kept = np.where(rng.random(y.shape[0]) < keep, y, -1)
    return X[~test], kept[~test], X[test], y[test]


@pytest.mark.parametrize("make", [
    lambda **kw: LinearDiscriminant(reg_param=0.1, **kw),
    lambda **kw: QuadraticDiscriminant(reg_param=0.3, **kw),
    lambda **kw: MixtureDiscriminant(Gaussian("diag"), 1, random_state=0, **kw),
])
def test_unlabelled_rows_improve_on_the_labelled_rows_alone(make):
    X, y_partial, X_test, y_test = _iris_with_few_labels(0.1)
    labelled = y_partial >= 0
    semi = make(unlabeled=-1).fit(X, y_partial)
    alone = make().fit(X[labelled], y_partial[labelled])
    assert np.mean(semi.predict(X_test) == y_test) >= np.mean(alone.predict(X_test) == y_test)
    assert np.mean(semi.predict(X_test) == y_test) > 0.8


def test_unlabeled_may_be_any_label_value(rng):
    X, y = _classes(rng)
    names = np.array(["a", "b", "c"], dtype=object)[y]
    names[::3] = "?"
    model = LinearDiscriminant(unlabeled="?").fit(X, names)
    assert list(model.classes_) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="only one class"):
        LinearDiscriminant(unlabeled="?").fit(X, np.where(names == "a", "a", "?"))


@pytest.mark.parametrize("make", [LinearDiscriminant, QuadraticDiscriminant,
                                  lambda **kw: MixtureDiscriminant(Gaussian("full"), 1, random_state=0, **kw)])
def test_missing_labels_mark_unlabelled_rows(make, rng):
    # NaN in a float y, NaN or None in an object y (what pandas reads from empty cells): with
    # unlabeled set, the same fit as the marker; without it, an error that names unlabeled
    X, y = _classes(rng)
    hidden = rng.random(y.shape[0]) < 0.5
    expected = make(unlabeled=-1).fit(X, np.where(hidden, -1, y)).predict_proba(X)
    as_float = np.where(hidden, np.nan, y.astype(float))
    as_names = np.array(["a", "b", "c"], dtype=object)[y]
    as_names[hidden] = [None if i % 2 else np.nan for i in range(hidden.sum())]
    for labels in (as_float, as_names):
        model = make(unlabeled=-1).fit(X, labels)
        assert len(model.classes_) == 3
        np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-12, atol=1e-15)
        with pytest.raises(ValueError, match=r"missing labels \(NaN or None\): pass unlabeled=-1"):
            make().fit(X, labels)


@pytest.mark.parametrize("make", [LinearDiscriminant, QuadraticDiscriminant,
                                  lambda **kw: MixtureDiscriminant(Gaussian("full"), 1, random_state=0, **kw)])
def test_a_numeric_marker_stored_as_text_is_refused_naming_the_fix(make, rng):
    # y[rows] = -1 on text labels stores '-1': it would have become a fourth class silently
    X, y = _classes(rng)
    names = np.array(["alpha", "beta", "gamma"])[y]
    names[::4] = -1
    assert names[0] == "-1"
    with pytest.raises(ValueError, match=r"y holds the text '-1', while unlabeled=-1 is a number.*"
                                         r"Set unlabeled='-1'"):
        make(unlabeled=-1).fit(X, names)
    expected = make(unlabeled=-1).fit(X, np.where(names == "-1", -1, y)).predict_proba(X)
    model = make(unlabeled="-1").fit(X, names)
    assert list(model.classes_) == ["alpha", "beta", "gamma"]
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-10, atol=1e-14)


def test_minus_one_stays_a_class_without_unlabeled(rng):
    # scikit-learn's +-1 encoding: without unlabeled, -1 is a class like any other
    X, y = _classes(rng)
    model = LinearDiscriminant().fit(X, np.where(y == 0, -1, 1))
    assert list(model.classes_) == [-1, 1]


@pytest.mark.parametrize("make", [LinearDiscriminant, QuadraticDiscriminant,
                                  lambda **kw: MixtureDiscriminant(Gaussian("full"), 1, **kw)])
def test_minus_one_beside_class_zero_names_the_unlabeled_parameter(make, rng):
    # scikit-learn's mark of an unlabelled row never becomes a class silently
    X, y = _classes(rng)
    marked = np.where(rng.random(y.shape[0]) < 0.3, -1, y)
    with pytest.raises(ValueError, match="pass unlabeled=-1"):
        make().fit(X, marked)
    assert list(make(unlabeled=-1).fit(X, marked).classes_) == [0, 1, 2]


def test_mixture_discriminant_fits_and_scores_incomplete_rows(rng):
    X, y = _classes(rng)
    Xm = _knock_out(X, 0.3, rng)
    model = MixtureDiscriminant(Gaussian("full"), 1, random_state=0).fit(Xm, y)
    proba = model.predict_proba(Xm)
    assert np.all(np.isfinite(proba)) and np.mean(model.predict(X) == y) > 0.7


def test_a_mixture_keeps_labelled_rows_on_their_components(rng):
    X, y = _classes(rng)
    # every row labelled: one M-step is each component's weighted MLE of its own rows
    model = FiniteMixture(Gaussian("full"), 3, unlabeled=-1, max_iter=3).fit(X, y)
    for k in range(3):
        np.testing.assert_allclose(model.params_["mean"][k], X[y == k].mean(axis=0), rtol=1e-10)
    assert np.all(np.diff(model.lower_bounds_) >= -1e-12)
    # without unlabeled, y is ignored, as by scikit-learn's mixtures
    ignored = FiniteMixture(Gaussian("full"), 3, random_state=0).fit(X, y)
    plain = FiniteMixture(Gaussian("full"), 3, random_state=0).fit(X)
    np.testing.assert_array_equal(ignored.lower_bounds_, plain.lower_bounds_)
    with pytest.raises(ValueError, match=r"y holds 5: a labelled row takes an index in \[0, 3\)"):
        FiniteMixture(Gaussian(), 3, unlabeled=-1).fit(X, np.where(y == 2, 5, y))
    # fit_predict takes y as fit does (it dropped it: a plain EM)
    partial = np.where(np.arange(y.shape[0]) % 4 == 0, y, -1)
    semi = FiniteMixture(Gaussian("full"), 3, unlabeled=-1, random_state=0)
    np.testing.assert_array_equal(semi.fit_predict(X, partial), clone(semi).fit(X, partial).predict(X))
    np.testing.assert_array_equal(semi.lower_bounds_, clone(semi).fit(X, partial).lower_bounds_)
    # the marker may be a float, as y of floats writes it (-1.0 was refused by the parameter check)
    as_float = clone(semi).set_params(unlabeled=-1.0).fit(X, partial.astype(float))
    np.testing.assert_array_equal(as_float.lower_bounds_, semi.lower_bounds_)


def test_a_mixture_with_few_labels_starts_from_the_labelled_rows():
    # 5 % of 6,000 rows labelled: the start was a k-means++ seeding of all rows, whose clusters are
    # numbered at random, and EM pinned the labelled rows in the wrong components for some seeds
    # (0.3 % of them on their own label, or 33 %, or 100 %, by random_state)
    rng = np.random.default_rng(0)
    means = rng.normal(scale=3, size=(3, 4))
    y = rng.integers(0, 3, 6000)
    X = means[y] + rng.normal(size=(6000, 4)) * np.array([1.0, 1.5, 0.7])[y][:, None]
    partial = np.where(np.random.default_rng(1).random(6000) < 0.95, -1, y)
    fits = [FiniteMixture(Gaussian("full"), 3, unlabeled=-1, random_state=seed).fit(X, partial) for seed in range(3)]
    for fit in fits:
        assert (fit.predict(X) == y).mean() > 0.95
        np.testing.assert_allclose(fit.lower_bounds_, fits[0].lower_bounds_, rtol=1e-12)
    # the first M-step: the labelled rows' own moments, each class in its component
    first = FiniteMixture(Gaussian("full"), 3, unlabeled=-1, max_iter=0).fit(X, partial)
    for k in range(3):
        np.testing.assert_allclose(first.params_["mean"][k], X[partial == k].mean(axis=0), rtol=1e-10)
    # semi-supervised QDA (the same model with class weights) agrees
    qda = QuadraticDiscriminant(unlabeled=-1, priors="empirical").fit(X, partial)
    assert (fits[0].predict(X) == qda.predict(X)).mean() > 0.99


def test_known_normal_densities_give_marginals_and_others_say_why(rng):
    densities = [stats.multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]]), stats.multivariate_normal([1.0, 2.0])]
    model = KnownDensityClassifier(densities).fit(np.zeros((2, 2)), [0, 1])
    row = np.array([[np.nan, 1.5]])
    expected = [stats.norm(0.0, 1.0).logpdf(1.5), stats.norm(2.0, 1.0).logpdf(1.5)]
    np.testing.assert_allclose(model.log_density(row)[0], expected, rtol=1e-12)
    univariate = KnownDensityClassifier([stats.norm(0, 1), stats.norm(1, 1)]).fit(np.zeros((2, 1)), [0, 1])
    with pytest.raises(ValueError, match="offers no marginal density"):
        univariate.predict(np.array([[np.nan]]))


def test_integer_labels_with_a_text_marker_are_read_as_integers(rng):
    X, y = _classes(rng)
    marked = y.astype(object)
    marked[::4] = "?"
    model = QuadraticDiscriminant(unlabeled="?").fit(X, marked)
    assert model.classes_.dtype.kind == "i" and list(model.classes_) == [0, 1, 2]


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_unconverged_em_says_so_and_names_em_max_iter(cls):
    """EM out of iterations warns (naming the parameter to raise) instead of returning silently.

    QDA with reg_param: unregularised, wine's classes of 48-71 rows with 30 % of 13 features missing have
    covariances that collapse (the likelihood of incomplete rows grows without bound), and EM creeps."""
    from sklearn.datasets import load_wine
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_wine(return_X_y=True)
    X = X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.3] = np.nan
    options = {"reg_param": 0.1} if cls is QuadraticDiscriminant else {}
    with pytest.warns(ConvergenceWarning, match="em_max_iter=3 iterations"):
        cls(em_max_iter=3, **options).fit(X, y)
    short, long = cls(em_max_iter=3, **options), cls(**options)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the default converges here
        long.fit(X, y)
    with pytest.warns(ConvergenceWarning):
        short.fit(X, y)
    # more iterations of EM never lower the observed-data log-likelihood of the class model (with
    # reg_param, EM ascends the penalised likelihood instead)
    if not options:
        assert _observed_log_likelihood(long, X, y) >= _observed_log_likelihood(short, X, y) - 1e-9


def _observed_log_likelihood(model, X, y):
    """Sum over rows of log f_y(x_observed), by scipy on each row's observed coordinates."""
    total = 0.0
    for x, label in zip(X, y):
        k = int(np.searchsorted(model.classes_, label))
        cov = model.covariance_ if model.covariance_.ndim == 2 else model.covariance_[k]
        seen = ~np.isnan(x)
        total += stats.multivariate_normal(model.means_[k][seen], cov[np.ix_(seen, seen)]).logpdf(x[seen])
    return total


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_a_constant_feature_is_refused_with_or_without_missing_values(cls):
    """Missing values do not hide a constant feature behind EM's variance floor: the same fix is named."""
    rng = np.random.default_rng(0)
    X, y = _classes(rng)
    X = np.column_stack([X, np.full(X.shape[0], 2.0)])
    with pytest.raises(ValueError, match="reg_param > 0"):
        cls().fit(X, y)
    with pytest.raises(ValueError, match=r"1 feature\(s\) of X \(\[3\]\) are constant.*reg_param > 0"):
        cls().fit(_knock_out(X, 0.2, rng), y)
    model = cls(reg_param=0.01).fit(_knock_out(X, 0.2, rng), y)
    assert np.all(np.isfinite(model.predict_proba(_knock_out(X, 0.2, rng))))


def _few_complete_rows_per_class():
    """Wine (13 features, 48-71 rows per class) with a fifth of its cells missing: 1-4 complete rows per class."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    return _knock_out(StandardScaler().fit_transform(X), 0.2, np.random.default_rng(0)), y


def test_a_collapsing_class_covariance_is_named_with_its_fix():
    # Each class's incomplete-data likelihood grows without bound as its covariance flattens along a
    # direction its few complete rows pin down: EM runs to em_max_iter with an eigenvalue near the floor
    X, y = _few_complete_rows_per_class()
    with pytest.warns(UserWarning, match=r"covariance of class\(es\) [012, ]+ is collapsing.*reg_param=0\.1"):
        QuadraticDiscriminant(em_max_iter=300).fit(X, y)
    # regularised inside EM, the covariances are usable: no such warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = QuadraticDiscriminant(reg_param=0.1, em_max_iter=300).fit(X, y)
    assert (model.predict(X) == y).mean() > 0.9
    # the pooled covariance of all 178 rows does not collapse
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        LinearDiscriminant().fit(X, y)


def test_a_collapsing_mixture_component_is_named_in_the_convergence_warning():
    # the same data as one Gaussian per class by FiniteMixture (MixtureDiscriminant's fits): its
    # ConvergenceWarning names the collapsing component and reg_covar instead of max_iter
    X, y = _few_complete_rows_per_class()
    with pytest.warns(ConvergenceWarning, match=r"Component\(s\) \[0\] are collapsing.*Raise reg_covar"):
        FiniteMixture(Gaussian(), 1, max_iter=100, random_state=0).fit(X[y == 2])
    with pytest.warns(ConvergenceWarning, match="Increase max_iter") as record:
        FiniteMixture(Gaussian(), 3, max_iter=2, random_state=0).fit(np.nan_to_num(X))
    assert not any("collapsing" in str(w.message) for w in record)


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_a_feature_constant_up_to_rounding_is_refused(cls):
    # equal observed values whose variance rounds to 1e-31, not 0 (digits' pixel at 50 % missing)
    rng = np.random.default_rng(0)
    X, y = _classes(rng)
    X = np.column_stack([X, np.full(X.shape[0], 0.1)])
    X[:189, 3] = np.nan  # 51 observed values of 0.1: their variance rounds to 1.9e-34
    assert np.nanvar(X[:, 3]) > 0
    X[:, :3] = _knock_out(X[:, :3], 0.2, rng)
    with pytest.raises(ValueError, match=r"1 feature\(s\) of X \(\[3\]\) are constant"):
        cls().fit(X, y)


def _completed_class_statistics(model, X, y):
    """Per class: total, mean and scatter about it of the rows completed under the fitted model
    (conditional means of the missing entries, plus their conditional covariances), by numpy row by row."""
    d = X.shape[1]
    cov = np.broadcast_to(model.covariance_, (len(model.classes_), d, d)) if model.covariance_.ndim == 2 \
        else model.covariance_
    out = []
    for k, label in enumerate(model.classes_):
        rows, extra = [], np.zeros((d, d))
        for x in X[y == label]:
            o, m = ~np.isnan(x), np.isnan(x)
            mu, S = model.means_[k], cov[k]
            filled = x.copy()
            if m.any():
                gain = S[np.ix_(m, o)] @ np.linalg.inv(S[np.ix_(o, o)])
                filled[m] = mu[m] + gain @ (x[o] - mu[o])
                extra[np.ix_(m, m)] += S[np.ix_(m, m)] - gain @ S[np.ix_(o, m)]
            rows.append(filled)
        rows = np.array(rows)
        mean = rows.mean(axis=0)
        out.append((rows.shape[0], mean, (rows - mean).T @ (rows - mean) + extra))
    return out


@pytest.mark.parametrize("make, rule", [
    (lambda: QuadraticDiscriminant(reg_param=0.2),
     lambda stats: np.stack([0.8 * W / (n - 1) + 0.2 * np.eye(W.shape[0]) for n, _, W in stats])),
    (lambda: LinearDiscriminant(shrinkage=0.3),
     lambda stats: _scaled_identity_shrink(sum(W for _, _, W in stats) / (sum(n for n, _, _ in stats) - len(stats)), 0.3)),
])
def test_a_regularised_fit_is_the_fixed_point_of_its_rule(make, rule):
    """With reg_param or shrinkage the M-steps regularise: the fitted covariances are the rule's of
    the statistics of the rows completed under them, and the means those rows' means."""
    X, y = _few_complete_rows_per_class()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converges, nothing collapses
        model = make().fit(X, y)
    stats = _completed_class_statistics(model, X, y)
    np.testing.assert_allclose(model.means_, np.array([mean for _, mean, _ in stats]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(model.covariance_, rule(stats), rtol=1e-5, atol=1e-5)


def _scaled_identity_shrink(S, s):
    return (1 - s) * S + s * np.trace(S) / S.shape[0] * np.eye(S.shape[0])


def test_qda_class_by_class_em_equals_one_em_over_all_classes(rng):
    """Every row labelled: each class's EM on its own rows reaches one EM's fit over all classes,
    unregularised and with reg_param inside EM (QDA's classes share nothing)."""
    X, y = _classes(rng)
    Xm = _knock_out(X, 0.3, rng)
    floor = 1e-6 * np.mean(np.nanvar(Xm, axis=0))
    with pytest.warns(UserWarning, match="have no observed value"):
        fits = [QuadraticDiscriminant(reg_param=reg_param).fit(Xm, y) for reg_param in (0.0, 0.3)]
    # the rows with no observed value count nowhere: the oracle leaves them out
    seen = ~np.isnan(Xm).all(axis=1)
    Xm, y = Xm[seen], y[seen]
    n_k = np.bincount(y)[:, None, None]
    for reg_param, model in zip((0.0, 0.3), fits):
        family = Gaussian("full", reg_covar=floor)
        if reg_param:  # the rule inside EM: FiniteMixture with the rule's family, over all classes at once
            from discrim.discriminant._incomplete_em import CovarianceRule, RuleGaussian

            rule = CovarianceRule(QuadraticDiscriminant(reg_param=reg_param), np.bincount(y), Xm.shape[0])
            family = RuleGaussian("full", reg_covar=floor, rule=rule)
        joint = FiniteMixture(family, 3, tol=1e-13, max_iter=5000, random_state=0, unlabeled=-1).fit(Xm, y=y)
        np.testing.assert_allclose(model.means_, joint.params_["mean"], rtol=1e-5, atol=1e-5)
        expected = joint.params_["covariance"] * (n_k / (n_k - 1) if not reg_param else 1.0)
        np.testing.assert_allclose(model.covariance_, expected, rtol=1e-5, atol=1e-5)


def test_with_unlabelled_rows_the_rule_regularises_once_after_em():
    """Unlabelled rows: the class totals move with EM's assignment, so reg_param acts on EM's
    maximum-likelihood estimate, not inside EM (whose assignment it would reshape)."""
    X, y_partial, _, _ = _iris_with_few_labels(0.2)
    plain = QuadraticDiscriminant(unlabeled=-1).fit(X, y_partial)
    shrunk = QuadraticDiscriminant(reg_param=0.3, unlabeled=-1).fit(X, y_partial)
    np.testing.assert_allclose(shrunk.means_, plain.means_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(shrunk.covariance_, 0.7 * plain.covariance_ + 0.3 * np.eye(4), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [LinearDiscriminant, QuadraticDiscriminant])
def test_reg_param_inside_em_states_the_penalty_its_m_step_maximises(make, rng):
    # reg_param alone is an inverse-Wishart posterior mode: the rule's covariances maximise the
    # expected log-likelihood plus CovarianceRule.log_penalty (which accelerated EM compares), so
    # every small symmetric move of them lowers that sum; shrinkage and pooling state none
    from discrim.discriminant._incomplete_em import CovarianceRule
    from discrim.distributions.gaussian import GaussianStats

    X, y = _classes(rng, n=90)
    totals = np.bincount(y).astype(float)
    means = np.stack([X[y == k].mean(axis=0) for k in range(3)])
    scatter = np.stack([(X[y == k] - means[k]).T @ (X[y == k] - means[k]) for k in range(3)])
    stats = GaussianStats(weight=totals / 3.0, mean=means, scatter=scatter / 3.0)  # the mixture's units: weights / 3
    rule = CovarianceRule(make(reg_param=0.4), np.bincount(y), total_weight=totals.sum())
    cov = rule(stats)

    def objective(c):
        mats = c[None] if c.ndim == 2 else c
        pooled = (totals.sum()[None], scatter.sum(axis=0)[None]) if c.ndim == 2 else (totals, scatter)
        q = sum(-0.5 * n * np.linalg.slogdet(S)[1] - 0.5 * np.trace(np.linalg.solve(S, W))
                for n, W, S in zip(*pooled, mats))
        return q + 3.0 * rule.log_penalty(c, stats)  # the penalty in the user's units

    best = objective(cov)
    for _ in range(20):
        step = rng.normal(size=cov.shape) * 1e-3
        assert objective(cov + step + np.swapaxes(step, -1, -2)) < best
    for other in (make(reg_param=0.4, shrinkage=0.2), make(shrinkage=0.2)):
        assert CovarianceRule(other, np.bincount(y), totals.sum()).log_penalty(cov, stats) is None


def test_known_densities_fit_on_rows_with_missing_values(rng):
    """fit takes NaN as predict does (in cross-validation and pipelines); densities without marginals refuse it."""
    from sklearn.model_selection import cross_val_score

    X, y = _classes(rng, 120)
    X = _knock_out(X[:, :2], 0.2, rng)
    y = (y > 0).astype(int)
    model = KnownDensityClassifier([stats.multivariate_normal([0.0, 0.0]), stats.multivariate_normal([1.0, 1.0])])
    scores = cross_val_score(model, X, y, cv=2, error_score="raise")
    assert np.all((scores > 0.5) & (scores <= 1.0))
    assert model.__sklearn_tags__().input_tags.allow_nan
    univariate = KnownDensityClassifier([stats.norm(0, 1), stats.norm(1, 1)])
    assert not univariate.__sklearn_tags__().input_tags.allow_nan
    with pytest.raises(ValueError, match=r"densities\[0\] \(norm\(0, 1\)\) offers no marginal density"):
        univariate.fit(X[:, :1], y)


@pytest.mark.parametrize("make", [lambda: LinearDiscriminant(), lambda: LinearDiscriminant(shrinkage=0.1),
                                  lambda: QuadraticDiscriminant(), lambda: QuadraticDiscriminant(pooling=0.5),
                                  lambda: MixtureDiscriminant(Gaussian(), 1)])
def test_a_class_that_never_observes_a_feature_is_refused_naming_both(make, rng):
    """EM would keep that class mean at its start (no row informs it) and the rule would use it."""
    X, y = _classes(rng)
    X[y == 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"class 2: feature\(s\) \[0\]"):
        make().fit(X, y)
    # a row of positive weight in the class that observes it is enough; one of zero weight is not
    X[np.flatnonzero(y == 2)[0], 0] = 1.0
    weight = np.ones(len(y))
    weight[np.flatnonzero(y == 2)[0]] = 0.0
    with pytest.raises(ValueError, match="never observe"):
        make().fit(X, y, sample_weight=weight)
    assert np.isfinite(make().fit(X, y).predict_proba(X)).all()


def test_unlabelled_rows_that_observe_the_feature_inform_every_class(rng):
    X, y = _classes(rng)
    X[y == 2, 0] = np.nan
    y = y.copy()
    y[rng.random(len(y)) < 0.2] = -1
    unlabelled_seen = ~np.isnan(X[y == -1, 0])
    assert unlabelled_seen.any()
    model = LinearDiscriminant(unlabeled=-1).fit(X, y)
    assert np.isfinite(model.means_).all()


@pytest.mark.parametrize("make", [lambda: LinearDiscriminant(unlabeled=-1), lambda: QuadraticDiscriminant(unlabeled=-1),
                                  lambda: MixtureDiscriminant(Gaussian(), 1, unlabeled=-1)])
@pytest.mark.parametrize("marker", [-1, np.nan])
def test_no_labelled_row_is_a_clear_error(make, marker, rng):
    X, _ = _classes(rng, 30)
    with pytest.raises(ValueError, match="y has no labelled row"):
        make().fit(X, np.full(30, marker))


def test_lda_scores_of_a_row_do_not_depend_on_the_other_rows(rng):
    """decision_function: a complete row's scores are the same beside rows with missing values, and an
    incomplete row's are log f_k(x_o) - log f_c(x_o) + log pi_k, linear in x_o (c the centre of the means)."""
    X, y = _classes(rng)
    lda = LinearDiscriminant(priors="empirical").fit(X, y)
    gaps = X.copy()
    gaps[::3, 1] = np.nan
    scores = lda.decision_function(gaps)
    np.testing.assert_allclose(scores[1::3], lda.decision_function(X[1::3]), rtol=1e-12)
    np.testing.assert_allclose(scores[::3], np.vstack([lda.decision_function(row[None]) for row in gaps[::3]]), rtol=1e-12)
    centre = lda.means_.mean(axis=0)
    observed = [0, 2]
    cov = lda.covariance_[np.ix_(observed, observed)]
    expected = np.stack([stats.multivariate_normal(m[observed], cov).logpdf(gaps[::3][:, observed]) for m in lda.means_], 1)
    expected -= stats.multivariate_normal(centre[observed], cov).logpdf(gaps[::3][:, observed])[:, None]
    np.testing.assert_allclose(scores[::3], expected + np.log(lda.priors_), rtol=1e-10, atol=1e-10)
    joint = expected + np.log(lda.priors_)
    posterior = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(lda.predict_proba(gaps)[::3], posterior, rtol=1e-10)


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_fit_with_missing_values_does_not_depend_on_the_units(cls):
    """The EM's variance floor is relative to each feature's variance: one missing cell neither inflates a small
    feature's variance beside a large one (a floor of 1e-6 of the mean variance moved it from 0.99 to 1.50 and the
    probabilities by 0.1), nor makes the fit depend on the units, nor warns of a collapse on a healthy fit."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(0, 1, 400), rng.normal(0, 1000, 400)])
    y = np.repeat([0, 1], 200)
    X[y == 1, 0] += 1.5
    incomplete = X.copy()
    incomplete[0, 1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no collapsing warning
        model = cls().fit(incomplete, y)
        rescaled = cls().fit(incomplete / [1.0, 1000.0], y)
    complete = cls().fit(X, y)
    cov = model.covariance_ if model.covariance_.ndim == 2 else model.covariance_[0]
    reference = complete.covariance_ if complete.covariance_.ndim == 2 else complete.covariance_[0]
    assert cov[0, 0] == pytest.approx(reference[0, 0], rel=0.01)
    np.testing.assert_allclose(rescaled.predict_proba(X / [1.0, 1000.0]), model.predict_proba(X), atol=1e-8)


def test_class_with_fewer_rows_than_features_is_refused_with_missing_values_elsewhere():
    """As on complete data: a class of 3 rows for 5 features has a singular covariance whatever is missing
    elsewhere (the EM's floor fitted it with eigenvalues 1e-6 and the CLI saved the model)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(203, 5))
    y = np.array([0] * 100 + [1] * 100 + [2] * 3)
    X[5, 0] = np.nan
    with pytest.raises(ValueError, match="class 2 .* 3 samples with an observed value for 5 features"):
        QuadraticDiscriminant().fit(X, y)
    assert QuadraticDiscriminant(reg_param=0.1).fit(X, y).covariance_.shape == (3, 5, 5)
    # rows of that class with no observed value add nothing: 50 of them let it through, to a
    # covariance of eigenvalues 3e-5 and a certain wrong answer at the class's own mean
    X_empty = np.vstack([X, np.full((50, 5), np.nan)])
    with pytest.raises(ValueError, match="class 2 .* 3 samples with an observed value for 5 features"):
        QuadraticDiscriminant().fit(X_empty, np.r_[y, np.full(50, 2)])


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_nullable_integer_labels_with_gaps_stay_integers(cls):
    """A pandas Int64 target whose gaps are the unlabelled rows keeps integer classes (numpy turned the column
    into floats, and predict returned 1.0, 2.0, 3.0)."""
    import pandas as pd

    X = np.random.default_rng(0).normal(size=(60, 2))
    y = pd.Series(np.repeat([1, 2, 3], 20), dtype="Int64")
    y[::7] = pd.NA
    model = cls(unlabeled=-1).fit(X, y)
    assert model.classes_.dtype.kind == "i" and model.classes_.tolist() == [1, 2, 3]
    assert model.predict(X).dtype.kind == "i"


def test_regularised_fit_with_missing_values_follows_its_advice_and_speaks_its_own_terms():
    """A feature constant over its observed values: the error advises reg_param, and with it the fit succeeds as on
    complete data (the EM's seeding asked for as many distinct rows as classes, naming n_components); where the EM
    still fails, the error names this estimator's parameters, not the mixture's (n_components, reg_covar)."""
    X = np.array([[np.nan], [0.0], [0.0], [0.0]])
    y = [0, 0, 1, 1]
    with pytest.raises(ValueError, match="reg_param > 0"):
        LinearDiscriminant().fit(X, y)
    assert np.isfinite(LinearDiscriminant(reg_param=0.1).fit(X, y).covariance_).all()
    with pytest.raises(ValueError, match="QuadraticDiscriminant: .* set reg_param > 0") as error:
        QuadraticDiscriminant(shrinkage="oas").fit(X, y)
    assert "n_components" not in str(error.value).split("(")[0]


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_a_feature_missing_in_every_row_is_named_as_such(cls):
    # it was called "constant over its observed values", after two numpy RuntimeWarnings
    import warnings

    X = np.random.default_rng(0).normal(size=(50, 3))
    X[:, 1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"feature\(s\) \[1\] of X are missing \(NaN\) in every row"):
            cls().fit(X, np.arange(50) % 2)


def test_a_start_cut_short_by_em_max_iter_warns():
    # Semi-supervised QDA with missing values first fits the classes to their labelled rows; that
    # start ran out of em_max_iter=1000 unreported, and the EM from it then converged within the
    # cap to another fixed point (posteriors 0.99 away from the fit with a higher cap)
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:, :5]
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.2] = np.nan
    X[np.isnan(X).all(axis=1), 0] = 0.0
    rng.random(y.shape[0])
    partial = np.where(rng.random(y.shape[0]) < 0.5, -1, y)
    with pytest.warns(ConvergenceWarning, match="did not converge in em_max_iter=1000 iterations"):
        short = QuadraticDiscriminant(unlabeled=-1).fit(X, partial)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        full = QuadraticDiscriminant(unlabeled=-1, em_max_iter=5000).fit(X, partial)
    assert np.abs(short.predict_proba(X) - full.predict_proba(X)).max() > 0.5  # why the warning matters


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
def test_a_row_with_no_observed_value_counts_in_no_class_total(cls):
    """A labelled row with every feature missing is given no weight, with a warning: it counted in n_k,
    so in the n - g (n_k - 1) rescaling (LDA's covariance 0.99962 of the fit without it) and in the
    empirical priors (0.341, 0.330, 0.330 for three classes of 30 rows)."""
    rng = np.random.default_rng(8)
    X, y = rng.normal(size=(90, 3)), np.repeat([0, 1, 2], 30)
    X[y == 1] += 1.5
    X[3, 1] = np.nan  # both fits take the EM path of missing values
    with pytest.warns(UserWarning, match=r"1 row\(s\) of X \(index 90\) have no observed value .* given no weight"):
        padded = cls(priors="empirical").fit(np.r_[X, [[np.nan] * 3]], np.r_[y, 0])
    plain = cls(priors="empirical").fit(X, y)
    np.testing.assert_allclose(padded.priors_, np.full(3, 1 / 3), rtol=1e-12)
    np.testing.assert_allclose(padded.covariance_, plain.covariance_, rtol=1e-9)
    np.testing.assert_allclose(padded.predict_proba(X), plain.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("unlabelled", [False, True])
@pytest.mark.parametrize("rule", [LinearDiscriminant, QuadraticDiscriminant])
def test_rows_of_weight_zero_are_no_part_of_the_fit_with_missing_values(rule, unlabelled, rng):
    # the EM's scale, and with it its variance floor, came from every row's spread: rows of weight 0
    # with values of spread 50 moved LDA's probabilities by 7e-4 (covariance by 1.3e-3)
    X, y = _classes(rng)
    X = _knock_out(X, 0.3, rng)
    if unlabelled:
        y = np.where(rng.random(y.shape[0]) < 0.6, -1, y)
    zero = rng.random(y.shape[0]) < 0.2
    w = np.where(zero, 0.0, 1.0)
    X_zero = X.copy()
    X_zero[zero] = 50.0 * rng.normal(size=(zero.sum(), X.shape[1]))
    make = (lambda: rule(unlabeled=-1)) if unlabelled else rule
    weighted = make().fit(X_zero, y, sample_weight=w)
    dropped = make().fit(X[~zero], y[~zero])
    np.testing.assert_allclose(weighted.predict_proba(X), dropped.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_allclose(weighted.covariance_, dropped.covariance_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("make", [LinearDiscriminant, QuadraticDiscriminant,
                                  lambda: MixtureDiscriminant(Gaussian("full"), 2, random_state=0)])
def test_a_missing_feature_far_from_the_origin_keeps_its_marginal(make):
    # The marginal of rows with missing values filled a feature missing in every row scored (a single
    # row's) with 0, which made z' P z and its correction both of size |mu|^2 / sigma^2: iris shifted by
    # 1e8 gave LDA log-densities 13.1 for 0.77 and posteriors 0.99 off; complete rows were exact.
    X, y = load_iris(return_X_y=True)
    rows = X[[0, 60, 120]].copy()
    rows[:, 1] = np.nan
    near = make().fit(X, y)
    for offset in (1e8, 1e10):
        far = make().fit(X + offset, y)
        np.testing.assert_allclose(far.predict_proba(rows + offset), near.predict_proba(rows), atol=1e-8)
        for i in range(3):  # one row at a time too
            np.testing.assert_allclose(far.predict_proba(rows[i:i + 1] + offset), near.predict_proba(rows[i:i + 1]),
                                       atol=1e-8)
        # as accurate as the complete rows' log-densities (the data's own rounding)
        complete = np.abs(far.log_density(X[[0, 60, 120]] + offset) - near.log_density(X[[0, 60, 120]])).max()
        missing = np.abs(far.log_density(rows + offset) - near.log_density(rows)).max()
        assert missing <= 10 * complete + 1e-9
    mixture = FiniteMixture(Gaussian("full"), 2, random_state=0)
    shifted = clone(mixture).fit(X + 1e8)
    np.testing.assert_allclose(shifted.predict_proba(rows + 1e8), mixture.fit(X).predict_proba(rows), atol=1e-8)


@pytest.mark.parametrize("make", [LinearDiscriminant, QuadraticDiscriminant,
                                  lambda: MixtureDiscriminant(Gaussian("full"), 2, random_state=0)])
def test_a_row_with_missing_values_scores_alone_whatever_the_other_rows(make):
    # The missing entries were filled with their feature's mean over the rows of the call: beside a row
    # with an outlier of 1e8 in that feature, a row missing it lost 16 nats of its log-density (LDA;
    # QDA 14, MDA 7) against the same row scored alone; FiniteMixture's score_samples 0.31.
    X, y = load_iris(return_X_y=True)
    model = make().fit(X, y)
    alone = X[[60]].copy()
    alone[0, 1] = np.nan
    outlier = X[[70]].copy()
    outlier[0, 1] = 1e8
    outlier[0, 3] = np.nan
    together = np.vstack([alone, outlier])
    np.testing.assert_allclose(model.log_density(together)[0], model.log_density(alone)[0], rtol=1e-12)
    np.testing.assert_allclose(model.predict_proba(together)[0], model.predict_proba(alone)[0], atol=1e-12)
    mixture = FiniteMixture(Gaussian("full"), 3, random_state=0).fit(X)
    np.testing.assert_allclose(mixture.score_samples(together)[0], mixture.score_samples(alone)[0], rtol=1e-12)


@pytest.mark.filterwarnings("ignore:.*have no observed value")  # rows the knock-out emptied
@pytest.mark.parametrize("unlabelled", [False, True])
@pytest.mark.parametrize("rule", [LinearDiscriminant, QuadraticDiscriminant])
def test_integer_weights_are_repeated_rows_with_missing_values(rule, unlabelled, rng):
    # the EM's variance floor came from each feature's unweighted variance over the rows of positive
    # weight, which a repeated row changes and a weight of 2 did not: weights of 0 to 2 moved LDA's
    # posteriors by 6e-7 (iris, half the labels dropped) from the repeated rows'
    X, y = _classes(rng)
    X = _knock_out(X, 0.3, rng)
    if unlabelled:
        y = np.where(rng.random(y.shape[0]) < 0.6, -1, y)
    w = rng.integers(0, 4, y.shape[0])
    make = (lambda: rule(unlabeled=-1)) if unlabelled else rule
    weighted = make().fit(X, y, sample_weight=w)
    repeated = make().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_allclose(weighted.covariance_, repeated.covariance_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("make", [lambda: LinearDiscriminant(unlabeled=-1), lambda: QuadraticDiscriminant(unlabeled=-1),
                                  lambda: MixtureDiscriminant(Gaussian("full"), 1, unlabeled=-1, random_state=0)])
def test_score_refuses_true_labels_with_unlabelled_rows(make, rng):
    # accuracy against the partly labelled y counted every unlabelled row as an error (LDA: 0.387
    # where the true classes give 0.953), and a NaN label failed inside scikit-learn
    X, y = _classes(rng)
    partial = np.where(rng.random(y.shape[0]) < 0.6, -1, y)
    model = make().fit(X, partial)
    labelled = partial != -1
    assert model.score(X[labelled], partial[labelled]) == pytest.approx(np.mean(model.predict(X[labelled]) == y[labelled]))
    with pytest.raises(ValueError, match=r"y has \d+ unlabelled row\(s\) \(NaN or None, or unlabeled=-1; first index "
                                         r"\d+\).*X\[labelled\], y\[labelled\]"):
        model.score(X, partial)
    with pytest.raises(ValueError, match=r"unlabelled row\(s\)"):
        model.score(X, np.where(labelled, y, np.nan))


def test_score_of_a_supervised_rule_refuses_missing_true_labels(rng):
    X, y = _classes(rng)
    model = LinearDiscriminant().fit(X, y)
    with pytest.raises(ValueError, match=r"y has 1 unlabelled row\(s\) \(NaN or None; first index 3\)"):
        model.score(X, np.where(np.arange(y.shape[0]) == 3, np.nan, y))


@pytest.mark.parametrize("make", [lambda: LinearDiscriminant(unlabeled=-1), lambda: QuadraticDiscriminant(unlabeled=-1),
                                  lambda: MixtureDiscriminant(Gaussian("full"), 1, unlabeled=-1, random_state=0)])
def test_features_observed_together_in_unlabelled_rows_only_do_not_warn(make, rng):
    # the starts fitted to the labelled rows alone, each observing one feature, said that no row
    # observes the two together; the unlabelled rows, complete, do
    X, y = _classes(rng, 300)
    X = X[:, :2]
    partial = np.where(np.arange(300) % 2 == 0, -1, y)
    labelled = np.flatnonzero(partial >= 0)
    X[labelled, rng.integers(0, 2, labelled.size)] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        make().fit(X, partial)
    # every row labelled: no row observes both, and the fit says so
    X[np.flatnonzero(partial < 0), rng.integers(0, 2, 150)] = np.nan
    with pytest.warns(UserWarning, match=r"never observed together"):
        make().set_params(unlabeled=None).fit(X, y)
