import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture
from sklearn.utils.estimator_checks import parametrize_with_checks

from discrim.distributions import FAMILIES, Bernoulli, Binomial, Categorical, Gaussian, Poisson, StudentT
from discrim.exceptions import CollapsingComponentWarning
from discrim.mixture import FiniteMixture


def _blobs(rng, n=300, d=3, k=3, offset=0.0):
    centers = rng.normal(scale=4.0, size=(k, d)) + offset
    return centers[rng.integers(0, k, n)] + rng.normal(size=(n, d))


def _count_data(family, rng, n=120):
    if isinstance(family, Binomial):
        return rng.binomial(family.n_trials, [[0.2, 0.7]] * n).astype(float)
    if isinstance(family, Poisson):
        return rng.poisson([[1.0, 6.0]] * n).astype(float)
    if isinstance(family, Categorical):
        return rng.integers(0, family.n_categories, size=(n, 2)).astype(float)
    return _blobs(rng, n=n, d=2)


# --- scikit-learn contract ---------------------------------------------------------------

EXPECTED_FAILED_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": (
        "the random initialisation draws rows, so integer weights and repeated rows start EM from "
        "different random points; from the same params_init they give the same fit "
        "(test_integer_weights_equal_repeated_rows)"
    ),
}


# With a noise component or a full Student-t the model has no marginal density of a row's observed
# entries: its allow_nan tag is False (it said True, and the refusals failed the pickle check), and
# its refusals name NaN and a single sample as scikit-learn's checks expect.
@parametrize_with_checks(
    [FiniteMixture(Gaussian(), random_state=0), FiniteMixture(Gaussian(), 2, noise=True, random_state=0),
     FiniteMixture(StudentT(), 2, random_state=0)],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --- agreement with scikit-learn's GaussianMixture ----------------------------------------


def _precisions(ctype, cov):
    return np.linalg.inv(cov) if ctype in ("full", "tied") else 1.0 / cov


@pytest.mark.parametrize("ctype", ["full", "diag", "tied", "spherical"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_sklearn_gaussian_mixture_from_the_same_start(ctype, dtype, rng):
    X = _blobs(rng, n=500, d=3, k=3, offset=50.0)
    start = FiniteMixture(Gaussian(ctype), 3, max_iter=0, random_state=0).fit(X)
    w0, mean0, cov0 = start.weights_, start.params_["mean"], start.params_["covariance"]
    gm = GaussianMixture(
        3, covariance_type=ctype, weights_init=w0, means_init=mean0, precisions_init=_precisions(ctype, cov0),
        tol=0, max_iter=15, reg_covar=1e-6,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gm.fit(X)
    fm = FiniteMixture(
        Gaussian(ctype), 3, weights_init=w0, params_init={"mean": mean0, "covariance": cov0}, tol=0, max_iter=15,
        dtype=dtype, chunk_size=128,
    ).fit(X)
    rtol = 1e-10 if dtype == "float64" else 1e-4
    assert fm.n_iter_ == 15 and not fm.converged_
    np.testing.assert_allclose(fm.score(X), gm.score(X), rtol=rtol)
    np.testing.assert_allclose(fm.weights_, gm.weights_, rtol=rtol * 10, atol=1e-8)
    np.testing.assert_allclose(fm.params_["mean"], gm.means_, rtol=rtol * 10, atol=rtol * 10)
    np.testing.assert_allclose(fm.params_["covariance"], gm.covariances_, rtol=rtol * 100, atol=rtol * 10)
    # the same under GaussianMixture's names, in its shapes
    assert fm.means_.shape == gm.means_.shape and fm.covariances_.shape == gm.covariances_.shape
    np.testing.assert_array_equal(fm.covariances_, fm.params_["covariance"])
    np.testing.assert_allclose(fm.predict_proba(X), gm.predict_proba(X), atol=rtol * 100)
    np.testing.assert_allclose(fm.score_samples(X), gm.score_samples(X), rtol=rtol * 10)
    assert fm.bic(X) == pytest.approx(gm.bic(X), rel=rtol * 10)
    assert fm.aic(X) == pytest.approx(gm.aic(X), rel=rtol * 10)


# --- invariants ----------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_integer_weights_equal_repeated_rows(family, rng):
    X = _count_data(family, rng, n=60)
    counts = rng.integers(0, 4, size=60)
    counts[:3] = 1
    start = FiniteMixture(family, 2, max_iter=0, random_state=0).fit(X)
    kw = dict(weights_init=start.weights_, params_init=start.params_, tol=0, max_iter=10)
    a = FiniteMixture(family, 2, **kw).fit(X, sample_weight=counts)
    b = FiniteMixture(family, 2, **kw).fit(np.repeat(X, counts, axis=0))
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-9)
    for name in a.params_:
        np.testing.assert_allclose(a.params_[name], b.params_[name], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(a.lower_bounds_, b.lower_bounds_, rtol=1e-9)


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_same_random_state_same_result_and_fit_predict(family, rng):
    X = _count_data(family, rng)
    a = FiniteMixture(family, 3, n_init=2, init_params="random_from_data", random_state=7, tol=0, max_iter=5)
    labels = a.fit_predict(X)
    b = FiniteMixture(family, 3, n_init=2, init_params="random_from_data", random_state=7, tol=0, max_iter=5).fit(X)
    np.testing.assert_array_equal(labels, b.predict(X))
    np.testing.assert_array_equal(a.weights_, b.weights_)
    for name in a.params_:
        np.testing.assert_array_equal(a.params_[name], b.params_[name])


def test_threads_and_block_size_do_not_change_the_result(rng):
    X = _blobs(rng, n=3000)
    kw = dict(random_state=3, tol=0, max_iter=8)
    ref = FiniteMixture(Gaussian(), 3, n_threads=1, chunk_size=3000, **kw).fit(X)
    for n_threads, chunk in [(2, 256), (1, 100), (3, 999)]:
        fm = FiniteMixture(Gaussian(), 3, n_threads=n_threads, chunk_size=chunk, **kw).fit(X)
        np.testing.assert_allclose(fm.params_["covariance"], ref.params_["covariance"], rtol=1e-10)
        np.testing.assert_allclose(fm.lower_bounds_, ref.lower_bounds_, rtol=1e-12)
    again = FiniteMixture(Gaussian(), 3, n_threads=3, chunk_size=999, **kw).fit(X)
    np.testing.assert_array_equal(again.params_["mean"], fm.params_["mean"])  # bitwise reproducible


def test_results_do_not_depend_on_component_order(rng):
    X = _blobs(rng)
    start = FiniteMixture(Gaussian(), 3, max_iter=0, random_state=0).fit(X)
    perm = [2, 0, 1]
    a = FiniteMixture(Gaussian(), 3, weights_init=start.weights_, params_init=start.params_, tol=0, max_iter=10).fit(X)
    b = FiniteMixture(
        Gaussian(), 3, weights_init=start.weights_[perm],
        params_init={k: v[perm] for k, v in start.params_.items()}, tol=0, max_iter=10,
    ).fit(X)
    np.testing.assert_allclose(b.weights_, a.weights_[perm], rtol=1e-10)
    np.testing.assert_allclose(b.params_["mean"], a.params_["mean"][perm], rtol=1e-10)
    np.testing.assert_allclose(b.score_samples(X), a.score_samples(X), rtol=1e-12)


# --- options ---------------------------------------------------------------------------


def test_tol_zero_runs_exactly_max_iter_without_warning(rng):
    X = _blobs(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fm = FiniteMixture(Gaussian(), 3, tol=0, max_iter=7, random_state=0).fit(X)
    assert fm.n_iter_ == 7 and len(fm.lower_bounds_) == 8 and not fm.converged_
    assert fm.lower_bound_ == fm.lower_bounds_[-1]


def test_convergence_warning_and_converged(rng):
    X = _blobs(rng)
    # the change is signed and the stop rule is on its size: the message states that rule
    with pytest.warns(ConvergenceWarning, match=r"did not converge in max_iter=2 iterations \(the mean "
                                                r"log-likelihood last changed by .*, \|change\| >= tol=1e-12\)"):
        fm = FiniteMixture(Gaussian(), 3, tol=1e-12, max_iter=2, random_state=0).fit(X)
    assert not fm.converged_
    fm = FiniteMixture(Gaussian(), 3, tol=1e-3, max_iter=500, random_state=0).fit(X)
    assert fm.converged_ and fm.n_iter_ < 500


def test_a_converged_fit_with_a_collapsing_component_says_so():
    """A component on three (nearly) equal rows holds a tiny share of the rows: its likelihood's rise
    falls below tol while its variance sits on reg_covar. The stop is no convergence to a fit."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(300, 3)), 10 + 1e-9 * rng.normal(size=(3, 3))])
    with pytest.warns(CollapsingComponentWarning, match=r"degenerate. Component\(s\) \[0\] are collapsing.*Raise reg_covar"):
        fm = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    assert fm.converged_
    assert np.linalg.eigvalsh(fm.params_["covariance"][0])[0] < 100 * 1e-6
    with warnings.catch_warnings():  # a healthy fit of the same data says nothing
        warnings.simplefilter("error")
        FiniteMixture(Gaussian(), 1, random_state=0).fit(X)
    assert abs(fm.lower_bounds_[-1] - fm.lower_bounds_[-2]) < 1e-3


def test_fix_weights_keeps_the_weights(rng):
    X = _blobs(rng)
    fm = FiniteMixture(Gaussian(), 3, fix_weights=True, weights_init=[0.2, 0.3, 0.5], random_state=0).fit(X)
    np.testing.assert_array_equal(fm.weights_, [0.2, 0.3, 0.5])
    fm = FiniteMixture(Gaussian(), 3, fix_weights=True, random_state=0).fit(X)
    np.testing.assert_allclose(fm.weights_, [1 / 3] * 3)
    free = FiniteMixture(Gaussian(), 3, random_state=0).fit(X)
    assert fm._n_parameters() == free._n_parameters() - 2


def test_warm_start_continues_from_the_previous_fit(rng):
    X = _blobs(rng)
    fm = FiniteMixture(Gaussian(), 3, tol=0, max_iter=3, random_state=0, warm_start=True).fit(X)
    fm.fit(X)
    ref = FiniteMixture(Gaussian(), 3, tol=0, max_iter=6, random_state=0).fit(X)
    np.testing.assert_allclose(fm.params_["mean"], ref.params_["mean"], rtol=1e-10)
    assert fm.lower_bounds_[0] == pytest.approx(ref.lower_bounds_[3], rel=1e-12)


def test_n_init_keeps_the_best(rng):
    """Initialisation j comes from stream j of random_state whatever n_init is, so n_init = k
    runs the starts of n_init = k - 1 and one more: keeping the best, its log-likelihood never
    falls as k grows, and on five blobs stopped after five iterations it rises."""
    X = _blobs(rng, k=5)
    bounds = [FiniteMixture(Gaussian(), 5, n_init=k, random_state=0, max_iter=5, tol=0).fit(X).lower_bound_
              for k in range(1, 7)]
    assert all(b >= a for a, b in zip(bounds, bounds[1:])), bounds
    assert bounds[-1] > bounds[0]


def test_keep_history_off_by_default(rng):
    fm = FiniteMixture(Gaussian(), 2, random_state=0).fit(_blobs(rng))
    assert not hasattr(fm, "history_")


def test_sample_and_criteria(rng):
    X = _blobs(rng, n=400)
    fm = FiniteMixture(Gaussian("diag"), 3, random_state=0).fit(X)
    draws, labels = fm.sample(1000)
    assert draws.shape == (1000, 3) and labels.shape == (1000,)
    assert np.all(np.diff(labels) >= 0) and set(np.unique(labels)) <= {0, 1, 2}
    n, p = X.shape[0], 3 * 3 + 3 * 3 + 2
    assert fm.bic(X) == pytest.approx(-2 * fm.score_samples(X).sum() + p * np.log(n))
    assert fm.aic(X) == pytest.approx(-2 * fm.score_samples(X).sum() + 2 * p)
    np.testing.assert_allclose(fm.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_array_equal(fm.predict(X), fm.predict_proba(X).argmax(axis=1))
    w = rng.uniform(0.5, 2, size=n)
    assert fm.bic(X, sample_weight=w) == pytest.approx(-2 * w @ fm.score_samples(X) + p * np.log(w.sum()))


def test_pandas_input_keeps_feature_names(rng):
    X = pd.DataFrame(_blobs(rng, n=100), columns=["a", "b", "c"])
    fm = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    np.testing.assert_array_equal(fm.feature_names_in_, ["a", "b", "c"])
    with pytest.warns(UserWarning, match="feature names"):
        fm.score_samples(X.to_numpy())


# --- robustness and errors --------------------------------------------------------------


def test_fewer_distinct_rows_than_components():
    X = np.array([[1.0, 2.0]] * 10 + [[3.0, 4.0]] * 10)
    with pytest.raises(ValueError, match="2 distinct row\\(s\\).*n_components=3"):
        FiniteMixture(Gaussian(), 3).fit(X)
    with pytest.raises(ValueError, match="distinct"):
        FiniteMixture(Binomial(10), 2).fit(np.full((6, 1), 4.0))


def test_rows_made_equal_by_float32_say_so(rng):
    # 200 distinct rows about 1e9 are one in float32: the message blamed the data alone
    X = rng.normal(size=(200, 2)) + 1e9
    with pytest.raises(ValueError, match="1 distinct row.*In float32 .*fit with dtype='float64'"):
        FiniteMixture(Gaussian(), 2, dtype="float32").fit(X)
    assert FiniteMixture(Gaussian(), 2, random_state=0).fit(X).converged_


def test_a_single_row_grid_warns_nothing_from_numpy():
    # min_relative_variance divided 0 by 0 (every feature constant) for the spherical and diagonal models
    from discrim.mixture import gaussian_models, select_mixture

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.filterwarnings("ignore", message="select_mixture")  # its own FitFailedWarning
        result = select_mixture(np.array([[0.3, 1.2]]), gaussian_models(), 1, random_state=0)
    assert not result.table["min_rel_variance"].isna().any()


def test_reg_covar_beside_tiny_variances_warns_and_names_the_fix():
    """Four blobs in units of 1e-5 (variances about 1e-10): reg_covar=1e-6 swamps every covariance and
    the fit is silently wrong (the components spread over each other); it now warns."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(100, 3)) + 8.0 * c for c in range(4)]) * 1e-5
    with pytest.warns(UserWarning, match=r"reg_covar=1e-06 exceeds a tenth of the variance of 3 feature\(s\).*Rescale X"):
        FiniteMixture(Gaussian("full"), 4, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = FiniteMixture(Gaussian("full"), 4, random_state=0).fit(X * 1e5)
        FiniteMixture(Gaussian("full"), 4, reg_covar=1e-16, random_state=0).fit(X)
    assert np.sort(fitted.weights_) == pytest.approx([0.25] * 4, abs=1e-6)


def test_a_feature_constant_over_its_observed_values_is_named_as_such():
    # one observed value (the others missing and filled with it), or one value throughout: its variance
    # is rounding error (4e-31), and the warning told to rescale X, which changes nothing
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    one_observed, constant = X.copy(), X.copy()
    one_observed[1:, 2] = np.nan
    constant[:, 1] = 0.1
    for data, index in ((one_observed, 2), (constant, 1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            FiniteMixture(Gaussian("full"), 2, random_state=0).fit(data)
        texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        assert (f"1 feature(s) of X (index {index}) are constant over their observed values: they say nothing about "
                "the components, and their variance is reg_covar=1e-06 alone. Leave them out of X.") in texts
        assert not any("Rescale X" in text for text in texts)


@pytest.mark.parametrize("init_params", ["kmeans++", "random"])
def test_the_starting_statistics_are_the_same_in_threads_to_the_bit(init_params, rng):
    """The first M-step's statistics run in the fit's block threads (as the E-step does), merged in
    block order: the start does not depend on the thread count."""
    X = rng.normal(size=(3000, 6)) + rng.integers(0, 4, 3000)[:, None]
    fits = [FiniteMixture(Gaussian("full"), 4, init_params=init_params, max_iter=0, chunk_size=256, n_threads=t,
                          random_state=0).fit(X) for t in (1, 2)]
    for name, value in fits[0].params_.items():
        np.testing.assert_array_equal(fits[1].params_[name], value, err_msg=name)
    np.testing.assert_array_equal(fits[1].weights_, fits[0].weights_)


def test_every_component_collapsed_onto_its_own_point_says_so():
    """Four distinct rows, three times each, and four components: every covariance is reg_covar I.
    No component is wider than the others, but the means' spread is: the fit is degenerate."""
    X = np.repeat(np.array([[0.0, 0], [1, 0], [0, 1], [3, 3]]), 3, axis=0)
    with pytest.warns(CollapsingComponentWarning, match=r"Component\(s\) \[0, 1, 2, 3\] are collapsing"):
        FiniteMixture(Gaussian("VVV"), 4, random_state=0).fit(X)


def test_collapsing_component_stays_finite(rng):
    # 3 copies of one point and a cloud: the component on the point collapses to reg_covar
    X = np.vstack([np.tile([[10.0, 10.0]], (3, 1)), rng.normal(size=(60, 2))])
    fm = FiniteMixture(
        Gaussian(), 2, params_init={"mean": [[10.0, 10.0], [0.0, 0.0]], "covariance": [np.eye(2)] * 2},
        weights_init=[0.5, 0.5], tol=0, max_iter=20,
    ).fit(X)
    assert np.all(np.isfinite(fm.score_samples(X)))
    assert np.all(np.diff(fm.lower_bounds_) >= -1e-9)
    np.testing.assert_allclose(fm.params_["covariance"][0], 1e-6 * np.eye(2), atol=1e-12)
    with pytest.raises(ValueError, match="Increase reg_covar"):
        FiniteMixture(
            Gaussian(), 2, params_init={"mean": [[10.0, 10.0], [0.0, 0.0]], "covariance": [np.eye(2)] * 2},
            weights_init=[0.5, 0.5], tol=0, max_iter=20, reg_covar=0.0,
        ).fit(X)


def test_empty_component_is_kept_with_a_warning(rng):
    X = rng.normal(size=(50, 2))
    far = {"mean": [[0.0, 0.0], [1e3, 1e3]], "covariance": [np.eye(2)] * 2}
    with pytest.warns(UserWarning, match=r"component\(s\) \[1\] received no responsibility"):
        fm = FiniteMixture(Gaussian(), 2, params_init=far, weights_init=[0.5, 0.5], tol=0, max_iter=5).fit(X)
    assert fm.weights_[1] == 0.0
    np.testing.assert_array_equal(fm.params_["mean"][1], [1e3, 1e3])
    assert np.all(np.isfinite(fm.score_samples(X)))
    assert np.all(np.isfinite(fm.predict_proba(X)))


def test_zero_weight_and_degenerate_probabilities_stay_finite():
    X = np.array([[0.0], [1.0], [1.0]])
    with pytest.warns(UserWarning, match="received no responsibility"):
        fm = FiniteMixture(Bernoulli(), 2, params_init={"prob": [[0.3], [0.6]]}, weights_init=[1.0, 0.0]).fit(X)
    assert fm.weights_[1] == 0.0
    assert np.all(np.isfinite(fm.score_samples(X))) and np.all(np.isfinite(fm.predict_proba(X)))
    # a probability of exactly 0 meets a success: tiny density, not NaN
    fm = FiniteMixture(Bernoulli(), 2, params_init={"prob": [[0.0], [1.0]]}, weights_init=[0.5, 0.5]).fit(X)
    assert np.all(np.isfinite(fm.lower_bounds_))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"params_init": {"mean": np.zeros((3, 2)), "covariance": np.ones((2, 2, 2))}}, "parameter 'mean' has shape"),
        ({"params_init": {"mean": np.zeros((2, 2))}}, "missing \\['covariance'\\]"),
        ({"weights_init": [0.5, 0.6]}, "weights_init must be non-negative and sum to one"),
        ({"weights_init": [1.0]}, "weights_init has shape"),
        ({"n_components": 0}, "n_components"),
        ({"init_params": "kmeans+"}, "init_params"),
        ({"tol": -1.0}, "tol"),
        ({"dtype": "float16"}, "dtype"),
    ],
)
def test_bad_parameters_are_named(kwargs, match, rng):
    with pytest.raises(ValueError, match=match):
        FiniteMixture(Gaussian(), **{"n_components": 2, **kwargs}).fit(_blobs(rng, d=2))


def test_bad_data_is_rejected(rng):
    X = _blobs(rng, d=2)
    X[3, 1] = np.inf  # NaN is a missing value (tests/mixture/test_missing.py); infinity is an error
    with pytest.raises(ValueError, match="infinity"):
        FiniteMixture(Gaussian()).fit(X)
    with pytest.raises(ValueError, match="negative"):
        FiniteMixture(Gaussian()).fit(_blobs(rng, d=2), sample_weight=-np.ones(300))
    with pytest.raises(ValueError, match="between 0 and n_trials"):
        FiniteMixture(Binomial(10)).fit(np.array([[1.0], [12.0], [3.0]]))
    with pytest.raises(ValueError, match="family"):
        FiniteMixture("gaussian").fit(X)


def test_per_row_trials_fit_and_rescore(rng):
    n_fit = rng.integers(5, 30, size=200)
    z = rng.integers(0, 2, size=200)
    X = rng.binomial(n_fit, np.where(z == 0, 0.2, 0.8))[:, None].astype(float)
    fm = FiniteMixture(Binomial(n_trials=n_fit), 2, random_state=0, tol=1e-8, max_iter=500).fit(X)
    np.testing.assert_allclose(np.sort(fm.params_["prob"][:, 0]), [0.2, 0.8], atol=0.05)
    new_n = np.array([10, 20])
    with pytest.raises(ValueError, match="per-row trial counts"):
        fm.score_samples([[3.0], [15.0]])
    fm.set_params(family__n_trials=new_n)
    assert fm.predict([[2.0], [17.0]]).tolist() == [int(np.argmin(fm.params_["prob"][:, 0])), int(np.argmax(fm.params_["prob"][:, 0]))]


def test_fitted_mixture_ignores_later_changes_to_its_family():
    """The fitted methods use ``family_``, a copy made by fit: ``set_params`` after fit, or on a family object
    shared with another estimator, changes nothing until the next fit (it changed the densities silently, or
    failed with a KeyError for another covariance type)."""
    from discrim.discriminant import MixtureDiscriminant

    rng = np.random.default_rng(0)
    X = np.r_[rng.binomial(10, 0.2, (50, 2)), rng.binomial(10, 0.7, (50, 2))]
    fm = FiniteMixture(Binomial(n_trials=10), 2, random_state=0).fit(X)
    before = fm.score_samples(X)
    fm.set_params(family__n_trials=20)
    np.testing.assert_array_equal(fm.score_samples(X), before)
    assert fm.family_.n_trials == 10
    shared = Gaussian("full")
    rule = MixtureDiscriminant(shared, 1, random_state=0).fit(X.astype(float), np.repeat([0, 1], 50))
    proba = rule.predict_proba(X.astype(float))
    shared.set_params(covariance_type="diag")
    np.testing.assert_array_equal(rule.predict_proba(X.astype(float)), proba)


def test_warm_start_refuses_parameters_that_cannot_start_the_fit():
    """A warm start from a fit of another component count or covariance shape is an error naming both (it went on
    with the old count, and bic counted the new one's parameters); sample and bic use the fitted count."""
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(size=(50, 2)), rng.normal(size=(50, 2)) + 4, rng.normal(size=(50, 2)) - 4]
    fm = FiniteMixture(Gaussian(), 2, warm_start=True, random_state=0).fit(X)
    bic = fm.bic(X)
    with pytest.raises(ValueError, match="warm_start=False"):
        fm.set_params(n_components=3).fit(X)
    with pytest.raises(ValueError, match="warm_start=False"):
        fm.set_params(n_components=2, family=Gaussian("spherical")).fit(X)
    fm.set_params(family=Gaussian(), n_components=1)
    assert fm.bic(X) == bic
    rows, labels = fm.sample(5)
    assert rows.shape == (5, 2) and labels.shape == (5,)
    refit = FiniteMixture(Gaussian(), 2, warm_start=True, random_state=0).fit(X)
    assert refit.fit(X).weights_.shape == (2,)  # a compatible warm start goes on


def test_the_nan_tag_follows_the_family_and_the_noise():
    from discrim.distributions import Product

    def allow_nan(model):
        return model.__sklearn_tags__().input_tags.allow_nan

    assert allow_nan(FiniteMixture(Gaussian()))
    assert allow_nan(FiniteMixture(StudentT("diag")))
    assert not allow_nan(FiniteMixture(StudentT()))  # "full" refuses a mask
    assert not allow_nan(FiniteMixture(Gaussian(), noise=True))
    assert not allow_nan(FiniteMixture(Product([(StudentT(), [0]), (Poisson(), [1])])))
    assert allow_nan(FiniteMixture(Product([(StudentT("diag"), [0]), (Poisson(), [1])])))


def test_gaussian_mixtures_only_have_means_and_covariances(rng):
    assert not hasattr(FiniteMixture(Gaussian()), "means_")  # unfitted
    counts = rng.poisson(3.0, size=(50, 2)).astype(float)
    poisson = FiniteMixture(Poisson(), 2, random_state=0).fit(counts)
    with pytest.raises(AttributeError, match=r"means_ is a Gaussian mixture's attribute; this Poisson mixture's "
                                             r"parameters are params_: \['rate'\]"):
        poisson.means_


def test_end_of_fit_warnings_point_at_the_callers_line(rng):
    # fit_predict's ConvergenceWarning pointed inside discrim (a fixed stacklevel of 3)
    X = rng.normal(size=(60, 2))
    for method in ("fit", "fit_predict"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(FiniteMixture(Gaussian(), 3, max_iter=2, random_state=0), method)(X)
        assert [w.filename for w in caught if w.category is ConvergenceWarning] == [__file__]


def test_a_categorical_column_of_a_frame_is_named_with_the_fix(rng):
    # pandas' bare "Cannot cast str dtype to float64" came through (a bool and a categorical column)
    X = pd.DataFrame({"a": rng.normal(size=40), "b": rng.random(40) < 0.5,
                      "c": pd.Categorical(rng.choice(["x", "y"], 40))})
    with pytest.raises(ValueError, match=r"column\(s\) \['c'\] of X hold values that are not numbers .*Categorical"):
        FiniteMixture(Gaussian(), 2).fit(X)


def test_numbers_written_as_text_in_a_frame_are_refused_as_by_the_classifiers(rng):
    # a string column (pandas 3 infers one for text) went to numpy, which read numbers written as text silently and
    # crashed on its <NA> ("float() argument must be a string or a real number, not 'NAType'"; select_mixture and
    # hierarchical_clusters alike); a category column of numbers was read by value. The classifiers refuse both by
    # name, as every estimator refuses a numpy array of text (a dask DataFrame's string columns are read as numbers:
    # Dask turns object columns of numbers into strings)
    from discrim.discriminant import LinearDiscriminant
    from discrim.mixture import hierarchical_clusters, select_mixture

    numbers = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    text = numbers.astype(str).astype("string")
    text.loc[3, "b"] = pd.NA
    kinds = numbers.assign(b=pd.Categorical(np.where(numbers["b"] > 0, 10, 30)))
    for X, name in ((text, "['a', 'b']"), (text.fillna("0.5"), "['a', 'b']"), (kinds, "['b']")):
        for fit in (FiniteMixture(Gaussian(), 2).fit, lambda X: select_mixture(X, Gaussian(), 2),
                    lambda X: hierarchical_clusters(X, 2)):
            with pytest.raises(ValueError, match=rf"column\(s\) {re.escape(name)} of X hold values that are not numbers"):
                fit(X)
        with pytest.raises(ValueError, match=rf"X has non-numeric column\(s\) {re.escape(name)}"):
            LinearDiscriminant().fit(X, np.arange(40) % 2)
    # numbers held in an object column (with None) are still numbers
    held = numbers.astype(object)
    held.loc[3, "b"] = None
    assert FiniteMixture(Gaussian(), 2, random_state=0).fit(held).n_features_in_ == 2
