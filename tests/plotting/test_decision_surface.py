"""Tests of plot_decision_surface: the regions are the classes the estimator predicts."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from discrim.discriminant import QuadraticDiscriminant  # noqa: E402
from discrim.plotting import plot_decision_surface  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("show_proba", [True, False])
def test_each_pixel_shows_the_class_predicted_at_its_centre(show_proba):
    # the pixels stretched over the grid's range, half a cell off the grid points they were computed at
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2)) * [1.0, 30.0]
    y = np.where(X[:, 0] ** 2 + (X[:, 1] / 30) ** 2 < 1.0, "in", np.where(X[:, 0] > 0, "right", "left"))
    model = QuadraticDiscriminant().fit(X, y)
    ax = plot_decision_surface(model, X, y, resolution=12, show_proba=show_proba)
    (image,) = ax.images
    x0, x1, y0, y1 = image.get_extent()
    shown = np.asarray(image.get_array())
    rows, columns = shown.shape
    gx, gy = np.meshgrid(x0 + (np.arange(columns) + 0.5) * (x1 - x0) / columns,
                         y0 + (np.arange(rows) + 0.5) * (y1 - y0) / rows)
    predicted = np.searchsorted(model.classes_, model.predict(np.column_stack([gx.ravel(), gy.ravel()])))
    np.testing.assert_array_equal(shown, predicted.reshape(gx.shape))
    # the axes show the grid's range, from the first grid point to the last
    assert ax.get_xlim() == pytest.approx((gx.min(), gx.max())) and ax.get_ylim() == pytest.approx((gy.min(), gy.max()))


def test_an_unfitted_classifier_is_named_not_fitted():
    # a TypeError said it was not a classifier ("got LinearDiscriminant")
    from sklearn.exceptions import NotFittedError

    from discrim.discriminant import LinearDiscriminant

    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(NotFittedError):
        plot_decision_surface(LinearDiscriminant(), X, np.repeat([0, 1], 10))


def test_rows_with_a_missing_value_are_left_out_and_frames_name_the_axes():
    # "Axis limits cannot be NaN or Inf" for a NaN row the model accepted at fit; an array-fitted
    # model drawn with a DataFrame labelled its axes "feature 0" and "feature 1"
    import pandas as pd

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), np.repeat([0, 1], 30)
    X[y == 1] += 2
    X[3, 0] = np.nan
    model = QuadraticDiscriminant().fit(X, y)
    ax = plot_decision_surface(model, pd.DataFrame(X, columns=["length", "width"]), y)
    assert np.isfinite(ax.get_xlim()).all() and (ax.get_xlabel(), ax.get_ylabel()) == ("length", "width")
    assert sum(c.get_offsets().shape[0] for c in ax.collections if type(c).__name__ == "PathCollection") == 59


def test_labels_that_are_not_classes_are_refused_not_left_undrawn():
    # iris' codes 0-2 for a model of its names: no row was drawn, under a legend of the three classes
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = QuadraticDiscriminant().fit(X[:, :2], names)
    ax = plot_decision_surface(model, X[:, :2], names, resolution=20)
    assert sum(len(c.get_offsets()) for c in ax.collections if c.get_label() in names) == 150
    with pytest.raises(ValueError, match=r"y must be one label per row among classes_ \['setosa', 'versicolor', "
                                         r"'virginica'\]; got \[0, 1, 2\]"):
        plot_decision_surface(model, X[:, :2], y, resolution=20)
    # classes in any order (a classifier of another library need not sort them)
    from discrim.utils.validation import label_index

    np.testing.assert_array_equal(label_index(np.array(["b", "c", "a"]), np.array(["a", "b", "c", "a"])),
                                  [2, 0, 1, 2])
