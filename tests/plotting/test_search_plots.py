"""Tests of the search plot and the prototype map (Agg backend, assertions on the artists)."""

import matplotlib
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from discrim.datasets import load_benchmark
from discrim.model_selection import PrototypeClassifierCV
from discrim.plotting.prototype_map import plot_prototype_map, scaled_prototypes, weighted_pca
from discrim.plotting.search import plot_search
from discrim.prototype import PrototypeClassifier

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(scope="module")
def search():
    X, _, y, _ = load_benchmark("wine")
    return PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2, 1e-1], max_batches=2, cv=3, n_candidates=60,
                                 random_state=0).fit(X, y)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plot_search_draws_one_line_per_batch_count(search):
    ax = plot_search(search)
    labels = [line.get_label() for line in ax.get_lines()]
    assert [lab.split(" (")[0] for lab in labels if " batches" in lab and lab[0].isdigit()] == ["0 batches", "1 batches",
                                                                                               "2 batches"]
    assert ax.get_xscale() == "log"
    threshold = [line for line in ax.get_lines() if line.get_label() == "threshold"][0]
    assert np.allclose(threshold.get_ydata(), search.threshold_)
    selected = [line for line in ax.get_lines() if line.get_label().startswith("selected")][0]
    res = search.cv_results_
    assert selected.get_xdata()[0] == pytest.approx(search.best_params_["alpha_feature"])
    assert selected.get_ydata()[0] == pytest.approx(res["mean_test_log_loss"][search.best_index_])
    assert selected.get_ydata()[0] <= search.threshold_
    line_1 = [line for line in ax.get_lines() if line.get_label() == "1 batches"][0]
    np.testing.assert_allclose(line_1.get_ydata(), res["mean_test_log_loss"][res["n_batches"] == 1])


def test_plot_search_keeps_the_empty_model_from_squashing_the_fitted_ones(search):
    # wine: the model with no batches scores about 1.1, the fitted ones 0.1-0.3; the y-axis spans
    # the fitted lines and the threshold, and the 0-batch legend entry gives its score
    res = search.cv_results_
    mean = res["mean_test_log_loss"]
    empty = mean[res["n_batches"] == 0]
    fitted = mean[res["n_batches"] > 0]
    ax = plot_search(search)
    low, high = ax.get_ylim()
    assert high < empty.min() and low <= min(fitted.min(), search.threshold_)
    assert high >= max(fitted.max(), search.threshold_)
    label = [line.get_label() for line in ax.get_lines() if line.get_label().startswith("0 batches")][0]
    assert label == f"0 batches (off the axis, {empty.mean():.3g})"
    # without the 0-batch line the axis is matplotlib's own
    ax = plot_search(search, batch_counts=[1, 2])
    assert not any("off the axis" in line.get_label() for line in ax.get_lines())
    assert ax.get_ylim()[0] < fitted.min()


def test_plot_search_subset_and_errors(search):
    fig, ax = plt.subplots()
    assert plot_search(search, ax=ax, batch_counts=[2], show_std=True) is ax
    assert [line.get_label() for line in ax.get_lines()].count("2 batches") == 1
    assert len(ax.collections) == 1  # the std band
    with pytest.raises(ValueError, match="batch_counts"):
        plot_search(search, batch_counts=[7])
    with pytest.raises(NotFittedError):
        plot_search(PrototypeClassifierCV())
    with pytest.raises(TypeError, match="plot_search draws a fitted PrototypeClassifierCV's search; got "
                                        "LogisticRegression"):
        plot_search(LogisticRegression())


def test_scaled_prototypes_follow_batches(search):
    model = search.best_estimator_
    Z, weights, target, features = scaled_prototypes(search)
    batches = [b for b in model.batches_ if b.prototype_weights.shape[0]]
    assert Z.shape[0] == weights.shape[0] == target.shape[0] == sum(b.prototype_weights.shape[0] for b in batches)
    first = batches[0]
    cols = np.searchsorted(features, first.feature_index)
    np.testing.assert_allclose(Z[: first.prototypes.shape[0]][:, cols], first.prototypes * first.feature_weights)
    np.testing.assert_allclose(weights[: first.prototypes.shape[0]], first.prototype_weights)


def test_weighted_pca_against_numpy_cov(rng):
    Z = rng.normal(size=(30, 4)) @ rng.normal(size=(4, 4))
    w = rng.uniform(0.1, 3.0, size=30)
    scores, explained = weighted_pca(Z, w)
    cov = np.cov(Z, rowvar=False, aweights=w, bias=True)
    values, vectors = np.linalg.eigh(cov)
    top = vectors[:, ::-1][:, :2]
    centred = Z - np.average(Z, axis=0, weights=w)
    np.testing.assert_allclose(np.abs(scores), np.abs(centred @ top), atol=1e-10)
    np.testing.assert_allclose(explained, values[::-1][:2] / values.sum())
    # weighted scores are centred and uncorrelated
    np.testing.assert_allclose(np.average(scores, axis=0, weights=w), 0, atol=1e-10)
    assert abs(np.average(scores[:, 0] * scores[:, 1], weights=w)) < 1e-8


