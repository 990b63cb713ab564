"""StudentT: scipy's t densities, the EM of Peel and McLachlan, missing values and the dof equation."""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import scipy.stats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discrim.distributions import StudentT
from discrim.distributions.student_t import solve_dof
from discrim.mixture import FiniteMixture
from discrim.mixture._em import RowBlocks, run_em
from discrim.persistence import load_model, save_model

_MEAN = np.array([[0.0, 1.0, -1.0], [2.0, -0.5, 0.3]])
_COV = {
    "full": np.array([[[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]],
                      [[1.0, 0.0, 0.0], [0.0, 3.0, 0.9], [0.0, 0.9, 1.0]]]),
    "diag": np.array([[2.0, 1.0, 0.5], [0.1, 3.0, 1.0]]),
}


def _params(ctype, dof=(3.0, 7.5)):
    return StudentT(ctype).make_params({"mean": _MEAN, "covariance": _COV[ctype], "dof": list(dof)}, 2, 3)


def _matrix(ctype, k):
    return _COV[ctype][k] if ctype == "full" else np.diag(_COV[ctype][k])


@pytest.mark.parametrize("ctype", ["full", "diag"])
def test_log_prob_matches_scipy_multivariate_t(ctype, rng):
    family, p = StudentT(ctype), _params(ctype)
    X = family.sample(p, [25, 25], rng)
    want = np.stack([scipy.stats.multivariate_t(_MEAN[k], _matrix(ctype, k), df=p.dof[k]).logpdf(X)
                     for k in range(2)], axis=1)
    np.testing.assert_allclose(family.log_prob(X, p), want, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(family.log_prob(X.astype(np.float32), p), want, rtol=2e-4, atol=2e-4)


def test_one_feature_matches_scipy_t(rng):
    family = StudentT("diag")
    p = family.make_params({"mean": [[1.0]], "covariance": [[4.0]], "dof": [2.5]}, 1, 1)
    X = rng.standard_t(2.5, size=(40, 1))
    want = scipy.stats.t(2.5, loc=1.0, scale=2.0).logpdf(X[:, 0])
    np.testing.assert_allclose(family.log_prob(X, p)[:, 0], want, rtol=1e-12)


def test_masked_diag_is_the_marginal_t_of_the_observed_entries(rng):
    family, p = StudentT("diag"), _params("diag")
    X = family.sample(p, [20, 20], rng)
    mask = rng.random(X.shape) < 0.6
    mask[0], mask[1] = False, True
    got = family.log_prob(np.where(mask, X, 0.0), p, mask=mask)
    want = np.array([[scipy.stats.multivariate_t(_MEAN[k][m], _matrix("diag", k)[np.ix_(m, m)], df=p.dof[k]).logpdf(x[m])
                      if m.any() else 0.0 for k in range(2)] for x, m in zip(X, mask)])
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


def test_full_refuses_missing_values_with_the_fix():
    family, p = StudentT("full"), _params("full")
    mask = np.ones((3, 3), bool)
    with pytest.raises(ValueError, match="missing values \\(NaN\\).*covariance_type='diag'"):
        family.log_prob(np.zeros((3, 3)), p, mask=mask)
    X = np.random.default_rng(0).standard_t(3, size=(40, 2))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="missing values"):
        FiniteMixture(StudentT("full"), 1).fit(X)


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("ctype", ["full", "diag"])
def test_statistics_are_additive_over_row_blocks(ctype, masked, rng):
    if masked and ctype == "full":
        return
    family, p = StudentT(ctype), _params(ctype)
    X = family.sample(p, [45, 45], rng) + 100.0  # far from the origin: centred moments
    p = StudentT(ctype).make_params({**p.as_dict(), "mean": p.mean + 100.0}, 2, 3)
    mask = rng.random(X.shape) < 0.7 if masked else None
    Xm = X if mask is None else np.where(mask, X, 0.0)
    resp = rng.dirichlet([1.0, 1.0], size=90)
    w = rng.uniform(0.2, 3.0, size=90)
    whole = family.suff_stats(Xm, resp, w, mask=mask, params=p)
    parts = sum(family.suff_stats(Xm[s], resp[s], w[s], mask=None if mask is None else mask[s], params=p)
                for s in (slice(0, 13), slice(13, 61), slice(61, 90)))
    for name in ("weight", "u_weight", "mean", "scatter", "dof_term"):
        np.testing.assert_allclose(getattr(parts, name), getattr(whole, name), rtol=1e-10, atol=1e-9, err_msg=name)


