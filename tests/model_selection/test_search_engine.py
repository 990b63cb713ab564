"""Tests of the search engine helpers: log-loss, the 1-SE rule, task planning and warm starts."""

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import log_loss

from discrim.model_selection._search import PathWarmStart, plan_tasks, select_one_se, weighted_log_loss


@dataclass(frozen=True)
class _Batch:
    """The fields of PrototypeBatch that the warm start reads."""

    feature_index: np.ndarray
    feature_weights: np.ndarray
    sample_index: np.ndarray
    prototype_weights: np.ndarray


def test_weighted_log_loss_matches_sklearn(rng):
    proba = rng.dirichlet(np.ones(3), size=40)
    y = rng.integers(0, 3, size=40)
    w = rng.uniform(0.1, 2.0, size=40)
    expected = log_loss(y, proba, sample_weight=w, labels=[0, 1, 2])
    assert weighted_log_loss(proba, y, w, np.arange(3)) == pytest.approx(expected, rel=1e-12)


def test_weighted_log_loss_class_missing_from_training_fold(rng):
    # The fold's model knows classes 0 and 2 only; a row of class 1 has probability 0, clipped at eps.
    proba = np.array([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]])
    y = np.array([0, 2, 1])
    w = np.ones(3)
    expected = -(np.log(0.7) + np.log(0.8) + np.log(np.finfo(float).eps)) / 3
    assert weighted_log_loss(proba, y, w, np.array([0, 2])) == pytest.approx(expected)


def test_one_se_rule_picks_largest_alpha_then_fewest_batches():
    alphas = np.array([1e-3, 1e-2, 1e-1])
    mean = np.array([
        [0.90, 0.50, 0.40, 0.41],
        [0.90, 0.48, 0.44, 0.45],
        [0.90, 0.70, 0.60, 0.58],
    ])
    std = np.full_like(mean, 0.05)
    best, selected, threshold = select_one_se(mean, std, alphas)
    assert best == (0, 2)
    assert threshold == pytest.approx(0.45)
    # alpha 1e-1 never gets within 0.45; alpha 1e-2 does with 2 batches (0.44) and 3 (0.45)
    assert selected == (1, 2)


def test_one_se_rule_never_selects_a_point_some_fold_did_not_score():
    # NaN: a batch count after a fold's early stop. Without the NaN, (1, 3) would be the best
    # point and lower the threshold; with it, the rule works on the scored points alone.
    alphas = np.array([1e-3, 1e-2])
    mean = np.array([[0.9, 0.50, 0.47, np.nan], [0.9, 0.49, 0.52, np.nan]])
    std = np.where(np.isnan(mean), np.nan, 0.01)
    best, selected, threshold = select_one_se(mean, std, alphas)
    assert best == (0, 2)
    assert threshold == pytest.approx(0.48)
    assert np.isnan(mean[0, 3]) and selected == (0, 2)


def test_one_se_rule_does_not_depend_on_grid_order():
    alphas = np.array([1e-1, 1e-3, 1e-2])
    mean = np.array([[0.9, 0.6], [0.9, 0.4], [0.9, 0.42]])
    std = np.full_like(mean, 0.05)
    _, selected, _ = select_one_se(mean, std, alphas)
    assert selected == (2, 1)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 10), st.integers(1, 15), st.integers(1, 64))
def test_plan_covers_every_fold_and_alpha_once(n_folds, n_alphas, n_workers):
    tasks = plan_tasks(n_folds, n_alphas, n_workers)
    covered = sorted((fold, int(a)) for fold, chunk in tasks for a in chunk)
    assert covered == [(f, a) for f in range(n_folds) for a in range(n_alphas)]
    for _, chunk in tasks:
        assert np.all(np.diff(chunk) == 1)  # contiguous stretches of the (sorted) path
    if n_workers <= n_folds:
        assert len(tasks) == n_folds  # one task per fold: the whole path warm-started
    else:
        assert len(tasks) >= min(n_workers, n_folds * n_alphas)  # every worker gets a task


