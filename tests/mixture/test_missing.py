"""FiniteMixture on incomplete data (issue 21): NaN is missing at random, handled by likelihood."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from scipy.stats import multivariate_normal, poisson

from discrim.distributions import Bernoulli, Binomial, Categorical, Gaussian, Poisson
from discrim.mixture import FiniteMixture

COV = np.array([[1.0, 0.8, 0.3], [0.8, 1.0, 0.2], [0.3, 0.2, 1.0]])


def _gaussian_rows(rng, n=300):
    return np.concatenate([rng.multivariate_normal([0.0, 0.0, 0.0], COV, n), rng.normal(size=(n, 3)) + 4.0])


def _knock_out(X, share, rng):
    out = X.copy()
    out[rng.random(X.shape) < share] = np.nan
    out[np.isnan(out).all(axis=1), 0] = X[np.isnan(out).all(axis=1), 0]  # keep one entry of every row
    return out


@pytest.mark.parametrize("ctype", ["full", "tied", "diag", "spherical"])
def test_density_of_a_row_is_the_mixture_of_its_observed_marginals(ctype, rng):
    X = _knock_out(_gaussian_rows(rng), 0.3, rng)
    model = FiniteMixture(Gaussian(ctype), 2, random_state=0, max_iter=5).fit(X)
    cov = model.params_["covariance"]
    full = {"full": lambda: cov, "tied": lambda: np.broadcast_to(cov, (2, 3, 3)),
            "diag": lambda: np.stack([np.diag(c) for c in cov]),
            "spherical": lambda: np.stack([c * np.eye(3) for c in cov])}[ctype]()
    expected = []
    for x in X[:40]:
        o = ~np.isnan(x)
        parts = [np.log(model.weights_[k]) + multivariate_normal(model.params_["mean"][k, o], full[k][np.ix_(o, o)]).logpdf(x[o])
                 for k in range(2)]
        expected.append(logsumexp(parts))
    np.testing.assert_allclose(model.score_samples(X[:40]), expected, rtol=1e-10)


def test_poisson_leaves_missing_coordinates_out_of_the_product(rng):
    X = rng.poisson([2.0, 7.0], size=(200, 2)).astype(float)
    X[rng.random(X.shape) < 0.25] = np.nan
    model = FiniteMixture(Poisson(), 2, random_state=0, max_iter=5).fit(X)
    x = X[np.isnan(X).any(axis=1)][0]
    o = ~np.isnan(x)
    parts = [np.log(model.weights_[k]) + poisson(model.params_["rate"][k, o]).logpmf(x[o]).sum() for k in range(2)]
    assert model.score_samples(x[None])[0] == pytest.approx(logsumexp(parts), rel=1e-12)


@pytest.mark.parametrize("ctype", ["full", "diag"])
def test_a_converged_fit_is_a_maximum_of_the_observed_data_likelihood(ctype, rng):
    # one component: the incomplete-data MLE; every small move of the mean lowers the likelihood
    X = _knock_out(rng.multivariate_normal([1.0, -2.0, 0.5], COV, 400), 0.3, rng)
    model = FiniteMixture(Gaussian(ctype, reg_covar=0.0), 1, tol=1e-12, max_iter=2000).fit(X)
    best = model.score(X)
    for step in np.eye(3) * 1e-3:
        for sign in (1.0, -1.0):
            moved = FiniteMixture(Gaussian(ctype, reg_covar=0.0), 1, max_iter=0, params_init={
                "mean": model.params_["mean"] + sign * step, "covariance": model.params_["covariance"]}).fit(X)
            assert moved.score(X) < best


@settings(max_examples=15, deadline=None)
@given(share=st.floats(0.05, 0.6), seed=st.integers(0, 10_000),
       ctype=st.sampled_from(["full", "tied", "diag", "spherical"]))
def test_em_on_incomplete_data_never_lowers_the_likelihood(share, seed, ctype):
    rng = np.random.default_rng(seed)
    X = _knock_out(_gaussian_rows(rng, 60), share, rng)
    model = FiniteMixture(Gaussian(ctype), 2, random_state=seed, tol=0.0, max_iter=15).fit(X)
    assert np.all(np.diff(model.lower_bounds_) >= -1e-10 * np.abs(model.lower_bounds_[1:]))


@pytest.mark.parametrize("family", [Poisson(), Binomial(n_trials=12), Bernoulli(), Categorical(n_categories=4)])
def test_discrete_families_fit_incomplete_data_monotonically(family, rng):
    counts = rng.poisson([1.0, 3.0, 6.0], size=(300, 3)).astype(float)
    X = {"Bernoulli": counts > 2, "Categorical": np.minimum(counts, 3)}.get(type(family).__name__, counts)
    X = np.asarray(X, dtype=float)
    X[rng.random(X.shape) < 0.2] = np.nan
    model = FiniteMixture(family, 2, random_state=0, tol=0.0, max_iter=20).fit(X)
    assert np.all(np.diff(model.lower_bounds_) >= -1e-12)
    completed = model.impute(X)
    assert not np.isnan(completed).any()
    np.testing.assert_array_equal(completed[~np.isnan(X)], X[~np.isnan(X)])


def test_without_nan_the_fit_is_the_complete_data_fit_bit_for_bit(rng):
    X = _gaussian_rows(rng)
    a = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    b = FiniteMixture(Gaussian(), 2, random_state=0).fit(X.tolist())
    np.testing.assert_array_equal(a.lower_bounds_, b.lower_bounds_)
    np.testing.assert_array_equal(a.impute(X), X)


def test_impute_is_the_conditional_expectation(rng):
    # one full-covariance component: E[x_m | x_o] = mu_m + S_mo S_oo^-1 (x_o - mu_o)
    X = rng.multivariate_normal([1.0, -2.0, 0.5], COV, 500)
    model = FiniteMixture(Gaussian("full"), 1, max_iter=3).fit(X)
    mu, S = model.params_["mean"][0], model.params_["covariance"][0]
    row = np.array([[0.3, np.nan, np.nan]])
    expected = mu[1:] + S[1:, :1] @ np.linalg.solve(S[:1, :1], row[0, :1] - mu[:1])
    np.testing.assert_allclose(model.impute(row)[0, 1:], expected, rtol=1e-12)
    # draws: their mean is the expectation, their covariance the conditional covariance
    many = np.repeat(row, 20_000, axis=0)
    draws = model.impute(many, draw=True, random_state=0)[:, 1:]
    np.testing.assert_allclose(draws.mean(axis=0), expected, atol=0.03)
    cond = S[1:, 1:] - S[1:, :1] @ np.linalg.solve(S[:1, :1], S[:1, 1:])
    np.testing.assert_allclose(np.cov(draws.T), cond, atol=0.03)


def test_a_missing_category_is_imputed_as_the_most_probable_one_alone_and_in_a_product(rng):
    # An average of nominal codes (0 red, 1 green, 2 blue -> 1.2) would name no category: the
    # imputation is argmax_c sum_k P(k | x_o) probs_kc, here computed by hand from the fit.
    z = rng.integers(0, 2, 600)
    colour = np.where(z == 0, rng.choice(3, 600, p=[0.6, 0.3, 0.1]), rng.choice(3, 600, p=[0.1, 0.2, 0.7]))
    size = np.where(z == 0, rng.choice(2, 600, p=[0.8, 0.2]), rng.choice(2, 600, p=[0.2, 0.8]))
    X = np.column_stack([colour, size]).astype(float)
    model = FiniteMixture(Categorical(n_categories=[3, 2]), 2, random_state=0).fit(X)
    rows = np.array([[np.nan, 0.0], [np.nan, 1.0], [2.0, np.nan]])
    resp = model.predict_proba(rows)
    probs = model.params_["probs"]  # (K, d, C)
    expected = [np.argmax(resp[0] @ probs[:, 0, :3]), np.argmax(resp[1] @ probs[:, 0, :3]),
                np.argmax(resp[2] @ probs[:, 1, :2])]
    completed = model.impute(rows)
    np.testing.assert_array_equal([completed[0, 0], completed[1, 0], completed[2, 1]], expected)
    assert set(completed[:, 0]) <= {0.0, 1.0, 2.0} and {completed[0, 0], completed[1, 0]} == {0.0, 2.0}
    # beside a Gaussian column, in a product: the category the same way, the Gaussian by expectation
    from discrim.distributions import Product

    height = rng.normal(np.where(z == 0, 0.0, 3.0), 1.0)
    product = Product([(Categorical(n_categories=[3, 2]), [0, 1]), (Gaussian(), [2])])
    model = FiniteMixture(product, 2, random_state=0).fit(np.column_stack([X, height]))
    rows = np.array([[np.nan, 0.0, np.nan], [np.nan, 1.0, 3.5]])
    resp = model.predict_proba(rows)
    probs, means = model.params_["0__probs"], model.params_["1__mean"][:, 0]
    completed = model.impute(rows)
    np.testing.assert_array_equal(completed[:, 0], np.argmax(resp @ probs[:, 0, :3], axis=1))
    assert completed[0, 2] == pytest.approx(resp[0] @ means, rel=1e-12)
    assert completed[1, 2] == 3.5


def test_imputation_by_the_mixture_beats_the_column_means(rng):
    X = _gaussian_rows(rng)
    Xm = _knock_out(X, 0.3, rng)
    missing = np.isnan(Xm)
    completed = FiniteMixture(Gaussian("full"), 2, random_state=0).fit(Xm).impute(Xm)
    column_means = np.where(missing, np.nanmean(Xm, axis=0), Xm)
    assert np.mean((completed - X)[missing] ** 2) < 0.6 * np.mean((column_means - X)[missing] ** 2)


def test_a_feature_missing_everywhere_is_named(rng):
    X = rng.normal(size=(20, 3))
    X[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"feature\(s\) \[1\] of X are missing \(NaN\) in every row"):
        FiniteMixture(Gaussian(), 2).fit(X)


def test_scoring_new_incomplete_rows_keeps_the_cache_bounded():
    """A fitted model caches the pattern inverses of the rows it scores; new rows at every call added entries
    without bound (23 MB per 1,000 calls of 50 rows): at most twice one call's are kept."""
    rng = np.random.default_rng(0)
    d = 12
    fm = FiniteMixture(Gaussian("full"), 3, random_state=0).fit(rng.normal(size=(500, d)))
    reference = None
    for _ in range(200):
        rows = rng.normal(size=(50, d))
        rows[rng.random(rows.shape) < 0.3] = np.nan
        fm.score_samples(rows)
        if reference is None:
            reference = rows
    assert len(fm._params.__dict__["_derived"]["quantities of the rows"]) <= 2 * (d + 1)
    fresh = FiniteMixture(Gaussian("full"), 3, random_state=0).fit(np.random.default_rng(0).normal(size=(500, d)))
    np.testing.assert_array_equal(fm.score_samples(reference), fresh.score_samples(reference))


