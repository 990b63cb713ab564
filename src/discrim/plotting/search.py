"""Mean cross-validated log-loss of a prototype-set search over alpha_feature and the batch count."""

from __future__ import annotations

import numpy as np

from collections.abc import Sequence
from typing import TYPE_CHECKING

from discrim.plotting._mpl import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from discrim.model_selection import PrototypeClassifierCV


def plot_search(cv_estimator: PrototypeClassifierCV, ax: Axes | None = None, *, batch_counts: Sequence[int] | None = None,
                show_std: bool = False) -> Axes:
    """Plot the mean CV log-loss against alpha_feature, one line per batch count.

    The dashed horizontal line is the selection threshold (lowest mean plus its standard
    deviation); the star marks the point the 1-SE rule selected, the cross the lowest mean.

    Parameters
    ----------
    cv_estimator : PrototypeClassifierCV
        Fitted.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure when None.
    batch_counts : sequence of int, default=None
        Batch counts to draw; all of them (0..max_batches) when None.
    show_std : bool, default=False
        Shade mean +- one standard deviation around each line.

    Returns
    -------
    ax : matplotlib.axes.Axes

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from discrim.model_selection import PrototypeClassifierCV
    >>> from discrim.plotting import plot_search
    >>> X, y = load_iris(return_X_y=True)
    >>> ax = plot_search(PrototypeClassifierCV(max_batches=2, random_state=0).fit(X, y))
    >>> type(ax).__name__
    'Axes'
    """
    from sklearn.utils.validation import check_is_fitted

    from discrim.model_selection import PrototypeClassifierCV

    if not isinstance(cv_estimator, PrototypeClassifierCV):
        raise TypeError(f"plot_search draws a fitted PrototypeClassifierCV's search; got {type(cv_estimator).__name__}.")
    check_is_fitted(cv_estimator, "cv_results_")
    res = cv_estimator.cv_results_
    alphas = np.asarray(res["alpha_feature"], dtype=float)
    counts = np.asarray(res["n_batches"], dtype=int)
    mean = np.asarray(res["mean_test_log_loss"], dtype=float)
    std = np.asarray(res["std_test_log_loss"], dtype=float)
    wanted = np.unique(counts) if batch_counts is None else np.asarray(batch_counts, dtype=int)
    unknown = np.setdiff1d(wanted, counts)
    if unknown.size:
        raise ValueError(
            f"batch_counts {unknown.tolist()} were not searched; choose from 0 to {counts.max()}."
        )
    ax = new_axes(ax, figsize=(7.0, 5.0))
    cmap = _colormap()
    for b in wanted:
        rows = np.flatnonzero(counts == b)
        rows = rows[np.argsort(alphas[rows])]
        colour = cmap(b / max(counts.max(), 1))
        ax.plot(alphas[rows], mean[rows], marker="o", markersize=3, linewidth=1, color=colour, label=f"{b} batches")
        if show_std:
            ax.fill_between(alphas[rows], mean[rows] - std[rows], mean[rows] + std[rows], color=colour, alpha=0.1)
    ax.axhline(cv_estimator.threshold_, color="black", linestyle="--", linewidth=1, label="threshold")
    best = int(np.argmin(mean))
    ax.plot(alphas[best], mean[best], marker="x", markersize=9, color="black", linestyle="none", label="lowest mean")
    sel = cv_estimator.best_index_
    ax.plot(
        alphas[sel], mean[sel], marker="*", markersize=15, color="red", markeredgecolor="black", linestyle="none",
        label=f"selected: alpha_feature={alphas[sel]:.2g}, {counts[sel]} batches",
    )
    ax.set_xscale("log")
    ax.set_xlabel("alpha_feature (penalty on feature weights)")
    ax.set_ylabel("mean CV log-loss")
    ax.set_title("cross-validated search")
    ax.legend(loc="best", fontsize="x-small", ncol=2)
    return ax


def _colormap():
    from matplotlib import colormaps

    return colormaps["viridis"]
