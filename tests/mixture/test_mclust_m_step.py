"""``Gaussian(m_step="mclust")``: mclust 6's EVE and VVE fits, reproduced from its starts.

The oracle ``data/mclust_vve_me.csv`` holds mclust 6.0.0's log-likelihood, BIC and EM iterations of
EVE and VVE on iris, faithful and wine, G = 2..9, each EM (``me``) started from mclust's
hierarchical partition ``data/mclust_hc_partitions.csv``, with ``emControl()``'s defaults
(control "default", the fits of ``Mclust(X, G, modelNames)``) and with the EM tolerance tightened to
1e-11 (control "tight"); ``data/mclust_vve_me.R`` wrote it. mclust stops EM when the log-likelihood
changes by at most ``tol`` relative to ``1 + |loglik|``; discrim's ``tol`` is on the mean
log-likelihood, so the tests pass ``tol * (1 + |loglik|) / n`` with mclust's final log-likelihood.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris, load_wine

from discrim.distributions import Gaussian
from discrim.distributions._covariance_models import COVARIANCE_MODELS, covariance_mle
from discrim.mixture import FiniteMixture

DATA = Path(__file__).parent / "data"
# mclust's EM tolerance (emControl()$tol[1]) of each control in the oracle
EM_TOL = {"default": 1e-5, "tight": 1e-11}


def _data(name):
    if name == "iris":
        return load_iris().data
    if name == "wine":
        return load_wine().data
    return pd.read_csv(DATA / "faithful.csv").to_numpy(dtype=float)


def _partition(name, G):
    table = pd.read_csv(DATA / "mclust_hc_partitions.csv", dtype={"labels": str})
    labels = table.labels[(table.case == name) & (table.G == G)].iloc[0]
    return np.array([int(c) for c in labels]) - 1


def _oracle_rows():
    table = pd.read_csv(DATA / "mclust_vve_me.csv")
    rows = []
    for row in table.itertuples(index=False):
        if not np.isfinite(row.loglik):  # mclust's singular fits (wine, G >= 6 or 7)
            continue
        slow = row.case == "wine" and row.control == "tight"  # thousands of EM steps in 13 dimensions
        rows.append(pytest.param(row, marks=pytest.mark.slow) if slow else row)
    return rows


def _scatter(X, labels):
    """Component weights n_k (K,) and scatter matrices W_k (K, d, d) of a partition."""
    G = labels.max() + 1
    centred = [X[labels == k] - X[labels == k].mean(axis=0) for k in range(G)]
    return np.bincount(labels).astype(float), np.stack([c.T @ c for c in centred])


def _objective(cov, weight, W):
    """F = sum_k n_k log|Sigma_k| + tr(W_k Sigma_k^-1), which the exact M-step minimises."""
    return float(weight @ np.linalg.slogdet(cov)[1] + np.linalg.solve(cov, W).trace(axis1=1, axis2=2).sum())


@pytest.mark.parametrize("row", _oracle_rows(), ids=lambda r: f"{r.case}-{r.model}-G{r.G}-{r.control}")
def test_mclust_m_step_reproduces_mclusts_fit(row):
    X = _data(row.case)
    n = X.shape[0]
    family = Gaussian(row.model, reg_covar=0.0, m_step="mclust")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mclust's default tolerance stops EM early: discrim warns of nothing else
        fm = FiniteMixture(family, row.G, init_params=_partition(row.case, row.G),
                           tol=EM_TOL[row.control] * (1 + abs(row.loglik)) / n, max_iter=100_000).fit(X)
    # mclust's BIC is 2 l - p log n; discrim's is its negative
    assert -fm.bic(X) == pytest.approx(row.bic, rel=1e-9)
    assert fm.score(X) * n == pytest.approx(row.loglik, rel=1e-9)


@pytest.mark.parametrize("G", [2, 3, 4])
def test_mclusts_vve_m_step_does_not_minimise_the_objective(G):
    """Iterated to its fixed point, mclust's VVE M-step stays above the exact minimum; its EVE M-step reaches it."""
    X = load_iris().data
    weight, W = _scatter(X, _partition("iris", G))
    for model in ("EVE", "VVE"):
        exact = covariance_mle(model, weight, W)
        cov = covariance_mle(model, weight, W, m_step="mclust")
        for _ in range(200):  # each call continues mclust's inner iterations from the last covariances
            cov = covariance_mle(model, weight, W, current=cov, m_step="mclust")
        gap = (_objective(cov, weight, W) - _objective(exact, weight, W)) / abs(_objective(exact, weight, W))
        if model == "VVE":
            assert gap > 5e-4  # G = 3: -916.13 against -917.85
        else:
            assert abs(gap) < 1e-8