def test_binomial_rows_of_their_own_trial_counts_start_from_their_share_of_successes():
    """Rows of 1 trial completed by the column's mean count (16 successes of 40-trial rows) started
    EM at prob = 1 (a success count above its trials), a start EM could not leave."""
    rng = np.random.default_rng(2)
    n_trials = np.where(rng.random(200) < 0.5, 1, 40)
    X = rng.binomial(n_trials[:, None], 0.6, size=(200, 2)).astype(float)
    X[(n_trials == 1) & (rng.random(200) < 0.5), 0] = np.nan
    family = Binomial(n_trials=n_trials)
    fill = family.start_completion(X, ~np.isnan(X), np.ones(200), family.row_data(200))
    assert fill.shape == X.shape and np.all(fill <= n_trials[:, None]) and np.all(fill >= 0)
    model = FiniteMixture(family, 2, random_state=0, keep_history=True).fit(X)
    start = model.history_[0]["prob"]
    assert np.all(start < 0.95) and np.all(start > 0.05)
    assert np.all(np.diff(model.lower_bounds_) >= -1e-10)


@pytest.mark.parametrize("ctype", ["full", "tied", "VEV", "diag"])
def test_features_never_observed_together_warn_that_their_covariance_is_not_estimated(ctype, rng):
    # features 0 and 1 of correlation 0.8, each row observing one of them: the fitted correlation
    # was 0 (EM's start), silently, and the conditional expectation of one given the other the mean
    X = _gaussian_rows(rng, 200)[:200]
    one = X.copy()
    one[np.arange(200), rng.integers(0, 2, 200)] = np.nan
    if ctype == "diag":  # no covariance to estimate: nothing to say
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            FiniteMixture(Gaussian(ctype), 1).fit(one)
        return
    with pytest.warns(UserWarning, match=r"1 pair\(s\) of features of X \(index \(0, 1\)\) are never observed "
                                         r"together.*covariance_type='diag'"):
        model = FiniteMixture(Gaussian(ctype), 1).fit(one)
    assert np.all(np.abs(np.asarray(model.params_["covariance"])[..., 0, 1]) < 0.1)  # far from 0.8: not estimated
    # one row observing both is enough for the likelihood to inform the covariance
    one[0] = X[0]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        FiniteMixture(Gaussian(ctype), 1).fit(one)


