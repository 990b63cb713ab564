"""A uniform noise component (FiniteMixture(noise=...)): EM against mclust 6, predictions, start, save/load.

Oracles, written by ``data/mclust_prior_noise.R`` with mclust 6.0.0: ``data/faithful_noise.csv``
is faithful with 60 uniform rows over its bounding box (``truth``) and mclust's documented random
start ``noise_init`` (a quarter of the rows); ``data/mclust_noise_me.csv`` holds
``me(..., Vinv=hypvol(X, reciprocal=TRUE))`` for the 14 models and G = 1..3 from the hierarchical
partition of the other rows (``data/mclust_noise_partitions.csv``, 0 for the noise rows), with
tolerances 1e-11 and 1e-13: log-likelihood, BIC (``nMclustParams(noise=TRUE)``), noise weight;
``data/mclust_noise_hypvol.csv`` is ``log(hypvol(X))``.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture
from discrim.mixture._noise import noise_region
from discrim.persistence import load_model, save_model

DATA = Path(__file__).parent / "data"


def _noisy():
    df = pd.read_csv(DATA / "faithful_noise.csv")
    return df[["eruptions", "waiting"]].to_numpy(float), df["noise_init"].to_numpy(bool), df["truth"].to_numpy(bool)


def _fit(model, G, **kw):
    X, init, _ = _noisy()
    part = pd.read_csv(DATA / "mclust_noise_partitions.csv")[f"G.{G}"].to_numpy().astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(Gaussian(model, reg_covar=0.0), G, init_params=np.maximum(part - 1, 0), noise=True,
                           noise_init=init, tol=1e-11, max_iter=20000, **kw).fit(X)
    return X, fm


def test_hypervolume_is_mclusts():
    X, _, _ = _noisy()
    expected = pd.read_csv(DATA / "mclust_noise_hypvol.csv").log_volume[0]
    assert noise_region(X).log_volume == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("row", list(pd.read_csv(DATA / "mclust_noise_me.csv").itertuples(index=False)),
                         ids=lambda r: f"{r.model}-G{r.G}")
def test_noise_em_matches_mclust(row):
    X, fm = _fit(row.model, row.G)
    n = X.shape[0]
    log_lik = fm.score(X) * n
    assert fm._n_parameters() == row.df  # mclust counts the noise weight and the volume
    assert fm.noise_volume_ == pytest.approx(np.exp(pd.read_csv(DATA / "mclust_noise_hypvol.csv").log_volume[0]))
    if row.model == "VVE":  # mclust's inner loop stops early (see test_covariance_models): never below it
        assert log_lik >= row.loglik - 1e-7 * abs(row.loglik)
        return
    assert log_lik == pytest.approx(row.loglik, rel=1e-7)
    assert -fm.bic(X) == pytest.approx(row.bic, rel=1e-7)
    assert fm.weights_[-1] == pytest.approx(row.noise_weight, abs=1e-4)


def test_noise_is_the_last_column_and_label_minus_one():
    X, fm = _fit("VVV", 2)
    proba = fm.predict_proba(X)
    assert proba.shape == (X.shape[0], 3)
    labels = fm.predict(X)
    assert set(np.unique(labels)) <= {-1, 0, 1}
    np.testing.assert_array_equal(labels == -1, np.argmax(proba, axis=1) == 2)
    # score_samples: log(sum_k pi_k N(x; mu_k, Sigma_k) + pi_0 / V)
    terms = [np.log(w) + multivariate_normal(m, c).logpdf(X)
             for w, m, c in zip(fm.weights_[:2], fm.params_["mean"], fm.params_["covariance"])]
    terms.append(np.full(X.shape[0], np.log(fm.weights_[2]) - np.log(fm.noise_volume_)))
    np.testing.assert_allclose(fm.score_samples(X), logsumexp(np.stack(terms), axis=0), rtol=1e-10)


def test_default_start_finds_the_noise():
    X, _, truth = _noisy()
    fm = FiniteMixture(Gaussian("VVV"), 2, noise=True, init_params="hierarchical", random_state=0).fit(X)
    called = fm.predict(X) == -1
    assert (called & truth).sum() >= 0.6 * truth.sum()  # most uniform rows are noise
    assert (called & ~truth).sum() <= 0.1 * (~truth).sum()  # few geyser rows are


def test_given_volume():
    X, init, _ = _noisy()
    fm = FiniteMixture(Gaussian("VVV"), 2, noise=500.0, noise_init=init, random_state=0).fit(X)
    assert fm.noise_volume_ == pytest.approx(500.0)
    plain = FiniteMixture(Gaussian("VVV"), 2, random_state=0).fit(X)
    assert fm._n_parameters() == plain._n_parameters() + 1  # only the noise weight
    with pytest.raises(ValueError, match="sample cannot draw the noise"):
        fm.sample(2000)


def test_sample_draws_noise_in_the_region_and_save_load():
    X, fm = _fit("VVV", 2, random_state=0)
    Xs, labels = fm.sample(500)
    assert set(np.unique(labels)) <= {-1, 0, 1} and (labels == -1).any()
    region = noise_region(X)
    coords = Xs[labels == -1] @ region.rotation
    assert np.all(coords >= region.lower - 1e-9) and np.all(coords <= region.upper + 1e-9)


def test_save_load_keeps_noise_and_prior(tmp_path):
    X, init, _ = _noisy()
    fm = FiniteMixture(Gaussian("VVV", prior="default"), 2, noise=True, noise_init=init, random_state=0).fit(X)
    save_model(fm, tmp_path / "m.skops")
    back = load_model(tmp_path / "m.skops")
    np.testing.assert_allclose(back.predict_proba(X), fm.predict_proba(X))
    np.testing.assert_array_equal(back.sample(50)[1], fm.sample(50)[1])
    assert back.family_.prior.dof == 4.0


def test_bad_noise_options_are_refused_in_one_line():
    X, _, _ = _noisy()
    with pytest.raises(ValueError, match="noise_init must be a bool array") as info:
        FiniteMixture(Gaussian("VVV"), 2, noise=True, noise_init=np.zeros(5, bool)).fit(X)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="leaves 1 rows for n_components=2"):
        FiniteMixture(Gaussian("VVV"), 2, noise=True, noise_init=np.arange(X.shape[0]) > 0).fit(X)
    with pytest.raises(ValueError, match="weights_init has shape"):
        FiniteMixture(Gaussian("VVV"), 2, noise=True, weights_init=[0.5, 0.5]).fit(X)
    with pytest.raises(ValueError, match="hypervolume of X is 0"):
        FiniteMixture(Gaussian("VVV"), 1, noise=True).fit(np.c_[X[:, 0], np.ones(X.shape[0])])


@pytest.mark.parametrize("unit", [1.0, 1e-9, 1e9])
def test_collinear_features_are_refused_as_spanning_no_volume(unit):
    # a column the sum of two others: rounding left V = 3.8e-12, and every row went to the noise
    X, _, _ = _noisy()
    X = np.c_[X, X[:, 0] + X[:, 1]] * unit
    with pytest.raises(ValueError, match="features are collinear .*hypervolume of X is 0"):
        FiniteMixture(Gaussian("VVV"), 2, noise=True).fit(X)
    # correlated but not collinear features span a volume in any units
    X[:, 2] += 1e-3 * unit * np.random.default_rng(0).normal(size=X.shape[0])
    assert FiniteMixture(Gaussian("VVV"), 2, noise=True, random_state=0).fit(X).noise_volume_ > 0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 3), model=st.sampled_from(["VVV", "EII", "VVI", "EEE"]))
def test_noise_em_never_decreases_the_log_likelihood(seed, k, model):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(size=(60, 2)) + rng.integers(0, 3, (60, 1)) * 3, rng.uniform(-4, 10, (20, 2))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(Gaussian(model), k, noise=True, max_iter=30, tol=0, random_state=seed).fit(X)
    bounds = fm.lower_bounds_
    assert np.all(np.diff(bounds) >= -1e-10 * np.abs(bounds[1:]))
    assert fm.weights_.shape == (k + 1,) and fm.weights_.sum() == pytest.approx(1.0)


def test_default_start_that_finds_no_clutter_warns_and_fits():
    """On small or evenly spread data the clutter detection can mark every row: the fit then starts the noise
    empty with a warning that names noise_init, instead of an error about a noise_init the user never set."""
    X = 3 * np.random.RandomState(0).uniform(size=(10, 1))
    with pytest.warns(UserWarning, match="noise_init"):
        fm = FiniteMixture(Gaussian(), 1, noise=True).fit(X)
    assert fm.weights_[-1] == 0.0
    assert np.isfinite(fm.score_samples(X)).all()


def test_missing_values_are_refused_beside_a_noise_component():
    """The noise density 1 / V is a density in all the features, a component's marginal one in a
    row's observed features: compared, every incomplete row went to the noise in small units (here
    all of them, weight 0.63 against 0.015 for the same data complete), and none in large units."""
    rng = np.random.default_rng(13)
    z = rng.integers(0, 2, 600)
    X = (rng.normal(size=(600, 3)) + 6 * z[:, None]) * 0.01
    X_missing = np.where(rng.random(X.shape) < 0.3, np.nan, X)
    with pytest.raises(ValueError, match=r"cannot score: the noise density 1 / V .* Impute the missing values first"):
        FiniteMixture(Gaussian(), 2, noise=True, random_state=0).fit(X_missing)
    fitted = FiniteMixture(Gaussian(), 2, noise=True, random_state=0).fit(X)
    with pytest.raises(ValueError, match="noise component cannot score"):
        fitted.predict(X_missing)
    assert fitted.predict(X).shape == (600,)


@pytest.mark.parametrize("model, k", [("EEE", 2), ("VVV", 3)])
def test_a_grid_with_noise_starts_each_cell_as_its_fit_alone_does(model, k):
    # the grid's shared agglomeration took in the rows that start as noise, which FiniteMixture's
    # hierarchical start leaves out (as mclust does): the same cell gave another fit
    from discrim.mixture import select_mixture

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(150, 2)), rng.normal(size=(150, 2)) + 4, rng.uniform(-6, 10, size=(40, 2))])
    noise_rows = np.r_[np.zeros(300, bool), np.ones(40, bool)]
    options = dict(init_params="hierarchical", noise=True, noise_init=noise_rows, tol=1e-10, max_iter=10000)
    alone = FiniteMixture(Gaussian(model), k, **options).fit(X)
    grid = select_mixture(X, {model: Gaussian(model)}, [k], random_state=0, **options)
    assert grid.table.bic[0] == pytest.approx(alone.bic(X), rel=1e-12)
