"""Tests of the prototype set plots: surfaces on slices, maps per batch, feature weights."""

import functools

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.contour import ContourSet  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from discrim.plotting import plot_batch_maps, plot_feature_weights, plot_prototype_surface  # noqa: E402
from discrim.plotting.prototype_map import weighted_pca  # noqa: E402
from discrim.prototype import PrototypeClassifier  # noqa: E402

NAMES = ["a", "b", "c", "d"]


def _data(n=160, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 4))
    y = np.where(Z[:, 0] + Z[:, 1] > 0, "p", "n")
    return pd.DataFrame(Z * [1, 50, 1, 1] + [0, 500, 0, 0], columns=NAMES), y


@functools.lru_cache(maxsize=None)
def _pipe():
    X, y = _data()
    return make_pipeline(StandardScaler(), PrototypeClassifier(n_batches=3, n_candidates=40, random_state=0)).fit(X, y)


@pytest.fixture(autouse=True)
def _close():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _gids(ax):
    return [c.get_gid() for c in ax.collections if isinstance(c, PathCollection)]


def test_surface_panel_artists_and_values():
    X, y = _data()
    pipe = _pipe()
    ax = plot_prototype_surface(pipe, X, y, features=("a", "b"), explain=X.iloc[:2], resolution=15)
    contours = [c for c in ax.collections if isinstance(c, ContourSet)]
    filled = [c for c in contours if c.filled]
    lines = [c for c in contours if not c.filled]
    assert len(filled) == 1 and len(lines) == 1 and lines[0].get_gid() == "familiarity"
    assert _gids(ax) == ["reference", "baseline", "explained"]
    reference, baseline, explained = (c for c in ax.collections if isinstance(c, PathCollection))
    np.testing.assert_allclose(reference.get_offsets(), X[["a", "b"]].to_numpy())
    np.testing.assert_allclose(baseline.get_offsets(), [X[["a", "b"]].median().to_numpy()])
    np.testing.assert_allclose(explained.get_offsets(), X[["a", "b"]].to_numpy()[:2])
    # the familiarity contours sit at quantiles of the reference rows' familiarity
    from discrim.prototype import familiarity

    q = np.quantile(familiarity(pipe, X), (0.05, 0.25, 0.5))
    assert set(np.round(lines[0].levels, 10)) <= set(np.round(q, 10))
    assert ax.get_xlabel() == "a" and ax.get_ylabel() == "b"


def test_surface_several_slices_and_decision():
    X, y = _data()
    axes = plot_prototype_surface(_pipe(), X, features=[("a", "b"), (2, 3)], kind="decision", baseline="mean",
                                  familiarity_quantiles=(), resolution=10)
    assert axes.shape == (2,)
    for ax in axes:
        assert len(ax.images) == 1 and not [c for c in ax.collections if isinstance(c, ContourSet)]
        assert _gids(ax) == ["reference", "baseline"]
    assert axes[1].get_xlabel() == "c" and axes[1].get_ylabel() == "d"


def test_surface_default_pair_is_largest_weight_and_bare_model():
    X, y = _data()
    pipe = _pipe()
    Z = pipe[0].transform(X)
    model = pipe[-1]
    total = np.zeros(4)
    for batch in model.batches_:
        total[batch.feature_index] += batch.feature_weights
    first, second = np.argsort(-total)[:2]
    ax = plot_prototype_surface(model, Z, y, resolution=10)
    assert (ax.get_xlabel(), ax.get_ylabel()) == (f"x{first}", f"x{second}")


@pytest.mark.parametrize("kwargs, match", [
    ({"features": ("a", "zz")}, "features must be"),
    ({"features": ("a", "a")}, "must differ"),
    ({"kind": "heat"}, "kind must be"),
    ({"baseline": [1, 2]}, "baseline must be"),
    ({"baseline": "mode"}, "baseline must be"),
    ({"resolution": 1}, "resolution must be"),
    ({"target": "maybe"}, "target must be"),
    ({"familiarity_quantiles": (0.5, 1.0)}, "familiarity_quantiles"),
])
def test_surface_bad_arguments_one_line(kwargs, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match) as info:
        plot_prototype_surface(_pipe(), X, y, resolution=kwargs.pop("resolution", 10), **kwargs)
    assert "\n" not in str(info.value)