def test_weighted_pca_one_column():
    scores, explained = weighted_pca(np.array([[1.0], [2.0], [4.0]]), np.ones(3))
    assert scores.shape == (3, 2) and np.all(scores[:, 1] == 0)
    np.testing.assert_allclose(explained, [1.0, 0.0])


def test_prototype_map_artists(search):
    ax = plot_prototype_map(search)
    Z, weights, target, _ = scaled_prototypes(search)
    assert len(ax.collections) == np.unique(target).shape[0]
    sizes = np.concatenate([c.get_sizes() for c in ax.collections])
    assert sizes.max() == pytest.approx(300.0)
    np.testing.assert_allclose(np.sort(sizes), np.sort(300.0 * weights / weights.max()))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert set(legend) <= set(map(str, search.classes_))
    assert "prototypes" in ax.get_title()


def test_prototype_map_accepts_classifier_and_empty_model():
    X, _, y, _ = load_benchmark("iris-2f")
    model = PrototypeClassifier(n_batches=1, n_candidates=40, random_state=0).fit(X, y)
    ax = plot_prototype_map(model)
    assert len(ax.collections) >= 1
    empty = PrototypeClassifier(n_batches=0).fit(X, y)
    ax = plot_prototype_map(empty)
    assert len(ax.collections) == 0 and "no prototypes" in ax.texts[0].get_text()


def test_prototype_map_rejects_other_models():
    X, _, y, _ = load_benchmark("iris-2f")
    with pytest.raises(TypeError, match="PrototypeClassifier"):
        plot_prototype_map(LogisticRegression().fit(X, y))
    with pytest.raises(NotFittedError):
        plot_prototype_map(PrototypeClassifier())


def test_plot_search_draws_the_score_it_selected_by_and_each_alpha_prototype():
    # a search by ROC-AUC drew the log-loss beside a threshold on the ROC-AUC scale, and the lines
    # of an alpha_prototype grid were joined into one zig-zag per batch count
    X, _, y, _ = load_benchmark("wine")
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2], alpha_prototype_grid=[1e-8, 1e-3], max_batches=1,
                                   cv=3, n_candidates=40, scoring="roc_auc", random_state=0).fit(X, y)
    ax = plot_search(search)
    res = search.cv_results_
    assert ax.get_ylabel() == "mean CV ROC-AUC"
    lines = {line.get_label(): line for line in ax.get_lines()}
    for alpha_p in (1e-8, 1e-3):
        line = lines[f"1 batches, alpha_prototype={alpha_p:.2g}"]
        rows = (res["n_batches"] == 1) & (res["alpha_prototype"] == alpha_p)
        np.testing.assert_allclose(line.get_ydata(), res["mean_test_roc_auc"][rows])
    assert lines["threshold"].get_ydata()[0] == pytest.approx(search.threshold_)
    best = lines["best mean"]
    assert best.get_ydata()[0] == pytest.approx(np.nanmax(res["mean_test_roc_auc"]))
    selected = next(label for label in lines if label.startswith("selected"))
    assert f"alpha_prototype={search.best_params_['alpha_prototype']:.2g}" in selected


def test_plot_search_leaves_out_points_no_fold_scored():
    # n_batches_no_change stops the folds early: the later counts are NaN, which made the cross of
    # the lowest mean land on NaN (invisible) and drew legend entries without lines
    X, _, y, _ = load_benchmark("iris")
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-4, 1e-2], max_batches=4, n_batches_no_change=1, cv=3,
                                   n_candidates=40, random_state=0).fit(X, y)
    mean = search.cv_results_["mean_test_log_loss"]
    assert np.isnan(mean).any()
    ax = plot_search(search)
    for line in ax.get_lines():
        assert np.all(np.isfinite(line.get_ydata())), line.get_label()
    best = [line for line in ax.get_lines() if line.get_label() == "best mean"][0]
    assert best.get_ydata()[0] == pytest.approx(np.nanmin(mean))


def test_prototype_map_draws_a_pipelines_model():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, _, y, _ = load_benchmark("wine", scale=False)
    pipe = make_pipeline(StandardScaler(), PrototypeClassifier(n_batches=1, n_candidates=40, random_state=0)).fit(X, y)
    ax = plot_prototype_map(pipe)
    sizes = np.concatenate([c.get_sizes() for c in ax.collections])
    assert sizes.shape[0] == pipe[-1].batches_[0].prototype_weights.shape[0]


def test_plot_search_colours_span_the_counts_drawn(search):
    # batch_counts=[0, 1] of max_batches=2 (or the counts an early stop scored) took half the
    # colour scale: lines 0 and 1 were hard to tell apart; the first and last drawn are its ends
    from matplotlib import colormaps
    from matplotlib.colors import to_rgba

    ax = plot_search(search, batch_counts=[0, 1])
    colours = {line.get_label().split(" (")[0]: to_rgba(line.get_color()) for line in ax.get_lines()}
    assert colours["0 batches"] == colormaps["viridis"](0.0)
    assert colours["1 batches"] == colormaps["viridis"](1.0)
