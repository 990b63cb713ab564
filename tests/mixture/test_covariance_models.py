"""mclust's 14 Gaussian covariance models: log-likelihoods against mclust 6, constraints, EM properties.

The oracle ``data/mclust_models_me.csv`` holds mclust 6.0.0's maximised log-likelihood, BIC and
parameter count for every model and G = 1..4 on iris and faithful, each EM started (``me``) from
mclust's hierarchical partition ``data/mclust_models_hc_partitions.csv`` with tolerances 1e-11 and
1e-13; ``data/mclust_models_me.R`` wrote both.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st
from sklearn.datasets import load_iris

from discrim.distributions import Gaussian
from discrim.distributions._covariance_models import COVARIANCE_MODELS, covariance_mle
from discrim.mixture import FiniteMixture

DATA = Path(__file__).parent / "data"
MODELS = list(COVARIANCE_MODELS)


def _data(name):
    if name == "iris":
        return load_iris().data
    return pd.read_csv(DATA / "faithful.csv").to_numpy(dtype=float)


def _oracle_rows():
    table = pd.read_csv(DATA / "mclust_models_me.csv")
    return [row for row in table.itertuples(index=False) if np.isfinite(row.loglik)]


def _fit_from_partition(X, model, G, labels, tol=1e-10):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FiniteMixture(Gaussian(model, reg_covar=0.0), G, init_params=labels, tol=tol, max_iter=20000).fit(X)


@pytest.mark.parametrize("row", _oracle_rows(), ids=lambda r: f"{r.data}-{r.model}-G{r.G}")
def test_log_likelihood_and_bic_match_mclust(row):
    X = _data(row.data)
    n, d = X.shape
    partitions = pd.read_csv(DATA / "mclust_models_hc_partitions.csv")
    labels = partitions[f"{row.data} {row.G}"].to_numpy()[:n].astype(int) - 1
    fm = _fit_from_partition(X, row.model, row.G, labels)
    log_lik = fm.score(X) * n
    n_params = Gaussian(row.model).n_parameters(d, row.G) + row.G - 1
    assert n_params == row.df
    # mclust's BIC is 2 l - p log n; discrim's is its negative
    assert fm.bic(X) == pytest.approx(-(2 * log_lik - n_params * np.log(n)), rel=1e-12)
    if row.model == "VVE":
        # mclust's orientation update for VVE leaves out the volumes (see Gaussian's m_step): its
        # EM ends at another fit, which m_step="mclust" reproduces; discrim's exact M-step never
        # ends lower than mclust here (on iris G=2..4 it ends higher)
        assert log_lik >= row.loglik - 1e-6 * abs(row.loglik)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mclust = FiniteMixture(Gaussian("VVE", reg_covar=0.0, m_step="mclust"), row.G, init_params=labels,
                                   tol=1e-10, max_iter=20000).fit(X)
        assert mclust.score(X) * n == pytest.approx(row.loglik, rel=1e-7)
        assert -mclust.bic(X) == pytest.approx(row.bic, rel=1e-7)
    else:
        assert log_lik == pytest.approx(row.loglik, rel=1e-7)
        assert -fm.bic(X) == pytest.approx(row.bic, rel=1e-7)


def _volume_shape_orientation(cov):
    """lambda_k (K,), shapes A_k (K, d) sorted descending and orientations D_k (K, d, d)."""
    values, vectors = np.linalg.eigh(cov)
    values, vectors = values[:, ::-1], vectors[:, :, ::-1]
    volume = np.exp(np.log(values).mean(axis=1))
    return volume, values / volume[:, None], vectors


def _as_full(family, cov, k, d):
    storage = family._storage
    if storage == "full":
        return cov
    if storage == "tied":
        return np.broadcast_to(cov, (k, *cov.shape))
    if storage == "diag":
        return np.stack([np.diag(c) for c in cov])
    return cov[:, None, None] * np.eye(d)[None]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), model=st.sampled_from(MODELS))
def test_m_step_keeps_the_constraints_of_the_model(seed, model):
    rng = np.random.default_rng(seed)
    k, d = 3, 3
    weight = rng.uniform(5, 50, k)
    A = rng.normal(size=(k, d, d))
    scatter = np.einsum("kij,klj->kil", A, A) * weight[:, None, None] + 0.1 * np.eye(d)
    family = Gaussian(model)
    stored = scatter if family._storage in ("full", "tied") else np.diagonal(scatter, axis1=1, axis2=2).copy()
    cov = covariance_mle(model, weight, stored)
    full = _as_full(family, cov, k, d)
    volume, shape, orientation = _volume_shape_orientation(full)
    v, s, o = model
    if v == "E":
        np.testing.assert_allclose(volume, volume[0], rtol=1e-8)
    if s == "E":
        if o == "I":  # axis-aligned shapes: compare the diagonals, not sorted eigenvalues
            diag = np.diagonal(full, axis1=1, axis2=2) / volume[:, None]
            np.testing.assert_allclose(diag, np.broadcast_to(diag[0], diag.shape), rtol=1e-6)
        else:
            np.testing.assert_allclose(shape, np.broadcast_to(shape[0], shape.shape), rtol=1e-6)
    if s == "I":
        np.testing.assert_allclose(shape, 1.0, rtol=1e-8)
    if o == "I":
        off = full - np.stack([np.diag(np.diag(c)) for c in full])
        assert np.abs(off).max() == 0.0
    if o == "E" and k > 1:  # a common orientation: the covariances commute
        for j in range(1, k):
            np.testing.assert_allclose(full[0] @ full[j], full[j] @ full[0], atol=1e-8 * np.abs(full).max() ** 2)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), model=st.sampled_from(MODELS))
def test_m_step_beats_the_other_feasible_covariances_nearby(seed, model):
    """The M-step minimises F = sum_k n_k log|S_k| + tr(W_k S_k^-1): feasible perturbations do worse."""
    rng = np.random.default_rng(seed)
    k, d = 3, 3
    weight = rng.uniform(5, 50, k)
    A = rng.normal(size=(k, d, d))
    scatter = np.einsum("kij,klj->kil", A, A) * weight[:, None, None] + 0.1 * np.eye(d)
    family = Gaussian(model)
    full_storage = family._storage in ("full", "tied")
    stored = scatter if full_storage else np.diagonal(scatter, axis1=1, axis2=2).copy()

    def objective(cov):
        full = _as_full(family, cov, k, d)
        return float(np.sum(weight * np.linalg.slogdet(full)[1])
                     + np.sum(np.linalg.solve(full, scatter if full_storage else
                                              np.stack([np.diag(s) for s in stored])).trace(axis1=1, axis2=2)))

    best = covariance_mle(model, weight, stored)
    # another feasible point: the M-step's answer for scatter matrices slightly perturbed
    B = rng.normal(size=(k, d, d)) * 0.05
    other = scatter + np.einsum("kij,klj->kil", B, B) * weight[:, None, None]
    other_stored = other if full_storage else np.diagonal(other, axis1=1, axis2=2).copy()
    assert objective(best) <= objective(covariance_mle(model, weight, other_stored)) + 1e-9 * abs(objective(best))


@pytest.mark.parametrize("equal_volume", [True, False], ids=["EVE", "VVE"])
@pytest.mark.parametrize("d", [2, 4])
def test_common_orientation_newton_step_is_the_profiles_second_order_model(equal_volume, d):
    """EVE/VVE: the Newton step's gradient and Hessian are the profile's, by finite differences."""
    from discrim.distributions import _covariance_models as cm

    rng = np.random.default_rng(d)
    k = 3
    weight = rng.uniform(20, 60, k)
    A = rng.normal(size=(k, d, d)) * rng.uniform(0.5, 3.0, (k, 1, d))
    M = np.einsum("kij,klj->kil", A, A) * weight[:, None, None]
    G = cm._rotation_basis(d).G

    def profile(theta):  # F with D rotated by exp(sum_p theta_p G_p)
        R = scipy.linalg.expm(np.tensordot(theta, G, axes=1))
        return cm._profile((R.T @ M @ R).diagonal(axis1=1, axis2=2), weight, equal_volume)

    h, basis = 1e-4, np.eye(len(G))
    gradient = np.array([(profile(h * e) - profile(-h * e)) / (2 * h) for e in basis])
    hessian = np.array([[(profile(h * (a + b)) - profile(h * (a - b)) - profile(h * (b - a)) + profile(-h * (a + b)))
                         / (4 * h * h) for b in basis] for a in basis])
    # the step solves H theta = -g where H is positive definite; Omega = sum_p theta_p G_p
    if np.all(np.linalg.eigvalsh(hessian) > 0):
        omega = 2.0 * cm._newton_rotation(M, weight, equal_volume)
        theta = np.array([omega[g == 1][0] for g in G])
        np.testing.assert_allclose(hessian @ theta, -gradient, rtol=1e-4, atol=1e-6 * np.abs(gradient).max())
        R = cm._cayley(omega / 2)
        np.testing.assert_allclose(R.T @ R, np.eye(d), atol=1e-12)
    else:
        assert cm._newton_rotation(M, weight, equal_volume) is None


@pytest.mark.parametrize("model", ["EVE", "VVE"])
def test_common_orientation_m_step_is_stationary(model):
    """At the M-step's answer no plane rotation of the orientation lowers F to first order."""
    from discrim.distributions import _covariance_models as cm

    rng = np.random.default_rng(5)
    k, d = 4, 5
    weight = rng.uniform(20, 60, k)
    rows = rng.normal(size=(k, 60, d)) * rng.uniform(0.3, 3.0, (k, 1, d))
    W = np.einsum("kni,knj->kij", rows, rows) * (weight / 60)[:, None, None]
    cov = covariance_mle(model, weight, W)
    D = np.linalg.eigh(cov.sum(axis=0))[1]
    M = np.swapaxes(D, 0, 1) @ W @ D
    equal_volume = model == "EVE"
    G = cm._rotation_basis(d).G
    h = 1e-5
    for g in G:
        R_plus, R_minus = scipy.linalg.expm(h * g), scipy.linalg.expm(-h * g)
        slope = (cm._profile((R_plus.T @ M @ R_plus).diagonal(axis1=1, axis2=2), weight, equal_volume)
                 - cm._profile((R_minus.T @ M @ R_minus).diagonal(axis1=1, axis2=2), weight, equal_volume)) / (2 * h)
        assert abs(slope) < 1e-6 * weight.sum()


