import numpy as np
import scipy.special
import scipy.stats

from discrim.distributions import _special


def test_log_factorial_rows_table_and_gammaln_paths(rng, monkeypatch):
    X = rng.integers(0, 40, size=(30, 4)).astype(float)
    want = scipy.special.gammaln(X + 1).sum(axis=1)
    np.testing.assert_allclose(_special.log_factorial_rows(X), want, rtol=1e-13)
    monkeypatch.setattr(_special, "_TABLE_MAX", 10)  # force the gammaln path
    np.testing.assert_allclose(_special.log_factorial_rows(X), want, rtol=1e-13)


def test_log_binomial_coefficient_rows(rng, monkeypatch):
    n = rng.integers(1, 50, size=30)
    X = rng.binomial(n[:, None], 0.4, size=(30, 3)).astype(float)
    want = np.log(scipy.special.comb(n[:, None], X)).sum(axis=1)
    np.testing.assert_allclose(_special.log_binomial_coefficient_rows(n.astype(float), X), want, rtol=1e-10)
    Xs = rng.binomial(20, 0.4, size=(30, 3)).astype(float)
    want = scipy.stats.binom(20, 0.5).logpmf(Xs).sum(axis=1) - 20 * 3 * np.log(0.5)
    np.testing.assert_allclose(_special.log_binomial_coefficient_rows(20.0, Xs), want, rtol=1e-10)
    monkeypatch.setattr(_special, "_TABLE_MAX", 5)
    np.testing.assert_allclose(_special.log_binomial_coefficient_rows(20.0, Xs), want, rtol=1e-10)
