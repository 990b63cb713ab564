"""The ML/Bayes rule in log space: posteriors from joint log-likelihoods, never from NaN."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import softmax

from discrim.discriminant._rules import check_joint, check_log_odds, proba_from_joint, proba_from_log_odds

_finite = st.floats(-1e300, 1e300)


@settings(max_examples=100, deadline=None)
@given(jll=arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(2, 4)), elements=_finite))
def test_finite_scores_give_probabilities_like_softmax(jll):
    proba = proba_from_joint(jll.copy())
    assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    log_proba = proba_from_joint(jll.copy(), log=True)
    assert not np.isnan(log_proba).any()
    # The oracle, where its own computation does not overflow (differences within range).
    if np.all(np.isfinite(np.diff(jll, axis=1))):
        np.testing.assert_allclose(proba, softmax(jll, axis=1), atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_nan_score_is_refused_naming_rows_and_classes(n_classes):
    jll = np.zeros((4, n_classes))
    jll[2, 1] = np.nan
    for log in (False, True):
        with pytest.raises(ValueError, match=r"1 row\(s\) of X \(index 2\) have a NaN log-density under class index\(es\) \[1\]"):
            proba_from_joint(jll.copy(), log=log)
    with pytest.raises(ValueError, match="NaN"):
        check_joint(jll)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_infinite_score_is_refused(n_classes):
    jll = np.zeros((3, n_classes))
    jll[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"index 0\) have an infinite log-density"):
        proba_from_joint(jll.copy())


@pytest.mark.parametrize("n_classes", [2, 3])
def test_zero_density_under_every_class_is_refused_but_one_class_suffices(n_classes):
    jll = np.zeros((3, n_classes))
    jll[1] = -np.inf
    with pytest.raises(ValueError, match=r"index 1\) have zero density"):
        proba_from_joint(jll.copy())
    jll[1, -1] = -1e300  # one class with a (tiny) density: that class, with certainty
    proba = proba_from_joint(jll.copy())
    np.testing.assert_array_equal(proba[1], np.eye(n_classes)[-1])


def test_nan_log_odds_are_refused():
    with pytest.raises(ValueError, match=r"index 1\) have NaN log odds"):
        proba_from_log_odds(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="NaN log odds"):
        check_log_odds(np.array([np.nan]))
    np.testing.assert_array_equal(proba_from_log_odds(np.array([np.inf, -np.inf])), [[0, 1], [1, 0]])
