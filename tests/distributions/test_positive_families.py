"""Gamma, Exponential and LogNormal: scipy's densities, weighted MLEs against scipy.optimize, EM, masks."""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.distributions import Exponential, Gamma, LogNormal
from discrim.distributions.gamma import solve_shape
from discrim.mixture import FiniteMixture
from discrim.persistence import load_model, save_model

CASES = [
    (Gamma(), {"shape": [[2.0, 0.6], [9.0, 1.0]], "rate": [[1.0, 2.0], [0.3, 4.0]]},
     lambda p, k: scipy.stats.gamma(p["shape"][k], scale=1 / np.asarray(p["rate"][k]))),
    (Exponential(), {"rate": [[2.0, 0.5], [0.1, 4.0]]},
     lambda p, k: scipy.stats.expon(scale=1 / np.asarray(p["rate"][k]))),
    (LogNormal(), {"mu": [[0.0, 1.5], [-1.0, 3.0]], "sigma": [[1.0, 0.2], [0.5, 2.0]]},
     lambda p, k: scipy.stats.lognorm(s=p["sigma"][k], scale=np.exp(p["mu"][k]))),
]
_IDS = ["gamma", "exponential", "lognormal"]


def _setup(family, params, rng, n=40):
    p = family.make_params(params, 2, 2)
    X = family.sample(p, [n // 2, n - n // 2], rng)
    mask = rng.random(X.shape) < 0.6
    mask[0], mask[1] = False, True
    return p, X, mask


@pytest.mark.parametrize("family, params, oracle", CASES, ids=_IDS)
def test_log_prob_matches_scipy_with_and_without_mask(family, params, oracle, rng):
    p, X, mask = _setup(family, params, rng)
    logpdf = np.stack([oracle(params, k).logpdf(X) for k in range(2)])  # (K, n, d)
    np.testing.assert_allclose(family.log_prob(X, p), logpdf.sum(axis=2).T, rtol=1e-11, atol=1e-11)
    got = family.log_prob(np.where(mask, X, 0.0), p, mask=mask)
    np.testing.assert_allclose(got, np.where(mask, logpdf, 0.0).sum(axis=2).T, rtol=1e-11, atol=1e-11)
    np.testing.assert_array_equal(got[0], 0.0)


def _numerical_mle(family, x, w):
    """Weighted MLE of one feature by maximising the weighted log-likelihood (Nelder-Mead on logs)."""
    if isinstance(family, Gamma):
        def nll(t):
            return -w @ scipy.stats.gamma(np.exp(t[0]), scale=np.exp(-t[1])).logpdf(x)
        res = scipy.optimize.minimize(nll, [0.0, 0.0], method="Nelder-Mead",
                                      options={"xatol": 1e-11, "fatol": 1e-13, "maxiter": 20000})
        return {"shape": np.exp(res.x[0]), "rate": np.exp(res.x[1])}
    if isinstance(family, Exponential):
        res = scipy.optimize.minimize_scalar(lambda t: -w @ scipy.stats.expon(scale=np.exp(-t)).logpdf(x),
                                             bounds=(-10, 10), method="bounded", options={"xatol": 1e-12})
        return {"rate": np.exp(res.x)}
    def nll(t):
        return -w @ scipy.stats.lognorm(s=np.exp(t[1]), scale=np.exp(t[0])).logpdf(x)
    res = scipy.optimize.minimize(nll, [0.0, 0.0], method="Nelder-Mead",
                                  options={"xatol": 1e-11, "fatol": 1e-13, "maxiter": 20000})
    return {"mu": res.x[0], "sigma": np.exp(res.x[1])}


@pytest.mark.parametrize("family, params, oracle", CASES, ids=_IDS)
def test_weighted_mle_matches_numerical_maximisation(family, params, oracle, rng):
    family = LogNormal(reg_covar=0.0) if isinstance(family, LogNormal) else family
    p, X, mask = _setup(family, params, rng, n=80)
    resp = rng.dirichlet([1.0, 1.0], size=80)
    w = rng.uniform(0.2, 3.0, size=80)
    for masked in (False, True):
        m = mask if masked else np.ones(X.shape, bool)
        got = family.fit_params(np.where(m, X, 0.0), resp, w, mask=m if masked else None).as_dict()
        for k in range(2):
            for j in range(2):
                rows = m[:, j]
                want = _numerical_mle(family, X[rows, j], (resp[:, k] * w)[rows])
                for name, value in want.items():
                    assert got[name][k, j] == pytest.approx(value, rel=1e-6), (name, k, j, masked)


@pytest.mark.parametrize("family, params, oracle", CASES, ids=_IDS)
def test_statistics_are_additive_over_row_blocks(family, params, oracle, rng):
    p, X, mask = _setup(family, params, rng, n=90)
    X = X * 1e6  # far from 1: the log-moments are centred
    resp = rng.dirichlet([1.0, 1.0, 1.0], size=90)
    w = rng.uniform(0.2, 3.0, size=90)
    for m in (None, mask):
        Xm = X if m is None else np.where(m, X, 0.0)
        whole = family.params_from_stats(family.suff_stats(Xm, resp, w, mask=m)).as_dict()
        parts = sum(family.suff_stats(Xm[s], resp[s], w[s], mask=None if m is None else m[s])
                    for s in (slice(0, 10), slice(10, 61), slice(61, 90)))
        blocked = family.params_from_stats(parts).as_dict()
        for name in whole:
            np.testing.assert_allclose(blocked[name], whole[name], rtol=1e-9, err_msg=name)


@pytest.mark.parametrize("family, params, oracle", CASES, ids=_IDS)
def test_em_recovers_a_simulated_mixture_and_never_decreases(family, params, oracle):
    rng = np.random.default_rng(7)
    truth = family.make_params(params, 2, 2)
    X = family.sample(truth, [3000, 3000], rng)
    X[rng.random(X.shape) < 0.1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(family, 2, random_state=0, tol=1e-10, max_iter=1000, n_init=3).fit(X)
    assert np.all(np.diff(fm.lower_bounds_) > -1e-10)
    first = next(iter(params))
    order = np.argsort(fm.params_[first][:, 0])
    want_order = np.argsort(np.asarray(params[first])[:, 0])
    for name, value in truth.as_dict().items():
        np.testing.assert_allclose(fm.params_[name][order], value[want_order], rtol=0.15, atol=0.05, err_msg=name)


@settings(max_examples=40, deadline=None)
@given(gap=st.floats(1e-6, 50.0), start=st.one_of(st.none(), st.floats(1e-3, 1e6)))
def test_gamma_shape_solves_the_profile_equation(gap, start):
    a = solve_shape(np.array([gap]), None if start is None else np.array([start]))[0]
    assert np.log(a) - scipy.special.digamma(a) == pytest.approx(gap, rel=1e-9)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 3), which=st.integers(0, 2))
def test_em_never_decreases_the_likelihood(seed, k, which):
    family, params, _ = CASES[which]
    rng = np.random.default_rng(seed)
    X = rng.gamma(rng.uniform(0.5, 5.0), rng.uniform(0.5, 3.0), size=(60, 2)) + 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(family, k, random_state=seed, tol=0, max_iter=15).fit(X)
    lb = fm.lower_bounds_
    slack = 1e-5 if isinstance(family, LogNormal) else 0.0  # reg_covar, as the Gaussian's
    assert np.all(np.diff(lb) >= -1e-9 * np.maximum(1.0, np.abs(lb[1:])) - slack), np.diff(lb).min()


@pytest.mark.parametrize("family", [Gamma(), LogNormal()], ids=repr)
def test_observed_zeros_are_refused_but_missing_ones_are_not(family, rng):
    X = rng.gamma(2.0, 1.0, size=(50, 2))
    X[3, 1] = 0.0
    with pytest.raises(ValueError, match="observed entries <= 0.*Exponential"):
        FiniteMixture(family, 2, random_state=0).fit(X)
    X[3, 1] = np.nan  # the estimators put 0 in its place: accepted
    FiniteMixture(family, 2, random_state=0).fit(X)


@pytest.mark.parametrize("family", [Gamma(), LogNormal(), Exponential()], ids=repr)
def test_negative_values_are_refused(family, rng):
    X = rng.gamma(2.0, 1.0, size=(50, 2))
    X[0, 0] = -1.0
    with pytest.raises(ValueError, match="X must hold finite values >= 0"):
        FiniteMixture(family, 2).fit(X)


def test_exponential_takes_zeros(rng):
    X = rng.exponential(2.0, size=(50, 1))
    X[:5] = 0.0
    fm = FiniteMixture(Exponential(), 1).fit(X)
    assert fm.params_["rate"][0, 0] == pytest.approx(50 / X.sum(), rel=1e-12)


@pytest.mark.parametrize("family, params, oracle", CASES, ids=_IDS)
def test_save_load_round_trip_and_parameter_count(family, params, oracle, rng, tmp_path):
    p = family.make_params(params, 2, 2)
    X = family.sample(p, [100, 100], rng)
    fm = FiniteMixture(family, 2, random_state=0).fit(X)
    save_model(fm, tmp_path / "m.skops")
    loaded = load_model(tmp_path / "m.skops")
    np.testing.assert_array_equal(loaded.score_samples(X), fm.score_samples(X))
    assert family.n_parameters(2, 2) == sum(family.param_sizes(2).values()) * 2 == 2 * sum(
        np.prod(s[1:]) for s in family.param_shapes(1, 2).values())


@pytest.mark.parametrize("family, params, oracle", CASES, ids=_IDS)
def test_torch_gives_numpys_densities_and_statistics(family, params, oracle, rng):
    torch = pytest.importorskip("torch")
    p, X, mask = _setup(family, params, rng, n=60)
    Xm = np.where(mask, X, 0.0)
    np.testing.assert_allclose(family.log_prob(torch.as_tensor(Xm), p, mask=torch.as_tensor(mask)).numpy(),
                               family.log_prob(Xm, p, mask=mask), rtol=1e-12, atol=1e-12)
    resp = rng.dirichlet([1.0, 1.0], size=60)
    a = family.suff_stats(torch.as_tensor(Xm), torch.as_tensor(resp), mask=torch.as_tensor(mask))
    b = family.suff_stats(Xm, resp, mask=mask)
    for name, value in vars(b).items():
        np.testing.assert_allclose(getattr(a, name), value, rtol=1e-11, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("a", [0.3, 7.0, 99.0, 100.0, 350.0, 1e4, 1e7, 5e9, 5e12])
def test_gamma_profile_terms_and_stirling_remainder_against_high_precision(a):
    """log(a) - digamma(a), 1/a - trigamma(a) and Stirling's remainder cancel for large a: series there."""
    mpmath = pytest.importorskip("mpmath")
    from discrim.distributions.gamma import _profile_terms, _stirling_remainder

    with mpmath.workdps(60):
        A = mpmath.mpf(a)
        profile = float(mpmath.log(A) - mpmath.digamma(A))
        slope = float(1 / A - mpmath.psi(1, A))
        remainder = float(mpmath.loggamma(A) - (A - 0.5) * mpmath.log(A) + A - 0.5 * mpmath.log(2 * mpmath.pi))
    got_profile, got_slope = _profile_terms(np.array([a]))
    assert got_profile[0] == pytest.approx(profile, rel=1e-12)
    assert got_slope[0] == pytest.approx(slope, rel=1e-12)
    assert _stirling_remainder(np.array([a]))[0] == pytest.approx(remainder, rel=1e-12)


@pytest.mark.parametrize("a", [50.0, 2e4, 1e7, 5e9, 5e12])
def test_gamma_log_prob_of_large_shapes_against_high_precision(a):
    """A large shape (a component collapsing onto one value) keeps the log-density accurate, with and without a mask."""
    mpmath = pytest.importorskip("mpmath")
    b = a / 2.0
    X = np.array([[2.0, 2.0], [2.00001, 2.1], [1.9, 2.0], [3.0, 1.0]])
    with mpmath.workdps(60):
        want = np.array([[float(a * mpmath.log(b) - mpmath.loggamma(a) + (a - 1) * mpmath.log(mpmath.mpf(x)) - b * mpmath.mpf(x))
                          for x in row] for row in X])
    params = Gamma().make_params({"shape": [[a, 3.0]], "rate": [[b, 1.5]]}, n_components=1, n_features=2)
    params2 = Gamma().make_params({"shape": [[a, a]], "rate": [[b, b]]}, n_components=1, n_features=2)
    np.testing.assert_allclose(Gamma().log_prob(X, params2)[:, 0], want.sum(axis=1), rtol=1e-11)
    mask = np.array([[True, False], [True, True], [False, True], [True, False]])
    got = Gamma().log_prob(np.where(mask, X, 0.0), params2, mask=mask)[:, 0]
    np.testing.assert_allclose(got, np.where(mask, want, 0.0).sum(axis=1), rtol=1e-11)
    other = scipy.stats.gamma(3.0, scale=1 / 1.5).logpdf(X[:, 1])  # a small shape beside a large one
    np.testing.assert_allclose(Gamma().log_prob(X, params)[:, 0], want[:, 0] + other, rtol=1e-11)


def test_em_with_a_gamma_component_on_one_value_never_decreases():
    """A component that collapses onto one row holds its shape at the cap: the likelihood stays monotone.

    Hypothesis found this example: the shape solve lost the cap's digits to cancellation and moved
    by 3e-5 relative from one M-step to the next, and the expanded log-density rounded at a eps.
    """
    rng = np.random.default_rng(502)
    X = rng.gamma(rng.uniform(0.5, 5.0), rng.uniform(0.5, 3.0), size=(60, 2)) + 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(Gamma(), 2, random_state=502, tol=0, max_iter=15).fit(X)
    assert fm.params_["shape"].max() > 1e9  # the collapsed component
    assert np.all(np.diff(fm.lower_bounds_) >= -1e-12)


@pytest.mark.parametrize("cv", [1e-4, 1e-5, 1e-6])
def test_gamma_shape_of_precise_data_is_the_profile_mle(cv):
    """Values of coefficient of variation down to 1e-6 (distinct, not collapsed): the shape is the MLE,
    not the cap for all-equal values (which bound it at 5e9 from CV 1e-5 on and lost 428 in log-likelihood)."""
    mpmath = pytest.importorskip("mpmath")
    x = 1000.0 * (1.0 + cv * np.random.default_rng(15).normal(size=200))
    fm = FiniteMixture(Gamma(), 1).fit(x[:, None])
    with mpmath.workdps(50):
        values = [mpmath.mpf(v) for v in x]
        gap = mpmath.log(sum(values) / len(values)) - sum(mpmath.log(v) for v in values) / len(values)
        shape = mpmath.findroot(lambda a: mpmath.log(a) - mpmath.digamma(a) - gap, 1 / (2 * gap))
    # the statistics' sums round at about 1e-15 of log x: the gap of about cv^2 / 2 keeps cv^-2 1e-15 of it
    assert fm.params_["shape"][0, 0] == pytest.approx(float(shape), rel=max(1e-9, 20 * 1e-15 / cv**2))


def test_lognormal_default_floor_leaves_data_measured_to_four_digits_alone():
    """``reg_covar`` is on the log scale, a floor on the coefficient of variation: its default keeps the MLE
    of data of CV 1e-3 (1000 +- 1), where the Gaussian's 1e-6 held sigma at 1.4e-3 and cost 20 in log-likelihood."""
    x = 1000.0 * (1.0 + 1e-3 * np.random.default_rng(15).normal(size=(200, 1)))
    fitted = FiniteMixture(LogNormal(), 1).fit(x)
    assert fitted.params_["sigma"][0, 0] == pytest.approx(np.log(x).std(), rel=1e-6)


@pytest.mark.parametrize("family", [Gamma(), LogNormal()], ids=["Gamma", "LogNormal"])
def test_observed_zero_is_refused_when_scoring_as_in_fit(family):
    """An observed 0 lies outside the support: scored, it got a floor's arbitrary log-density (+311 for a Gamma
    shape below 1) that decided classifications silently. Missing (NaN), the row is scored by its other features."""
    rng = np.random.default_rng(0)
    X = rng.gamma(0.6, 2.0, size=(200, 2)) + 1e-3
    fm = FiniteMixture(family, 1).fit(X)
    with pytest.raises(ValueError, match="mark them missing"):
        fm.score_samples(np.array([[0.0, 1.0]]))
    marginal = fm.score_samples(np.array([[np.nan, 1.0]]))
    assert np.isfinite(marginal).all()


def test_exponential_rates_follow_the_units_of_the_data(rng):
    # every rate was capped at 1e12: decay times of 1e-13 s fitted 1e12 against the MLE 8.9e12
    X = np.r_[rng.exponential(1.0, size=(100, 1)), rng.exponential(20.0, size=(100, 1))]
    start = dict(init_params=(X[:, 0] > 5).astype(int))
    fits = [FiniteMixture(Exponential(), 2, **start).fit(X * unit) for unit in (1.0, 1e-13, 1e-30)]
    for fit, unit in zip(fits[1:], (1e-13, 1e-30)):
        np.testing.assert_allclose(fit.params_["rate"] * unit, fits[0].params_["rate"], rtol=1e-9)
        np.testing.assert_allclose(fit.predict_proba(X * unit), fits[0].predict_proba(X), atol=1e-9)
    one = FiniteMixture(Exponential(), 1).fit(X * 1e-13)
    assert one.params_["rate"][0, 0] == pytest.approx(len(X) / (X * 1e-13).sum(), rel=1e-12)
