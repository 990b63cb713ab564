"""Pairs plots of fitted mixtures: panels, colours, ellipses against the covariances, densities against scipy."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.contour import ContourSet  # noqa: E402
from matplotlib.patches import Ellipse  # noqa: E402
from scipy import stats  # noqa: E402

from discrim.distributions import Gaussian, Poisson, StudentT  # noqa: E402
from discrim.mixture import FiniteMixture, gaussian_models, select_mixture  # noqa: E402
from discrim.plotting import plot_classification, plot_density, plot_selection, plot_uncertainty  # noqa: E402

STORAGES = ["full", "tied", "diag", "spherical", "VEV", "EEI"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def data(rng):
    centres = np.array([[0.0, 0.0, 0.0], [5.0, 1.0, 3.0], [1.0, 6.0, -3.0]])
    mix = np.array([[1.0, 0.6, 0.0], [0.0, 1.0, -0.5], [0.3, 0.0, 0.8]])
    return np.vstack([rng.normal(size=(60, 3)) @ mix + c for c in centres])


def _marginal_cov(mixture, k, i, j):
    """The 2x2 block (i, j) of component k's covariance, read from each storage layout by hand."""
    cov = np.asarray(mixture.params_["covariance"])
    storage = {"VEV": "full", "EEI": "diag"}.get(mixture.family.covariance_type, mixture.family.covariance_type)
    if storage == "full":
        return cov[k][np.ix_([i, j], [i, j])]
    if storage == "tied":
        return cov[np.ix_([i, j], [i, j])]
    if storage == "diag":
        return np.diag(cov[k, [i, j]])
    return cov[k] * np.eye(2)


def _off_diagonal(axes):
    m = axes.shape[0]
    return [(r, c) for r in range(m) for c in range(m) if r != c]


def _component_scatters(ax):
    return [c for c in ax.collections if c.get_label().startswith("component ") and "mean" not in c.get_label()]


def test_classification_grid_points_colours_and_ellipses(data):
    mixture = FiniteMixture(Gaussian(), 3, random_state=0).fit(data)
    labels = mixture.predict(data)
    axes = plot_classification(mixture, data)
    assert axes.shape == (3, 3) and len(axes[0, 0].figure.axes) == 9
    colours = []
    for r, c in _off_diagonal(axes):
        ax = axes[r, c]
        scatters = _component_scatters(ax)
        assert [s.get_label() for s in scatters] == ["component 0", "component 1", "component 2"]
        for k, s in enumerate(scatters):
            np.testing.assert_array_equal(s.get_offsets(), data[labels == k][:, [c, r]])
        colours.append([tuple(s.get_facecolor()[0][:3]) for s in scatters])
        ellipses = [p for p in ax.patches if isinstance(p, Ellipse)]
        assert len(ellipses) == 3 * 2  # K components at 1 and 2 sd
        for k in range(3):  # each component's ellipses in its points' colour
            mine = [e for e in ellipses if e.get_label().startswith(f"component {k},")]
            assert len(mine) == 2
            assert all(to_rgba(e.get_edgecolor())[:3] == colours[-1][k] for e in mine)
        (means,) = [s for s in ax.collections if s.get_label() == "component means"]
        np.testing.assert_allclose(means.get_offsets(), mixture.params_["mean"][:, [c, r]])
        assert ax.get_xlim()[0] < data[:, c].min() and ax.get_ylim()[1] > data[:, r].max()
    assert len({tuple(c) for c in colours}) == 1  # a component keeps its colour in every panel
    assert len(set(colours[0])) == 3  # and the components differ