def test_one_map_per_batch_with_supplementary_points():
    X, y = _data()
    pipe = _pipe()
    axes = plot_batch_maps(pipe, X, y, explain=X.iloc[[3]])
    model = pipe[-1]
    assert axes.shape == (len(model.batches_),)
    Z = pipe[0].transform(X)
    assert any(b.n_prototypes == 0 for b in model.batches_)  # this fit has an empty batch: a note, no points
    for ax, batch in zip(axes, model.batches_):
        gids = _gids(ax)
        if batch.n_prototypes == 0:
            assert gids == [] and "no prototypes" in ax.texts[0].get_text()
            continue
        assert gids[0] == "supplementary" and gids[-1] == "explained"
        assert gids.count("prototypes") == len(np.unique(batch.target))
        # supplementary points: the rows on the batch's weighted principal axes
        v = batch.feature_weights
        _, _, mean, pcs = weighted_pca(batch.prototypes * v, batch.prototype_weights, return_axes=True)
        sup = ax.collections[0].get_offsets()
        np.testing.assert_allclose(sup, (Z[:, batch.feature_index] * v - mean) @ pcs, atol=1e-10)
        n_protos = sum(len(c.get_offsets()) for c in ax.collections if c.get_gid() == "prototypes")
        assert n_protos == batch.n_prototypes
        # the legend's markers share one size (they took the first prototype's, tiny for light classes)
        assert {float(h.get_sizes()[0]) for h in ax.get_legend().legend_handles} == {30.0}
    assert plot_batch_maps(pipe, n_batches=2).shape == (2,)


def test_weighted_pca_axes_reproduce_the_scores():
    rng = np.random.default_rng(1)
    Z, w = rng.normal(size=(30, 3)), rng.uniform(0.1, 2, 30)
    scores, explained, mean, axes = weighted_pca(Z, w, return_axes=True)
    np.testing.assert_allclose((Z - mean) @ axes, scores)
    s2, e2 = weighted_pca(Z, w)
    np.testing.assert_array_equal(s2, scores)
    np.testing.assert_array_equal(e2, explained)


def test_feature_weight_heat_map():
    pipe = _pipe()
    model = pipe[-1]
    ax = plot_feature_weights(pipe)
    image = [im for im in ax.images if isinstance(im, AxesImage)][0]
    W = np.zeros((len(model.batches_), 4))
    for b, batch in enumerate(model.batches_):
        W[b, batch.feature_index] = batch.feature_weights
    active = np.flatnonzero((W > 0).any(axis=0))
    np.testing.assert_allclose(image.get_array(), W[:, active])
    assert [t.get_text() for t in ax.get_xticklabels()] == [NAMES[d] for d in active]
    ax = plot_feature_weights(pipe, units="original", n_batches=1)
    image = ax.images[0]
    scale = pipe[0].scale_
    np.testing.assert_allclose(image.get_array(), (W[:1] / scale)[:, np.flatnonzero(W[0] > 0)])


def test_feature_weights_in_original_units_refuse_a_preprocessing_that_is_not_affine():
    # a log has no weight per input unit: the plot said "no active features (every batch is empty)"
    from sklearn.preprocessing import FunctionTransformer

    X, y = _data()
    pipe = make_pipeline(FunctionTransformer(np.exp, inverse_func=np.log), StandardScaler(),
                         PrototypeClassifier(n_batches=1, n_candidates=40, random_state=0)).fit(X[["a", "c"]], y)
    with pytest.raises(ValueError, match=r"not affine on the active feature\(s\) \['a'.*use units='model'"):
        plot_feature_weights(pipe, units="original")
    ax = plot_feature_weights(pipe)
    assert [t.get_text() for t in ax.get_xticklabels()][0] == "a"


@pytest.mark.parametrize("call, match", [
    (lambda m: plot_batch_maps(m, n_batches=9), "n_batches must be"),
    (lambda m: plot_batch_maps(m, ncols=0), "ncols must be"),
    (lambda m: plot_batch_maps(m, np.zeros((3, 2))), "X must have shape"),
    (lambda m: plot_feature_weights(m, units="raw"), "units must be"),
    (lambda m: plot_feature_weights(m[-1], units="original"), "units='original' needs a Pipeline"),
    (lambda m: plot_feature_weights(m, n_batches=-1), "n_batches must be"),
])
def test_map_and_weights_bad_arguments_one_line(call, match):
    with pytest.raises(ValueError, match=match) as info:
        call(_pipe())
    assert "\n" not in str(info.value)


@functools.lru_cache(maxsize=None)
def _one_feature_model():
    X, _ = _data()
    Z = X[["a"]] * 1.0
    y = np.where(Z["a"] > 0.3, "p", np.where(Z["a"] < -0.8, "m", "n"))
    return Z, y, PrototypeClassifier(n_batches=2, n_candidates=40, random_state=0).fit(Z, y)


