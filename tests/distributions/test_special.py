import numpy as np
import pytest
import scipy.special
import scipy.stats

from discrim.distributions import _special


@pytest.mark.parametrize("high", [40, _special._TABLE_MAX + 5000])  # the table, then gammaln
def test_log_factorial_rows_table_and_gammaln_paths(rng, high):
    X = rng.integers(0, high, size=(30, 4)).astype(float)
    X[0, 0] = high - 1  # the largest count decides the path
    want = scipy.special.gammaln(X + 1).sum(axis=1)
    np.testing.assert_allclose(_special.log_factorial_rows(X), want, rtol=1e-13)


@pytest.mark.parametrize("n_trials", [20, _special._TABLE_MAX + 1000])  # the table, then gammaln
def test_log_binomial_coefficient_rows(rng, n_trials):
    n = rng.integers(1, 50, size=30)
    X = rng.binomial(n[:, None], 0.4, size=(30, 3)).astype(float)
    want = np.log(scipy.special.comb(n[:, None], X)).sum(axis=1)
    np.testing.assert_allclose(_special.log_binomial_coefficient_rows(n.astype(float), X), want, rtol=1e-10)
    Xs = rng.binomial(n_trials, 0.4, size=(30, 3)).astype(float)
    want = scipy.stats.binom(n_trials, 0.5).logpmf(Xs).sum(axis=1) - n_trials * 3 * np.log(0.5)
    np.testing.assert_allclose(_special.log_binomial_coefficient_rows(float(n_trials), Xs), want, rtol=1e-10)