@pytest.mark.parametrize("covariance_type", STORAGES)
def test_ellipses_are_the_marginal_covariances_sd_contours(data, covariance_type):
    mixture = FiniteMixture(Gaussian(covariance_type=covariance_type), 3, random_state=0).fit(data)
    axes = plot_classification(mixture, data, ellipse_sd=(1.0, 2.0))
    for r, c in _off_diagonal(axes):
        for e in (p for p in axes[r, c].patches if isinstance(p, Ellipse)):
            k, n_sd = int(e.get_label().split()[1].rstrip(",")), float(e.get_label().split()[2])
            cov2 = _marginal_cov(mixture, k, c, r)
            mean = mixture.params_["mean"][k, [c, r]]
            values, vectors = np.linalg.eigh(cov2)
            assert e.width / 2 == pytest.approx(n_sd * np.sqrt(values[1]), rel=1e-10)
            assert e.height / 2 == pytest.approx(n_sd * np.sqrt(values[0]), rel=1e-10)
            np.testing.assert_allclose(e.center, mean)
            # The patch maps the unit circle onto points at Mahalanobis distance n_sd from the mean.
            t = np.linspace(0, 2 * np.pi, 50)
            outline = e.get_patch_transform().transform(np.column_stack([np.cos(t), np.sin(t)])) - mean
            distance2 = np.einsum("ni,ij,nj->n", outline, np.linalg.inv(cov2), outline)
            np.testing.assert_allclose(distance2, n_sd ** 2, rtol=1e-8)


def test_uncertainty_is_marker_size(data):
    mixture = FiniteMixture(Gaussian(covariance_type="EEE"), 3, random_state=0).fit(data)
    proba = mixture.predict_proba(data)
    labels, uncertainty = proba.argmax(1), 1 - proba.max(1)
    axes = plot_uncertainty(mixture, data, dimensions=[2, 0], max_marker_size=50.0)
    assert axes.shape == (2, 2)
    ax = axes[1, 0]  # x: column 2, y: column 0
    for k, s in enumerate(_component_scatters(ax)):
        np.testing.assert_allclose(s.get_sizes(), 2 + 48 * uncertainty[labels == k] / (1 - 1 / 3))
        np.testing.assert_array_equal(s.get_offsets(), data[labels == k][:, [2, 0]])
    assert sum(isinstance(p, Ellipse) for p in ax.patches) == 3  # one (1 sd) per component by default


def _gaussian_marginal(mixture, cols, points):
    means, covs = mixture.params_["mean"], np.asarray(mixture.params_["covariance"])
    return sum(w * stats.multivariate_normal(means[k, cols], covs[k][np.ix_(cols, cols)]).pdf(points)
               for k, w in enumerate(mixture.weights_))


def test_density_contours_are_the_exact_marginal_densities(data):
    mixture = FiniteMixture(Gaussian(), 3, random_state=0).fit(data)
    levels = (0.5, 0.9)
    axes = plot_density(mixture, data, levels=levels, grid_size=150)
    for r, c in _off_diagonal(axes):
        (contours,) = [cs for cs in axes[r, c].collections if isinstance(cs, ContourSet)]
        at_data = _gaussian_marginal(mixture, [c, r], data[:, [c, r]])
        np.testing.assert_allclose(contours.levels, np.quantile(at_data, [0.1, 0.5]), rtol=1e-8)
        for level, segments in zip(contours.levels, contours.allsegs):
            points = np.vstack(segments)
            assert points.size
            np.testing.assert_allclose(_gaussian_marginal(mixture, [c, r], points), level, rtol=0.03)
    # The diagonal: the marginal density of one column, and the histogram of the data.
    for i in range(3):
        (line,) = [ln for ln in axes[i, i].get_lines() if ln.get_label() == "mixture"]
        x = line.get_xdata()
        np.testing.assert_allclose(line.get_ydata(), _gaussian_marginal(mixture, [i], x[:, None]), rtol=1e-8)
        assert axes[i, i].patches


def test_diagonal_components_add_up_to_the_mixture(data):
    mixture = FiniteMixture(Gaussian(covariance_type="VVI"), 3, random_state=0).fit(data)
    axes = plot_classification(mixture, data, dimensions=[1])
    assert axes.shape == (1, 1)
    lines = {ln.get_label(): ln.get_ydata() for ln in axes[0, 0].get_lines()}
    total = sum(lines[f"component {k} (weighted)"] for k in range(3))
    np.testing.assert_allclose(total, lines["mixture"], rtol=1e-10)