def test_surface_of_a_one_feature_model_draws_the_probabilities_against_the_feature():
    from matplotlib.collections import LineCollection

    from discrim.prototype import familiarity

    Z, y, model = _one_feature_model()
    ax = plot_prototype_surface(model, Z, y, explain=Z.iloc[:2], resolution=50, margin=0.1)
    lo, hi = Z["a"].min(), Z["a"].max()
    lo, hi = lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo)
    assert ax.get_xlim() == pytest.approx((lo, hi))
    grid = np.linspace(lo, hi, 50)
    proba = model.predict_proba(pd.DataFrame({"a": grid}))
    lines = [line for line in ax.lines if line.get_gid() == "probability"]
    assert len(lines) == len(model.classes_) == 3
    for k, line in enumerate(lines):
        np.testing.assert_allclose(line.get_xdata(), grid)
        np.testing.assert_allclose(line.get_ydata(), proba[:, k], rtol=1e-12)
    # the default target for three classes: the class predicted at the median, drawn bold
    target = int(np.argmax(model.predict_proba(pd.DataFrame({"a": [Z["a"].median()]}))[0]))
    assert [line.get_linewidth() for line in lines].index(2.5) == target
    assert _gids(ax) == ["reference", "explained"]
    reference, explained = (c for c in ax.collections if isinstance(c, PathCollection))
    offsets = reference.get_offsets()
    np.testing.assert_allclose(offsets[:, 0], Z["a"])
    codes = np.searchsorted(model.classes_, y)
    np.testing.assert_allclose(offsets[:, 1], -0.04 * (codes + 1))  # one strip per class below 0
    np.testing.assert_allclose(explained.get_offsets(),
                               np.c_[Z["a"][:2], model.predict_proba(Z.iloc[:2])[:, target]], rtol=1e-12)
    # the dashed lines are the level sets of the familiarity along the feature (linear between grid
    # points) at its quantiles over Z: one per crossing of each level, where it equals that level
    (marks,) = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_gid() == "familiarity"]
    where = np.sort([segment[0, 0] for segment in marks.get_segments()])
    levels = np.quantile(familiarity(model, Z), (0.05, 0.25, 0.5))
    on_grid = familiarity(model, pd.DataFrame({"a": grid}))
    crossings = sum(int(np.sum(np.diff(np.sign(on_grid - level)) != 0)) for level in levels)
    assert where.size == crossings >= 2 and np.all((where > lo) & (where < hi))
    at = np.interp(where, grid, on_grid)
    np.testing.assert_allclose(np.min(np.abs(at[:, None] - levels[None, :]), axis=1), 0, atol=1e-12 * levels.max())
    # each level is named once (a label per crossing piled up along the top)
    names = [text.get_text() for text in ax.texts if text.get_text().startswith("fam. q")]
    assert sorted(names) == sorted({"fam. q5", "fam. q25", "fam. q50"} & set(names)) and len(names) <= 3
    assert ax.get_xlabel() == "a"


def test_surface_of_a_one_feature_model_decision_and_bad_features():
    Z, y, model = _one_feature_model()
    ax = plot_prototype_surface(model, Z, kind="decision", familiarity_quantiles=(), resolution=30)
    lo, hi = ax.get_xlim()
    proba = model.predict_proba(pd.DataFrame({"a": np.linspace(lo, hi, 30)}))
    (image,) = ax.images
    np.testing.assert_array_equal(image.get_array()[0], np.argmax(proba, axis=1))
    (line,) = ax.lines
    np.testing.assert_allclose(line.get_ydata(), proba.max(axis=1), rtol=1e-12)
    assert _gids(ax) == ["reference"]  # no y: one grey strip
    assert plot_prototype_surface(model, Z, features="a", resolution=10).get_xlabel() == "a"
    with pytest.raises(ValueError, match=r"the model takes one feature: features must be None or that feature"):
        plot_prototype_surface(model, Z, features=("a", "b"), resolution=10)


def test_map_and_weights_take_a_0d_count_and_any_feature_name():
    pipe = _pipe()
    assert plot_batch_maps(pipe, n_batches=np.array(2)).shape == (2,)
    np.testing.assert_array_equal(plot_feature_weights(pipe, n_batches=np.array(2)).images[0].get_array(),
                                  plot_feature_weights(pipe, n_batches=2).images[0].get_array())
    with pytest.raises(ValueError, match=r"n_batches must be None or an integer in \[1, 3\], one count here"):
        plot_batch_maps(pipe, n_batches=[1, 2])
    # a feature named like a fixed column of export (prototype -> prototype_weight) is still labelled
    X, y = _data()
    X = X.rename(columns={"a": "prototype"})
    Z = pd.DataFrame(StandardScaler().fit_transform(X), columns=X.columns)
    model = PrototypeClassifier(n_batches=1, n_candidates=40, random_state=0).fit(Z, y)
    labels = [t.get_text() for t in plot_feature_weights(model).get_xticklabels()]
    active = np.flatnonzero(np.isin(np.arange(4), model.batches_[0].feature_index))
    assert labels == [X.columns[d] for d in active] and "prototype" in labels