def test_conditional_draws_of_binomial_rows_with_their_own_trial_counts(rng):
    # impute(draw=True) raised "sampling needs an integer n_trials" for per-row trial counts
    from scipy.stats import binom

    n = rng.integers(1, 30, 300)
    X = rng.binomial(n[:, None], np.where(np.arange(300) < 150, 0.2, 0.7)[:, None], size=(300, 2)).astype(float)
    X[rng.random(X.shape) < 0.3] = np.nan
    model = FiniteMixture(Binomial(n_trials=n), 2, random_state=0).fit(X)
    drawn = model.impute(X, draw=True, random_state=0)
    missing = np.isnan(X)
    np.testing.assert_array_equal(drawn[~missing], X[~missing])
    assert np.all((drawn >= 0) & (drawn <= n[:, None]) & (drawn == np.round(drawn)))
    # one row repeated: its draws follow sum_k P(k | x_o) Binomial(n_row, prob_k)
    row = np.flatnonzero(missing[:, 1] & ~missing[:, 0] & (n > 10))[0]
    resp = model.predict_proba(X)[row]
    model.set_params(family__n_trials=np.full(20000, n[row]))
    draws = model.impute(np.repeat(X[row:row + 1], 20000, axis=0), draw=True, random_state=1)[:, 1]
    values = np.arange(n[row] + 1)
    pmf = resp @ binom.pmf(values[None, :], n[row], model.params_["prob"][:, 1:2])
    frequencies = np.bincount(draws.astype(int), minlength=n[row] + 1) / draws.shape[0]
    np.testing.assert_allclose(frequencies, pmf, atol=5 * np.sqrt(pmf.max() / draws.shape[0]))


def test_marginal_of_a_row_between_components_far_apart_is_exact():
    # The missing entries were filled with the mean of the component means (before that, the observed
    # mean of the rows): 5e6 standard deviations from each of two components 1e7 apart, so that the
    # conditional mean, a difference of two such numbers, lost its digits (score_samples -1.85196
    # for the marginal's -1.85287)
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (100, 3)), rng.normal(0, 1, (100, 3)) + [1e7, 0, 0]])
    mixture = FiniteMixture(Gaussian("full"), 2, random_state=0).fit(X)
    row = np.array([[np.nan, 0.3, -0.2]])
    mean, cov = mixture.params_["mean"], mixture.params_["covariance"]
    expected = logsumexp([np.log(mixture.weights_[j]) + multivariate_normal(mean[j][1:], cov[j][1:, 1:]).logpdf(row[0, 1:])
                          for j in range(2)])
    assert mixture.score_samples(row)[0] == pytest.approx(expected, rel=1e-12)
