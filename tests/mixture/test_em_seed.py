"""The EM seed's two-coin example, iteration by iteration, and the monotone log-likelihood."""

import warnings

import numpy as np
import pytest
import scipy.stats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discrim.datasets import coin_tosses
from discrim.distributions import FAMILIES, Binomial, Categorical, Gaussian, Poisson
from discrim.mixture import FiniteMixture

P0, LAMBDA0 = (0.6, 0.5), 0.5  # the initial guess the example starts from


def _coin_fit(max_iter=30):
    return FiniteMixture(
        Binomial(n_trials=10),
        2,
        params_init={"prob": [[P0[0]], [P0[1]]]},
        weights_init=[LAMBDA0, 1 - LAMBDA0],
        max_iter=max_iter,
        tol=0,
        keep_history=True,
    ).fit(coin_tosses())


def _seed_weights(x, p0, p1, lam):
    """w_i0 and w_i1 exactly as the seed writes them: Bayes' rule on binomial likelihoods."""
    f0 = scipy.stats.binom(10, p0).pmf(x) * lam
    f1 = scipy.stats.binom(10, p1).pmf(x) * (1 - lam)
    return f0 / (f0 + f1), f1 / (f0 + f1)


def test_coin_example_follows_the_seeds_closed_forms():
    fm = _coin_fit()
    x = coin_tosses()[:, 0].astype(float)
    assert len(fm.history_) == fm.n_iter_ + 1 == 31
    first = fm.history_[0]
    np.testing.assert_allclose(first["prob"][:, 0], P0)
    np.testing.assert_allclose(first["weights"], [LAMBDA0, 1 - LAMBDA0])
    for before, after in zip(fm.history_[:-1], fm.history_[1:]):
        p0, p1 = before["prob"][:, 0]
        lam = before["weights"][0]
        w0, w1 = _seed_weights(x, p0, p1, lam)
        # p_0 = sum_i w_i0 x_i / sum_i 10 w_i0, p_1 likewise, lambda = sum_i w_i0 / 5
        np.testing.assert_allclose(after["prob"][0, 0], (w0 * x).sum() / (10 * w0).sum(), rtol=1e-12)
        np.testing.assert_allclose(after["prob"][1, 0], (w1 * x).sum() / (10 * w1).sum(), rtol=1e-12)
        np.testing.assert_allclose(after["weights"][0], w0.sum() / 5, rtol=1e-12)
        np.testing.assert_allclose(after["weights"].sum(), 1.0)


def test_coin_example_log_likelihood_and_responsibilities():
    fm = _coin_fit()
    x = coin_tosses()[:, 0]
    for snap, ll in zip(fm.history_, fm.lower_bounds_):
        mix = snap["weights"][0] * scipy.stats.binom(10, snap["prob"][0, 0]).pmf(x) + snap["weights"][
            1
        ] * scipy.stats.binom(10, snap["prob"][1, 0]).pmf(x)
        assert ll == pytest.approx(np.log(mix).mean(), rel=1e-12)
    assert np.all(np.diff(fm.lower_bounds_) >= -1e-12)
    last = fm.history_[-1]
    w0, w1 = _seed_weights(x, last["prob"][0, 0], last["prob"][1, 0], last["weights"][0])
    np.testing.assert_allclose(fm.predict_proba(coin_tosses()), np.column_stack([w0, w1]), rtol=1e-10)
    np.testing.assert_allclose(fm.weights_, last["weights"])
    np.testing.assert_allclose(fm.params_["prob"], last["prob"])


def test_coin_example_converges_to_a_stationary_point():
    fm = FiniteMixture(
        Binomial(n_trials=10), 2, params_init={"prob": [[0.6], [0.5]]}, weights_init=[0.5, 0.5], tol=1e-12,
        max_iter=10000,
    ).fit(coin_tosses())
    assert fm.converged_
    x = coin_tosses()[:, 0]
    w0, w1 = _seed_weights(x, fm.params_["prob"][0, 0], fm.params_["prob"][1, 0], fm.weights_[0])
    # at a fixed point one more update changes nothing
    np.testing.assert_allclose(fm.params_["prob"][0, 0], (w0 * x).sum() / (10 * w0).sum(), rtol=1e-5)
    np.testing.assert_allclose(fm.weights_[0], w0.sum() / 5, rtol=1e-5)
    assert fm.params_["prob"][0, 0] > fm.params_["prob"][1, 0]  # coin 0 started as the biased one


# --- the log-likelihood never decreases (the seed's inequality chain) ------------------------


def _random_problem(family, seed, n, k):
    rng = np.random.default_rng(seed)
    d = 2
    if isinstance(family, Binomial):
        probs = rng.uniform(0.05, 0.95, size=(k, d))
        X = rng.binomial(family.n_trials, probs[rng.integers(0, k, n)]).astype(float)
    elif isinstance(family, Poisson):
        rates = rng.uniform(0.2, 8.0, size=(k, d))
        X = rng.poisson(rates[rng.integers(0, k, n)]).astype(float)
    elif isinstance(family, Categorical):
        X = rng.integers(0, family.n_categories, size=(n, d)).astype(float)
    else:
        X = rng.normal(scale=2.0, size=(k, d))[rng.integers(0, k, n)] + rng.normal(size=(n, d))
    return X, rng.uniform(0.1, 3.0, size=n)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(12, 80),
    k=st.integers(1, 4),
    init=st.sampled_from(["kmeans++", "random", "random_from_data"]),
    fix_weights=st.booleans(),
)
@pytest.mark.parametrize("accelerate", [False, True], ids=["plain", "squarem"])
@pytest.mark.parametrize("family", FAMILIES, ids=repr)
def test_log_likelihood_never_decreases(family, accelerate, seed, n, k, init, fix_weights):
    """Plain EM, and SQUAREM's (which keeps an extrapolated step only where it does not lower it)."""
    X, w = _random_problem(family, seed, n, k)
    if np.unique(X, axis=0).shape[0] < k:
        return
    max_iter = 30 if accelerate else 15
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(
            family, k, init_params=init, tol=0, max_iter=max_iter, random_state=seed, fix_weights=fix_weights,
            reg_covar=1e-6, accelerate=accelerate, keep_history=accelerate,
        ).fit(X, sample_weight=w)
    lb = fm.lower_bounds_
    if accelerate:  # lower_bounds_ and history_ hold the kept parameter sets, n_iter_ every EM step
        assert fm.n_iter_ == max_iter and 1 < lb.shape[0] <= max_iter + 1 and len(fm.history_) == lb.shape[0]
    else:
        assert lb.shape == (max_iter + 1,)
    assert np.all(np.isfinite(lb))
    # reg_covar makes a Gaussian M-step a slightly perturbed maximiser, so there EM's monotonicity
    # holds up to O(reg_covar) (seen: -8e-8 on 12 rows with 3 components collapsing onto few points)
    slack = 10 * 1e-6 if isinstance(family, Gaussian) else 0.0
    assert np.all(np.diff(lb) >= -1e-9 * np.maximum(1.0, np.abs(lb[1:])) - slack), np.diff(lb).min()
    assert fm.score(X, sample_weight=w) == pytest.approx(lb[-1], rel=1e-9, abs=1e-12)
    assert np.all(np.isfinite(fm.score_samples(X)))
