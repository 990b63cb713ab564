"""The family interface every data path relies on: masks, per-row data, array namespaces, the M-step.

Masked densities are checked against scipy's marginal densities (tests/_oracles.py), masked
statistics against closed forms and a numerical maximum of the observed-data likelihood, and the
torch namespace against numpy.
"""

import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from _oracles import FAMILY_ORACLES
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from discrim.distributions import Binomial, Categorical, Gaussian, Poisson
from discrim.mixture._em import RowBlocks, run_em

_IDS = lambda v: repr(v) if not callable(v) else ""  # noqa: E731


def _setup(family, params, rng, n=40):
    p = family.make_params(params, n_components=2, n_features=np.shape(params[next(iter(params))])[1])
    X = family.sample(p, [n // 2, n - n // 2], rng)
    mask = rng.random(X.shape) < 0.6
    mask[0] = False  # a row with nothing observed: density 1
    mask[1] = True
    return p, X, mask


@pytest.mark.parametrize("family, params, oracle", FAMILY_ORACLES, ids=_IDS)
def test_masked_log_prob_is_the_marginal_density(family, params, oracle, rng):
    p, X, mask = _setup(family, params, rng)
    Xm = np.where(mask, X, 0.0)  # unobserved entries hold a value of the support
    got = family.log_prob(Xm, p, mask=mask)
    want = np.array([[oracle(params, k, x, m) for k in range(2)] for x, m in zip(X, mask)])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(got[0], 0.0)


@pytest.mark.parametrize("family, params, oracle", FAMILY_ORACLES, ids=_IDS)
def test_an_all_true_mask_changes_nothing(family, params, oracle, rng):
    p, X, _ = _setup(family, params, rng)
    full = np.ones(X.shape, dtype=bool)
    resp = rng.dirichlet([1.0, 1.0], size=X.shape[0])
    np.testing.assert_allclose(family.log_prob(X, p, mask=full), family.log_prob(X, p), rtol=1e-13, atol=1e-13)
    with_mask = family.params_from_stats(family.suff_stats(X, resp, mask=full, params=p)).as_dict()
    without = family.params_from_stats(family.suff_stats(X, resp)).as_dict()
    for name in without:
        np.testing.assert_allclose(with_mask[name], without[name], rtol=1e-11, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("family, params, oracle", FAMILY_ORACLES, ids=_IDS)
def test_masked_statistics_are_additive_over_row_blocks(family, params, oracle, rng):
    p, X, mask = _setup(family, params, rng, n=90)
    Xm = np.where(mask, X, 0.0)
    resp = rng.dirichlet([1.0, 1.0], size=90)
    w = rng.uniform(0.2, 3.0, size=90)
    whole = family.params_from_stats(family.suff_stats(Xm, resp, w, mask=mask, params=p)).as_dict()
    parts = sum(
        family.suff_stats(Xm[s], resp[s], w[s], mask=mask[s], params=p) for s in (slice(0, 13), slice(13, 61), slice(61, 90))
    )
    blocked = family.params_from_stats(parts).as_dict()
    for name in whole:
        np.testing.assert_allclose(blocked[name], whole[name], rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("family", [Poisson(), Binomial(n_trials=6), Categorical(3), Gaussian("diag", reg_covar=0.0)], ids=repr)
def test_masked_m_step_of_independent_features_is_the_observed_entries_mle(family, rng):
    # Independent features: each (component, feature) is fitted to the rows that observed it.
    n, d = 80, 3
    X = {
        Poisson: lambda: rng.poisson(3.0, size=(n, d)),
        Binomial: lambda: rng.binomial(6, 0.4, size=(n, d)),
        Categorical: lambda: rng.integers(0, 3, size=(n, d)),
        Gaussian: lambda: rng.normal(size=(n, d)) * 2 + 5,
    }[type(family)]().astype(float)
    mask = rng.random(X.shape) < 0.7
    Xm = np.where(mask, X, 0.0)
    r = rng.dirichlet([1.0, 1.0], size=n) * rng.uniform(0.5, 2.0, size=n)[:, None]
    got = family.fit_params(Xm, r, mask=mask).as_dict()
    for k in range(2):
        for j in range(d):
            wk, xk = r[mask[:, j], k], X[mask[:, j], j]
            if isinstance(family, Poisson):
                assert got["rate"][k, j] == pytest.approx(wk @ xk / wk.sum(), rel=1e-12)
            elif isinstance(family, Binomial):
                assert got["prob"][k, j] == pytest.approx(wk @ xk / (6 * wk.sum()), rel=1e-12)
            elif isinstance(family, Categorical):
                want = np.bincount(xk.astype(int), weights=wk, minlength=3) / wk.sum()
                np.testing.assert_allclose(got["probs"][k, j], want, rtol=1e-12)
            else:
                mean = wk @ xk / wk.sum()
                assert got["mean"][k, j] == pytest.approx(mean, rel=1e-12)
                assert got["covariance"][k, j] == pytest.approx(wk @ (xk - mean) ** 2 / wk.sum(), rel=1e-10)


@pytest.mark.parametrize("ctype", ["full", "tied"])
def test_full_gaussian_needs_the_e_step_parameters_with_a_mask(ctype):
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="needs params"):
        Gaussian(ctype).suff_stats(X, np.ones((3, 1)), mask=np.ones((3, 2), bool))


def _observed_data_mle(X, mask):
    """MLE of one normal from incomplete rows, by maximising the marginal likelihood numerically."""
    d = X.shape[1]
    tril = np.tril_indices(d)

    def unpack(theta):
        L = np.zeros((d, d))
        L[tril] = theta[d:]
        L[np.diag_indices(d)] = np.exp(np.diag(L))
        return theta[:d], L @ L.T

    patterns = [(m, np.all(mask == m, axis=1)) for m in np.unique(mask, axis=0) if m.any()]

    def nll(theta):
        mean, cov = unpack(theta)
        return -sum(
            np.sum(scipy.stats.multivariate_normal(mean[m], cov[np.ix_(m, m)]).logpdf(X[rows][:, m]))
            for m, rows in patterns
        )

    theta0 = np.concatenate([np.nanmean(np.where(mask, X, np.nan), axis=0), np.zeros(d * (d + 1) // 2)])
    res = scipy.optimize.minimize(nll, theta0, method="BFGS", options={"gtol": 1e-9})
    return unpack(res.x)


def test_em_with_a_mask_reaches_the_observed_data_mle(rng):
    # One full-covariance component: EM on the conditional expectations of the unobserved
    # entries converges to the maximum of the marginal likelihood of the observed ones.
    cov = np.array([[2.0, 0.8, 0.3], [0.8, 1.0, -0.4], [0.3, -0.4, 1.5]])
    X = rng.multivariate_normal([1.0, -2.0, 0.5], cov, size=150)
    mask = rng.random(X.shape) < 0.75
    Xm = np.where(mask, X, 0.0)
    family = Gaussian("full", reg_covar=0.0)
    start = family.make_params({"mean": [[0.0, 0.0, 0.0]], "covariance": [np.eye(3)]}, 1, 3)
    blocks = RowBlocks(Xm, np.ones(150), chunk_size=40, mask=mask)
    result = run_em(family, blocks, np.ones(1), start, tol=0.0, max_iter=400)
    assert np.all(np.diff(result.lower_bounds) > -1e-12)  # EM never decreases the likelihood
    mean, cov_mle = _observed_data_mle(X, mask)
    np.testing.assert_allclose(result.params.mean[0], mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(result.params.covariance[0], cov_mle, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("family, params, oracle", FAMILY_ORACLES, ids=_IDS)
def test_em_with_a_mask_never_decreases_the_likelihood(family, params, oracle, rng):
    p, X, mask = _setup(family, params, rng, n=200)
    Xm = np.where(mask, X, 0.0)
    family = clone(family).set_params(reg_covar=1e-6) if "reg_covar" in family.get_params() else family
    result = run_em(family, RowBlocks(Xm, np.ones(200), chunk_size=64, mask=mask), np.full(2, 0.5), p,
                    tol=0.0, max_iter=25)
    assert np.all(np.diff(result.lower_bounds) > -1e-10)


def test_the_m_step_receives_the_e_step_parameters(rng):
    seen = []

    class Recording(Poisson):
        def params_from_stats(self, stats, current=None):
            seen.append(current)
            return super().params_from_stats(stats, current)

    family = Recording()
    X = rng.poisson(2.0, size=(50, 2)).astype(float)
    start = family.make_params({"rate": [[1.0, 1.0], [3.0, 3.0]]}, 2, 2)
    result = run_em(family, RowBlocks(X, np.ones(50), chunk_size=50), np.full(2, 0.5), start, tol=0.0, max_iter=3)
    assert seen[0] is start
    assert len(seen) == 3 and all(s is not None for s in seen)
    assert result.n_iter == 3


# --- per-row data ------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(chunk=st.integers(1, 60), seed=st.integers(0, 2**16))
def test_per_row_trials_follow_their_rows_through_any_blocking(chunk, seed):
    rng = np.random.default_rng(seed)
    n_trials = rng.integers(0, 15, size=60)
    X = rng.binomial(n_trials[:, None], [0.3, 0.6], size=(60, 2)).astype(float)
    family = Binomial(n_trials=n_trials).check_options()
    p = family.make_params({"prob": [[0.2, 0.5], [0.6, 0.7]]}, 2, 2)
    whole = run_em(family, RowBlocks(X, np.ones(60), 60, rows=family.row_data(60)), np.full(2, 0.5), p,
                   tol=0.0, max_iter=4)
    blocked = run_em(family, RowBlocks(X, np.ones(60), chunk, rows=family.row_data(60)), np.full(2, 0.5), p,
                     tol=0.0, max_iter=4)
    np.testing.assert_allclose(blocked.params.prob, whole.params.prob, rtol=1e-12)
    np.testing.assert_allclose(blocked.lower_bounds, whole.lower_bounds, rtol=1e-12)


def test_row_data_must_match_the_rows():
    family = Binomial(n_trials=np.array([3, 4, 5]))
    with pytest.raises(ValueError, match="3 per-row trial counts but X has 4 rows"):
        family.row_data(4)
    assert Binomial(n_trials=4).row_data(10) is None


# --- array namespaces --------------------------------------------------------------------


@pytest.mark.parametrize("masked", [False, True], ids=["complete", "masked"])
@pytest.mark.parametrize("family, params, oracle", FAMILY_ORACLES, ids=_IDS)
def test_torch_input_gives_numpys_densities_and_statistics(family, params, oracle, masked, rng):
    torch = pytest.importorskip("torch")
    p, X, mask = _setup(family, params, rng, n=120)
    mask = mask if masked else None
    Xm = X if mask is None else np.where(mask, X, 0.0)
    resp = rng.dirichlet([1.0, 1.0], size=120)
    w = rng.uniform(0.5, 2.0, size=120)
    t_mask = None if mask is None else torch.as_tensor(mask)
    got = family.log_prob(torch.as_tensor(Xm), p, mask=t_mask)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), family.log_prob(Xm, p, mask=mask), rtol=1e-12, atol=1e-12)
    t_stats = family.suff_stats(torch.as_tensor(Xm), torch.as_tensor(resp), torch.as_tensor(w), mask=t_mask, params=p)
    n_stats = family.suff_stats(Xm, resp, w, mask=mask, params=p)
    for name, value in vars(n_stats).items():
        if value is not None and not name.startswith("_"):
            assert isinstance(getattr(t_stats, name), np.ndarray)  # statistics come back to the host
            np.testing.assert_allclose(getattr(t_stats, name), value, rtol=1e-11, atol=1e-11, err_msg=name)


def test_torch_float32_densities_stay_float32(rng):
    torch = pytest.importorskip("torch")
    family = Gaussian("full")
    p = family.make_params({"mean": [[0.0, 0.0]], "covariance": [np.eye(2)]}, 1, 2)
    X = rng.normal(size=(10, 2))
    got = family.log_prob(torch.as_tensor(X, dtype=torch.float32), p)
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), family.log_prob(X, p), rtol=1e-5)