def test_with_noise_the_diagonal_draws_the_components_marginals(data, rng):
    # the diagonal panels of a mixture with a noise component lost their curves (the noise has no
    # marginal density, and the mixture's marginal was refused): the components' are drawn
    noisy = np.vstack([data, rng.uniform(data.min(axis=0), data.max(axis=0), size=(30, 3))])
    mixture = FiniteMixture(Gaussian("EEE"), 3, noise=True, random_state=0).fit(noisy)
    axes = plot_classification(mixture, noisy, dimensions=[0, 1])
    lines = {ln.get_label(): ln for ln in axes[0, 0].get_lines()}
    grid = lines["components (noise not drawn)"].get_xdata()
    cov = np.asarray(mixture.params_["covariance"])
    for k in range(3):
        expected = mixture.weights_[k] * stats.norm.pdf(grid, mixture.params_["mean"][k, 0], np.sqrt(cov[0, 0]))
        np.testing.assert_allclose(lines[f"component {k} (weighted)"].get_ydata(), expected, rtol=1e-10)
    total = sum(lines[f"component {k} (weighted)"].get_ydata() for k in range(3))
    np.testing.assert_allclose(lines["components (noise not drawn)"].get_ydata(), total, rtol=1e-12)


def test_poisson_mixture_marginal_pmfs_and_no_ellipses(rng):
    X = np.vstack([rng.poisson([2.0, 8.0, 3.0], (80, 3)), rng.poisson([9.0, 2.0, 6.0], (80, 3))]).astype(float)
    mixture = FiniteMixture(Poisson(), 2, random_state=0).fit(X)
    axes = plot_classification(mixture, X)
    assert not any(isinstance(p, Ellipse) for ax in axes.ravel() for p in ax.patches)
    (line,) = [ln for ln in axes[1, 1].get_lines() if ln.get_label() == "mixture"]
    x = line.get_xdata()
    np.testing.assert_array_equal(x, np.arange(X[:, 1].min(), X[:, 1].max() + 1))
    rate = mixture.params_["rate"]
    expected = sum(w * stats.poisson(rate[k, 1]).pmf(x) for k, w in enumerate(mixture.weights_))
    np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-10)
    dens = plot_density(mixture, X, dimensions=[0, 2])
    (contours,) = [cs for cs in dens[1, 0].collections if isinstance(cs, ContourSet)]
    assert len(contours.levels) >= 1


def test_a_family_without_marginals_draws_points_but_refuses_densities(data):
    mixture = FiniteMixture(StudentT(), 2, random_state=0, max_iter=20).fit(data)
    axes = plot_classification(mixture, data)
    assert len(_component_scatters(axes[0, 1])) == 2
    assert not [ln for ln in axes[0, 0].get_lines() if ln.get_label() == "mixture"]  # histogram only
    with pytest.raises(ValueError, match="marginal density") as info:
        plot_density(mixture, data)
    assert "\n" not in str(info.value)


def test_names_single_panel_and_given_figure(data):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(data, columns=["a", "b", "c"])
    mixture = FiniteMixture(Gaussian(), 3, random_state=0).fit(X)
    fig, ax = plt.subplots()
    axes = plot_classification(mixture, X, dimensions=["c", "a"], ax=ax)
    assert axes.shape == (1, 1) and axes[0, 0] is ax
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("c", "a")
    assert sum(isinstance(p, Ellipse) for p in ax.patches) == 3 * 2
    fig = plt.figure()
    axes = plot_density(mixture, X, dimensions=["b", "c"], fig=fig)
    assert axes.shape == (2, 2) and axes[0, 0].figure is fig and len(fig.axes) == 4
    assert axes[1, 0].get_xlabel() == "b" and axes[1, 0].get_ylabel() == "c"


