"""KnownDensityClassifier: the ML / Bayes rule for given population densities."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal, norm, t
from sklearn.utils.estimator_checks import parametrize_with_checks

from discrim.discriminant import KnownDensityClassifier


class IsotropicNormal:
    """N(loc, I) in any dimension: logpdf of (n, d) rows is the sum over columns."""

    def __init__(self, loc):
        self.loc = loc

    def logpdf(self, X):
        return norm.logpdf(np.asarray(X, dtype=float), self.loc).sum(axis=-1)

    def __repr__(self):  # stable test ids, so pytest-xdist workers collect the same tests
        return f"IsotropicNormal({self.loc})"


# The densities are fixed at construction, so an instance serves data with exactly as many
# classes as it has densities. Two instances (2 and 3 densities) together run every check; each
# is expected to fail only the checks that fit data with the other number of classes.
_TWO = KnownDensityClassifier([IsotropicNormal(0.0), IsotropicNormal(1.0)])
_THREE = KnownDensityClassifier([IsotropicNormal(0.0), IsotropicNormal(1.0), IsotropicNormal(2.0)])

_WRONG_CLASS_COUNT = "the check fits data whose number of classes differs from len(densities)"
_FIXED = (
    "known densities are not learned from the data, so the check's accuracy bar on its own "
    "blobs cannot be met"
)


def _expected_failures(estimator):
    out = {"check_classifiers_train": _FIXED}
    if len(estimator.densities) == 2:  # checks that use three or four classes
        names = [
            "check_fit_score_takes_y", "check_estimators_overwrite_params",
            "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
            "check_readonly_memmap_input", "check_n_features_in_after_fitting",
            "check_positive_only_tag_during_fit", "check_sample_weights_list",
            "check_sample_weight_equivalence_on_dense_data", "check_dtype_object",
            "check_f_contiguous_array_estimator", "check_classifiers_classes",
            "check_supervised_y_2d", "check_methods_sample_order_invariance",
            "check_methods_subset_invariance", "check_dict_unchanged", "check_fit2d_predict1d",
        ]
    else:  # checks that use two classes
        names = [
            "check_estimators_dtypes", "check_sample_weights_pandas_series",
            "check_sample_weights_not_an_array", "check_sample_weights_shape",
            "check_sample_weights_not_overwritten", "check_dtype_object",
            "check_pipeline_consistency", "check_estimators_nan_inf", "check_estimators_pickle",
            "check_classifier_data_not_an_array", "check_classifiers_classes",
            "check_decision_proba_consistency", "check_fit2d_1feature", "check_fit_idempotent",
            "check_fit_check_is_fitted", "check_n_features_in",
        ]
    out.update(dict.fromkeys(names, _WRONG_CLASS_COUNT))
    return out


@parametrize_with_checks([_TWO, _THREE], expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_seed_example_8_2_allocates_zero_to_population_1():
    clf = KnownDensityClassifier([norm(1, 1), norm(2, 2)]).fit([[0.0], [1.0]], ["pi1", "pi2"])
    assert clf.predict([[0.0]])[0] == "pi1"
    # Between the boundary points -0.85 and 2.18 population 1; outside population 2.
    x = np.array([[-2.0], [-0.86], [-0.84], [2.17], [2.19], [5.0]])
    np.testing.assert_array_equal(clf.predict(x), ["pi2", "pi2", "pi1", "pi1", "pi2", "pi2"])


def test_log_density_and_posteriors_match_scipy(rng):
    dens = [multivariate_normal([0, 0], [[1, 0.3], [0.3, 2]]), multivariate_normal([1, -1], np.eye(2)),
            multivariate_normal([3, 0], [[2, -0.5], [-0.5, 1]])]
    priors = np.array([0.2, 0.5, 0.3])
    X = rng.normal(size=(50, 2)) * 2
    clf = KnownDensityClassifier(dens, priors=priors).fit(X, np.arange(50) % 3)
    expected = np.column_stack([d.logpdf(X) for d in dens])
    np.testing.assert_allclose(clf.log_density(X), expected, rtol=1e-12)
    joint = np.exp(expected) * priors
    np.testing.assert_allclose(clf.predict_proba(X), joint / joint.sum(1, keepdims=True), rtol=1e-10)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(joint, axis=1))
    np.testing.assert_allclose(clf.decision_function(X), expected + np.log(priors), rtol=1e-12)


def test_binary_decision_function_is_log_odds():
    clf = KnownDensityClassifier([norm(0, 1), norm(2, 1)], priors=[0.25, 0.75]).fit([[0], [1]], [0, 1])
    x = np.linspace(-3, 3, 7)[:, None]
    expected = norm.logpdf(x[:, 0], 2, 1) + np.log(0.75) - norm.logpdf(x[:, 0], 0, 1) - np.log(0.25)
    np.testing.assert_allclose(clf.decision_function(x), expected, rtol=1e-12)


def test_far_points_have_finite_posteriors():
    # f_k(x) underflows to 0 for every class at x = 1e4; the log-space posterior does not.
    clf = KnownDensityClassifier([norm(0, 1), norm(1, 2), t(df=3)]).fit([[0], [1], [2]], [0, 1, 2])
    proba = clf.predict_proba([[1e4], [-1e4]])
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict([[1e4], [-1e4]]), [2, 2])  # heavy tails win


def test_densities_follow_sorted_labels():
    clf = KnownDensityClassifier([norm(0, 1), norm(5, 1)]).fit([[0], [1]], ["b", "a"])
    np.testing.assert_array_equal(clf.classes_, ["a", "b"])
    assert clf.predict([[0.1]])[0] == "a" and clf.predict([[4.9]])[0] == "b"


def test_empirical_priors_use_weights():
    clf = KnownDensityClassifier([norm(0, 1), norm(1, 1)], priors="empirical")
    clf.fit([[0], [0], [0], [1]], [0, 0, 0, 1], sample_weight=[1, 1, 1, 3])
    np.testing.assert_allclose(clf.priors_, [0.5, 0.5])
    assert KnownDensityClassifier([norm(0, 1), norm(1, 1)]).fit([[0], [0], [1]], [0, 0, 1]).priors_.tolist() == [0.5, 0.5]


@settings(max_examples=40, deadline=None)
@given(
    params=st.lists(st.tuples(st.floats(-3, 3), st.floats(0.3, 3)), min_size=2, max_size=5),
    x=st.lists(st.floats(-10, 10), min_size=1, max_size=20),
)
def test_rule_is_argmax_of_density(params, x):
    dens = [norm(m, s) for m, s in params]
    X = np.array(x)[:, None]
    clf = KnownDensityClassifier(dens).fit(np.zeros((len(dens), 1)), np.arange(len(dens)))
    logf = np.column_stack([d.logpdf(X[:, 0]) for d in dens])
    pred = clf.predict(X)
    # The chosen class has the largest density (ties may go either way).
    np.testing.assert_allclose(logf[np.arange(len(x)), pred], logf.max(axis=1), rtol=0, atol=1e-12)


def test_density_without_logpdf_is_named():
    with pytest.raises(TypeError, match=r"densities\[1\] \(str\) has no callable logpdf"):
        KnownDensityClassifier([norm(0, 1), "normal"]).fit([[0], [1]], [0, 1])


def test_discrete_densities_with_logpmf_give_bayes_posteriors():
    # a frozen discrete scipy distribution has logpmf and no logpdf; its pmf is the density. Hand
    # computation for poisson(1) against poisson(4), equal priors: P(0 | x) = 1 / (1 + 4^x e^-3)
    from scipy.stats import poisson

    assert not hasattr(poisson(1), "logpdf")
    x = np.array([[0], [1], [3], [7]])
    clf = KnownDensityClassifier([poisson(1), poisson(4)]).fit(x, [0, 0, 1, 1])
    by_hand = 1.0 / (1.0 + 4.0 ** x[:, 0] * np.exp(-3.0))
    np.testing.assert_allclose(clf.predict_proba(x)[:, 0], by_hand, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(x)[:, 0], [0.9526, 0.8339, 0.2389, 0.0012], atol=5e-5)
    np.testing.assert_array_equal(clf.predict(x), [0, 0, 1, 1])
    np.testing.assert_allclose(clf.log_density(x), np.column_stack([poisson(1).logpmf(x[:, 0]),
                                                                    poisson(4).logpmf(x[:, 0])]), rtol=1e-12)
    # with priors (0.2, 0.8) the Bayes rule shifts the posterior odds by 1/4
    bayes = KnownDensityClassifier([poisson(1), poisson(4)], priors=[0.2, 0.8]).fit(x, [0, 0, 1, 1])
    np.testing.assert_allclose(bayes.predict_proba(x)[:, 0], 1.0 / (1.0 + 4.0 ** (x[:, 0] + 1) * np.exp(-3.0)),
                               rtol=1e-12)


class BothMethods:
    """N(loc, 1) through logpdf, and a logpmf that must not be used (it is always 0)."""

    def __init__(self, loc):
        self.loc = loc

    def logpdf(self, X):
        return norm.logpdf(np.asarray(X, dtype=float)[:, 0], self.loc)

    def logpmf(self, X):
        return np.zeros(np.asarray(X).shape[0])


def test_logpdf_is_preferred_when_a_density_has_both():
    x = np.array([[-1.0], [0.5], [2.0]])
    clf = KnownDensityClassifier([BothMethods(0.0), norm(1, 1)]).fit(x, [0, 1, 1])
    np.testing.assert_allclose(clf.log_density(x)[:, 0], norm.logpdf(x[:, 0], 0.0), rtol=1e-12)


def test_a_density_of_the_users_with_mean_and_cov_is_no_normal_for_missing_values():
    # a density was taken for a multivariate normal when it had ndarray attributes mean and cov: a
    # user's multivariate t scored its rows with missing values by a normal marginal, silently
    # (posteriors [0.5, 0.5] at x = (NaN, 8) for the t marginals' [0.999998, 1.7e-6])
    from scipy.stats import multivariate_t

    class StudentT:
        def __init__(self, mean, cov, df):
            self.mean, self.cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
            self._t = multivariate_t(self.mean, self.cov, df=df)

        def logpdf(self, X):
            return self._t.logpdf(X)

    X = np.random.default_rng(0).normal(size=(10, 2))
    clf = KnownDensityClassifier([StudentT([0, 0], np.eye(2), 1), StudentT([3, 0], np.eye(2), 30)]).fit(X, [0, 1] * 5)
    with pytest.raises(ValueError, match=r"densities\[0\] .* offers no marginal density"):
        clf.predict_proba([[np.nan, 8.0]])
    assert not clf.__sklearn_tags__().input_tags.allow_nan
    # scipy's multivariate normal keeps its marginals, whatever its covariance object
    from scipy.stats import Covariance

    normal = KnownDensityClassifier([multivariate_normal([0, 0], Covariance.from_diagonal([1.0, 2.0])),
                                     multivariate_normal([1, 1], np.eye(2))]).fit(X, [0, 1] * 5)
    expected = np.array([norm(0, np.sqrt(2)).logpdf(8.0), norm(1, 1).logpdf(8.0)])
    np.testing.assert_allclose(normal.predict_proba([[np.nan, 8.0]])[0], np.exp(expected - np.logaddexp(*expected)),
                               rtol=1e-12)


def test_discrete_density_with_a_missing_value_is_refused_by_index():
    from scipy.stats import poisson

    with pytest.raises(ValueError, match=r"densities\[0\] \(poisson\(1\)\) offers no marginal density"):
        KnownDensityClassifier([poisson(1), poisson(4)]).fit([[0.0], [np.nan], [3.0]], [0, 1, 1])


@pytest.mark.parametrize("n_rows", [2, 10])
def test_gaussian_kde_densities_score_the_rows_of_x(rng, n_rows):
    """scipy's gaussian_kde takes points as columns: given X it refused 10 rows of 2 features
    ("points have dimension 10, dataset has dimension 2") and scored the columns of a 2 x 2 X,
    silently. Posteriors now equal those of ``kde.logpdf(X.T)``."""
    from scipy.stats import gaussian_kde

    kdes = [gaussian_kde(rng.normal(m, 1.0, size=(2, 50))) for m in (0.0, 1.0)]
    X = np.array([[0.0, 3.0], [1.0, -1.0]]) if n_rows == 2 else rng.normal(size=(n_rows, 2))
    model = KnownDensityClassifier(kdes).fit(X, np.arange(n_rows) % 2)
    joint = np.column_stack([kde.logpdf(X.T) for kde in kdes])
    expected = np.exp(joint - np.logaddexp(joint[:, :1], joint[:, 1:]))
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-12)
    # a univariate KDE takes X of one column, as scipy's univariate densities do
    univariate = [gaussian_kde(rng.normal(m, 1.0, size=60)) for m in (0.0, 2.0)]
    x = np.array([[0.0], [2.0], [5.0]])
    joint = np.column_stack([kde.logpdf(x[:, 0]) for kde in univariate])
    expected = np.exp(joint - np.logaddexp(joint[:, :1], joint[:, 1:]))
    np.testing.assert_allclose(KnownDensityClassifier(univariate).fit(x, [0, 1, 1]).predict_proba(x), expected,
                               rtol=1e-12)


def test_density_count_must_match_classes():
    with pytest.raises(ValueError, match="2 densities were given but y has 3 classes"):
        KnownDensityClassifier([norm(0, 1), norm(1, 1)]).fit([[0], [1], [2]], [0, 1, 2])


def test_univariate_density_needs_one_column():
    with pytest.raises(ValueError, match="univariate density needs X with a single column"):
        KnownDensityClassifier([norm(0, 1), norm(1, 1)]).fit([[0, 1], [1, 2]], [0, 1])


def test_multivariate_dimension_mismatch_is_named():
    dens = [multivariate_normal([0, 0]), multivariate_normal([1, 1])]
    with pytest.raises(ValueError, match=r"densities\[0\].logpdf failed on X of shape \(\d+, 3\)"):
        KnownDensityClassifier(dens).fit(np.zeros((2, 3)), [0, 1])


@pytest.mark.parametrize(
    "X, y, match",
    [
        ([[0.0], [np.nan]], [0, 1], "NaN"),
        ([[0.0], [np.inf]], [0, 1], "infinity"),
        ([[0.0], [1.0]], [0, 0], "only one class"),
        ([[0.0], [1.0], [2.0]], [0, 1], "inconsistent numbers of samples"),
    ],
)
def test_bad_training_data(X, y, match):
    with pytest.raises(ValueError, match=match):
        KnownDensityClassifier([norm(0, 1), norm(1, 1)]).fit(X, y)


def test_negative_sample_weight():
    with pytest.raises(ValueError, match="sample_weight contains negative values"):
        KnownDensityClassifier([norm(0, 1), norm(1, 1)]).fit([[0], [1]], [0, 1], sample_weight=[1, -1])


def test_priors_of_wrong_length():
    with pytest.raises(ValueError, match="priors has shape"):
        KnownDensityClassifier([norm(0, 1), norm(1, 1)], priors=[0.2, 0.3, 0.5]).fit([[0], [1]], [0, 1])


def test_pandas_input_keeps_feature_names():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"height": [0.0, 1.5, 2.0]})
    clf = KnownDensityClassifier([norm(0, 1), norm(2, 1)]).fit(X, [0, 1, 1])
    np.testing.assert_array_equal(clf.feature_names_in_, ["height"])
    np.testing.assert_array_equal(clf.predict(X), [0, 1, 1])


def test_point_outside_every_support_is_rejected():
    from scipy.stats import uniform

    clf = KnownDensityClassifier([uniform(0, 1), uniform(0.5, 1)]).fit([[0.2], [0.9]], [0, 1])
    np.testing.assert_array_equal(clf.predict([[0.2], [1.4]]), [0, 1])
    with pytest.raises(ValueError, match="zero density"):
        clf.predict_proba([[5.0]])


# Issue 17: an invalid density returned NaN probabilities; never a NaN posterior or a label
# chosen from NaN scores.

class PartlyUndefined:
    """A 'density' whose log-density is NaN for x > 2 (undefined there), N(loc, 1) elsewhere."""

    def __init__(self, loc):
        self.loc = loc

    def logpdf(self, X):
        x = np.asarray(X, dtype=float)[:, 0]
        return np.where(x > 2, np.nan, norm.logpdf(x, self.loc))

    def __repr__(self):
        return f"PartlyUndefined({self.loc})"


@pytest.mark.parametrize("bad", [norm(2.5, -1), norm(0, 0), t(df=-1)])
def test_invalid_scipy_density_is_refused_at_fit_by_index(bad):
    # the error alone: numpy's warnings of the invalid density's arithmetic (norm(0, 0) divides by
    # zero) do not come first
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"densities\[1\] \(\w+\(.*\)\) returned a NaN log-density"):
            KnownDensityClassifier([norm(0, 1), bad]).fit([[0.0], [1.0], [3.0]], [0, 1, 1])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_nan_log_density_at_predict_is_an_error_not_a_label(n_classes):
    dens = [PartlyUndefined(0.0)] + [norm(k, 1) for k in range(1, n_classes)]
    clf = KnownDensityClassifier(dens).fit([[0.0], [1.0], [1.5]][:n_classes], list(range(n_classes)))
    rows = np.array([[0.0], [3.0], [1.0]])
    for method in ("predict", "predict_proba", "predict_log_proba", "decision_function", "log_density"):
        with pytest.raises(ValueError, match=r"densities\[0\] \(PartlyUndefined\(0.0\)\) returned a NaN"):
            getattr(clf, method)(rows)
    # Where every density is defined the rule works as before.
    np.testing.assert_array_equal(clf.predict([[-1.0], [1.9]]), [0, n_classes - 1])


def test_save_and_load_give_bit_identical_outputs(tmp_path):
    from discrim.persistence import ModelFileError, load_model, save_model

    # Model files hold multivariate_normal densities only (persistence trusts no other scipy type).
    dens = [multivariate_normal([0.0], [[1.0]]), multivariate_normal([1.5], [[4.0]]),
            multivariate_normal([-1.0], [[0.25]])]
    clf = KnownDensityClassifier(dens, priors=[0.2, 0.3, 0.5])
    clf.fit([[0.0], [1.0], [2.0]], [0, 1, 2])
    path = tmp_path / "known.skops"
    save_model(clf, path)
    try:
        loaded = load_model(path)
    except ModelFileError as exc:  # the loader trusts only listed types (persistence's choice)
        pytest.skip(f"load_model does not accept frozen scipy densities: {exc}")
    grid = np.linspace(-50, 50, 1001)[:, None]
    for method in ("predict", "predict_proba", "predict_log_proba", "decision_function", "log_density"):
        np.testing.assert_array_equal(getattr(loaded, method)(grid), getattr(clf, method)(grid))


def test_torch_rows_are_scored_on_the_host_without_numpy_warnings():
    """scipy's densities run on the host: a torch tensor (CPU) is brought over once, not handed to
    numpy functions (np.isnan on a tensor raised numpy's __array_wrap__ DeprecationWarning)."""
    torch = pytest.importorskip("torch")
    X = np.array([[0.1, 0.2], [2.0, 1.9], [0.0, 0.3]])
    y = np.array([0, 1, 0])
    densities = [multivariate_normal([0, 0], np.eye(2)), multivariate_normal([2, 2], np.eye(2))]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        model = KnownDensityClassifier(densities).fit(torch.tensor(X), y)
        proba = model.predict_proba(torch.tensor(X))
    assert isinstance(proba, torch.Tensor)
    np.testing.assert_allclose(proba.numpy(), KnownDensityClassifier(densities).fit(X, y).predict_proba(X))


def test_a_singular_normal_the_user_allowed_keeps_its_marginals_beside_incomplete_rows():
    """One NaN row in a call sent every row through marginals built with allow_singular=False: a
    singular normal (allow_singular=True) then failed for all of them, blaming the column count."""
    densities = [multivariate_normal([0, 0], [[1, 1], [1, 1]], allow_singular=True),
                 multivariate_normal([1, 1], np.eye(2))]
    model = KnownDensityClassifier(densities).fit([[0.0, 0.0], [1.0, 1.0]], [0, 1])
    together = model.predict_proba([[0.5, 0.5], [np.nan, 0.3]])
    np.testing.assert_allclose(together[0], model.predict_proba([[0.5, 0.5]])[0])
    # the marginal of the observed coordinate is N(0, 1) against N(1, 1)
    p0, p1 = norm(0, 1).pdf(0.3), norm(1, 1).pdf(0.3)
    np.testing.assert_allclose(together[1], [p0 / (p0 + p1), p1 / (p0 + p1)], rtol=1e-12)


def test_the_default_priors_are_the_other_discriminants_equal():
    # the default was None, which in scikit-learn means the class frequencies, not equal priors
    import inspect

    from discrim.discriminant import LinearDiscriminant

    default = inspect.signature(KnownDensityClassifier).parameters["priors"].default
    assert default == inspect.signature(LinearDiscriminant).parameters["priors"].default == "equal"
    X, y = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]]), np.array([0, 0, 0, 1, 1])
    densities = [norm(0, 1), norm(3, 1)]
    for priors in ("equal", None):
        np.testing.assert_array_equal(KnownDensityClassifier(densities, priors=priors).fit(X, y).priors_, [0.5, 0.5])
