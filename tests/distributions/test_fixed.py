"""Fixed: parameters held through EM, the constrained M-steps, the parameter count and BIC."""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.distributions import Categorical, Fixed, Gamma, Gaussian, GaussianStats, LogNormal, Poisson, Product, StudentT
from discrim.mixture import FiniteMixture
from discrim.persistence import load_model, save_model


def _t_data(rng, n=600):
    truth = StudentT("diag").make_params({"mean": [[0.0, 0.0], [6.0, 6.0]], "covariance": [[1.0, 1.0], [2.0, 1.0]],
                                          "dof": [3.0, 8.0]}, 2, 2)
    return StudentT("diag").sample(truth, [n // 2, n // 2], rng)


def test_fixed_entries_hold_through_em_and_leave_the_count(rng):
    X = _t_data(rng)
    fam = Fixed(StudentT("diag"), {"dof": 4.0}, components=[0])
    fm = FiniteMixture(fam, 2, random_state=0, tol=1e-8, max_iter=300).fit(X)
    assert fm.params_["dof"][0] == 4.0 and fm.params_["dof"][1] != 4.0
    assert np.all(np.diff(fm.lower_bounds_) > -1e-10)
    free = FiniteMixture(StudentT("diag"), 2, random_state=0).fit(X)
    assert fm._n_parameters() == free._n_parameters() - 1
    loglik = fm.score(X) * X.shape[0]
    assert fm.bic(X) == pytest.approx(-2 * loglik + fm._n_parameters() * np.log(X.shape[0]), rel=1e-12)


def test_fixed_start_values_hold_too(rng):
    X = rng.poisson([1.0, 5.0], size=(100, 2)).astype(float)
    fam = Fixed(Poisson(), {"rate": [2.0, 2.0]}, components=[1])
    fm = FiniteMixture(fam, 2, params_init={"rate": [[1.0, 1.0], [9.0, 9.0]]}, max_iter=0).fit(X)
    np.testing.assert_array_equal(fm.params_["rate"][1], [2.0, 2.0])


def test_whole_parameters_and_nesting(rng):
    X = rng.poisson([1.0, 5.0], size=(200, 2)).astype(float)
    inner = Fixed(Poisson(), {"rate": [[1.0, 5.0]]}, components=[0])
    fam = Fixed(inner, {"rate": [[3.0, 3.0]]}, components=[2])
    fm = FiniteMixture(fam, 3, random_state=0).fit(X)
    np.testing.assert_array_equal(fm.params_["rate"][[0, 2]], [[1.0, 5.0], [3.0, 3.0]])
    assert fam.n_parameters(2, 3) == 2
    cat = Fixed(Categorical(n_categories=[2, 3]), {"probs": [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]})
    assert cat.n_parameters(2, 2) == 0


def test_gaussian_covariance_fixed(rng):
    X = rng.normal(size=(200, 2)) + np.repeat([[0.0, 0.0], [5.0, 5.0]], 100, axis=0)
    fam = Fixed(Gaussian("full"), {"covariance": np.eye(2)})
    fm = FiniteMixture(fam, 2, random_state=0).fit(X)
    np.testing.assert_array_equal(fm.params_["covariance"], [np.eye(2)] * 2)
    assert fm._n_parameters() == 2 * 2 + 1



@pytest.mark.parametrize("model", ["full", "VEV", "EEI", "tied"])
def test_gaussian_mean_fixed_gives_the_covariance_about_it(rng, model):
    X = rng.normal(size=(300, 2)) @ np.array([[1.0, 0.4], [0.0, 0.7]]) + [1.0, -2.0]
    fam = Fixed(Gaussian(model, reg_covar=0.0), {"mean": [0.0, 0.0]})
    fm = FiniteMixture(fam, 1).fit(X)
    np.testing.assert_array_equal(fm.params_["mean"], [[0.0, 0.0]])
    about = X.T @ X / X.shape[0]  # the scatter about the fixed mean 0, over n
    expected = Gaussian(model, reg_covar=0.0).params_from_stats(
        GaussianStats(weight=np.array([300.0]), mean=np.zeros((1, 2)),
                      scatter=(about * 300)[None] if fam.family._storage != "diag" else np.diag(about * 300)[None]))
    np.testing.assert_allclose(fm.params_["covariance"], expected.covariance, rtol=1e-10)


def _maximise(nll, x0):
    res = scipy.optimize.minimize(nll, x0, method="Nelder-Mead",
                                  options={"xatol": 1e-11, "fatol": 1e-13, "maxiter": 20000})
    return res.x


def test_constrained_m_steps_maximise_given_the_fixed_values(rng):
    # Gamma with its shape fixed: the rate maximises; with its rate fixed: the shape maximises
    x = rng.gamma(3.0, 0.5, size=(150, 1))
    w = rng.uniform(0.5, 2.0, size=150)
    resp = np.ones((150, 1))
    stats = Gamma().suff_stats(x, resp, w)
    got = Fixed(Gamma(), {"shape": 2.0}).params_from_stats(stats)
    rate = np.exp(_maximise(lambda t: -w @ scipy.stats.gamma(2.0, scale=np.exp(-t[0])).logpdf(x[:, 0]), [0.0]))
    assert got.shape[0, 0] == 2.0 and got.rate[0, 0] == pytest.approx(rate[0], rel=1e-6)
    got = Fixed(Gamma(), {"rate": 1.5}).params_from_stats(stats)
    shape = np.exp(_maximise(lambda t: -w @ scipy.stats.gamma(np.exp(t[0]), scale=1 / 1.5).logpdf(x[:, 0]), [0.0]))
    assert got.rate[0, 0] == 1.5 and got.shape[0, 0] == pytest.approx(shape[0], rel=1e-6)
    # LogNormal with mu fixed: sigma about it
    fam = LogNormal(reg_covar=0.0)
    got = Fixed(fam, {"mu": 0.3}).params_from_stats(fam.suff_stats(x, resp, w))
    sigma = np.exp(_maximise(lambda t: -w @ scipy.stats.lognorm(s=np.exp(t[0]), scale=np.exp(0.3)).logpdf(x[:, 0]),
                             [0.0]))
    assert got.sigma[0, 0] == pytest.approx(sigma[0], rel=1e-6)
    # StudentT with its mean fixed: the scale about it (one M-step given E[u])
    t = StudentT("diag", reg_covar=0.0)
    p = t.make_params({"mean": [[0.0, 0.0]], "covariance": [[1.0, 1.0]], "dof": [4.0]}, 1, 2)
    X = _t_data(rng)[:300]
    stats = t.suff_stats(X, np.ones((300, 1)), params=p)
    got = Fixed(t, {"mean": [0.5, -0.5]}).params_from_stats(stats, current=p)
    u = (4.0 + 2) / (4.0 + ((X - p.mean[0]) ** 2 / p.covariance[0]).sum(axis=1))
    want = (u[:, None] * (X - [0.5, -0.5]) ** 2).sum(axis=0) / 300
    np.testing.assert_allclose(got.covariance[0], want, rtol=1e-10)


def test_fixed_in_a_product_by_qualified_name(rng, tmp_path):
    fam = Fixed(Product([("g", Gaussian("diag"), [0]), ("p", Poisson(), [1])]), {"p__rate": [[4.0]]})
    X = np.c_[rng.normal(size=100), rng.poisson(4.0, size=100)]
    fm = FiniteMixture(fam, 2, random_state=0).fit(X)
    np.testing.assert_array_equal(fm.params_["p__rate"], [[4.0], [4.0]])
    assert fm._n_parameters() == 2 * 2 + 1
    save_model(fm, tmp_path / "fixed.skops")
    loaded = load_model(tmp_path / "fixed.skops")
    np.testing.assert_array_equal(loaded.score_samples(X), fm.score_samples(X))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), which=st.sampled_from(["shape", "rate"]))