@pytest.mark.parametrize("kind, with_y, expected", [
    ("decision", False, ["baseline", "n", "p"]),
    ("decision", True, ["baseline", "n", "p"]),
    ("probability", True, ["baseline", "n", "p"]),
    ("probability", False, ["baseline"]),
])
def test_a_slice_s_legend_says_which_colour_is_which_class(kind, with_y, expected):
    # the decision regions and the rows' dots had colours per class and no key to them
    X, y = _data()
    ax = plot_prototype_surface(_pipe(), X, y if with_y else None, features=("a", "b"), kind=kind, resolution=10)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == expected


def test_feature_weight_labels_stay_inside_the_figure():
    # long feature names were cut off below a figure without a layout
    X, y = _data()
    X.columns = [f"a rather long feature name {c}" for c in NAMES]
    pipe = make_pipeline(StandardScaler(), PrototypeClassifier(n_batches=2, n_candidates=40, random_state=0)).fit(X, y)
    ax = plot_feature_weights(pipe)
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for label in ax.get_xticklabels() + [ax.xaxis.label]:
        box = label.get_window_extent(renderer)
        assert box.y0 >= 0 and box.x0 >= 0, label.get_text()


def _pixel_centres(image):
    """The centres of an image's pixels (rows, columns of its array), from its extent: two (r, c) arrays."""
    x0, x1, y0, y1 = image.get_extent()
    rows, columns = np.asarray(image.get_array()).shape
    return np.meshgrid(x0 + (np.arange(columns) + 0.5) * (x1 - x0) / columns,
                       y0 + (np.arange(rows) + 0.5) * (y1 - y0) / rows)


def test_each_decision_pixel_shows_the_class_predicted_at_its_centre():
    # the pixels stretched over the grid's range, half a cell off their grid points: 10 of 100
    # showed another class than the model gives at their centre
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 2))
    model = PrototypeClassifier(n_candidates=50, random_state=0).fit(Z, (Z[:, 0] > 0).astype(int))
    ax = plot_prototype_surface(model, Z, kind="decision", resolution=10, familiarity_quantiles=())
    (image,) = ax.images
    gx, gy = _pixel_centres(image)
    predicted = model.predict_proba(np.column_stack([gx.ravel(), gy.ravel()])).argmax(axis=1).reshape(gx.shape)
    np.testing.assert_array_equal(np.asarray(image.get_array()), predicted)
    assert ax.get_xlim() == pytest.approx((gx.min(), gx.max())) and ax.get_ylim() == pytest.approx((gy.min(), gy.max()))


@pytest.mark.parametrize("kind, with_y, expected", [
    ("decision", False, ["P(predicted class | x)", "m", "n", "p"]),
    ("decision", True, ["P(predicted class | x)", "m", "n", "p"]),
    ("probability", True, ["P(m | x)", "P(n | x)", "P(p | x)"]),
])
def test_a_one_feature_plot_s_legend_says_which_colour_is_which_class(kind, with_y, expected):
    # the decision's shading (and the strip of rows) had colours per class and no key to them
    from matplotlib.colors import to_rgba

    Z, y, model = _one_feature_model()
    ax = plot_prototype_surface(model, Z, y if with_y else None, kind=kind, familiarity_quantiles=(), resolution=20)
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == expected
    if kind == "decision":
        (image,) = ax.images
        for k, handle in enumerate(legend.legend_handles[1:]):  # each class's patch has its regions' colour
            assert to_rgba(handle.get_facecolor(), 1) == to_rgba(image.cmap(image.norm(k)), 1)


def test_rows_are_coloured_by_their_class_and_labels_not_among_the_classes_are_refused():
    # y of 0/1 for classes 'n'/'p' painted every row as the first class, silently
    from matplotlib.colors import to_rgba

    X, y = _data()
    pipe = _pipe()
    ax = plot_prototype_surface(pipe, X, y, features=("a", "b"), resolution=10)
    rows = [c for c in ax.collections if c.get_gid() == "reference"][0]
    want = [to_rgba("C1" if label == "p" else "C0") for label in y]
    np.testing.assert_allclose(rows.get_facecolors()[:, :3], np.array(want)[:, :3])
    codes = (y == "p").astype(int)
    for call in [lambda: plot_prototype_surface(pipe, X, codes, resolution=10),
                 lambda: plot_batch_maps(pipe, X, codes)]:
        with pytest.raises(ValueError, match=r"y must be one label per row among classes_ \['n', 'p'\]; got \[0, 1\]"):
            call()
