"""Decision regions of a fitted classifier over two features, with the training points."""

from __future__ import annotations

import numpy as np

from typing import TYPE_CHECKING, Any

from discrim._typing import ArrayLike
from discrim.plotting._mpl import new_axes
from discrim.utils.validation import label_index

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def plot_decision_surface(estimator: Any, X: ArrayLike, y: ArrayLike, ax: Axes | None = None, resolution: int = 300,
                          margin: float = 0.1, show_proba: bool = True) -> Axes:
    """Draw the classes an estimator assigns over the plane of two features.

    Parameters
    ----------
    estimator : fitted classifier
        Must take two features and have ``predict`` (and ``predict_proba`` when
        ``show_proba``).
    X : array-like of shape (n_samples, 2)
        Points to show (usually the training data); they also set the plotted range. Rows with
        a missing value (NaN) are not drawn.
    y : array-like of shape (n_samples,)
        Their labels (among the estimator's ``classes_``), coloured like the regions.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure when None.
    resolution : int, default=300
        Grid points per axis.
    margin : float, default=0.1
        Extra range around the data on each side, as a fraction of each feature's range (so the
        picture does not depend on the data's units; 0.1 of standardised data's range of about 5
        is the half unit drawn before this was relative).
    show_proba : bool, default=True
        Shade each region by the posterior probability of the chosen class.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from discrim.discriminant import LinearDiscriminant
    >>> from discrim.plotting import plot_decision_surface
    >>> X, y = load_iris(return_X_y=True)
    >>> X = X[:, :2]
    >>> ax = plot_decision_surface(LinearDiscriminant().fit(X, y), X, y)
    >>> type(ax).__name__
    'Axes'
    """
    from matplotlib.colors import ListedColormap
    from sklearn.base import is_classifier
    from sklearn.utils.validation import check_is_fitted

    if is_classifier(estimator):  # an unfitted classifier: NotFittedError, as every other plot
        check_is_fitted(estimator)
    if not (hasattr(estimator, "classes_") and hasattr(estimator, "predict_proba")):
        raise TypeError(
            f"plot_decision_surface draws a fitted classifier (with classes_ and predict_proba); got "
            f"{type(estimator).__name__}. A fitted mixture's components are drawn by plot_classification."
        )
    X_arr = np.asarray(X, dtype=float)
    if X_arr.ndim != 2 or X_arr.shape[1] != 2:
        raise ValueError(
            f"decision surfaces need exactly two features; X has shape {X_arr.shape}."
        )
    y = np.asarray(y)
    # rows with a missing value (which a model fitted on such rows accepts) have no place on the plane
    drawn = ~np.isnan(X_arr).any(axis=1)
    if not drawn.any():
        raise ValueError("plot_decision_surface draws rows with both features observed; every row of X has a "
                         "missing value (NaN).")
    if y.shape[0] != X_arr.shape[0]:
        raise ValueError(f"y has {y.shape[0]} labels for the {X_arr.shape[0]} rows of X: give one per row.")
    X_arr, y = X_arr[drawn], y[drawn]
    ax = new_axes(ax)
    lo, hi = X_arr.min(axis=0), X_arr.max(axis=0)
    span = hi - lo
    span = np.where(span > 0, span, np.where(lo != 0, np.abs(lo), 1.0))  # a constant feature: its size
    lo, hi = lo - margin * span, hi + margin * span
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    if hasattr(estimator, "feature_names_in_"):
        import pandas as pd

        grid = pd.DataFrame(grid, columns=list(estimator.feature_names_in_))
    classes = np.asarray(estimator.classes_)
    colours = [f"C{i % 10}" for i in range(classes.shape[0])]
    cmap = ListedColormap(colours)
    if show_proba and hasattr(estimator, "predict_proba"):
        proba = estimator.predict_proba(grid)
        chosen = np.argmax(proba, axis=1)
        confidence = proba[np.arange(proba.shape[0]), chosen]
    else:
        chosen = np.searchsorted(classes, estimator.predict(grid))
        confidence = np.ones(chosen.shape[0])
    half = (hi - lo) / max(resolution - 1, 1) / 2  # each pixel centred on its grid point
    extent = (lo[0] - half[0], hi[0] + half[0], lo[1] - half[1], hi[1] + half[1])
    ax.imshow(
        chosen.reshape(g0.shape), origin="lower", extent=extent,
        cmap=cmap, vmin=-0.5, vmax=classes.shape[0] - 0.5, alpha=0.15 + 0.35 * (confidence.reshape(g0.shape) - confidence.min()) / max(np.ptp(confidence), 1e-12),
        aspect="auto", interpolation="nearest",
    )
    ax.contour(g0, g1, chosen.reshape(g0.shape), levels=np.arange(classes.shape[0]) + 0.5, colors="k", linewidths=0.8)
    index = label_index(classes, y)  # labels that are not classes are refused, not left undrawn
    for i, label in enumerate(classes):
        mask = index == i
        ax.scatter(X_arr[mask, 0], X_arr[mask, 1], s=12, c=colours[i], edgecolors="k", linewidths=0.3, label=str(label))
    # the model's names, else X's columns (a model fitted on an array, drawn with a DataFrame)
    names = list(getattr(estimator, "feature_names_in_", getattr(X, "columns", ["feature 0", "feature 1"])))
    ax.set_xlabel(str(names[0]))
    ax.set_ylabel(str(names[1]))
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.legend(loc="best", fontsize="small", title="class")
    final = estimator[-1] if hasattr(estimator, "steps") else estimator
    ax.set_title(type(final).__name__)
    return ax