def test_orientation_and_shapes_recovered_from_the_covariances_rebuild_them():
    """mclust carries D and the shapes A_k from one M-step to the next; discrim recovers them from the covariances."""
    from discrim.distributions import _covariance_models as cm

    weight, W = _scatter(load_iris().data, _partition("iris", 3))
    cov = covariance_mle("VVE", weight, W, m_step="mclust")
    D, shape = cm._orientation_and_shapes(cov)
    np.testing.assert_allclose(D.T @ D, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(np.log(shape).sum(axis=1), 0.0, atol=1e-12)
    volume = np.exp(np.log(np.linalg.eigvalsh(cov)).mean(axis=1))
    np.testing.assert_allclose(np.einsum("ij,kj,lj->kil", D, volume[:, None] * shape, D), cov,
                               rtol=0, atol=1e-12 * np.abs(cov).max())


@pytest.mark.parametrize("model", [m for m in COVARIANCE_MODELS if m not in ("EVE", "VVE")])
def test_mclust_m_step_is_the_exact_one_for_the_other_models(model):
    rng = np.random.default_rng(3)
    weight = rng.uniform(10, 40, 3)
    A = rng.normal(size=(3, 3, 3))
    W = np.einsum("kij,klj->kil", A, A) * weight[:, None, None] + 0.1 * np.eye(3)
    family = Gaussian(model)
    stored = W if family._storage in ("full", "tied") else np.diagonal(W, axis1=1, axis2=2).copy()
    np.testing.assert_array_equal(covariance_mle(model, weight, stored, m_step="mclust"),
                                  covariance_mle(model, weight, stored))


def test_exact_m_step_ends_higher_than_mclusts_from_the_same_start():
    """iris, G = 3 from mclust's start: the default (exact) VVE fit has the higher likelihood."""
    X = load_iris().data
    labels = _partition("iris", 3)
    fits = {m: FiniteMixture(Gaussian("VVE", reg_covar=0.0, m_step=m), 3, init_params=labels, tol=1e-10,
                             max_iter=5000).fit(X) for m in ("exact", "mclust")}
    assert fits["exact"].score(X) > fits["mclust"].score(X) + 0.1 / X.shape[0]


def test_unknown_m_step_is_refused():
    with pytest.raises(ValueError, match="m_step must be one of"):
        FiniteMixture(Gaussian("VVE", m_step="fast"), 2).fit(np.random.default_rng(0).normal(size=(20, 2)))


@pytest.mark.parametrize("model", ["EVE", "VVE"])
def test_one_component_is_the_closed_form_full_covariance(model):
    # mclust fits G = 1 in closed form (mvnXXX); the MM iterations stopped after one EM step at a
    # BIC 0.06 units from it on wine
    from sklearn.datasets import load_wine

    X = load_wine().data
    ours = FiniteMixture(Gaussian(model, reg_covar=0.0, m_step="mclust"), 1).fit(X)
    full = FiniteMixture(Gaussian("VVV", reg_covar=0.0), 1).fit(X)
    np.testing.assert_allclose(ours.params_["covariance"][0], np.cov(X.T, bias=True), rtol=1e-10)
    assert ours.score(X) == pytest.approx(full.score(X), rel=1e-12)