def _t_mle(X, w, ctype):
    """Weighted MLE of one t component by maximising the log-likelihood with scipy (BFGS)."""
    d = X.shape[1]
    tril = np.tril_indices(d)

    def unpack(theta):
        mean, rest = theta[:d], theta[d:]
        if ctype == "diag":
            cov = np.diag(np.exp(rest[:d]))
        else:
            L = np.zeros((d, d))
            L[tril] = rest[: len(tril[0])]
            L[np.diag_indices(d)] = np.exp(np.diag(L))
            cov = L @ L.T
        return mean, cov, np.exp(rest[-1])

    def nll(theta):
        mean, cov, nu = unpack(theta)
        return -w @ scipy.stats.multivariate_t(mean, cov, df=nu).logpdf(X)

    n_cov = d if ctype == "diag" else len(tril[0])
    theta0 = np.concatenate([np.median(X, axis=0), np.zeros(n_cov), [np.log(5.0)]])
    res = scipy.optimize.minimize(nll, theta0, method="BFGS", options={"gtol": 1e-9, "maxiter": 2000})
    return unpack(res.x)


@pytest.mark.parametrize("ctype", ["full", "diag"])
def test_em_reaches_the_weighted_mle(ctype, rng):
    # one component: EM's fixed point is the maximum of the weighted t log-likelihood
    X = rng.standard_t(4.0, size=(300, 2)) * [1.0, 2.0] + [1.0, -1.0]
    w = rng.uniform(0.5, 2.0, size=300)
    family = StudentT(ctype, reg_covar=0.0)
    start = family.make_params({"mean": [[0.0, 0.0]], "covariance": [np.eye(2)] if ctype == "full" else [[1.0, 1.0]],
                                "dof": [10.0]}, 1, 2)
    result = run_em(family, RowBlocks(X, w, chunk_size=128), np.ones(1), start, tol=0.0, max_iter=800)
    mean, cov, nu = _t_mle(X, w, ctype)
    got = result.params
    np.testing.assert_allclose(got.mean[0], mean, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got.covariance[0], cov if ctype == "full" else np.diag(cov), rtol=1e-4, atol=1e-4)
    assert got.dof[0] == pytest.approx(nu, rel=1e-3)


def test_dof_solves_its_equation_and_stays_in_bounds():
    for c in [-1.01, -1.2, -2.0, -5.0]:
        nu = solve_dof(c)
        assert np.log(nu / 2) - scipy.special.digamma(nu / 2) + 1 + c == pytest.approx(0.0, abs=1e-10)
    assert solve_dof(-1.0) == 1e4  # a normal component: the upper bound
    assert solve_dof(-1e6) == 1e-2


def test_fitted_mixture_recovers_simulated_parameters():
    rng = np.random.default_rng(3)
    family = StudentT("full")
    truth = family.make_params({"mean": [[0.0, 0.0], [8.0, 8.0]], "covariance": [np.eye(2), [[2.0, 0.5], [0.5, 1.0]]],
                                "dof": [3.0, 8.0]}, 2, 2)
    X = family.sample(truth, [4000, 4000], rng)
    fm = FiniteMixture(family, 2, random_state=0, tol=1e-9, max_iter=500).fit(X)
    order = np.argsort(fm.params_["mean"][:, 0])
    np.testing.assert_allclose(fm.params_["mean"][order], truth.mean, atol=0.06)
    np.testing.assert_allclose(fm.params_["covariance"][order], truth.covariance, atol=0.15)
    np.testing.assert_allclose(fm.params_["dof"][order], truth.dof, rtol=0.25)
    assert np.all(np.diff(fm.lower_bounds_) > -1e-10)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 3), ctype=st.sampled_from(["full", "diag"]),
       missing=st.floats(0.0, 0.3))
def test_em_never_decreases_the_likelihood(seed, k, ctype, missing):
    rng = np.random.default_rng(seed)
    X = rng.standard_t(3.0, size=(120, 2)) + rng.normal(scale=4.0, size=(k, 2))[rng.integers(0, k, 120)]
    if ctype == "diag" and missing > 0:
        X[rng.random(X.shape) < missing] = np.nan
        X[np.isnan(X).all(axis=1), 0] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(StudentT(ctype), k, random_state=seed, tol=0, max_iter=20).fit(X)
    lb = fm.lower_bounds_
    # reg_covar makes the scale M-step a slightly perturbed maximiser (as the Gaussian's)
    assert np.all(np.diff(lb) >= -1e-9 * np.maximum(1.0, np.abs(lb[1:])) - 1e-5), np.diff(lb).min()