@pytest.mark.parametrize("model", MODELS)
def test_em_is_monotone_with_and_without_missing_values(model):
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(0, 1, (80, 3)), rng.normal(3, [0.5, 1.5, 1.0], (60, 3))])
    X[:, 1] += 0.5 * X[:, 0]
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.15] = np.nan
    for data in (X, Xm):
        fm = FiniteMixture(Gaussian(model), 2, tol=1e-8, max_iter=300, random_state=0).fit(data)
        assert np.all(np.diff(fm.lower_bounds_) >= -1e-10)
        assert np.isfinite(fm.score(data))


def test_sklearn_names_are_the_mclust_models():
    rng = np.random.default_rng(2)
    X = np.concatenate([rng.normal(0, 1, (60, 2)), rng.normal(4, 2, (60, 2))])
    for sk, mc in {"full": "VVV", "diag": "VVI", "tied": "EEE", "spherical": "VII"}.items():
        a = FiniteMixture(Gaussian(sk), 2, random_state=0, tol=1e-10, max_iter=500).fit(X)
        b = FiniteMixture(Gaussian(mc), 2, random_state=0, tol=1e-10, max_iter=500).fit(X)
        assert Gaussian(sk).model_name == mc
        np.testing.assert_allclose(a.params_["covariance"], b.params_["covariance"], rtol=1e-9)
        assert Gaussian(sk).n_parameters(2, 2) == Gaussian(mc).n_parameters(2, 2)