@pytest.mark.parametrize("plot, kwargs, match", [
    (plot_classification, {"dimensions": [0, 3]}, "dimensions"),
    (plot_classification, {"dimensions": [-1]}, "dimensions"),
    (plot_classification, {"dimensions": [True]}, "dimensions"),
    (plot_classification, {"dimensions": ["nope"]}, "dimensions"),
    (plot_classification, {"dimensions": [1, 1]}, "distinct"),
    (plot_classification, {"dimensions": []}, "distinct"),
    (plot_classification, {"ellipse_sd": -1.0}, "ellipse_sd"),
    (plot_classification, {"ellipse_sd": ["a"]}, "ellipse_sd"),
    (plot_uncertainty, {"max_marker_size": 0}, "max_marker_size"),
    (plot_density, {"levels": (0.5, 1.0)}, "levels"),
    (plot_density, {"levels": ()}, "levels"),
    (plot_density, {"grid_size": 3}, "grid_size"),
    (plot_density, {"dimensions": [0, 1, 2], "ax": "axes"}, "one panel"),
    (plot_density, {"fig": "figure", "ax": "axes"}, "not both"),
])
def test_bad_arguments_are_one_line_value_errors(data, plot, kwargs, match):
    mixture = FiniteMixture(Gaussian(), 2, random_state=0).fit(data)
    fig, ax = plt.subplots()
    kwargs = {k: {"axes": ax, "figure": fig}.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises(ValueError, match=match) as info:
        plot(mixture, data, **kwargs)
    assert "\n" not in str(info.value)


def test_wrong_columns_and_unfitted_are_refused(data):
    from sklearn.exceptions import NotFittedError

    mixture = FiniteMixture(Gaussian(), 2, random_state=0).fit(data)
    with pytest.raises(ValueError, match="fitted on 3") as info:
        plot_classification(mixture, data[:, :2])
    assert "\n" not in str(info.value)
    with pytest.raises(NotFittedError):
        plot_density(FiniteMixture(Gaussian()), data)
    # a fitted classifier is not an unfitted mixture: the error names the plot that draws it
    from discrim.discriminant import LinearDiscriminant

    classifier = LinearDiscriminant().fit(data, (data[:, 0] > 0).astype(int))
    with pytest.raises(TypeError, match="plot_uncertainty draws a fitted FiniteMixture; got LinearDiscriminant.*"
                                        "plot_decision_surface"):
        plot_uncertainty(classifier, data)
    # and the other way round
    from discrim.plotting import plot_decision_surface

    with pytest.raises(TypeError, match="draws a fitted classifier.*got FiniteMixture.*plot_classification"):
        plot_decision_surface(mixture, data[:, :2], np.zeros(data.shape[0]))


def test_selection_plot_has_one_mclust_styled_line_per_model(rng):
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(4, 1, (40, 2))])
    result = select_mixture(X, gaussian_models(), [1, 2], random_state=0)
    wide = result.criterion_table(mclust_sign=True)
    ax = plot_selection(result, mclust_sign=True)
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == list(wide.columns)
    for line in lines:
        np.testing.assert_array_equal(line.get_xdata(), [1, 2])
        np.testing.assert_array_equal(line.get_ydata(), wide[line.get_label()])
    assert len({(ln.get_marker(), ln.get_color(), str(ln.get_markerfacecolor())) for ln in lines}) == 14
    styles = {ln.get_label(): ln for ln in lines}
    assert to_rgba(styles["VVV"].get_color()) == to_rgba("#CC0000")  # mclust's colour for VVV
    assert styles["EEE"].get_marker() == "s" and styles["VVV"].get_markerfacecolor() == "none"
    (best,) = [c for c in ax.collections if c.get_label().startswith("best")]
    row = result.table.iloc[result.best_index]
    np.testing.assert_allclose(best.get_offsets()[0], [row["n_components"], -row["bic"]])
    assert ax.get_legend()._ncols == 2
    assert "higher" in ax.get_ylabel()
    icl = plot_selection(result, criterion="icl")
    np.testing.assert_array_equal(icl.get_lines()[0].get_ydata(), result.criterion_table("icl")["EII"])


