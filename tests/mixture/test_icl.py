"""ICL: BIC less twice the log-probabilities of the MAP assignments (Biernacki, Celeux and Govaert 2000; mclust's icl)."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture, select_mixture


def test_icl_is_bic_less_twice_the_map_log_probabilities():
    X, _ = load_iris(return_X_y=True)
    model = FiniteMixture(Gaussian("full"), 3, random_state=0).fit(X)
    r = model.predict_proba(X)
    log_map = np.log(r.max(axis=1))
    assert model.icl(X) == pytest.approx(model.bic(X) - 2 * log_map.sum(), rel=1e-12)
    assert model.icl(X) >= model.bic(X)
    w = np.arange(1.0, 151.0)
    assert model.icl(X, sample_weight=w) == pytest.approx(model.bic(X, sample_weight=w) - 2 * np.sum(w * log_map),
                                                          rel=1e-12)


def test_icl_is_mclusts():
    # mclust 6.0.0: icl(Mclust(iris[, 1:4], G = 2, modelNames = "VEV")) = -561.728875651 (its sign),
    # from its hierarchical start, given here as the partition it starts from
    X, _ = load_iris(return_X_y=True)
    partitions = pd.read_csv(Path(__file__).parent / "data" / "mclust_models_hc_partitions.csv")
    start = partitions["iris 2"].to_numpy()[:150].astype(int) - 1
    model = FiniteMixture(Gaussian("VEV", reg_covar=0.0), 2, init_params=start, tol=1e-10, max_iter=1000).fit(X)
    assert -model.icl(X) == pytest.approx(-561.728875651, rel=1e-7)



def test_icl_grid_is_mclusts_when_both_converge():
    # Oracle: data/mclust_icl_tight.R (mclust 6.0.0's mclustICL of iris, 14 models x G = 1..9, from its
    # hierarchical start, EM to a relative tolerance of 1e-15). ICL is not stationary at the maximum,
    # unlike BIC: EM creeping along a flat ridge moves it at the 1e-6 level while the log-likelihood
    # moves at 1e-12 (EVI,4 at mclust's 1e-13: ICL 1.2e-6 apart, BIC 2e-12), so both sides run EM to
    # the end. discrim's VVE and EVE take mclust's M-step, which differs from the exact one there.
    X, _ = load_iris(return_X_y=True)
    oracle = pd.read_csv(Path(__file__).parent / "data" / "mclust_icl_iris_tight.csv").dropna()
    models = {m: Gaussian(m, reg_covar=0.0, m_step="mclust" if m in ("EVE", "VVE") else "exact")
              for m in oracle["model"].unique()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = select_mixture(X, models, range(1, 10), init_params="hierarchical", tol=1e-15, max_iter=1_000_000,
                               random_state=0).table
    table = table.assign(model=table["family"], G=table["n_components"])  # the dict's keys name the models
    both = oracle.merge(table[table["error"] == ""], on=["model", "G"], suffixes=("_mclust", ""))
    assert len(both) >= 114  # of mclust's 120 non-singular cells
    # discrim's sign: -2 log L + p log n, smaller is better; mclust's the opposite
    np.testing.assert_allclose(-both["bic"], both["bic_mclust"], rtol=1e-6)
    np.testing.assert_allclose(-both["icl"], both["icl_mclust"], rtol=1e-6)

def test_separated_components_cost_nothing_overlapping_ones_do():
    rng = np.random.default_rng(0)
    far = np.concatenate([rng.normal(size=(200, 2)), rng.normal(size=(200, 2)) + 50])
    model = FiniteMixture(Gaussian("full"), 2, random_state=0).fit(far)
    assert model.icl(far) == pytest.approx(model.bic(far), abs=1e-6)
    near = rng.normal(size=(400, 2))
    model = FiniteMixture(Gaussian("full"), 2, random_state=0).fit(near)
    assert model.icl(near) > model.bic(near) + 10


def test_select_mixture_by_icl():
    X, _ = load_iris(return_X_y=True)
    result = select_mixture(X, {"VVV": Gaussian("full"), "VVI": Gaussian("diag")}, [1, 2, 3], criterion="icl",
                            random_state=0)
    table = result.table
    for i, estimator in enumerate(result.estimators):
        assert table["icl"].iloc[i] == pytest.approx(estimator.icl(X), rel=1e-10)
    usable = table[(table["error"] == "") & ~table["degenerate"]]
    assert table["icl"].iloc[result.best_index] == usable["icl"].min()
    assert (table["icl"] >= table["bic"] - 1e-9).all()


def test_select_mixture_icl_with_weights_is_the_estimators():
    # the table takes ICL's MAP term from each fit's last E-step; the estimator's icl recomputes it
    # from predict_proba
    X, _ = load_iris(return_X_y=True)
    w = np.random.default_rng(0).integers(1, 4, X.shape[0]).astype(float)
    result = select_mixture(X, {"VVV": Gaussian("full"), "VII": Gaussian("spherical")}, [1, 2, 3], criterion="icl",
                            sample_weight=w, random_state=0)
    for i, estimator in enumerate(result.estimators):
        assert result.table["icl"].iloc[i] == pytest.approx(estimator.icl(X, sample_weight=w), rel=1e-10)
        assert result.table["bic"].iloc[i] == pytest.approx(estimator.bic(X, sample_weight=w), rel=1e-10)


def test_fit_keeps_the_map_log_probability_of_its_last_e_step():
    # with a noise component, whose column is among the MAP candidates as in predict_proba
    X, _ = load_iris(return_X_y=True)
    w = np.random.default_rng(1).integers(1, 4, X.shape[0]).astype(float)
    for noise in (False, True):
        model = FiniteMixture(Gaussian("full"), 2, noise=noise, random_state=0).fit(X, sample_weight=w)
        log_map = np.sum(w * np.log(model.predict_proba(X).max(axis=1))) / w.sum()
        assert model._train_map_log_probability == pytest.approx(log_map, rel=1e-10)
