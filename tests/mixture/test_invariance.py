"""Gaussian mixtures are invariant to translating and rescaling the features (issue 17).

A translation by ``t`` and a rescaling by ``s`` (with ``reg_covar`` rescaled by ``s**2``, since it is
an absolute variance) map a fit to the fit of the transformed data from the same random start:
means ``s * mean + t``, covariances ``s**2 * cov``, the same responsibilities, and log-densities
lowered by the Jacobian ``d log s``. The data's own rounding at the offset bounds the agreement:
``eps * |t| / spread`` in the coordinates, so the tolerances below grow with ``|t|``.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture

COVARIANCE_TYPES = ["full", "tied", "diag", "spherical"]


def _blobs(seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(-2.0, 1.0, (120, 3)), rng.normal(2.0, 0.5, (120, 3))])


def _fit(ctype, X, reg_covar=1e-6, **kwargs):
    options = {"random_state": 0, "tol": 1e-10, "max_iter": 300, "reg_covar": reg_covar, **kwargs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FiniteMixture(Gaussian(ctype), 2, **options).fit(X)


def _assert_maps(ctype, a, b, X, Y, scale, shift, rtol):
    d = X.shape[1]
    np.testing.assert_allclose(b.params_["mean"], scale * a.params_["mean"] + shift, rtol=rtol,
                               atol=rtol * scale * (1 + abs(shift) / scale))
    np.testing.assert_allclose(b.params_["covariance"], scale**2 * a.params_["covariance"], rtol=rtol,
                               atol=rtol * scale**2)
    np.testing.assert_allclose(b.weights_, a.weights_, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(b.predict_proba(Y), a.predict_proba(X), atol=rtol)
    jacobian = d * np.log(scale)
    np.testing.assert_allclose(b.score_samples(Y) + jacobian, a.score_samples(X), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(b.lower_bound_ + jacobian, a.lower_bound_, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("ctype", COVARIANCE_TYPES)
@settings(max_examples=12, deadline=None)
@given(log10_shift=st.floats(0, 9), sign=st.sampled_from([-1.0, 1.0]), log10_scale=st.floats(-6, 6))
def test_fit_maps_under_translation_and_scaling(ctype, log10_shift, sign, log10_scale):
    X = _blobs()
    scale, shift = 10.0**log10_scale, sign * 10.0**log10_shift
    Y = scale * X + shift
    a = _fit(ctype, X)
    b = _fit(ctype, Y, reg_covar=1e-6 * scale**2)
    # Y holds scale * X + shift rounded: relative to the spread, eps * (1 + |shift| / scale).
    rtol = 1e-7 + 1e-13 * abs(shift) / scale
    _assert_maps(ctype, a, b, X, Y, scale, shift, rtol)


@pytest.mark.parametrize("ctype", COVARIANCE_TYPES)
@pytest.mark.parametrize("shift", [1e6, 1e8, 1e9, -1e9])
def test_the_issues_offsets_leave_log_densities_unchanged(ctype, shift):
    """At 1e8 the expanded squares cancelled to relative log-density errors up to 5 (tied, diag,
    spherical); now the rounding of the data (eps * 1e9 = 1e-7 absolute) is all that remains."""
    X = _blobs(1)
    a, b = _fit(ctype, X), _fit(ctype, X + shift)
    rel = np.max(np.abs(b.score_samples(X + shift) - a.score_samples(X)) / np.abs(a.score_samples(X)))
    assert rel < 1e-15 * abs(shift) * 10


@pytest.mark.parametrize("ctype", COVARIANCE_TYPES)
@pytest.mark.parametrize("shift", [2.0**20, 2.0**30, -(2.0**33)])
def test_exact_translations_of_grid_data_give_the_same_start(ctype, shift):
    """Data on a binary grid translate exactly: the initialisation (k-means++ about a data row)
    then picks the same rows, and the starting means move by the shift, within the resolution of
    floating point at the shift (before, the seeding's expanded squares picked other rows)."""
    X = np.round(_blobs(2) * 64) / 64
    a = _fit(ctype, X, max_iter=0)
    b = _fit(ctype, X + shift, max_iter=0)
    resolution = np.spacing(abs(shift))
    np.testing.assert_allclose(b.params_["mean"] - shift, a.params_["mean"], rtol=0, atol=resolution)
    np.testing.assert_allclose(b.params_["covariance"], a.params_["covariance"], rtol=1e-9)


@pytest.mark.parametrize("ctype", COVARIANCE_TYPES)
def test_tiny_spread_far_from_the_origin_is_fitted(ctype):
    """Millimetre-scale clusters at coordinates of 1e5 (metres): the fit matches the centred fit."""
    X = _blobs(3) * 1e-3
    a = _fit(ctype, X, reg_covar=1e-12)
    b = _fit(ctype, X + 1e5, reg_covar=1e-12)
    _assert_maps(ctype, a, b, X, X + 1e5, 1.0, 1e5, 1e-5)


@pytest.mark.parametrize("ctype", COVARIANCE_TYPES)
@pytest.mark.parametrize("shift", [0.0, 1e4, 1e6])
def test_float32_scoring_is_as_accurate_far_from_the_origin(ctype, shift):
    """``dtype="float32"`` scores rows exact in float32 to float32 precision at any offset, complete or
    not: the centre the terms assume is the one the rows subtract (it was cast from float64 after the
    terms, an error of a float32 ulp of the offset: 0.09 in log-density at 1e6)."""
    X = (_blobs() + shift).astype(np.float32).astype(np.float64)
    fm = _fit(ctype, X, init_params=np.repeat([0, 1], 120))
    Xm = X.copy()
    Xm[::7, 1] = np.nan
    for rows in (X, Xm):
        single = fm.set_params(dtype="float32").score_samples(rows)
        double = fm.set_params(dtype="float64").score_samples(rows)
        np.testing.assert_allclose(single, double, rtol=0, atol=2e-5)
