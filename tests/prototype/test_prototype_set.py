"""PrototypeBatch kernel and scores, and merging of equivalent prototypes."""

import _oracles
import numpy as np
import pytest

from discrim.prototype import PrototypeBatch
from discrim.prototype._prototype_set import merge_equivalent


def test_merge_groups_by_connected_components():
    protos = np.array([[0.0, 1.0], [0.0, 1.0 + 1e-10], [0.0, 1.0 + 2e-10], [0.0, 1.0], [5.0, 5.0]])
    target = np.array([0, 0, 0, 1, 0])
    weights = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    index = np.array([30, 10, 20, 5, 1])
    p, t, w, i = merge_equivalent(protos, target, weights, index)
    # 0-1-2 form a chain of equivalent pairs (a component); 3 differs in target; 4 is alone
    np.testing.assert_array_equal(t, [0, 0, 1])
    np.testing.assert_array_equal(i, [1, 10, 5])  # first in training order, sorted by target, row
    np.testing.assert_allclose(w, [5.0, 6.0, 4.0])
    np.testing.assert_array_equal(p[1], protos[1])  # the features of the earliest sample


def test_merge_keeps_distinct_prototypes():
    rng = np.random.default_rng(0)
    protos = rng.normal(size=(6, 3))
    target = np.array([0, 1, 0, 1, 0, 1])
    p, t, w, i = merge_equivalent(protos, target, np.ones(6), np.arange(6))
    assert t.size == 6
    np.testing.assert_array_equal(np.sort(i), np.arange(6))


def test_merging_duplicates_leaves_scores_unchanged():
    rng = np.random.default_rng(1)
    base = rng.normal(size=(4, 2))
    protos = np.vstack([base, base[[0, 2]]])
    target = np.array([0, 1, 1, 0, 0, 1])
    weights = rng.uniform(0.5, 2.0, 6)
    index = np.arange(6)
    v = np.array([1.5, 0.7])
    order = np.lexsort((index, target))
    raw = PrototypeBatch(protos[order], target[order], np.array([0, 1]), v, weights[order], index[order])
    merged = PrototypeBatch(*merge_equivalent(protos[order], target[order], weights[order], index[order])[:2],
                            np.array([0, 1]), v,
                            *merge_equivalent(protos[order], target[order], weights[order], index[order])[2:])
    assert merged.n_prototypes == 4
    X = rng.normal(size=(20, 2))
    np.testing.assert_allclose(merged.class_scores(X, 2), raw.class_scores(X, 2), rtol=1e-12)


def test_kernel_uses_active_features_only():
    batch = PrototypeBatch(
        prototypes=np.array([[1.0], [2.0]]),
        target=np.array([0, 1]),
        feature_index=np.array([1]),
        feature_weights=np.array([2.0]),
        prototype_weights=np.array([1.0, 3.0]),
        sample_index=np.array([0, 1]),
    )
    X = np.array([[100.0, 1.0], [-7.0, 2.0]])
    expected = _oracles.kernel(X[:, [1]], np.array([[1.0], [2.0]]), np.array([2.0]))
    np.testing.assert_allclose(batch.kernel(X), expected)
    np.testing.assert_allclose(batch.class_scores(X, 2), expected * [1.0, 3.0])


def _merge_oracle(prototypes, target, weights, sample_index, tol):
    """The merge as its docstring states it, by a graph search over all pairs."""
    J = len(target)
    near = [[j for j in range(J) if target[i] == target[j] and np.max(np.abs(prototypes[i] - prototypes[j])) <= tol]
            for i in range(J)]
    seen, merged = set(), []
    for i in range(J):
        if i in seen:
            continue
        component, stack = set(), [i]
        while stack:
            j = stack.pop()
            if j not in component:
                component.add(j)
                stack.extend(near[j])
        seen |= component
        first = min(component, key=lambda j: sample_index[j])
        merged.append((target[first], sample_index[first], first, sum(weights[j] for j in component)))
    merged.sort()
    rows = [m[2] for m in merged]
    return prototypes[rows], target[rows], np.array([m[3] for m in merged]), sample_index[rows]


@pytest.mark.parametrize("n_base", [20, 200])  # all pairs directly, then past BRUTE_FORCE_MERGE_ELEMENTS: k-d tree
def test_merge_equals_its_definition_on_small_and_large_sets(n_base):
    from discrim.prototype._prototype_set import BRUTE_FORCE_MERGE_ELEMENTS, MERGE_TOL

    rng = np.random.default_rng(3)
    base = np.round(rng.normal(size=(n_base, 2)), 1)  # coarse values: many exact duplicates
    protos = np.vstack([base, base[:15] + 5e-9, base[:5] + 3e-8])  # within MERGE_TOL, and not
    target = rng.integers(0, 3, protos.shape[0])
    weights = rng.uniform(0.5, 2.0, protos.shape[0])
    index = rng.permutation(protos.shape[0])
    J = protos.shape[0]
    assert ((protos.shape[1] + 1) * J * J > BRUTE_FORCE_MERGE_ELEMENTS) == (n_base == 200)
    got = merge_equivalent(protos, target, weights, index)
    want = _merge_oracle(protos, target, weights, index, MERGE_TOL)
    assert got[0].shape[0] < J  # something was merged
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-15)