def test_fixed_dof_is_not_estimated_nor_counted(rng):
    X = rng.standard_t(3.0, size=(200, 2))
    fm = FiniteMixture(StudentT("diag", dof=5.0), 2, random_state=0).fit(X)
    np.testing.assert_array_equal(fm.params_["dof"], [5.0, 5.0])
    assert StudentT("diag", dof=5.0).n_parameters(2, 2) == StudentT("diag").n_parameters(2, 2) - 2 == 8
    assert StudentT("full").n_parameters(3, 2) == 2 * (3 + 6 + 1)


@pytest.mark.parametrize("bad, match", [({"covariance_type": "tied"}, "covariance_type"), ({"dof": 0.0}, "dof"),
                                        ({"dof": "3"}, "dof"), ({"reg_covar": -1.0}, "reg_covar")])
def test_bad_options(bad, match):
    with pytest.raises(ValueError, match=match):
        StudentT(**bad).check_options()


def test_save_load_round_trip(tmp_path, rng):
    X = rng.standard_t(3.0, size=(200, 2))
    X[rng.random(X.shape) < 0.1] = np.nan
    fm = FiniteMixture(StudentT("diag"), 2, random_state=0).fit(X)
    save_model(fm, tmp_path / "t.skops")
    loaded = load_model(tmp_path / "t.skops")
    np.testing.assert_array_equal(loaded.score_samples(X), fm.score_samples(X))
    assert loaded.bic(X) == fm.bic(X)


def test_conditional_draws_keep_the_observed_entries(rng):
    family, p = StudentT("diag"), _params("diag")
    X = family.sample(p, [5, 5], rng)
    observed = np.array([True, False, True])
    out = family.conditional_sample(X, p, observed, np.repeat([0, 1], 5), rng)
    np.testing.assert_array_equal(out[:, observed], X[:, observed])
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("ctype", ["full", "diag"])
def test_torch_gives_numpys_densities_and_statistics(ctype, rng):
    torch = pytest.importorskip("torch")
    family, p = StudentT(ctype), _params(ctype)
    X = family.sample(p, [30, 30], rng)
    mask = None if ctype == "full" else rng.random(X.shape) < 0.7
    Xm = X if mask is None else np.where(mask, X, 0.0)
    tm = None if mask is None else torch.as_tensor(mask)
    np.testing.assert_allclose(family.log_prob(torch.as_tensor(Xm), p, mask=tm).numpy(),
                               family.log_prob(Xm, p, mask=mask), rtol=1e-12, atol=1e-12)
    resp = rng.dirichlet([1.0, 1.0], size=60)
    a = family.suff_stats(torch.as_tensor(Xm), torch.as_tensor(resp), mask=tm, params=p)
    b = family.suff_stats(Xm, resp, mask=mask, params=p)
    for name in ("weight", "u_weight", "mean", "scatter", "dof_term"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-11, atol=1e-11, err_msg=name)


@pytest.mark.parametrize("ctype", ["full", "diag"])
@pytest.mark.parametrize("dof", [0.5, 3.0, 1e4, 1e8, 1e12, 1e17, 1e100])
def test_log_prob_of_any_dof_against_high_precision(ctype, dof):
    """Large degrees of freedom (a fixed dof standing for the Gaussian limit) keep the log-density exact.

    The normaliser lgamma((nu + d) / 2) - lgamma(nu / 2) - (d / 2) log(nu pi) cancelled terms of size
    nu log nu: 2e-3 nats off at dof=1e12, 38 at dof=1e17. Reference: the t density in 200 digits.
    """
    mpmath = pytest.importorskip("mpmath")
    family, p = StudentT(ctype), _params(ctype, dof=(dof, 2.0))
    X = np.array([[0.3, 1.2, -0.4], [4.0, -3.0, 2.5], [0.0, 1.0, -1.0]])
    mean, matrix = _MEAN[0], _matrix(ctype, 0)
    delta = np.einsum("nd,de,ne->n", X - mean, np.linalg.inv(matrix), X - mean)
    with mpmath.workdps(200):  # the lgamma terms of dof=1e100 cancel over 100 digits
        nu, d = mpmath.mpf(dof), 3
        norm = mpmath.loggamma((nu + d) / 2) - mpmath.loggamma(nu / 2) - d * mpmath.log(nu * mpmath.pi) / 2
        want = [float(norm - mpmath.log(mpmath.mpf(np.linalg.det(matrix))) / 2
                      - (nu + d) / 2 * mpmath.log1p(mpmath.mpf(q) / nu)) for q in delta]
    np.testing.assert_allclose(family.log_prob(X, p)[:, 0], want, rtol=1e-12, atol=1e-12)
