"""The conjugate prior (Gaussian(prior=...)): MAP EM against mclust 6, the posterior it maximises, the defaults.

Oracles, written by ``data/mclust_prior_noise.R`` with mclust 6.0.0:
``data/mclust_prior_me.csv`` holds ``me(..., prior=priorControl())`` log-likelihoods, BIC and
parameter counts for the 10 models mclust fits with a prior and G = 1..4 on iris and faithful,
each started from mclust's hierarchical partition (``data/mclust_models_hc_partitions.csv``) with
tolerances 1e-11 and 1e-13 (``Mclust``/``mclustBIC`` fit one component by its own one-component
routines, whose prior differs for some models, and stop at a relative change of 1e-5: not an
oracle to 1e-7); ``data/mclust_default_prior_iris_G3.csv`` is
``defaultPrior(iris, G=3, ...)`` for VVV and VII.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats as sps
from sklearn.datasets import load_iris

from discrim.distributions import Gaussian, GaussianPrior
from discrim.distributions._gaussian_prior import PRIOR_MODELS
from discrim.mixture import FiniteMixture

DATA = Path(__file__).parent / "data"


def _data(name):
    if name == "iris":
        return load_iris().data
    return pd.read_csv(DATA / "faithful.csv").to_numpy(dtype=float)


def _partition(name, G, n):
    return pd.read_csv(DATA / "mclust_models_hc_partitions.csv")[f"{name} {G}"].to_numpy()[:n].astype(int) - 1


def _fit(X, model, G, init, prior="default", tol=1e-11, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FiniteMixture(Gaussian(model, reg_covar=0.0, prior=prior), G, init_params=init, tol=tol,
                             max_iter=20000, **kw).fit(X)


def _oracle_rows():
    table = pd.read_csv(DATA / "mclust_prior_me.csv")
    return [row for row in table.itertuples(index=False) if np.isfinite(row.loglik)]


@pytest.mark.parametrize("row", _oracle_rows(), ids=lambda r: f"{r.data}-{r.model}-G{r.G}")
def test_map_log_likelihood_and_bic_match_mclust(row):
    X = _data(row.data)
    n, d = X.shape
    fm = _fit(X, row.model, row.G, _partition(row.data, row.G, n))
    if row.G == 1:
        # mclust's me() fits G = 1 by each model's formulas, but mclustBIC (Mclust's table) by its
        # single-component mvnXII, mvnXXI and mvnXXX, which are VII's, VVI's and VVV's: discrim's one
        # component follows mclustBIC (see test_one_component_with_a_prior_is_mclusts_single_component_fit)
        same = {"EII": "VII", "VII": "VII"}.get(row.model, "VVI" if row.model.endswith("I") else "VVV")
        row = next(r for r in _oracle_rows() if (r.data, r.model, r.G) == (row.data, same, 1))
    log_lik = fm.score(X) * n
    assert fm._n_parameters() == row.df
    # mclust's BIC with a prior: the data's log-likelihood at the MAP estimate (R's sign)
    assert log_lik == pytest.approx(row.loglik, rel=1e-7)
    assert -fm.bic(X) == pytest.approx(row.bic, rel=1e-7)


def test_default_prior_is_mclusts():
    X = load_iris().data
    ref = pd.read_csv(DATA / "mclust_default_prior_iris_G3.csv")
    for model, column in (("VVV", None), ("VII", "scale_vii")):
        fm = FiniteMixture(Gaussian(model, prior="default"), 3, max_iter=0, random_state=0).fit(X)
        prior = fm.family_.prior
        np.testing.assert_allclose(prior.mean, ref["mean"], rtol=1e-12)
        assert prior.dof == ref["dof"][0] == 6
        if column is None:
            np.testing.assert_allclose(prior.scale, ref.filter(like="scale_vvv").to_numpy(), rtol=1e-12)
        else:
            assert prior.scale == pytest.approx(ref[column][0], rel=1e-12)
    # the family itself keeps its option: the defaults are fitted state
    assert fm.family.prior == "default"


def test_given_prior_fields_are_kept():
    X = load_iris().data
    prior = GaussianPrior(shrinkage=0.5, mean=np.zeros(4), dof=10.0, scale=2 * np.eye(4))
    fm = FiniteMixture(Gaussian("VVV", prior=prior), 2, max_iter=0, random_state=0).fit(X)
    kept = fm.family_.prior  # a copy (family_ is the fit's own): the fields given, not defaults
    assert (kept.shrinkage, kept.dof) == (0.5, 10.0)
    np.testing.assert_array_equal(kept.mean, prior.mean)
    np.testing.assert_array_equal(kept.scale, prior.scale)


def test_prior_defaults_from_row_blocks_equal_in_memory():
    # the defaults come from additive statistics: blocks of 7 rows give the same prior and fit
    X = _data("faithful")
    init = _partition("faithful", 3, X.shape[0])
    a = _fit(X, "VVV", 3, init, tol=1e-8)
    b = _fit(X, "VVV", 3, init, tol=1e-8, chunk_size=7)
    np.testing.assert_allclose(b.family_.prior.scale, a.family_.prior.scale, rtol=1e-12)
    np.testing.assert_allclose(b.family_.prior.mean, a.family_.prior.mean, rtol=1e-12)
    assert b.score(X) == pytest.approx(a.score(X), rel=1e-10)


def test_prior_on_dask_rows_equals_in_memory():
    da = pytest.importorskip("dask.array")
    X = load_iris().data
    init = np.repeat([0, 1, 2], 50)
    a = _fit(X, "EEV", 3, init, tol=1e-8)
    b = _fit(da.from_array(X, chunks=(40, 4)), "EEV", 3, init, tol=1e-8)
    np.testing.assert_allclose(b.family_.prior.scale, a.family_.prior.scale, rtol=1e-12)
    assert b.score(X) == pytest.approx(a.score(X), rel=1e-9)


def test_family_alone_takes_the_pooled_moments():
    # outside a mixture, an unresolved prior takes the pooled statistics of the components: the
    # data's moments when every row's responsibilities sum to one
    X = load_iris().data
    resp = np.random.default_rng(0).dirichlet(np.ones(3), size=X.shape[0])
    for model in PRIOR_MODELS:
        fam = Gaussian(model, prior="default")
        stats = fam.suff_stats(X, resp)
        data_stats = fam.suff_stats(X, np.ones((X.shape[0], 1)))
        resolved = fam.fill_data_defaults(data_stats, 3)
        a, b = fam.params_from_stats(stats), resolved.params_from_stats(stats)
        np.testing.assert_allclose(a.mean, b.mean, rtol=1e-12)
        np.testing.assert_allclose(a.covariance, b.covariance, rtol=1e-10)


def _log_posterior_vvv(X, fm):
    """log L + log prior of Fraley and Raftery's VVV prior: N(mu_P, Sigma/kappa) x inverse Wishart(nu, Lambda)."""
    prior = fm.family_.prior
    params = fm.params_
    total = fm.score(X) * X.shape[0]
    for mean, cov in zip(params["mean"], params["covariance"]):
        total += sps.multivariate_normal(prior.mean, cov / prior.shrinkage).logpdf(mean)
        total += sps.invwishart(df=prior.dof, scale=prior.scale).logpdf(cov)
    return total