def test_noise_rows_are_drawn_apart(rng):
    X = np.vstack([rng.normal(0, 1, (80, 2)), rng.normal(6, 1, (80, 2)), rng.uniform(-6, 12, (20, 2))])
    mixture = FiniteMixture(Gaussian(), 2, noise=True, random_state=0).fit(X)
    labels = mixture.predict(X)
    proba = mixture.predict_proba(X)
    axes = plot_uncertainty(mixture, X, max_marker_size=50.0)
    ax = axes[1, 0]
    (noise,) = [c for c in ax.collections if c.get_label() == "noise"]
    np.testing.assert_array_equal(noise.get_offsets(), X[labels == -1])
    # the largest possible uncertainty counts the noise as a third component
    np.testing.assert_allclose(noise.get_sizes(), 2 + 48 * (1 - proba.max(1))[labels == -1] / (1 - 1 / 3))
    assert sum(isinstance(p, Ellipse) for p in ax.patches) == 2
    assert "noise" in [t.get_text() for t in axes[0, 1].get_legend().get_texts()]


def test_the_density_title_fits_on_two_lines_and_speaks_of_contours_only_where_drawn(rng):
    # one line was cut at both ends on a 2 x 2 grid, and one column (no contours) mentioned contours

    X = rng.normal(size=(80, 2))
    mixture = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    title = plot_density(mixture, X)[0][0].figure._suptitle.get_text()
    assert title.split("\n") == ["marginal mixture densities", "(contours enclose 25/50/75/95% of the rows): 2 components"]
    one = FiniteMixture(Gaussian(), 2, random_state=0).fit(X[:, :1])
    assert "contours" not in plot_density(one, X[:, :1])[0][0].figure._suptitle.get_text()


@pytest.mark.parametrize("d", [2, 6, 8])
def test_the_grid_title_sits_above_the_panels(d):
    # from 6 dimensions on the title overlapped the first row (tight_layout leaves the suptitle out)
    X = np.random.default_rng(0).normal(size=(100, d))
    axes = plot_classification(FiniteMixture(Gaussian("VVI"), 2, random_state=0).fit(X), X)
    fig = axes[0, 0].figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert fig._suptitle.get_window_extent(renderer).y0 > max(ax.get_tightbbox(renderer).y1 for ax in axes[0])


def test_discrete_parts_of_a_product_get_whole_numbers_and_their_pmf(rng):
    # Product.is_discrete holds only when every part is discrete: a Gaussian x Poisson x Categorical
    # mixture drew its count and code columns as continuous (a histogram without the fitted pmf, and
    # plot_density evaluated the Poisson off the whole numbers and failed)
    from matplotlib.ticker import MaxNLocator

    from discrim.distributions import Categorical, Product

    z = rng.integers(0, 2, 200)
    X = np.column_stack([rng.normal(160 + 15 * z, 5), rng.poisson(1 + 3 * z),
                         np.minimum(rng.poisson(0.5 + 1.5 * z), 2)]).astype(float)
    family = Product([("h", Gaussian("diag"), [0]), ("k", Poisson(), [1]), ("c", Categorical(n_categories=3), [2])])
    mixture = FiniteMixture(family, 2, random_state=0).fit(X)
    axes = plot_classification(mixture, X)
    (line,) = [ln for ln in axes[1, 1].get_lines() if ln.get_label() == "mixture"]
    x = line.get_xdata()
    np.testing.assert_array_equal(x, np.arange(X[:, 1].min(), X[:, 1].max() + 1))
    rate = np.asarray(mixture.params_["k__rate"])[:, 0]
    expected = sum(w * stats.poisson(rate[k]).pmf(x) for k, w in enumerate(mixture.weights_))
    np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-10)
    (codes,) = [ln for ln in axes[2, 2].get_lines() if ln.get_label() == "mixture"]
    np.testing.assert_array_equal(codes.get_xdata(), [0.0, 1.0, 2.0])
    np.testing.assert_allclose(codes.get_ydata().sum(), 1.0, rtol=1e-10)  # a pmf over the three codes
    assert [ln for ln in axes[0, 0].get_lines() if ln.get_label() == "mixture"][0].get_xdata().size == 100
    for r, c in ((1, 1), (2, 2), (1, 0), (0, 2)):  # whole-number ticks along the discrete columns
        axis = axes[r, c].xaxis if c in (1, 2) else axes[r, c].yaxis
        assert isinstance(axis.get_major_locator(), MaxNLocator)
        assert np.all(np.mod(axis.get_ticklocs(), 1) == 0)
    dens = plot_density(mixture, X)
    # Gaussian against Poisson: no contour across whole numbers, one slice per whole number
    assert not [cs for cs in dens[1, 0].collections if isinstance(cs, ContourSet)]
    slices = [ln for ln in dens[1, 0].get_lines() if ln.get_label().startswith("density level")]
    assert slices
    for ln in slices:
        y = np.asarray(ln.get_ydata(), dtype=float)
        y = y[np.isfinite(y)]
        assert y.size and np.all(np.mod(y, 1) == 0) and np.all(y == y[0])
    transposed = [ln for ln in dens[0, 1].get_lines() if ln.get_label().startswith("density level")]
    assert len(transposed) == len(slices)
    assert np.all(np.mod(np.unique(np.concatenate([ln.get_xdata() for ln in transposed]))[:-1], 1) == 0)


