import numpy as np
import pytest
import scipy.stats
from _oracles import FAMILY_ORACLES
from sklearn.base import clone

from discrim.distributions import (
    FAMILIES,
    Bernoulli,
    Binomial,
    Categorical,
    Gaussian,
    Poisson,
)

# --- the oracle table (tests/_oracles.py): one row per family ----------------------------------

ORACLES = FAMILY_ORACLES


def _data_for(family, params, n, rng):
    return family.sample(params, [n // 2, n - n // 2], rng)


@pytest.mark.parametrize("family, params, oracle", ORACLES, ids=lambda v: repr(v) if not callable(v) else "")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_log_prob_matches_scipy(family, params, oracle, dtype, rng):
    p = family.make_params(params, n_components=2, n_features=np.shape(params[next(iter(params))])[1])
    X = _data_for(family, p, 30, rng)
    got = family.log_prob(X.astype(dtype), p)
    assert got.shape == (30, 2)
    want = np.array([[oracle(params, k, x, np.ones(x.shape, bool)) for k in range(2)] for x in X])
    tol = 1e-10 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_binomial_per_row_trials_match_scipy(rng):
    n = rng.integers(1, 20, size=25)
    X = rng.binomial(n[:, None], [0.3, 0.7], size=(25, 2)).astype(float)
    fam = Binomial(n_trials=n)
    p = fam.make_params({"prob": [[0.2, 0.6], [0.5, 0.9]]}, 2, 2)
    want = np.stack(
        [scipy.stats.binom(n[:, None], p.prob[k]).logpmf(X).sum(axis=1) for k in range(2)], axis=1
    )
    np.testing.assert_allclose(fam.log_prob(X, p), want, rtol=1e-12)
    # weighted MLE: successes over trials
    resp = rng.dirichlet([1, 1], size=25)
    w = rng.uniform(0.5, 2.0, size=25)
    got = fam.fit_params(X, resp, w).prob
    want = (resp * w[:, None]).T @ X / ((resp * w[:, None]).T @ n)[:, None]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # per-row data are sliced with the rows (as EM does for blocks of rows)
    rows = fam.row_data(25)
    block = fam.log_prob(X[5:12], p, rows={"n_trials": rows["n_trials"][5:12]})
    np.testing.assert_allclose(block, want_rows := fam.log_prob(X, p)[5:12], rtol=1e-14)
    assert want_rows.shape == (7, 2)
    with pytest.raises(ValueError, match="per-row trial counts but X has"):
        fam.log_prob(X[:3], p)


# --- weighted MLE against closed forms ------------------------------------------------------


def _closed_form_mle(family, X, resp, w):
    """Plain-numpy weighted MLE, written independently of the families."""
    r = resp * w[:, None]
    nk = r.sum(axis=0)
    mean = r.T @ X / nk[:, None]
    if isinstance(family, Binomial):  # Bernoulli included: n_trials = 1
        return {"prob": mean / family.n_trials}
    if isinstance(family, Poisson):
        return {"rate": mean}
    if isinstance(family, Categorical):
        C = family.n_categories
        probs = np.stack([[np.bincount(X[:, d].astype(int), weights=r[:, k], minlength=C) / nk[k] for d in range(X.shape[1])] for k in range(r.shape[1])])
        return {"probs": probs}
    ct = family.covariance_type
    covs = np.stack([(r[:, k, None] * (X - mean[k])).T @ (X - mean[k]) / nk[k] for k in range(r.shape[1])])
    cov = {
        "full": covs,
        "diag": np.diagonal(covs, axis1=1, axis2=2),
        "tied": (covs * nk[:, None, None]).sum(axis=0) / nk.sum(),
        "spherical": np.diagonal(covs, axis1=1, axis2=2).mean(axis=1),
    }[ct]
    return {"mean": mean, "covariance": cov}


def _sample_data(family, rng, n=60, d=3, k=2):
    if isinstance(family, Binomial):
        return rng.binomial(family.n_trials, rng.uniform(0.1, 0.9, d), size=(n, d)).astype(float)
    if isinstance(family, Poisson):
        return rng.poisson(rng.uniform(0.5, 5, d), size=(n, d)).astype(float)
    if isinstance(family, Categorical):
        return rng.integers(0, family.n_categories, size=(n, d)).astype(float)
    return rng.normal(size=(n, d)) * [1.0, 2.0, 0.5] + [100.0, -3.0, 0.0]  # far from the origin


def _unregularised(family):
    """The family without the Gaussian's reg_covar, whose M-step is then the plain weighted MLE."""
    return clone(family).set_params(reg_covar=0.0) if "reg_covar" in family.get_params() else family


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_params_from_stats_is_the_weighted_mle(family, rng):
    family = _unregularised(family)
    X = _sample_data(family, rng)
    resp = rng.dirichlet([1.0, 1.0], size=X.shape[0])
    w = rng.uniform(0.2, 3.0, size=X.shape[0])
    got = family.fit_params(X, resp, w).as_dict()
    want = _closed_form_mle(family, X, resp, w)
    assert set(got) == set(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_statistics_are_additive_over_row_blocks(family, rng):
    X = _sample_data(family, rng, n=90)
    resp = rng.dirichlet([1.0, 1.0, 1.0], size=90)
    w = rng.uniform(0.2, 3.0, size=90)
    whole = family.params_from_stats(family.suff_stats(X, resp, w)).as_dict()
    parts = sum(family.suff_stats(X[s], resp[s], w[s]) for s in (slice(0, 10), slice(10, 61), slice(61, 90)))
    blocked = family.params_from_stats(parts).as_dict()
    for name in whole:
        np.testing.assert_allclose(blocked[name], whole[name], rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_sample_recovers_parameters(family, rng):
    X = _sample_data(family, rng, n=200)
    params = family.fit_params(X, np.ones((200, 1)))
    draws = family.sample(params, [20000], rng)
    assert draws.shape == (20000, 3)
    family.check_data(draws)
    refit = family.fit_params(draws, np.ones((20000, 1))).as_dict()
    for name, value in params.as_dict().items():
        np.testing.assert_allclose(refit[name], value, rtol=0.1, atol=0.03, err_msg=name)


@pytest.mark.parametrize(
    "family, expected",
    [
        (Binomial(n_trials=5), 2 * 3),
        (Bernoulli(), 2 * 3),
        (Poisson(), 2 * 3),
        (Categorical(n_categories=4), 2 * 3 * 3),
        (Gaussian("full"), 2 * (3 + 6)),
        (Gaussian("diag"), 2 * (3 + 3)),
        (Gaussian("tied"), 2 * 3 + 6),
        (Gaussian("spherical"), 2 * (3 + 1)),
    ],
    ids=repr,
)
def test_n_parameters(family, expected):
    assert family.n_parameters(3, n_components=2) == expected


# What model choice, plots and the CLI read from a family, so that none of them names one.
@pytest.mark.parametrize(
    "family, discrete, upper, rows",
    [
        (Binomial(n_trials=5), True, 5, 0),
        (Binomial(n_trials=np.array([3, 7, 2])), True, 7, 0),
        (Bernoulli(), True, 1, 0),
        (Poisson(), True, None, 0),
        (Categorical(n_categories=4), True, 3, 0),
        (Gaussian("full"), False, None, 4),
        (Gaussian("diag"), False, None, 2),
        (Gaussian("tied"), False, None, 0),
        (Gaussian("spherical"), False, None, 2),
    ],
    ids=repr,
)
def test_families_declare_support_and_rows_per_component(family, discrete, upper, rows):
    assert family.is_discrete is discrete
    assert family.support_upper() == upper
    assert family.rows_per_component(3) == rows


@pytest.mark.parametrize("ctype", ["full", "tied", "diag", "spherical"])
def test_gaussian_relative_variance_is_in_the_datas_standard_units(ctype, rng):
    family = Gaussian(ctype, reg_covar=1e-6)
    X = rng.normal(size=(200, 2)) * [1.0, 100.0]
    resp = np.ones((200, 1))
    params = family.fit_params(X, resp)
    feature_var = X.var(axis=0)
    rel = family.min_relative_variance(params, np.array([True]), feature_var)
    # One component on all rows: its covariance is the data's, about 1 in standard units; the
    # smallest eigenvalue of the correlation matrix of independent features is close to 1. A
    # spherical variance, the mean over features, is measured against the largest one: about 1/2.
    low, high = (0.4, 0.6) if ctype == "spherical" else (0.7, 1.0 + 1e-9)
    assert low < rel <= high
    family_scaled = Gaussian(ctype, reg_covar=1e-6 * 1e6)
    scaled = family_scaled.min_relative_variance(
        family_scaled.fit_params(X * 1e3, resp), np.array([True]), feature_var * 1e6)
    assert scaled == pytest.approx(rel, rel=1e-9)


@pytest.mark.parametrize("family", [Binomial(n_trials=5), Bernoulli(), Poisson(), Categorical(n_categories=4)], ids=repr)
def test_discrete_families_have_no_variance_to_collapse(family):
    assert np.isnan(family.min_relative_variance(None, np.array([True]), np.ones(3)))
    assert family.collapsing_components(None).size == 0


@pytest.mark.parametrize("ctype", ["full", "tied", "diag"])
def test_a_gaussian_variance_near_reg_covar_is_collapsing(ctype):
    # component 1 has a variance of 3 reg_covar (within 100 of it) beside variances of order 1
    family = Gaussian(ctype, reg_covar=1e-6)
    spreads = np.array([[1.0, 0.5], [2.0, 3e-6]])
    cov = {"full": np.stack([np.diag(s) for s in spreads]), "tied": np.diag(spreads[1]), "diag": spreads}[ctype]
    params = family.make_params({"mean": np.zeros((2, 2)), "covariance": cov}, 2, 2)
    expected = [0, 1] if ctype == "tied" else [1]  # a tied covariance is every component's
    assert family.collapsing_components(params).tolist() == expected
    # data in tiny units: every variance near reg_covar, none small against the component's largest
    tiny = family.make_params({"mean": np.zeros((2, 2)), "covariance": cov * 0 + (
        np.eye(2) * 5e-6 if ctype != "diag" else 5e-6)}, 2, 2)
    assert family.collapsing_components(tiny).size == 0
    # ... unless the data's variance, given as scale, is of order 1 (a one-row class of a discriminant)
    assert family.collapsing_components(tiny, scale=1.0).tolist() == [0, 1]


@pytest.mark.parametrize("ctype", ["full", "diag", "spherical"])
def test_a_component_whose_every_variance_sank_to_reg_covar_is_collapsing(ctype):
    """Duplicate rows or a component of one row: every variance at reg_covar beside a component of order 1."""
    family = Gaussian(ctype, reg_covar=1e-6)
    variances = np.array([[1.0, 2.0], [1e-6, 1e-6]])
    cov = {"full": np.stack([np.diag(v) for v in variances]), "diag": variances, "spherical": variances[:, 0]}[ctype]
    params = family.make_params({"mean": np.zeros((2, 2)), "covariance": cov}, 2, 2)
    assert family.collapsing_components(params).tolist() == [1]
    alone = family.make_params({"mean": np.zeros((1, 2)), "covariance": cov[1:]}, 1, 2)
    assert family.collapsing_components(alone).size == 0  # nothing to compare with: tiny units
    assert family.collapsing_components(alone, scale=1.0).tolist() == [0]


@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_param_shapes_have_a_leading_component_axis(family, rng):
    shapes = family.param_shapes(4, 3)
    params = family.fit_params(_sample_data(family, rng), rng.dirichlet(np.ones(4), size=60))
    for name, value in params.as_dict().items():
        assert value.shape == shapes[name]
        if name not in family.shared_params():
            assert value.shape[0] == 4


# --- validation --------------------------------------------------------------------------


def test_make_params_errors_name_the_parameter():
    fam = Gaussian("full")
    with pytest.raises(ValueError, match=r"parameter 'covariance' has shape \(2, 2\); expected \(2, 2, 2\)"):
        fam.make_params({"mean": np.zeros((2, 2)), "covariance": np.eye(2)}, 2, 2)
    with pytest.raises(ValueError, match="missing \\['covariance'\\]"):
        fam.make_params({"mean": np.zeros((2, 2))}, 2, 2)
    with pytest.raises(ValueError, match="parameter 'covariance' must be positive_definite"):
        fam.make_params({"mean": np.zeros((1, 2)), "covariance": [[[1.0, 2.0], [2.0, 1.0]]]}, 1, 2)
    with pytest.raises(ValueError, match="parameter 'prob' must be unit_interval"):
        Binomial(3).make_params({"prob": [[1.5]]}, 1, 1)
    with pytest.raises(ValueError, match="parameter 'probs' must be simplex"):
        Categorical(3).make_params({"probs": [[[0.5, 0.5, 0.5]]]}, 1, 1)
    with pytest.raises(ValueError, match="parameter 'rate' must be nonnegative"):
        Poisson().make_params({"rate": [[-1.0]]}, 1, 1)
    with pytest.raises(ValueError, match="unknown \\['lam'\\]"):
        Poisson().make_params({"rate": [[1.0]], "lam": 1}, 1, 1)


@pytest.mark.parametrize(
    "family, X, match",
    [
        (Binomial(n_trials=10), [[11.0]], "between 0 and n_trials"),
        (Binomial(n_trials=10), [[2.5]], "whole numbers"),
        (Bernoulli(), [[2.0]], "between 0 and n_trials"),
        (Poisson(), [[-1.0]], "whole numbers >= 0"),
        (Poisson(), [[0.5]], "whole numbers >= 0"),
        (Categorical(3), [[3.0]], "between 0 and 2"),
        (Binomial(n_trials=[3, 4]), [[1.0]], "one count per row"),
    ],
    ids=repr,
)
def test_data_outside_the_support_is_rejected(family, X, match):
    with pytest.raises(ValueError, match=match):
        family.check_data(np.asarray(X))


def test_data_outside_the_support_names_the_features_and_a_row():
    """The refusal named the support by its internal name alone ('nonnegative_integer'), not where X leaves it:
    the user of a wide table had no feature or row to look at."""
    X = np.ones((40, 4))
    X[[7, 30], 2] = X[12, 3] = -1.5
    with pytest.raises(ValueError, match=r"2 feature\(s\) of X \(index 2, 3\) hold entries outside it, e\.g\. -1\.5 "
                                         r"in row 7; its entries must be") as info:
        Poisson().check_data(X)
    assert "nonnegative_integer" not in str(info.value)


@pytest.mark.parametrize("bad", [0, -2, 2.5, [[1, 2]], [1.5, 2]])
def test_bad_n_trials(bad):
    with pytest.raises(ValueError, match="n_trials"):
        Binomial(n_trials=bad).check_options()


def test_degenerate_parameters_give_finite_log_densities():
    # prob 0 or 1, rate 0, category probability 0: tiny but finite, never NaN
    X = np.array([[0.0, 3.0], [3.0, 0.0]])
    fam = Binomial(3)
    p = fam.make_params({"prob": [[0.0, 1.0]]}, 1, 2)
    out = fam.log_prob(X, p)
    assert np.all(np.isfinite(out))
    assert out[0, 0] == pytest.approx(0.0) and out[1, 0] < -1000
    p = Poisson().make_params({"rate": [[0.0, 2.0]]}, 1, 2)
    assert np.all(np.isfinite(Poisson().log_prob(X, p)))
    p = Categorical(4).make_params({"probs": [[[1.0, 0, 0, 0], [0, 0, 0, 1.0]]]}, 1, 2)
    assert np.all(np.isfinite(Categorical(4).log_prob(X, p)))


def test_collapsed_gaussian_component_raises_clearly():
    fam = Gaussian("full", reg_covar=0.0)
    X = np.array([[1.0, 2.0]] * 5)
    params = fam.fit_params(X, np.ones((5, 1)))
    with pytest.raises(ValueError, match="Increase reg_covar"):
        fam.log_prob(X, params)
    params = Gaussian("full", reg_covar=1e-6).fit_params(X, np.ones((5, 1)))
    assert np.all(np.isfinite(fam.log_prob(X, params)))
    fam = Gaussian("diag", reg_covar=0.0)
    with pytest.raises(ValueError, match="Increase reg_covar"):
        fam.log_prob(X, fam.fit_params(X, np.ones((5, 1))))


def test_families_clone_and_set_params():

    fam = Gaussian("diag")
    assert clone(fam).get_params() == {"covariance_type": "diag", "reg_covar": 1e-6, "prior": None, "m_step": "exact"}
    assert repr(Binomial(n_trials=10)) == "Binomial(n_trials=10)"
    with pytest.raises(ValueError, match="covariance_type must be one of"):
        Gaussian("banana").check_options()
    with pytest.raises(ValueError, match="reg_covar must be a finite float >= 0"):
        Gaussian(reg_covar=-1.0).check_options()


def test_gaussian_log_prob_in_blocks_equals_one_block(rng):
    fam = Gaussian("full")
    X = rng.normal(size=(70000, 8))
    params = fam.fit_params(X[:500], rng.dirichlet(np.ones(8), size=500))
    full = fam.log_prob(X, params)  # internally in blocks
    np.testing.assert_allclose(full[:100], fam.log_prob(X[:100], params), rtol=1e-12)
    np.testing.assert_allclose(full[-100:], fam.log_prob(X[-100:], params), rtol=1e-12)


@pytest.mark.parametrize("ctype", ["full", "tied", "diag", "spherical"])
@pytest.mark.parametrize("weighted", [False, True])
def test_labelled_stats_are_the_hard_assignment_statistics(ctype, weighted, rng):
    """labelled_stats (LDA/QDA's class moments) equals suff_stats with 0/1 responsibilities, and
    merges over row blocks like it."""
    family = Gaussian(ctype)
    X = rng.normal(size=(300, 3)) * [1.0, 10.0, 0.1] + 5.0
    labels = rng.integers(0, 4, size=300)
    w = rng.uniform(0.5, 2.0, size=300) if weighted else np.ones(300)
    stats = family.labelled_stats(X, labels, w, 4)
    ref = family.suff_stats(X, np.eye(4)[labels], w)
    np.testing.assert_allclose(stats.weight, ref.weight, rtol=1e-13)
    np.testing.assert_allclose(stats.mean, ref.mean, rtol=1e-12)
    np.testing.assert_allclose(stats.scatter, ref.scatter, rtol=1e-10, atol=1e-9)
    halves = family.labelled_stats(X[:137], labels[:137], w[:137], 4) + family.labelled_stats(
        X[137:], labels[137:], w[137:], 4)
    np.testing.assert_allclose(halves.mean, stats.mean, rtol=1e-12)
    np.testing.assert_allclose(halves.scatter, stats.scatter, rtol=1e-10, atol=1e-9)


def _penalised_q(family, params, stats):
    """sum_k [-(n_k / 2) log |Sigma_k| - tr(Sigma_k^-1 W_k) / 2] plus the family's log-penalty (means at their M-step)."""
    cov, n = np.asarray(params.covariance), stats.weight
    scatter = np.asarray(stats.scatter)
    d = params.mean.shape[1]
    if cov.ndim == 1:  # spherical
        mats = cov[:, None, None] * np.eye(d)
    elif cov.ndim == 2 and family.covariance_type in ("diag", "VVI", "EEI", "VEI", "EVI"):
        mats = np.stack([np.diag(c) for c in cov])
    elif cov.ndim == 2:  # tied
        mats = np.broadcast_to(cov, (n.shape[0], d, d))
    else:
        mats = cov
    W = scatter if scatter.ndim == 3 else np.stack([np.diag(s) for s in scatter])
    q = sum(-0.5 * n_k * np.linalg.slogdet(S)[1] - 0.5 * np.trace(np.linalg.solve(S, Wk))
            for n_k, S, Wk in zip(n, mats, W))
    return q + family.log_penalty(params, stats)


@pytest.mark.parametrize("ctype", ["full", "tied", "diag", "spherical"])
def test_the_m_step_maximises_the_likelihood_plus_the_stated_log_penalty(ctype, rng):
    # log_penalty states what a regularised M-step maximises (accelerated EM compares it): the
    # M-step's covariances are a maximum of the expected log-likelihood plus it, so every small
    # move within the covariance type lowers that sum, while the likelihood alone would rise
    # along some of them (a floor of 0.05 moves the optimum visibly)
    from discrim.distributions import Gaussian

    X = rng.normal(size=(60, 3)) @ np.array([[1.0, 0.4, 0.0], [0.0, 0.3, 0.2], [0.0, 0.0, 0.05]])
    resp = rng.dirichlet(np.ones(2), size=60)
    family = Gaussian(ctype, reg_covar=0.05)
    stats = family.suff_stats(X, resp)
    params = family.params_from_stats(stats)
    best = _penalised_q(family, params, stats)
    cov = np.asarray(params.covariance)
    for _ in range(20):
        step = rng.normal(size=cov.shape) * 1e-3
        if cov.ndim == 3 or (cov.ndim == 2 and ctype == "tied"):
            step = step + np.swapaxes(step, -1, -2)  # symmetric
        moved = type(params)(mean=params.mean, covariance=cov + step)
        assert _penalised_q(family, moved, stats) < best
    unpenalised = Gaussian(ctype, reg_covar=0.0)
    assert unpenalised.log_penalty(params, stats) == 0.0
    assert Gaussian(ctype, reg_covar=0.05, prior="default").log_penalty(params, stats) is None


def test_codes_above_the_categories_name_n_categories():
    # Categorical() defaults to two categories: a code of 2 was refused without naming the option
    from discrim.distributions import Categorical

    with pytest.raises(ValueError, match=r"whole numbers between 0 and 1\. Set n_categories \(or categories\)"):
        Categorical().check_data(np.array([[0.0], [2.0]]))


@pytest.mark.parametrize("full", [True, False])
def test_weighted_moments_keep_the_variance_of_a_component_far_from_the_block(full, rng):
    # one-pass moments about the block's centre lost a far component's variance to cancellation
    # (a t component on a gross outlier: eigenvalues [-8.5e-08, 0.699] for the two-pass [2.8e-13, 0.699])
    from discrim.distributions._base import weighted_moments

    X = np.r_[rng.normal(size=(100, 2)), [[1e6, 1e6]]]
    weights = np.stack([np.r_[np.ones(100), 0.0], np.r_[np.full(100, 1e-14), 1.0]])
    weight, mean, scatter = weighted_moments(X, weights, full)
    for k in range(2):
        want_mean = weights[k] @ X / weights[k].sum()
        centred = X - want_mean
        want = (weights[k][:, None] * centred).T @ centred
        np.testing.assert_allclose(mean[k], want_mean, rtol=1e-12, atol=1e-9)  # the block's centre is 1e4 away
        np.testing.assert_allclose(scatter[k], want if full else np.diag(want), rtol=1e-9, atol=1e-12)
    if full:
        assert np.linalg.eigvalsh(scatter[1]).min() > 0


def test_student_t_fits_beside_a_gross_outlier(rng):
    # "a component scale matrix is not positive definite" (the scatter's cancellation above)
    from discrim.distributions import StudentT
    from discrim.mixture import FiniteMixture

    X = np.vstack([rng.standard_t(3, (50, 2)), rng.standard_t(3, (50, 2)) + 6, [[1e6, 1e6]]])
    for start in ("kmeans++", np.r_[np.zeros(50, int), np.ones(51, int)]):  # the outlier with the second cluster
        model = FiniteMixture(StudentT(), 2, init_params=start, random_state=0).fit(X)
        assert model.converged_ and np.isfinite(model.lower_bound_)
        assert np.all(np.linalg.eigvalsh(model.params_["covariance"]) > 0)


def test_a_category_listed_twice_is_refused_by_name():
    # encode gave "a" the code 2 (its later place), and fit then said "at least 2 distinct values"
    family = Categorical(categories=[["a", "b", "a"]])
    with pytest.raises(ValueError, match=r"categories\[0\] lists 'a' more than once"):
        family.encode([["a"], ["b"]])
    with pytest.raises(ValueError, match=r"categories\[0\] lists 'a' more than once"):
        family.check_options()