def test_vvv_map_is_a_maximum_of_the_posterior():
    # the paper's posterior (scipy's densities), perturbed in every parameter, never exceeds the fit's
    X = _data("faithful")
    fm = _fit(X, "VVV", 2, _partition("faithful", 2, X.shape[0]), tol=1e-13)
    best = _log_posterior_vvv(X, fm)
    rng = np.random.default_rng(0)
    base = {k: v.copy() for k, v in fm.params_.items()}
    for _ in range(20):
        step = 1e-3 * rng.standard_normal(base["mean"].shape)
        sym = 1e-3 * rng.standard_normal(base["covariance"].shape)
        sym = sym + np.swapaxes(sym, 1, 2)
        fm.params_ = {"mean": base["mean"] + step, "covariance": base["covariance"] + sym}
        fm._params = fm.family_.make_params(fm.params_, 2, 2)
        assert _log_posterior_vvv(X, fm) <= best + 1e-9
    fm.params_ = base


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 3))
def test_map_em_never_decreases_the_vvv_posterior(seed, k):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 2)) * rng.uniform(0.5, 3, 2) + rng.integers(0, 2, (40, 1)) * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(Gaussian("VVV", reg_covar=0.0, prior="default"), k, max_iter=15, tol=0,
                           keep_history=True, random_state=seed).fit(X)
    values = []
    for snap in fm.history_[1:]:  # the start is not a MAP step
        fm.weights_ = snap["weights"]
        fm.params_ = {"mean": snap["mean"], "covariance": snap["covariance"]}
        fm._params = fm.family_.make_params(fm.params_, k, 2)
        values.append(_log_posterior_vvv(X, fm))
    assert np.all(np.diff(values) >= -1e-8 * np.abs(values[1:]))