def test_with_noise_and_three_columns_the_density_panels_draw_the_components_marginals(data, rng):
    # a mixture with noise scores no missing values, so plot_density failed on three columns with an
    # error about NaN values that X did not have; the components' weighted 2-D marginals are drawn
    noisy = np.vstack([data, rng.uniform(data.min(axis=0), data.max(axis=0), size=(30, 3))])
    mixture = FiniteMixture(Gaussian("VVV"), 3, noise=True, random_state=0).fit(noisy)
    axes = plot_density(mixture, noisy, levels=(0.5, 0.9))
    ax = axes[2, 0]  # x: column 0, y: column 2
    (contours,) = [cs for cs in ax.collections if isinstance(cs, ContourSet)]
    mean, cov = np.asarray(mixture.params_["mean"]), np.asarray(mixture.params_["covariance"])
    at_data = sum(mixture.weights_[k] * stats.multivariate_normal(mean[k, [0, 2]], cov[k][np.ix_([0, 2], [0, 2])])
                  .pdf(noisy[:, [0, 2]]) for k in range(3))
    np.testing.assert_allclose(contours.levels, np.quantile(at_data, [0.1, 0.5]), rtol=1e-8)
    assert all("noise not drawn" in [t.get_text() for t in axes[r, c].texts] for r, c in _off_diagonal(axes))
    two = FiniteMixture(Gaussian("VVV"), 3, noise=True, random_state=0).fit(noisy[:, :2])
    assert not plot_density(two, noisy[:, :2])[1, 0].texts  # all the columns: the noise is in the density


@pytest.mark.parametrize("plot", [plot_classification, plot_uncertainty])
def test_one_dimension_draws_the_rows_in_a_strip_by_component(rng, plot):
    # on one feature the panel was the histogram and densities alone: no row, no classification, no
    # uncertainty, and a legend of markers drawn nowhere
    X = np.concatenate([rng.normal(-1, 1, (150, 1)), rng.normal(1, 1, (150, 1))])
    mixture = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    labels, proba = mixture.predict(X), mixture.predict_proba(X)
    ax = plot(mixture, X)[0, 0]
    scatters = {c.get_label(): c for c in _component_scatters(ax)}
    assert sorted(scatters) == ["component 0", "component 1"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == sorted(scatters)
    sizes = 2 + 38 * (1 - proba.max(axis=1)) / 0.5 if plot is plot_uncertainty else np.full(X.shape[0], 12.0)
    for k in range(2):
        points = scatters[f"component {k}"]
        np.testing.assert_array_equal(points.get_offsets()[:, 0], X[labels == k, 0])
        assert np.all(points.get_offsets()[:, 1] < 0) and ax.get_ylim()[0] < points.get_offsets()[:, 1].min()
        np.testing.assert_allclose(points.get_sizes(), sizes[labels == k], rtol=1e-12)
        np.testing.assert_allclose(points.get_facecolor()[0, :3], to_rgba(f"C{k}")[:3])
