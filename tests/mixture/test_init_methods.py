"""EM's starts: k-means, mclust's hierarchical agglomeration, a given partition or responsibilities.

The agglomeration itself is checked against mclust's partitions in ``test_hierarchical.py``.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris
from sklearn.metrics import adjusted_rand_score

from discrim.distributions import Gaussian, Poisson
from discrim.mixture import FiniteMixture
from discrim.mixture._hierarchical import agglomerate

DATA = Path(__file__).parent / "data"


def _iris_partition(G):
    partitions = pd.read_csv(DATA / "mclust_models_hc_partitions.csv")
    return partitions[f"iris {G}"].to_numpy()[:150].astype(int) - 1


def test_a_given_partition_is_the_first_m_step():
    X = load_iris().data
    labels = _iris_partition(3)
    family = Gaussian("VVV")
    start = FiniteMixture(family, 3, init_params=labels, max_iter=0).fit(X)
    expected = family.fit_params(X, np.eye(3)[labels])
    np.testing.assert_allclose(start.params_["mean"], expected.mean, rtol=1e-12)
    np.testing.assert_allclose(start.params_["covariance"], expected.covariance, rtol=1e-10)
    np.testing.assert_allclose(start.weights_, np.bincount(labels) / 150)


def test_responsibilities_and_their_hard_partition_agree_when_one_hot():
    X = load_iris().data
    labels = _iris_partition(2)
    a = FiniteMixture(Gaussian("EEE"), 2, init_params=labels, tol=1e-8).fit(X)
    b = FiniteMixture(Gaussian("EEE"), 2, init_params=np.eye(2)[labels], tol=1e-8).fit(X)
    np.testing.assert_allclose(a.params_["mean"], b.params_["mean"], rtol=1e-12)


@pytest.mark.parametrize("bad, message", [
    (np.zeros(10, dtype=int), "one int in \\[0, 2\\) per row"),
    (np.full(150, 2), "one int in \\[0, 2\\) per row"),
    (np.full((150, 3), 1 / 3), "shape \\(150, 2\\)"),
    (np.full((150, 2), 0.7), "sum to one"),
])
def test_a_bad_given_start_names_init_params(bad, message):
    with pytest.raises(ValueError, match="init_params as .*" + message):
        FiniteMixture(Gaussian(), 2, init_params=bad).fit(load_iris().data)


def test_agglomeration_separates_well_separated_groups_and_counts_clusters():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.3, (40, 2)) for c in ([0, 0], [6, 0], [0, 6])])
    truth = np.repeat([0, 1, 2], 40)
    labels = agglomerate(X, 3)
    assert adjusted_rand_score(labels, truth) == 1.0
    assert np.unique(agglomerate(X, 5)).size == 5


def test_hierarchical_start_on_more_rows_than_it_agglomerates():
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(0, 1, (1500, 2)), rng.normal(8, 1, (1500, 2))])
    fm = FiniteMixture(Gaussian(), 2, init_params="hierarchical", random_state=0).fit(X)
    assert adjusted_rand_score(fm.predict(X), np.repeat([0, 1], 1500)) == 1.0


def test_kmeans_start_is_the_kmeans_partition():
    X = load_iris().data
    fm = FiniteMixture(Gaussian(), 3, init_params="kmeans", max_iter=0, random_state=3).fit(X)
    # the first M-step from the k-means partition: its means are the k-means centers, here those
    # of iris' stable k-means optimum
    km_labels = KMeans(3, n_init=10, random_state=0).fit_predict(X)
    means = np.stack([X[km_labels == j].mean(axis=0) for j in range(3)])
    # the same three clusters as a well-started k-means (iris' k-means optimum is stable)
    got = np.sort(fm.params_["mean"][:, 2])
    np.testing.assert_allclose(got, np.sort(means[:, 2]), rtol=1e-10)


def test_every_start_works_for_a_discrete_family():
    rng = np.random.default_rng(2)
    X = np.concatenate([rng.poisson(2, (100, 3)), rng.poisson(9, (100, 3))]).astype(float)
    for init in ("kmeans", "hierarchical", np.repeat([0, 1], 100)):
        fm = FiniteMixture(Poisson(), 2, init_params=init, random_state=0).fit(X)
        assert adjusted_rand_score(fm.predict(X), np.repeat([0, 1], 100)) > 0.95


def test_n_init_adds_kmeans_starts_to_a_deterministic_one():
    X = pd.read_csv(DATA / "faithful.csv").to_numpy(dtype=float)
    one = FiniteMixture(Gaussian("EEE"), 3, init_params="hierarchical", tol=1e-8, max_iter=500).fit(X)
    several = FiniteMixture(Gaussian("EEE"), 3, init_params="hierarchical", n_init=4, tol=1e-8, max_iter=500,
                            random_state=0).fit(X)
    assert several.lower_bound_ >= one.lower_bound_ - 1e-12
    given = FiniteMixture(Gaussian("EEE"), 3, init_params=one.predict(X), n_init=4, tol=1e-8, max_iter=500,
                          random_state=0).fit(X)
    assert given.lower_bound_ >= one.lower_bound_ - 1e-7  # its own partition: the same fit, to tol


def test_rows_marked_minus_one_take_no_part_in_the_first_m_step():
    X = load_iris().data
    labels = _iris_partition(3)
    subset = labels.copy()
    subset[::3] = -1  # mclust's subset: the first M-step sees two rows in three
    start = FiniteMixture(Gaussian("VVV"), 3, init_params=subset, max_iter=0).fit(X)
    kept = subset >= 0
    expected = Gaussian("VVV").fit_params(X[kept], np.eye(3)[subset[kept]])
    np.testing.assert_allclose(start.params_["mean"], expected.mean, rtol=1e-12)
    np.testing.assert_allclose(start.weights_, np.bincount(subset[kept]) / kept.sum())
    with pytest.raises(ValueError, match="-1 leaves a row out"):
        FiniteMixture(Gaussian(), 2, init_params=np.full(150, -1)).fit(X)


def test_a_start_that_leaves_a_component_empty_is_refused():
    # a partition with fewer labels than components left a component at its placeholder (mean 0,
    # covariance I), outside the model's constraints (a VEV shape not shared), with only a warning
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"init_params as a partition must give every one of the n_components=3 "
                                         r"components some rows; no row has the label\(s\) \[2\]"):
        FiniteMixture(Gaussian("VEV"), 3, init_params=np.minimum(y, 1)).fit(X)
    resp = np.zeros((150, 3))
    resp[:, 0] = 1.0
    with pytest.raises(ValueError, match=r"init_params as responsibilities .* 0 in every row: \[1, 2\]"):
        FiniteMixture(Gaussian("VEV"), 3, init_params=resp).fit(X)
