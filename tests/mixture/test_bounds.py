"""FiniteMixture and select_mixture refuse absurd work and unrepresentable data up front, and do
not depend on the scale of the sample weights (issue 17)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.distributions import Bernoulli, Binomial, Categorical, Gaussian, Poisson
from discrim.distributions.categorical import MAX_CATEGORIES
from discrim.mixture import FiniteMixture, select_mixture
from discrim.mixture.finite_mixture import MAX_N_INIT


def _gaussian_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(-3, 1, (n // 2, 2)), rng.normal(3, 1, (n - n // 2, 2))])


def _counts(seed=0):
    return np.random.default_rng(seed).poisson(3, size=(40, 2)).astype(float)


@pytest.mark.parametrize("n_init", [MAX_N_INIT + 1, 10**9])
def test_n_init_beyond_its_maximum_is_refused_by_name(n_init):
    with pytest.raises(ValueError, match="n_init"):
        FiniteMixture(Gaussian(), 2, n_init=n_init).fit(_gaussian_data())


@pytest.mark.parametrize("k", [61, 10**9])
def test_more_components_than_rows_is_refused_by_name(k):
    with pytest.raises(ValueError, match="n_components.*n_samples"):
        FiniteMixture(Gaussian(), k).fit(_gaussian_data())


def test_max_iter_zero_keeps_the_start_and_negative_is_refused():
    X = _gaussian_data()
    start = FiniteMixture(Gaussian(), 2, max_iter=0, random_state=0).fit(X)
    assert start.n_iter_ == 0 and len(start.lower_bounds_) == 1 and not start.converged_
    with pytest.raises(ValueError, match="max_iter"):
        FiniteMixture(Gaussian(), 2, max_iter=-1).fit(X)


@pytest.mark.parametrize("spec", [range(1, 10**9), 10**9, [1, 2, 61]])
def test_component_range_beyond_the_rows_is_refused_before_any_fit(spec):
    with pytest.raises(ValueError, match="n_components_range.*rows"):
        select_mixture(_gaussian_data(), [Gaussian()], spec)


def test_a_grid_of_too_many_cells_is_refused():
    X = np.random.default_rng(0).normal(size=(20_000, 1))
    with pytest.raises(ValueError, match="n_components_range holds more than"):
        select_mixture(X, [Gaussian(), Gaussian("diag")], range(1, 6000))


def test_categorical_codes_beyond_the_maximum_are_refused():
    X = np.array([[0.0], [1.0], [1e9]])
    with pytest.raises(ValueError, match="n_categories"):
        FiniteMixture(Categorical(n_categories=10**9 + 1), 2).fit(X)
    with pytest.raises(ValueError, match="n_categories=65537 exceeds"):
        FiniteMixture(Categorical(n_categories=MAX_CATEGORIES + 1), 2).fit(X[:2])


def test_sample_too_large_for_memory_is_refused_and_small_draws_work():
    model = FiniteMixture(Gaussian(), 2, random_state=0).fit(_gaussian_data())
    with pytest.raises(ValueError, match="n_samples=10000000000 would need"):
        model.sample(10**10)
    X, labels = model.sample(7)
    assert X.shape == (7, 2) and labels.shape == (7,)


@pytest.mark.parametrize("family, X", [
    (Gaussian(), _gaussian_data()), (Gaussian("diag"), _gaussian_data()), (Poisson(), _counts()),
])
@pytest.mark.parametrize("where", ["fit", "score_samples", "predict_proba", "score", "select_mixture"])
def test_values_beyond_the_magnitude_limit_are_refused_by_name(family, X, where):
    model = FiniteMixture(family, 2, random_state=0).fit(X)
    far = X.copy()
    far[3, 1] = 1e300
    with pytest.raises(ValueError, match=r"X has values of magnitude up to 1e\+300"):
        if where == "fit":
            FiniteMixture(family, 2).fit(far)
        elif where == "select_mixture":
            select_mixture(far, [family], [1, 2])
        else:
            getattr(model, where)(far)


@pytest.mark.parametrize("family, X", [
    (Gaussian(), _gaussian_data()), (Gaussian("spherical"), _gaussian_data()), (Poisson(), _counts()),
    (Binomial(12), _counts()), (Bernoulli(), (_counts() > 3).astype(float)), (Categorical(15), _counts()),
])
@settings(max_examples=15, deadline=None)
@given(log10_scale=st.floats(-310, 300))
def test_fit_does_not_depend_on_the_scale_of_the_weights(family, X, log10_scale):
    """Weights times any factor give the fit of the unscaled weights: exactly for a power of two,
    within the rounding of the scaled weights otherwise (subnormal below 2.2e-308)."""
    rng = np.random.default_rng(1)
    w = rng.uniform(0.5, 2.0, size=X.shape[0])
    scaled = w * 10.0**log10_scale
    reference = FiniteMixture(family, 2, random_state=0, tol=1e-8).fit(X, sample_weight=w)
    model = FiniteMixture(family, 2, random_state=0, tol=1e-8).fit(X, sample_weight=scaled)
    # Relative rounding of the scaled weights: 2**-52, or coarser for subnormal weights.
    rounding = max(2.0**-52, float(np.max(np.abs(scaled / 10.0**log10_scale - w) / w)) if log10_scale > -300 else 1e-6)
    rtol = max(1e-9, 1e3 * rounding)
    np.testing.assert_allclose(model.weights_, reference.weights_, rtol=rtol, atol=rtol)
    for name, value in reference.params_.items():
        np.testing.assert_allclose(model.params_[name], value, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(model.lower_bound_, reference.lower_bound_, rtol=rtol)


@pytest.mark.parametrize("exponent", [-1060, -1000, -1, 1, 1000])
def test_power_of_two_weight_scales_give_bit_identical_fits(exponent):
    X = _gaussian_data()
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=X.shape[0])
    reference = FiniteMixture(Gaussian(), 2, random_state=0).fit(X, sample_weight=w)
    scaled = np.ldexp(w, exponent)
    model = FiniteMixture(Gaussian(), 2, random_state=0).fit(X, sample_weight=scaled)
    if exponent >= -1021:  # normal numbers: the rescale is exact
        np.testing.assert_array_equal(model.params_["mean"], reference.params_["mean"])
        np.testing.assert_array_equal(model.params_["covariance"], reference.params_["covariance"])
        assert model.lower_bound_ == reference.lower_bound_
    else:  # subnormal weights lost digits before the fit saw them
        np.testing.assert_allclose(model.params_["mean"], reference.params_["mean"], rtol=1e-6)