@pytest.mark.parametrize("model", ["VEE", "EVE", "VVE", "EVV"])
def test_models_without_a_prior_are_refused(model):
    with pytest.raises(ValueError, match="prior is not available"):
        FiniteMixture(Gaussian(model, prior="default"), 2).fit(load_iris().data)


@pytest.mark.parametrize("prior, match", [
    ("flat", "prior must be None, 'default' or a GaussianPrior"),
    (GaussianPrior(shrinkage=-1.0), "shrinkage must be a finite float >= 0"),
    (GaussianPrior(dof=0.5), "dof must be a float > n_features - 1"),
    (GaussianPrior(scale=np.eye(3)), r"scale must be a \(4, 4\) matrix"),
    (GaussianPrior(mean=[0.0, 1.0]), "mean must be 4 finite floats"),
])
def test_bad_priors_are_refused_in_one_line(prior, match):
    with pytest.raises(ValueError, match=match) as info:
        FiniteMixture(Gaussian("VVV", prior=prior), 2, random_state=0).fit(load_iris().data)
    assert "\n" not in str(info.value)


def test_scalar_scale_for_diagonal_models():
    with pytest.raises(ValueError, match="scale must be a float >= 0"):
        FiniteMixture(Gaussian("VVI", prior=GaussianPrior(scale=np.eye(4))), 2).fit(load_iris().data)


def test_with_a_prior_small_components_are_reported_as_mclust_reports_them():
    # the prior keeps a component of few rows defined: its cells were marked "too few rows" (NaN in
    # the criterion table) where mclust's mclustBIC with priorControl() reports them
    from discrim.mixture import gaussian_models, select_mixture

    X = pd.read_csv(Path(__file__).parent / "data" / "faithful.csv").to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = select_mixture(X, gaussian_models(["VEI", "EVI", "VVI"], prior="default"), [3],
                                init_params="hierarchical", random_state=0)
    assert not result.table.degenerate.any()
    # mclust 6.0.0 (mclustBIC(faithful, G = 3, prior = priorControl())): -2482.98, -2486.13, -2488.45 in
    # its sign; discrim stops at its default tol, within a unit of them
    np.testing.assert_allclose(-result.table.bic.to_numpy(), [-2482.978, -2486.13, -2488.45], atol=1.0)


def test_one_component_with_a_prior_is_mclusts_single_component_fit():
    # mclustBIC fits G = 1 by mvnXII, mvnXXI and mvnXXX: one value per storage. discrim's EII,1 and
    # VII,1 (one model) differed, and VEI,1 and VEV,1 were 0.6 and 0.2 BIC units off.
    # Oracle: mclust 6.0.0, mclustBIC(faithful, G = 1, prior = priorControl()) (its sign)
    from discrim.mixture import gaussian_models, select_mixture

    X = pd.read_csv(Path(__file__).parent / "data" / "faithful.csv").to_numpy(dtype=float)
    names = ["EII", "VII", "EEI", "VEI", "EVI", "VVI", "EEE", "EEV", "VEV", "VVV"]
    result = select_mixture(X, gaussian_models(names, prior="default", reg_covar=0.0), [1], random_state=0)
    expected = [-4024.76592315811] * 2 + [-3061.43581744399] * 4 + [-2607.79814235471] * 4
    np.testing.assert_allclose(-result.table.bic.to_numpy(), expected, rtol=1e-9)



