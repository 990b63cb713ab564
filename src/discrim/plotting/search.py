"""Mean cross-validated score of a prototype-set search over alpha_feature and the batch count."""

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
    """Plot the mean CV score of the search against alpha_feature, one line per batch count.

    The score is the one the search selected by (``scoring``: the log-loss by default). The
    dashed horizontal line is the selection threshold (best mean and its standard deviation);
    the star marks the selected point, the cross the best mean. With an ``alpha_prototype_grid``
    each of its values gets a line style of its own. Grid points that no fold scored (batch
    counts after ``n_batches_no_change`` stopped every fold early) are left out. Where the model
    with no batches (the class frequencies) scores far from the others, the y-axis spans the
    others and its legend entry gives its score instead.

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
    from discrim.model_selection._search import SCORE_LABELS, best_mean_index

    if not isinstance(cv_estimator, PrototypeClassifierCV):
        raise TypeError(f"plot_search draws a fitted PrototypeClassifierCV's search; got {type(cv_estimator).__name__}.")
    check_is_fitted(cv_estimator, "cv_results_")
    res = cv_estimator.cv_results_
    scoring = cv_estimator.scoring
    alphas = np.asarray(res["alpha_feature"], dtype=float)
    prototype_alphas = np.asarray(res["alpha_prototype"], dtype=float)
    counts = np.asarray(res["n_batches"], dtype=int)
    mean = np.asarray(res[f"mean_test_{scoring}"], dtype=float)
    std = np.asarray(res[f"std_test_{scoring}"], dtype=float)
    wanted = np.unique(counts) if batch_counts is None else np.asarray(batch_counts, dtype=int)
    unknown = np.setdiff1d(wanted, counts)
    if unknown.size:
        raise ValueError(
            f"batch_counts {unknown.tolist()} were not searched; choose from 0 to {counts.max()}."
        )
    with_prototype = cv_estimator.alpha_prototype_grid is not None
    limits = _limits_without_the_empty_model(mean, counts, wanted, cv_estimator.threshold_)
    styles = ("-", "--", ":", "-.")
    ax = new_axes(ax, figsize=(7.0, 5.0))
    cmap = _colormap()
    # the colour scale spans the counts drawn (not 0..max_batches: the 5 counts that folds stopped
    # early by n_batches_no_change scored of 50, or batch_counts=[0, 1, 2] of 10, were one colour)
    drawn = wanted[np.isin(wanted, counts[np.isfinite(mean)])]
    low, span = (drawn.min(), max(drawn.max() - drawn.min(), 1)) if drawn.size else (0, 1)
    for j, alpha_p in enumerate(np.unique(prototype_alphas)):
        for b in wanted:
            rows = np.flatnonzero((counts == b) & (prototype_alphas == alpha_p) & np.isfinite(mean))
            if not rows.size:
                continue
            rows = rows[np.argsort(alphas[rows])]
            colour = cmap((b - low) / span)
            label = f"{b} batches" + (f", alpha_prototype={alpha_p:.2g}" if with_prototype else "")
            if b == 0 and limits is not None:
                label += f" (off the axis, {np.mean(mean[rows]):.3g})"
            ax.plot(alphas[rows], mean[rows], marker="o", markersize=3, linewidth=1, color=colour,
                    linestyle=styles[j % len(styles)], label=label)
            if show_std:
                ax.fill_between(alphas[rows], mean[rows] - std[rows], mean[rows] + std[rows], color=colour, alpha=0.1)
    ax.axhline(cv_estimator.threshold_, color="black", linestyle="--", linewidth=1, label="threshold")
    best = best_mean_index(mean, scoring)
    ax.plot(alphas[best], mean[best], marker="x", markersize=9, color="black", linestyle="none", label="best mean")
    sel = cv_estimator.best_index_
    chosen = f"alpha_feature={alphas[sel]:.2g}" + (f", alpha_prototype={prototype_alphas[sel]:.2g}"
                                                   if with_prototype else "")
    ax.plot(alphas[sel], mean[sel], marker="*", markersize=15, color="red", markeredgecolor="black", linestyle="none",
            label=f"selected: {chosen}, {counts[sel]} batches")
    if limits is not None:
        ax.set_ylim(*limits)
    ax.set_xscale("log")
    ax.set_xlabel("alpha_feature (penalty on feature weights)")
    ax.set_ylabel(f"mean CV {SCORE_LABELS[scoring]}")
    ax.set_title("cross-validated search")
    ax.legend(loc="best", fontsize="x-small", ncol=2)
    return ax


def _limits_without_the_empty_model(mean, counts, wanted, threshold):
    """y-limits that leave out the 0-batch line where it would squash the others, or None.

    The model with no batches predicts the class frequencies; its score (e.g. log-loss 2.30 on
    ten classes) lies far from those of the fitted models (0.13-0.3), whose differences, which the
    plot is for, would shrink to a few pixels. The limits span the other drawn lines and the
    threshold, padded by a tenth; None where the 0-batch line is not drawn or lies within three
    times their span.
    """
    drawn = np.isin(counts, wanted) & np.isfinite(mean)
    empty, rest = drawn & (counts == 0), drawn & (counts > 0)
    if not empty.any() or not rest.any():
        return None
    low = min(mean[rest].min(), threshold)
    high = max(mean[rest].max(), threshold)
    span = max(high - low, 1e-12)
    if mean[empty].min() >= low - 3 * span and mean[empty].max() <= high + 3 * span:
        return None
    return low - 0.1 * span, high + 0.1 * span


def _colormap():
    from matplotlib import colormaps

    return colormaps["viridis"]
