"""Gamma, LogNormal and Exponential components collapsing onto a repeated value (a new user's tour).

Their likelihood grows without bound where a component sits on tied values (40 rows at 3.0, zeros
among counts): such fits warned nothing and won select_mixture's BIC (-136.6 against about 784 for
the sensible fits), where a Gaussian's collapse is flagged.
"""

import warnings

import numpy as np
import pytest

from discrim.distributions import Exponential, Gamma, Gaussian, LogNormal, Poisson, Product, StudentT
from discrim.exceptions import CollapsingComponentWarning, DataScaleWarning
from discrim.mixture import FiniteMixture, select_mixture


def _tied(seed=6):
    rng = np.random.default_rng(seed)
    return np.r_[rng.gamma(2.0, 1.0, 200), np.full(40, 3.0)][:, None]


def _counts_with_zeros():
    rng = np.random.default_rng(2)
    return np.r_[rng.poisson(0.2, (300, 1)), rng.poisson(6, (200, 1))].astype(float)


@pytest.mark.parametrize("family, X, seed", [(Gamma(), _tied(), 2), (LogNormal(), _tied(), 0),
                                             (Exponential(), _counts_with_zeros(), 0)])
def test_a_component_on_tied_values_is_named_collapsing(family, X, seed):
    with pytest.warns(CollapsingComponentWarning, match=r"Component\(s\) \[\d\] are collapsing"):
        model = FiniteMixture(family, 2, random_state=seed).fit(X)
    variances = model.family_.component_variances(model._params)
    assert variances.min() < 1e-8 * variances.max()  # the collapse itself


def test_select_mixture_leaves_the_collapsed_fits_out():
    X = _tied()
    selection = select_mixture(X, {"gamma": Gamma(), "lognorm": LogNormal(), "gauss": Gaussian("full")}, 3,
                               random_state=0)
    assert selection.best_estimator.bic(X) > 700  # not the collapsed gamma,2 at -136.6
    table = selection.table
    collapsed = table[(table["family"] == "gamma") & (table["n_components"] == 2)]
    assert bool(collapsed["degenerate"].iloc[0])
    counts = _counts_with_zeros()
    chosen = select_mixture(counts, {"pois": Poisson(), "gauss": Gaussian("full"), "exp": Exponential()}, 3)
    assert chosen.best_params["family"] != "exp"  # exp,2 put a rate of 1e12 on the zeros


def test_a_product_names_its_parts_collapsing_components():
    X = _tied()
    part = FiniteMixture(Gamma(), 2, random_state=2)
    with pytest.warns(CollapsingComponentWarning):
        part.fit(X)
    product = FiniteMixture(Product([("g", Gamma(), [0]), ("p", Poisson(), [1])]), 2, random_state=2,
                            params_init={"g__shape": part.params_["shape"], "g__rate": part.params_["rate"],
                                         "p__rate": [[1.0], [3.0]]}, weights_init=part.weights_, max_iter=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollapsingComponentWarning)
        product.fit(np.c_[X, np.random.default_rng(0).poisson(2.0, X.shape[0])])
    assert product.family_.collapsing_components(product._params).tolist() == \
        part.family_.collapsing_components(part._params).tolist()


@pytest.mark.parametrize("family, draw", [(Gamma(), lambda rng, n: rng.gamma(2.0, 1.0, n)),
                                          (LogNormal(), lambda rng, n: rng.lognormal(0.0, 0.5, n)),
                                          (Exponential(), lambda rng, n: rng.exponential(2.0, n))])
def test_healthy_fits_are_not_called_collapsing(family, draw):
    rng = np.random.default_rng(0)
    X = np.r_[draw(rng, 300), 5.0 + draw(rng, 300)][:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapsingComponentWarning)
        model = FiniteMixture(family, 2, random_state=0).fit(X)
    assert model.family_.collapsing_components(model._params).size == 0


def test_comparing_discrete_and_continuous_families_warns():
    counts = _counts_with_zeros()
    with pytest.warns(UserWarning, match=r"compares discrete families \(pois\) with continuous ones \(gauss, exp\)"):
        select_mixture(counts, {"pois": Poisson(), "gauss": Gaussian("full"), "exp": Exponential()}, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        select_mixture(counts, {"pois": Poisson()}, [1, 2])


@pytest.mark.parametrize("family, draw", [(Gamma(), lambda rng, n, m: rng.gamma(4.0, m, n)),
                                          (LogNormal(), lambda rng, n, m: rng.lognormal(np.log(m), 0.5, n)),
                                          (Exponential(), lambda rng, n, m: rng.exponential(m, n))])
def test_healthy_components_of_different_magnitudes_are_not_collapsing(family, draw):
    """A positive family's variance grows with its location: components at 1 and 1e5 are healthy.

    Their variances differ by 1e-10, which called the small one collapsing and made select_mixture
    mark the right 2-component fit degenerate and choose 1 component (lognormal: BIC 7142 against 5782).
    """
    rng = np.random.default_rng(8)
    X = np.r_[draw(rng, 200, 1.0), draw(rng, 200, 1e5)][:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapsingComponentWarning)
        model = FiniteMixture(family, 2, random_state=0).fit(X)
    means = np.sort(model.family_.component_means(model._params)[:, 0])
    assert means[1] / means[0] > 1e4  # the two components, each on its own magnitude
    assert model.family_.collapsing_components(model._params, scale=float(X.var())).size == 0
    selection = select_mixture(X, family, 3, random_state=0)
    assert not selection.table["degenerate"].any()
    assert selection.best_params["n_components"] == 2


@pytest.mark.parametrize("family", [Gamma(), LogNormal(), StudentT("diag"), Gaussian("diag")], ids=repr)
def test_features_without_spread_are_named_for_every_continuous_family(family):
    """Tied rows (or one row) drove a Gamma's shape to 5e12, a LogNormal's and a t's scale to 0 silently:
    the likelihood grows without bound. Every continuous family that needs two rows to estimate a spread
    now warns, naming the features (the Gaussian with several rows names them through reg_covar)."""
    rows = np.tile([[2.0, 3.0, 0.0]], (30, 1))
    rows[:, 2] = np.linspace(1.0, 4.0, 30)
    cases = [(rows[:1], r"3 feature\(s\) of X \(index 0, 1, 2\)")]
    if not isinstance(family, Gaussian):
        cases.append((rows, r"2 feature\(s\) of X \(index 0, 1\) are constant"))
    for X, match in cases:
        with pytest.warns(DataScaleWarning, match=match):
            FiniteMixture(family, 1).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataScaleWarning)
        FiniteMixture(family, 1).fit(np.random.default_rng(0).gamma(3.0, 1.0, (40, 2)))
        FiniteMixture(Exponential(), 1).fit(rows)  # one rate per feature: a constant feature is fine
