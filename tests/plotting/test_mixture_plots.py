"""Smoke tests of the mixture plots: the artists drawn carry the fitted numbers."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.contour import ContourSet  # noqa: E402

from discrim.distributions import Binomial, Categorical, Gaussian, Poisson  # noqa: E402
from discrim.mixture import FiniteMixture, select_mixture  # noqa: E402
from discrim.plotting.mixture import plot_convergence, plot_mixture_density, plot_selection  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def gaussian_1d(rng):
    X = np.concatenate([rng.normal(-3, 1, 100), rng.normal(3, 1, 100)])[:, None]
    return FiniteMixture(Gaussian(covariance_type="full"), n_components=2, random_state=0).fit(X), X


def test_convergence_curve_is_the_lower_bound_trace(gaussian_1d):
    mixture, _ = gaussian_1d
    ax = plot_convergence(mixture)
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_ydata(), mixture.lower_bounds_)
    np.testing.assert_array_equal(line.get_xdata(), np.arange(mixture.n_iter_ + 1))
    assert ax.get_xlabel().startswith("iteration")
    assert ax.get_title() == f"EM convergence (converged after {mixture.n_iter_} iterations)"
    one = FiniteMixture(Gaussian(), 1, max_iter=1).fit(np.arange(6.0)[:, None])  # the MLE at once
    assert plot_convergence(one).get_title().endswith("after 1 iteration)")


def test_one_gaussian_column_histogram_and_density(gaussian_1d):
    mixture, X = gaussian_1d
    fig, ax = plt.subplots()
    assert plot_mixture_density(mixture, X, ax=ax) is ax
    assert len(ax.patches) > 0  # histogram bars
    lines = ax.get_lines()
    assert len(lines) == 3  # two weighted components and the mixture
    total = lines[-1]
    x, dens = total.get_xdata(), total.get_ydata()
    np.testing.assert_allclose(dens, np.exp(mixture.score_samples(x[:, None])))
    np.testing.assert_allclose(lines[0].get_ydata() + lines[1].get_ydata(), dens, rtol=1e-10)
    assert np.trapezoid(dens, x) == pytest.approx(1.0, abs=0.02)


def test_two_gaussian_columns_scatter_and_contours(rng):
    X = np.vstack([rng.normal([0, 0], 1, (80, 2)), rng.normal([5, 5], 1, (80, 2))])
    mixture = FiniteMixture(Gaussian(covariance_type="full"), n_components=2, random_state=0).fit(X)
    ax = plot_mixture_density(mixture, X)
    offsets = [c.get_offsets() for c in ax.collections if hasattr(c, "get_offsets")]
    assert any(o.shape == X.shape for o in offsets)  # the data
    assert any(np.allclose(np.sort(o, axis=0), np.sort(mixture.params_["mean"], axis=0)) for o in offsets
               if o.shape == (2, 2))  # the component means
    assert any(isinstance(c, ContourSet) for c in ax.collections)


def test_rows_with_missing_values_are_left_out_of_the_points(rng):
    X = np.vstack([rng.normal([0, 0], 1, (80, 2)), rng.normal([5, 5], 1, (80, 2))])
    X[::4, 1] = np.nan
    mixture = FiniteMixture(Gaussian(covariance_type="full"), n_components=2, random_state=0).fit(X)
    ax = plot_mixture_density(mixture, X)
    complete = X[~np.isnan(X).any(axis=1)]
    assert any(o.shape == complete.shape and np.allclose(o, complete)
               for o in (c.get_offsets() for c in ax.collections if hasattr(c, "get_offsets")))
    with pytest.raises(ValueError, match="every row of X has a missing value"):
        plot_mixture_density(mixture, np.full((3, 2), np.nan))


@pytest.mark.parametrize("family", [Poisson(), Binomial(n_trials=12)])
def test_one_discrete_column_bars_and_pmf(rng, family):
    X = np.concatenate([rng.binomial(12, 0.2, 100), rng.binomial(12, 0.8, 100)])[:, None].astype(float)
    mixture = FiniteMixture(family, n_components=2, random_state=0).fit(X)
    ax = plot_mixture_density(mixture, X)
    observed = np.unique(X)
    assert len(ax.patches) == observed.size
    pmf_line = ax.get_lines()[0]
    values = pmf_line.get_xdata()
    np.testing.assert_allclose(pmf_line.get_ydata(), np.exp(mixture.score_samples(values[:, None])))
    assert values[0] == 0 and values[-1] >= X.max()
    if isinstance(family, Binomial):
        assert values[-1] == 12
        assert pmf_line.get_ydata().sum() == pytest.approx(1.0)


def test_categorical_pmf_covers_every_code(rng):
    X = rng.choice(3, p=[0.5, 0.3, 0.2], size=(120, 1)).astype(float)
    mixture = FiniteMixture(Categorical(n_categories=5), n_components=1, random_state=0).fit(X)
    ax = plot_mixture_density(mixture, X)
    pmf_line = ax.get_lines()[0]
    np.testing.assert_array_equal(pmf_line.get_xdata(), np.arange(5))
    np.testing.assert_allclose(pmf_line.get_ydata()[:3], np.bincount(X[:, 0].astype(int)) / 120, atol=1e-9)
    assert pmf_line.get_ydata().sum() == pytest.approx(1.0)


def test_two_discrete_columns_image(rng):
    X = np.column_stack([rng.poisson(2.0, 150), rng.poisson(6.0, 150)]).astype(float)
    mixture = FiniteMixture(Poisson(), n_components=2, random_state=0).fit(X)
    ax = plot_mixture_density(mixture, X)
    assert len(ax.collections) >= 2  # the pmf image and the observed points


def test_more_than_two_columns_is_an_error(rng):
    X = rng.normal(size=(50, 3))
    mixture = FiniteMixture(Gaussian(covariance_type="diag"), n_components=1).fit(X)
    with pytest.raises(ValueError, match="one or two columns"):
        plot_mixture_density(mixture, X)


def test_unfitted_mixture_is_rejected():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        plot_convergence(FiniteMixture(Poisson()))


def test_selection_plot_draws_the_criterion_per_family(rng):
    X = np.concatenate([rng.normal(-4, 1, 150), rng.normal(4, 1, 150)])[:, None]
    result = select_mixture(X, {"V": Gaussian(), "E": Gaussian(covariance_type="tied")}, [1, 2, 3], random_state=0)
    ax = plot_selection(result)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["V", "E"]
    for line, (_, rows) in zip(lines, result.table.groupby("family", sort=False)):
        np.testing.assert_array_equal(line.get_xdata(), rows["n_components"])
        np.testing.assert_allclose(line.get_ydata(), rows["bic"])
    (marker,) = [c for c in ax.collections if c.get_label().startswith("best")]
    best = result.table.iloc[result.best_index]
    np.testing.assert_allclose(marker.get_offsets()[0], [best["n_components"], best["bic"]])


@pytest.mark.parametrize("columns, family", [(["a"], "gaussian"), (["a", "b"], "gaussian"), (["a"], "poisson"),
                                             (["a", "b"], "poisson")])
def test_a_mixture_fitted_on_a_dataframe_is_drawn_without_feature_name_warnings(rng, columns, family):
    # the grid went to score_samples as a bare array: scikit-learn warned about the plot's own call
    import warnings

    import pandas as pd

    from discrim.distributions import Poisson

    values = rng.poisson(4.0, size=(200, len(columns))) if family == "poisson" else rng.normal(size=(200, len(columns)))
    X = pd.DataFrame(values.astype(float), columns=columns)
    fm = FiniteMixture(Poisson() if family == "poisson" else Gaussian(), 2, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        ax = plot_mixture_density(fm, X)
    assert ax.get_legend() is not None


def test_the_density_plot_names_its_axes_after_the_columns():
    # both axes were left blank (one column: only "density"); the command line set them itself
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(100, 2)) + np.repeat([[0, 0], [4, 4]], 50, axis=0), columns=["eruptions", "waiting"])
    ax = plot_mixture_density(FiniteMixture(Gaussian(), 2, random_state=0).fit(X), X)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("eruptions", "waiting")
    ax = plot_mixture_density(FiniteMixture(Gaussian(), 2, random_state=0).fit(X[["waiting"]].to_numpy()), X[["waiting"]])
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("waiting", "density")
