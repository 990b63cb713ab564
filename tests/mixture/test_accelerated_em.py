"""SQUAREM-accelerated EM (``FiniteMixture(accelerate=True)``): the same optimum as plain EM, monotone.

The oracles are mclust 6.0.0's maximised log-likelihoods of ``data/mclust_models_me.csv`` and
``data/mclust_noise_me.csv`` (see ``test_covariance_models`` and ``test_noise``), reached here from
the same hierarchical partitions with acceleration. Its monotonicity on random problems of every
family is tested with plain EM's in ``test_em_seed``.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from discrim.distributions import Gaussian, Poisson
from discrim.mixture import FiniteMixture

from .test_covariance_models import MODELS, _data, _oracle_rows

DATA = Path(__file__).parent / "data"


def _fit(X, family, k, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FiniteMixture(family, k, **kw).fit(X)


@pytest.mark.parametrize("row", [r for r in _oracle_rows() if r.G > 1], ids=lambda r: f"{r.data}-{r.model}-G{r.G}")
def test_accelerated_em_reaches_mclusts_log_likelihood(row):
    X = _data(row.data)
    n = X.shape[0]
    partitions = pd.read_csv(DATA / "mclust_models_hc_partitions.csv")
    labels = partitions[f"{row.data} {row.G}"].to_numpy()[:n].astype(int) - 1
    fm = _fit(X, Gaussian(row.model, reg_covar=0.0), row.G, init_params=labels, tol=1e-10, max_iter=20000,
              accelerate=True)
    log_lik = fm.score(X) * n
    assert fm.converged_
    assert np.all(np.diff(fm.lower_bounds_) >= -1e-12 * np.abs(fm.lower_bounds_[1:]))
    if row.model == "VVE":  # mclust's inner loop stops early (see test_covariance_models): never below it
        assert log_lik >= row.loglik - 1e-6 * abs(row.loglik)
    else:
        assert log_lik == pytest.approx(row.loglik, rel=1e-7)


@pytest.mark.parametrize("model", MODELS)
def test_accelerated_and_plain_em_reach_the_same_fixed_point(model):
    # From a start far from the optimum an extrapolated step may cross into another basin (from
    # mclust's start on faithful with three components, VVE ends higher than plain EM): iris here.
    X = _data("iris")
    plain = _fit(X, Gaussian(model), 3, init_params="hierarchical", tol=1e-11, max_iter=50000)
    fast = _fit(X, Gaussian(model), 3, init_params="hierarchical", tol=1e-11, max_iter=50000, accelerate=True)
    assert fast.lower_bounds_[-1] == pytest.approx(plain.lower_bounds_[-1], rel=1e-9)
    # a stop on the log-likelihood's change leaves the parameters off by about its square root
    # along flat directions (1e-5 here), plain EM's slow ones most
    order, fast_order = np.argsort(plain.params_["mean"][:, 0]), np.argsort(fast.params_["mean"][:, 0])
    np.testing.assert_allclose(fast.params_["mean"][fast_order], plain.params_["mean"][order], rtol=1e-3)
    np.testing.assert_allclose(fast.weights_[fast_order], plain.weights_[order], atol=1e-4)


def test_acceleration_takes_fewer_em_steps_where_em_is_slow():
    # faithful, four components from the hierarchical start: EM needs hundreds of steps at tol 1e-8
    X = _data("faithful")
    steps = {acc: sum(_fit(X, Gaussian(model), 4, init_params="hierarchical", tol=1e-8, max_iter=50000,
                           accelerate=acc).n_iter_ for model in ("EEE", "VVV", "VEV"))
             for acc in (False, True)}
    assert steps[True] < 0.5 * steps[False], steps


@pytest.mark.parametrize("row", [r for r in pd.read_csv(DATA / "mclust_noise_me.csv").itertuples(index=False)
                                 if r.G == 3 and r.model in ("EII", "EEE", "VEV", "VVV")],
                         ids=lambda r: f"{r.model}-G{r.G}")
def test_accelerated_em_with_a_noise_component_matches_mclust(row):
    df = pd.read_csv(DATA / "faithful_noise.csv")
    X, init = df[["eruptions", "waiting"]].to_numpy(float), df["noise_init"].to_numpy(bool)
    part = pd.read_csv(DATA / "mclust_noise_partitions.csv")[f"G.{row.G}"].to_numpy().astype(int)
    fm = _fit(X, Gaussian(row.model, reg_covar=0.0), row.G, init_params=np.maximum(part - 1, 0), noise=True,
              noise_init=init, tol=1e-11, max_iter=20000, accelerate=True)
    assert fm.score(X) * X.shape[0] == pytest.approx(row.loglik, rel=1e-7)


def test_accelerated_em_on_counts_with_fixed_weights_and_missing_values(rng):
    rates = np.array([[1.0, 6.0], [5.0, 0.5], [2.5, 2.5]])
    X = rng.poisson(rates[rng.integers(0, 3, 400)]).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    kw = dict(init_params="random_from_data", random_state=3, tol=1e-12, max_iter=50000, fix_weights=True,
              weights_init=[0.2, 0.3, 0.5])
    plain = _fit(X, Poisson(), 3, **kw)
    fast = _fit(X, Poisson(), 3, accelerate=True, **kw)
    np.testing.assert_array_equal(fast.weights_, [0.2, 0.3, 0.5])
    assert fast.lower_bounds_[-1] == pytest.approx(plain.lower_bounds_[-1], rel=1e-10)
    np.testing.assert_allclose(fast.params_["rate"], plain.params_["rate"], rtol=1e-5)


@pytest.mark.parametrize("model", ["VVI", "VVV"])
def test_accelerated_em_on_incomplete_gaussian_rows(model, rng):
    # "diag" storage completes the missing entries in the M-step from the E-step's parameters,
    # "full" in the E-step: both reach plain EM's optimum
    X = np.vstack([rng.normal([0, 0, 0], 1.0, (150, 3)), rng.normal([3, 1, -2], 0.6, (150, 3))])
    X[rng.random(X.shape) < 0.15] = np.nan
    kw = dict(init_params="kmeans++", random_state=0, tol=1e-12, max_iter=50000)
    plain = _fit(X, Gaussian(model), 2, **kw)
    fast = _fit(X, Gaussian(model), 2, accelerate=True, **kw)
    assert fast.n_iter_ < plain.n_iter_
    assert np.all(np.diff(fast.lower_bounds_) >= -1e-12 * np.abs(fast.lower_bounds_[1:]))
    assert fast.lower_bounds_[-1] == pytest.approx(plain.lower_bounds_[-1], rel=1e-10)
    np.testing.assert_allclose(fast.params_["mean"], plain.params_["mean"], rtol=1e-4, atol=1e-5)


def test_with_every_row_labelled_acceleration_ascends_the_penalised_likelihood():
    # A variance floor that matters (five directions of variance 1e-4 under reg_covar 1e-3): EM
    # then ascends the log-likelihood plus Gaussian.log_penalty, not the likelihood alone. With
    # every row labelled the component totals are fixed and SQUAREM compares that objective:
    # every kept state raises it, and the fit is plain EM's fixed point in far fewer steps (46
    # against 71 on a CPU with AVX-512; the counts move with a CPU's rounding, and the rows are
    # drawn without multivariate_normal, whose LAPACK factorisation rounds differently per CPU
    # too). Compared by the likelihood, SQUAREM had taken 70 steps against plain EM's 89 on
    # another CPU, and its likelihood fell in 32 of them.
    rng = np.random.default_rng(0)
    d, n = 8, 300
    basis = np.linalg.qr(rng.normal(size=(d, d)))[0]
    variances = np.array([1.0, 0.8, 0.5, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4])
    y = rng.integers(0, 3, n)
    X = (rng.normal(size=(n, d)) * np.sqrt(variances)) @ basis.T + rng.normal(size=(3, d))[y]
    X[rng.random(X.shape) < 0.4] = np.nan
    kw = dict(tol=1e-12, max_iter=20000, random_state=0, unlabeled=-1)
    family = Gaussian("tied", reg_covar=1e-3)
    fast = FiniteMixture(family, 3, accelerate=True, keep_history=True, **kw).fit(X, y)
    plain = FiniteMixture(family, 3, **kw).fit(X, y)
    totals = np.bincount(y).astype(float)
    objective = np.array([lb - 0.5e-3 * totals.sum() * np.trace(np.linalg.inv(p["covariance"])) / n
                          for lb, p in zip(fast.lower_bounds_, fast.history_)])
    assert np.all(np.diff(objective) >= -1e-12 * np.abs(objective[1:]))
    assert fast.n_iter_ < 0.75 * plain.n_iter_
    np.testing.assert_allclose(fast.params_["covariance"], plain.params_["covariance"], rtol=1e-6, atol=1e-9)