def test_em_with_fixed_gamma_parameters_never_decreases(seed, which):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.gamma(2.0, 1.0, size=(40, 1)), rng.gamma(20.0, 1.0, size=(40, 1))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(Fixed(Gamma(), {which: 1.5}, components=[0]), 2, random_state=seed, tol=0,
                           max_iter=15).fit(X)
    assert fm.params_[which][0, 0] == 1.5
    lb = fm.lower_bounds_
    assert np.all(np.diff(lb) >= -1e-9 * np.maximum(1.0, np.abs(lb[1:]))), np.diff(lb).min()


@pytest.mark.parametrize("kwargs, match", [
    ({"family": "gaussian", "params": {"mean": 0}}, "family must be a component family"),
    ({"family": Poisson(), "params": {}}, "non-empty dict"),
    ({"family": Poisson(), "params": {"rate": 1.0}, "components": "0"}, "components"),
    ({"family": Poisson(), "params": {"lam": 1.0}}, "does not have"),
    ({"family": Poisson(), "params": {"rate": -1.0}}, "nonnegative"),
    ({"family": Poisson(), "params": {"rate": 1.0}, "components": [5]}, "n_components"),
    ({"family": Poisson(), "params": {"rate": [1.0, 2.0, 3.0]}}, "does not fit the parameter's shape"),
])
def test_bad_fixed_values(kwargs, match):
    X = np.random.default_rng(0).poisson(2.0, size=(30, 2)).astype(float)
    with pytest.raises(ValueError, match=match):
        FiniteMixture(Fixed(**kwargs), 2, random_state=0).fit(X)


@pytest.mark.parametrize("model", ["EII", "EEI", "VEI", "EVI", "VEE", "EVE", "VVE", "EEV", "VEV", "EVV"])
def test_covariance_fixed_against_a_shared_volume_shape_or_orientation_is_refused(model):
    """Under a model whose components share a volume, shape or orientation, a covariance fixed for some components
    (or to different values) left the free components' M-step breaking the constraint: EII fitted variances
    0.83 and 1.0, and VEV counted 7 parameters for 6. One value for every component satisfies any constraint."""
    rng = np.random.default_rng(2)
    X = np.vstack([rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], 150),
                   rng.multivariate_normal([3, 2], np.diag([0.5, 0.8]), 100)])
    one = 1.0 if model[2] == "I" and model[1] == "I" else (np.ones(2) if model[2] == "I" else np.eye(2))
    with pytest.raises(ValueError, match=f"under {model}, whose components share"):
        FiniteMixture(Fixed(Gaussian(model), {"covariance": one}, components=[1]), 2, random_state=0).fit(X)
    fitted = FiniteMixture(Fixed(Gaussian(model), {"covariance": one}), 2, random_state=0).fit(X)
    np.testing.assert_array_equal(fitted.params_["covariance"][0], fitted.params_["covariance"][1])


def test_a_gamma_rate_fixed_for_one_component_fits_without_numpy_warnings():
    # the M-step took the log of the placeholders (0) of the rates not fixed: "divide by zero" and
    # "invalid value" on every iteration, though the fit was right
    import warnings

    from discrim.distributions import Gamma
    from discrim.mixture import FiniteMixture

    rng = np.random.default_rng(0)
    x = np.r_[rng.gamma(2.0, 1 / 1.5, 300), rng.gamma(5.0, 1.0, 300)][:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = FiniteMixture(Fixed(Gamma(), {"rate": 1.5}, components=[0]), 2, random_state=0).fit(x)
    assert model.params_["rate"][0, 0] == 1.5 and np.isfinite(model.params_["shape"]).all()