def test_unknown_covariance_type_is_refused_with_the_names():
    with pytest.raises(ValueError, match="covariance_type must be one of .*'VEV'"):
        FiniteMixture(Gaussian("VXV"), 2).fit(np.random.default_rng(0).normal(size=(20, 2)))


@pytest.mark.parametrize("model", MODELS)
def test_fit_scales_with_data_of_extreme_magnitude(model):
    """Data scaled by 1e80 or 1e-80 (within the accepted range): the log-likelihood moves by exactly
    -d log s. The volume was once multiplied into the scatter before the shapes were divided out, a
    product of about 1e320 that overflowed for EVE, EVI and EVV and was reported as a collapsed component."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(60, 3)), rng.normal(size=(60, 3)) * [1.0, 2.0, 3.0] + 5.0])
    labels = np.repeat([0, 1], 60)
    reference = FiniteMixture(Gaussian(model, reg_covar=0.0), 2, init_params=labels, tol=1e-10).fit(X).score(X)
    for scale in (1e80, 1e-80):
        fm = FiniteMixture(Gaussian(model, reg_covar=0.0), 2, init_params=labels, tol=1e-10).fit(X * scale)
        assert fm.score(X * scale) + 3 * np.log(scale) == pytest.approx(reference, abs=1e-9)
