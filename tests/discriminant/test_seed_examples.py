"""Every worked example of seed 000 (section 8.1), plus the population rule and the Bayes error."""

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from discrim.discriminant import (
    KnownDensityClassifier,
    LinearDiscriminant,
    QuadraticDiscriminant,
    normal_boundaries,
)


def exact_moment_sample(rng, mean, cov, n):
    """n rows whose sample mean is ``mean`` and unbiased sample covariance is ``cov`` exactly."""
    z = rng.normal(size=(n, len(mean)))
    z -= z.mean(axis=0)
    # Whiten to identity sample covariance, then colour with cov's Cholesky factor.
    z = z @ np.linalg.inv(np.linalg.cholesky(np.atleast_2d(np.cov(z.T)))).T
    return z @ np.linalg.cholesky(cov).T + mean


def fit_lda_on_exact_moments(rng, mu1, mu2, cov, n=40):
    X = np.vstack([exact_moment_sample(rng, mu1, cov, n), exact_moment_sample(rng, mu2, cov, n)])
    y = np.repeat([1, 2], n)  # population 1 = classes_[0]
    return LinearDiscriminant().fit(X, y)


# ------------------------------------------------------------------ Example 8.2


def test_example_8_2_quadratic_rule():
    """mu1 = sigma1 = 1, mu2 = sigma2 = 2: x = 0 goes to population 1, boundaries -0.85, 2.18."""
    res = normal_boundaries(1, 1, 2, 2)
    np.testing.assert_allclose(res.points, [-0.85, 2.18], atol=5e-3)
    a, b, c = res.coefficients
    assert (a, b) == (-0.75, 1.0) and c == pytest.approx(2 * math.log(2))  # -3/4 x^2 + x + 2 log 2
    assert a * 0**2 + b * 0 + c == pytest.approx(2 * math.log(2))  # LHS at x = 0 is 2 log 2 > 0

    clf = KnownDensityClassifier([norm(1, 1), norm(2, 2)]).fit([[0.0], [1.0]], [1, 2])
    assert clf.predict([[0.0]])[0] == 1
    x = np.linspace(-4, 6, 1001)
    inside = (x > res.points[0]) & (x < res.points[1])
    np.testing.assert_array_equal(clf.predict(x[:, None]) == 1, inside)


def test_example_8_2_equal_variances_gives_x_below_three_halves():
    res = normal_boundaries(1, 1, 2, 1)
    assert res.coefficients[:2] == (0.0, -2.0) and res.coefficients[2] == 3.0  # -2x + 3 > 0
    assert res.region == [(-math.inf, 1.5)]
    clf = KnownDensityClassifier([norm(1, 1), norm(2, 1)]).fit([[0.0], [1.0]], [1, 2])
    np.testing.assert_array_equal(clf.predict([[1.49], [1.51], [-10.0], [10.0]]), [1, 2, 1, 2])


def test_example_8_2_qda_on_exact_moments_recovers_the_boundaries(rng):
    # The sample rule with sample means/variances equal to the populations' is the population rule.
    X = np.concatenate([exact_moment_sample(rng, [1.0], [[1.0]], 30),
                        exact_moment_sample(rng, [2.0], [[4.0]], 30)])
    qda = QuadraticDiscriminant().fit(X, np.repeat([1, 2], 30))
    x = np.array([[-0.86], [-0.84], [0.0], [2.17], [2.19]])
    np.testing.assert_array_equal(qda.predict(x), [2, 1, 1, 1, 2])


# ------------------------------------------------------------------ Example 2


@pytest.mark.parametrize("c", [0.5, 1.0, 3.0])
def test_example_2_identity_covariance(c, rng):
    mu1, mu2 = np.array([c, 0.0]), np.array([-c, 0.0])
    lda = fit_lda_on_exact_moments(rng, mu1, mu2, np.eye(2))
    np.testing.assert_allclose(lda.a_, [2 * c, 0.0], atol=1e-12)
    np.testing.assert_allclose(lda.h_, [0.0, 0.0], atol=1e-12)
    grid = rng.uniform(-5, 5, size=(500, 2))
    np.testing.assert_array_equal(lda.predict(grid) == 1, grid[:, 0] > 0)  # x1 > 0 -> Pi_1


# ------------------------------------------------------------------ Example 3


