"""bootstrap_lrt: the statistic, its p-values under H0 and H1, mclust's observed statistics, determinism.

Oracle: ``data/mclust_bootstrap_lrt_faithful.csv``, ``mclustBootstrapLRT(faithful, modelName,
maxG=3, control=emControl(tol=c(1e-11, 1e-13)))`` with mclust 6.0.0 (``data/mclust_prior_noise.R``):
its observed statistics (its p-values come from R's random draws and are not compared).
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from discrim.distributions import Gaussian
from discrim.mixture import BootstrapLRT, FiniteMixture, bootstrap_lrt

DATA = Path(__file__).parent / "data"


def _faithful_starts():
    parts = pd.read_csv(DATA / "mclust_models_hc_partitions.csv")
    return {G: parts[f"faithful {G}"].to_numpy()[:272].astype(int) - 1 for G in range(1, 5)}


@pytest.mark.parametrize("model", ["VVV", "EEE", "VII"])
def test_observed_statistics_match_mclust(model):
    X = pd.read_csv(DATA / "faithful.csv").to_numpy(float)
    ref = pd.read_csv(DATA / "mclust_bootstrap_lrt_faithful.csv")
    result = bootstrap_lrt(X, Gaussian(model, reg_covar=0.0), 4, n_boot=1, random_state=0,
                           init_params=_faithful_starts(), tol=1e-11, max_iter=20000)
    np.testing.assert_allclose(result.statistic, ref[ref.model == model].obs, rtol=1e-6)


def test_statistic_is_twice_the_log_likelihood_difference():
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(0, 1, (50, 2)), rng.normal(3, 1, (50, 2))])
    result = bootstrap_lrt(X, Gaussian("VVI"), 3, n_boot=3, random_state=0, init_params="kmeans", n_init=2)
    fits = [FiniteMixture(Gaussian("VVI"), G, init_params="kmeans", n_init=2, tol=1e-6, max_iter=1000,
                          random_state=0).fit(X) for G in (1, 2, 3)]
    log_lik = np.array([fm.score(X) * 100 for fm in fits])
    np.testing.assert_allclose(result.log_likelihood[:1], log_lik[:1], rtol=1e-10)  # G=1 has one maximum
    np.testing.assert_allclose(result.statistic, 2 * np.diff(result.log_likelihood), rtol=1e-12)
    assert result.boot.shape == (3, 2)
    assert np.all((result.p_value >= 1 / 4) & (result.p_value <= 1))


def test_small_p_value_for_two_separated_components():
    rng = np.random.default_rng(2)
    X = np.concatenate([rng.normal(-5, 1, (60, 1)), rng.normal(5, 1, (60, 1))])
    result = bootstrap_lrt(X, Gaussian("VII"), 2, n_boot=19, random_state=0)
    assert result.p_value[0] == pytest.approx(1 / 20)
    assert result.statistic[0] > result.boot[:, 0].max()


def test_p_values_are_uniform_ish_under_the_null():
    # 30 data sets of one Gaussian: the p-values of 1 vs 2 components spread over (0, 1]
    p = []
    for seed in range(30):
        X = np.random.default_rng(100 + seed).normal(size=(40, 1))
        p.append(bootstrap_lrt(X, Gaussian("VII"), 2, n_boot=19, random_state=seed, init_params="kmeans").p_value[0])
    p = np.array(p)
    assert 0.3 <= p.mean() <= 0.7
    assert np.mean(p <= 0.2) <= 0.45
    assert np.mean(p >= 0.5) >= 0.25


def test_independent_of_n_jobs():
    X = np.random.default_rng(3).normal(size=(60, 2))
    a = bootstrap_lrt(X, Gaussian("EII"), 3, n_boot=30, random_state=5, n_jobs=1)
    b = bootstrap_lrt(X, Gaussian("EII"), 3, n_boot=30, random_state=5, n_jobs=2)
    np.testing.assert_array_equal(a.boot, b.boot)
    np.testing.assert_array_equal(a.p_value, b.p_value)


def test_table_and_markdown():
    result = BootstrapLRT(n_components=np.array([1, 2]), statistic=np.array([12.5, 0.75]),
                          p_value=np.array([0.001, 0.6]), boot=np.zeros((999, 2)),
                          log_likelihood=np.array([-10.0, -3.75, -3.375]), model="Gaussian(covariance_type='VVV')")
    assert result.table()["test"].tolist() == ["1 vs 2", "2 vs 3"]
    text = str(result)
    assert "999 replicates" in text and "| 1 vs 2 | 12.5 | 0.001 |" in text and "| 2 vs 3 | 0.75 | 0.6 |" in text


@pytest.mark.parametrize("kwargs, match", [
    ({"max_components": 1}, "max_components must be an int >= 2"),
    ({"n_boot": 0}, "n_boot must be a positive int"),
    ({"noise": True}, "does not take noise"),
    ({"params_init": {}}, "sets params_init itself"),
    ({"init_params": {1: np.zeros(20, int)}}, "must give the start of every number of components"),
])
def test_bad_arguments_are_refused_in_one_line(kwargs, match):
    X = np.random.default_rng(0).normal(size=(20, 1))
    args = {"max_components": 2, **kwargs}
    with pytest.raises(ValueError, match=match) as info:
        bootstrap_lrt(X, Gaussian("VII"), **args)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["n_bootstrap", "n_components"])
def test_an_unknown_keyword_is_named_as_bootstrap_lrts(name):
    # it reached FiniteMixture: "FiniteMixture.__init__() got an unexpected keyword argument 'n_bootstrap'"
    X = np.random.default_rng(0).normal(size=(20, 1))
    with pytest.raises(TypeError, match=f"bootstrap_lrt got unexpected keyword argument\\(s\\) '{name}': it takes n_boot"):
        bootstrap_lrt(X, Gaussian("VII"), 2, **{name: 9})


def test_g_plus_one_fits_are_at_least_as_likely_as_g_fits():
    # a Poisson sample of one component: the 2-component fit from its own start stopped below the
    # 1-component fit (statistic -0.0066, 59 % of the replicates negative, p = 1.0)
    from discrim.distributions import Poisson

    X = np.random.default_rng(10).poisson(4, (200, 1)).astype(float)
    result = bootstrap_lrt(X, Poisson(), max_components=2, n_boot=19, random_state=0)
    assert result.log_likelihood[1] >= result.log_likelihood[0] - 1e-9
    assert result.statistic[0] >= 0.0 and np.all(result.boot >= 0.0)


def test_categorical_data_start_from_kmeans_and_keep_the_true_count():
    # the Gaussian agglomeration of category codes started 2 components at -496.20 (the maximum is
    # -487.95), and the test of 2 against 3 rejected the true 2 components on every sample
    from discrim.distributions import Categorical

    rng = np.random.default_rng(10)
    X = np.r_[rng.choice(3, (150, 2), p=[0.7, 0.2, 0.1]), rng.choice(3, (100, 2), p=[0.1, 0.2, 0.7])].astype(float)
    result = bootstrap_lrt(X, Categorical(n_categories=3), max_components=3, n_boot=19, random_state=0)
    assert result.log_likelihood[1] > -488.0
    assert result.p_value[0] == pytest.approx(0.05) and result.p_value[1] > 0.2  # 1 vs 2 rejected, 2 vs 3 not


def test_replicates_of_incomplete_data_miss_the_same_cells_and_are_refitted_from_its_start(monkeypatch):
    # the replicates were complete rows: under a true null with half the cells missing, their
    # statistics fell short of the data's and the test rejected at level 0.05 in 12 of 40 samples
    # (1 of 40 now; 3 features, 150 rows, n_boot=19)
    import discrim.mixture._bootstrap as module

    seen = []

    class Recording(FiniteMixture):
        def fit(self, X, y=None, sample_weight=None):
            seen.append((np.asarray(X).copy(), self.init_params))
            return super().fit(X, y, sample_weight)

    monkeypatch.setattr(module, "FiniteMixture", Recording)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X[rng.random(X.shape) < 0.4] = np.nan
    X[np.isnan(X).all(axis=1), 0] = 0.0
    n_data_fits = len(seen)
    bootstrap_lrt(X, Gaussian("VVV"), max_components=2, n_boot=3, random_state=0)
    patterns = sorted(map(tuple, np.isnan(X).astype(int)))
    replicates = [Z for Z, _ in seen[n_data_fits:] if not np.array_equal(Z, X, equal_nan=True)]
    assert replicates
    for Z in replicates:  # each replicate: the data's rows' patterns of missing cells, in some order
        assert sorted(map(tuple, np.isnan(Z).astype(int))) == patterns
    # and its 2-component refit also from the start the fits to X had
    assert any(init == "hierarchical" for Z, init in seen[n_data_fits:] if not np.array_equal(Z, X, equal_nan=True))