def test_warm_start_maps_previous_solution_by_sample_index():
    batch = _Batch(
        feature_index=np.array([0, 3]),
        feature_weights=np.array([0.5, 2.0]),
        sample_index=np.array([7, 2, 11]),
        prototype_weights=np.array([1.5, 0.25, 3.0]),
    )
    path = PathWarmStart(n_features=5)
    assert path(0, np.array([2, 5, 7, 11, 9, 4])) is None  # first fit: cold start, candidates recorded
    path.advance([batch])
    v0, w0 = path(0, np.array([2, 5, 11, 9, 13]))
    np.testing.assert_array_equal(v0, [0.5, 0.0, 0.0, 2.0, 0.0])
    # kept: previous weight; candidate before but dropped (5, 9): 0; new candidate (13): 1
    np.testing.assert_array_equal(w0, [0.25, 0.0, 3.0, 0.0, 1.0])
    assert path(1, np.array([2])) is None  # no previous batch: cold start


def test_warm_start_after_empty_batch_starts_empty():
    empty = _Batch(np.zeros(0, int), np.zeros(0), np.zeros(0, int), np.zeros(0))
    full = _Batch(feature_index=np.array([1]), feature_weights=np.array([0.7]), sample_index=np.array([4]),
                  prototype_weights=np.array([2.0]))
    path = PathWarmStart(n_features=3)
    path.advance([empty])
    v0, w0 = path(0, np.array([1, 2]))  # never non-empty: cold feature weights 10 / D, no prototype
    np.testing.assert_allclose(v0, np.full(3, 10.0 / 3))
    np.testing.assert_array_equal(w0, [0.0, 0.0])
    path.advance([full])
    path.advance([empty])
    v0, w0 = path(0, np.array([4, 5]))  # the last non-empty solution's feature weights
    np.testing.assert_array_equal(v0, [0.0, 0.7, 0.0])
    np.testing.assert_array_equal(w0, [0.0, 0.0])


def test_warm_start_with_restart_empty_starts_an_empty_batch_cold():
    # the refit's last fit: a batch the path left empty is solved from a cold start (None), the
    # others keep their warm start
    empty = _Batch(np.zeros(0, int), np.zeros(0), np.zeros(0, int), np.zeros(0))
    full = _Batch(feature_index=np.array([1]), feature_weights=np.array([0.7]), sample_index=np.array([4]),
                  prototype_weights=np.array([2.0]))
    path = PathWarmStart(n_features=3, restart_empty=True)
    path.advance([full, empty])
    assert path(1, np.array([4, 5])) is None
    v0, w0 = path(0, np.array([4, 5]))
    np.testing.assert_array_equal(v0, [0.0, 0.7, 0.0])
    np.testing.assert_array_equal(w0, [2.0, 1.0])


def test_the_refit_solves_batches_the_loose_path_left_empty(monkeypatch):
    # xor-4f, path 3.16e-4 -> 1e-3, 8 batches: with the path's fits capped at 100 iterations,
    # batches 4, 5 and 8 end empty there; started cold in the refit's last fit they fill (284 and
    # 334 iterations for two of them), where a probe from the empty solution keeps them empty
    import discrim.model_selection._search as search_engine
    from discrim.datasets import load_benchmark
    from discrim.prototype import PrototypeClassifier

    X, _, y, _ = load_benchmark("xor-4f")

    def refit():
        return search_engine.refit_path(PrototypeClassifier(max_iter=100), PrototypeClassifier(), X, y,
                                        np.ones(len(y)), np.array([3.16e-4, 1e-3]), 8, 0, True, X.shape[1])

    restarted = refit()
    warm_call = search_engine.PathWarmStart.__call__

    def probe_only(self, batch_number, candidates):
        self.restart_empty = False
        return warm_call(self, batch_number, candidates)

    monkeypatch.setattr(search_engine.PathWarmStart, "__call__", probe_only)
    probed = refit()
    assert restarted.alpha_feature == probed.alpha_feature == 1e-3
    filled = [b.n_prototypes > 0 for b in restarted.batches_]
    assert filled[:3] == [True] * 3 and sum(filled) > sum(b.n_prototypes > 0 for b in probed.batches_)
    for a, b in zip(restarted.batches_[:3], probed.batches_[:3]):  # the batches before are the path's
        np.testing.assert_array_equal(a.prototype_weights, b.prototype_weights)