@pytest.mark.parametrize(
    "mu1, cov, a_expected, slope_expected",
    [
        ([1.0, 1.0], [[1.0, -0.9], [-0.9, 1.0]], [20.0, 20.0], -1.0),
        ([2.0, 1.0], [[1.0, 0.09], [0.09, 0.1]], [2.39, 17.8], -0.13),
    ],
)
def test_example_3_general_covariance(mu1, cov, a_expected, slope_expected, rng):
    mu1, cov = np.array(mu1), np.array(cov)
    lda = fit_lda_on_exact_moments(rng, mu1, -mu1, cov)
    np.testing.assert_allclose(lda.covariance_, cov, atol=1e-12)
    np.testing.assert_allclose(lda.a_, np.linalg.solve(cov, 2 * mu1), rtol=1e-10)
    np.testing.assert_allclose(lda.a_, a_expected, rtol=5e-3)  # the seed rounds to 3 figures
    np.testing.assert_allclose(lda.h_, [0.0, 0.0], atol=1e-12)
    slope = -lda.a_[0] / lda.a_[1]
    assert slope == pytest.approx(slope_expected, abs=5e-3)
    # The boundary a'x = 0 is the line y = slope * x: points just above/below it split.
    x = np.linspace(-3, 3, 61)
    above = np.column_stack([x, slope * x + 1e-3])
    below = np.column_stack([x, slope * x - 1e-3])
    side = 1 if lda.a_[1] > 0 else 2
    assert np.all(lda.predict(above) == side) and np.all(lda.predict(below) == 3 - side)


# ------------------------------------------------------------------ population rule


def test_known_gaussian_densities_agree_with_population_lda_rule(rng):
    """Proposition 8.2: with the true parameters the ML rule is argmax_k delta_k(x)."""
    means = np.array([[0.0, 0.0, 0.0], [2.0, -1.0, 0.5], [-1.0, 1.5, 2.0], [1.0, 1.0, -2.0]])
    A = rng.normal(size=(3, 3))
    cov = A @ A.T + 0.5 * np.eye(3)
    clf = KnownDensityClassifier([multivariate_normal(m, cov) for m in means]).fit(means, [0, 1, 2, 3])
    X = rng.normal(scale=3, size=(2000, 3))
    S_inv = np.linalg.inv(cov)
    delta = 2 * X @ S_inv @ means.T - np.einsum("kd,de,ke->k", means, S_inv, means)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(delta, axis=1))
    # Equivalently argmin of the Mahalanobis distance.
    diff = X[:, None, :] - means[None]
    maha = np.einsum("nkd,de,nke->nk", diff, S_inv, diff)
    np.testing.assert_array_equal(clf.predict(X), np.argmin(maha, axis=1))
    # And the sample rule fitted to the population moments gives identical posteriors.
    Xtr = np.vstack([exact_moment_sample(rng, m, cov, 25) for m in means])
    lda = LinearDiscriminant().fit(Xtr, np.repeat(np.arange(4), 25))
    np.testing.assert_allclose(lda.predict_proba(X), clf.predict_proba(X), rtol=1e-8, atol=1e-12)


# ------------------------------------------------------------------ Bayes error


def _linear_rule_error(lda, mu1, mu2, cov):
    """Exact error of the rule "Pi_1 iff a'(x - h) > 0" on N(mu1, cov) vs N(mu2, cov), equal priors."""
    a, h = lda.a_, lda.h_
    sd = math.sqrt(a @ cov @ a)
    miss1 = norm.cdf(-(a @ (mu1 - h)) / sd)  # P(a'(x - h) <= 0 | Pi_1)
    miss2 = norm.cdf((a @ (mu2 - h)) / sd)  # P(a'(x - h) > 0 | Pi_2)
    return 0.5 * (miss1 + miss2)


def test_sample_rule_error_approaches_the_bayes_error():
    rng = np.random.default_rng(2026)
    mu1, mu2 = np.array([0.0, 0.0, 0.0]), np.array([1.5, 1.0, -0.5])
    cov = np.array([[1.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.5]])
    delta = math.sqrt((mu1 - mu2) @ np.linalg.solve(cov, mu1 - mu2))
    bayes = norm.cdf(-delta / 2)  # error of the population ML rule, equal priors

    excess = {}
    for n in (20, 20_000):
        X = np.vstack([rng.multivariate_normal(mu1, cov, n), rng.multivariate_normal(mu2, cov, n)])
        lda = LinearDiscriminant().fit(X, np.repeat([1, 2], n))
        excess[n] = _linear_rule_error(lda, mu1, mu2, cov) - bayes
    # No rule beats the Bayes rule; the estimation error of a and h enters the error to second
    # order, O(p / n): about 1e-4 here with n = 20,000 per class and p = 3.
    assert excess[20] >= -1e-12 and excess[20_000] >= -1e-12
    assert excess[20_000] < 2e-3
    assert excess[20_000] < excess[20]

    # The test error on a large independent test set estimates that error: 400,000 test rows
    # give a standard error of sqrt(p (1 - p) / 400,000) < 8e-4; allow 4 standard errors.
    m = 200_000
    Xt = np.vstack([rng.multivariate_normal(mu1, cov, m), rng.multivariate_normal(mu2, cov, m)])
    yt = np.repeat([1, 2], m)
    test_error = np.mean(lda.predict(Xt) != yt)
    se = math.sqrt(bayes * (1 - bayes) / (2 * m))
    assert abs(test_error - (bayes + excess[20_000])) < 4 * se
    assert abs(test_error - bayes) < 4 * se + 2e-3