def test_one_component_beside_noise_takes_the_models_own_formulas():
    # Beside a noise component mclust's EM fits G = 1 by each model's own formulas (EII,1 and VII,1
    # two models), not by its single-component ones: discrim took those (EII,1 at -3478.66 for
    # mclust's -3443.85, VEI,1 7.8e-4 apart). Oracle: data/mclust_prior_noise_g1.R (Mclust with
    # priorControl() and initialization = list(noise = ...), mclust 6.0.0, its sign).
    oracle = pd.read_csv(DATA / "mclust_prior_noise_g1.csv").dropna()
    frame = pd.read_csv(DATA / "faithful_noise.csv")
    X, noise_init = frame.iloc[:, :2].to_numpy(dtype=float), frame["noise_init"].to_numpy(dtype=bool)
    for model, G, bic in oracle.itertuples(index=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fm = FiniteMixture(Gaussian(model, prior="default", reg_covar=0.0), G, noise=True, noise_init=noise_init,
                               init_params="hierarchical", tol=1e-13, max_iter=100_000, random_state=0).fit(X)
        assert -fm.bic(X) == pytest.approx(bic, rel=1e-9), (model, G)
    # the fitted family knows; the user's does not change, and without noise nothing does
    assert fm.family_._beside_noise and not fm.family._beside_noise
    assert not FiniteMixture(Gaussian("VVV", prior="default"), 1).fit(X).family_._beside_noise

def test_the_models_without_a_prior_fail_their_cells_and_the_others_are_fitted():
    # gaussian_models(prior="default") over all 14: mclust's table shows the ten models with a prior
    import warnings as _warnings

    from discrim.mixture import gaussian_models, select_mixture
    from discrim.mixture._selection import FitFailedWarning

    X = pd.read_csv(Path(__file__).parent / "data" / "faithful.csv").to_numpy(dtype=float)
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore", FitFailedWarning)
        result = select_mixture(X, gaussian_models(prior="default"), [1, 2], random_state=0)
    failed = set(result.table.family[result.table.error != ""])
    assert failed == {"VEE", "EVE", "VVE", "EVV"}


# mclust 6.0.0 on faithful's waiting (one feature), from the partition of the test:
# me(modelName = m, data = waiting, z = unmap(cl), prior = priorControl(shrinkage = kappa),
#    control = emControl(tol = c(1e-13, 1e-12))): (kappa, model, G, loglik, BIC in mclust's sign)
_UNIVARIATE_MAP = [
    (0.01, "E", 2, -1034.03364389, -2090.49049604),
    (0.01, "E", 3, -1033.6285886, -2100.8919896),
    (0.01, "V", 2, -1034.09392245, -2096.21685524),
    (0.01, "V", 3, -1032.31784109, -2109.48209871),
    (0.0, "E", 2, -1034.03483947, -2090.49288721),
    (0.0, "E", 3, -1033.63398273, -2100.90277785),
    (0.0, "V", 2, -1034.09653134, -2096.22207302),
    (0.0, "V", 3, -1032.31596918, -2109.47835489),
]


@pytest.mark.parametrize("kappa, model, G, loglik, bic", _UNIVARIATE_MAP, ids=lambda v: str(v))
def test_map_on_one_feature_is_mclusts_univariate_E_and_V(kappa, model, G, loglik, bic):
    # On one feature mclust's EM is me1ep / me1vp: "E" adds the prior scale to the pooled scatter
    # (EII's multivariate formula leaves it out: 8e-5 to 1.5e-4 of the BIC off with the default prior)
    # and "V" counts nu + 3 also for kappa = 0 (VII's formula nu + 2: 5e-4 to 1.3e-3 off)
    x = pd.read_csv(Path(__file__).parent / "data" / "faithful.csv")[["waiting"]].to_numpy(dtype=float)
    w = x[:, 0]
    labels = (w > 67).astype(int) if G == 2 else (w > 60).astype(int) + (w > 75)
    fm = _fit(x, model, G, labels, prior=GaussianPrior(shrinkage=kappa), tol=1e-13)
    assert fm.score(x) * len(x) == pytest.approx(loglik, rel=1e-9)
    assert -fm.bic(x) == pytest.approx(bic, rel=1e-9)


def test_one_full_component_without_mean_shrinkage_is_mclusts_mvnXXX():
    # mvnXXX divides by nu + n + d + 1 (+ 1 for kappa > 0): discrim took VVV's nu + n + d + 2 for
    # every kappa, 3e-5 of the BIC off with shrinkage 0 (-2607.7982 for -2607.7518).
    # mclust 6.0.0: mclustBIC(faithful, G = 1, modelNames = c("EEE", "VVV"), prior = priorControl(shrinkage = 0))
    from discrim.mixture import gaussian_models, select_mixture

    X = pd.read_csv(Path(__file__).parent / "data" / "faithful.csv").to_numpy(dtype=float)
    result = select_mixture(X, gaussian_models(["EEE", "EEV", "VEV", "VVV"], prior=GaussianPrior(shrinkage=0.0),
                                               reg_covar=0.0), [1], random_state=0)
    np.testing.assert_allclose(-result.table.bic.to_numpy(), -2607.75183010914, rtol=1e-11)
