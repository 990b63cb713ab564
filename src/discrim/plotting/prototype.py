"""Plots of prototype set models: probability and decision surfaces or curves, maps per batch, feature weights."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import TYPE_CHECKING, Literal

import numpy as np

from discrim._typing import ArrayLike, PrototypeModel
from discrim.plotting._mpl import new_axes, pyplot
from discrim.plotting.prototype_map import weighted_pca
from discrim.utils.validation import label_index

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _parts(model):
    """(preprocessing or None, fitted PrototypeClassifier, the pipeline's input names or None) of a model, a
    search or a pipeline (:func:`~discrim.prototype._report.split_model`), refusing anything else."""
    from sklearn.utils.validation import check_is_fitted

    from discrim.prototype._report import split_model

    inner = model.steps[-1][1] if hasattr(model, "steps") else model
    inner = getattr(inner, "best_estimator_", None) or inner
    if not hasattr(inner, "batches_"):
        check_is_fitted(inner)
        raise TypeError(f"expected a fitted PrototypeClassifier (or a search or Pipeline ending in one); "
                         f"got {type(inner).__name__}.")
    return split_model(model)


def _rows(X, n_features, what="X"):
    """``X`` as a float array (n, n_features) and its column names (None for an array)."""
    columns = [str(c) for c in X.columns] if hasattr(X, "columns") else None
    A = np.asarray(X, dtype=np.float64)
    if A.ndim == 1:
        A = A[None, :]
    if A.ndim != 2 or A.shape[1] != n_features:
        raise ValueError(f"{what} must have shape (n_samples, {n_features}); got {np.shape(X)}.")
    return A, columns


def _frame_like(A, columns):
    if columns is None:
        return A
    import pandas as pd

    return pd.DataFrame(A, columns=columns)


def _input_features(model, pre, final):
    """Number and names of the columns the model (or pipeline) takes."""
    outer = model if pre is not None else final
    names = getattr(outer, "feature_names_in_", None)
    return int(outer.n_features_in_), None if names is None else [str(n) for n in names]


def _feature_index(item, names, n):
    if isinstance(item, str) and names is not None and item in names:
        return names.index(item)
    if isinstance(item, Integral) and not isinstance(item, bool) and 0 <= item < n:
        return int(item)
    raise ValueError(f"features must be column indices in [0, {n}) or names among {names}; got {item!r}.")


def _default_pair(final, n_inputs):
    """The two features of largest summed feature weight (the first two when the model's features are not the inputs').

    Needs ``n_inputs >= 2``.
    """
    if n_inputs != final.n_features_in_:
        return (0, 1)
    total = np.zeros(final.n_features_in_)
    for batch in final.batches_:
        total[np.asarray(batch.feature_index)] += batch.feature_weights
    first, second = np.argsort(-total, kind="stable")[:2]
    return (int(first), int(second))


def plot_prototype_surface(model: PrototypeModel, X: ArrayLike, y: ArrayLike | None = None, *,
                           features: Sequence[int | str] | Sequence[Sequence[int | str]] | None = None,
                           baseline: str | ArrayLike = "median", kind: Literal["probability", "decision"] = "probability",
                           target: object = None, explain: ArrayLike | None = None,
                           familiarity_quantiles: Sequence[float] = (0.05, 0.25, 0.5), resolution: int = 80,
                           margin: float = 0.1, ax: Axes | np.ndarray | None = None) -> Axes | np.ndarray:
    """Draw the probability or decision surface of a prototype set model on 2-D slices through a baseline.

    The model may take any number of features. With two or more, each panel varies two of them
    over the range of X and holds the others at the baseline point. Dashed contours mark where the
    familiarity (total kernel weight of the prototypes) equals given quantiles of the familiarity
    of the rows of X; the rows of X, the baseline and the explained rows are marked (a row's
    position is its projection onto the slice). A model of one feature gets the 1-D picture in one
    panel: the class probabilities (the target's curve in bold), or the predicted class shaded by
    its probability (the legend names each class's colour) together with that probability as a
    curve, against the feature over the range of X; the rows of X as a strip below 0 (one line of
    ticks per class), the explained rows as stars on the curve, and dashed vertical lines where the
    familiarity equals the quantiles.

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted; a pipeline is drawn in the units of its input.
    X : array-like of shape (n_samples, n_features)
        Reference rows in the units the model takes (usually the training rows): they set the
        range of the slices, the default baseline and the familiarity levels.
    y : array-like of shape (n_samples,), default=None
        Classes of the rows of X (labels among the model's ``classes_``), for their colours.
    features : pair or list of pairs of int or str, default=None
        The two features of a slice (indices or names), or a list of pairs for one panel each;
        None: the two of largest summed feature weight. A one-feature model takes None or that
        feature (``0`` or its name).
    baseline : {"median", "mean"} or array-like of shape (n_features,), default="median"
        The point the slices pass through: the median or mean of X, or given. A one-feature model
        holds nothing fixed: there it only chooses the default ``target``.
    kind : {"probability", "decision"}, default="probability"
        Filled contours of the probability of ``target``, or the predicted class shaded by its
        probability.
    target : object, default=None
        The class whose probability is drawn; default the second class for two classes, else the
        class predicted at the baseline.
    explain : array-like of shape (n_explained, n_features), default=None
        Rows to mark with stars (e.g. those passed to :func:`discrim.prototype.explain`).
    familiarity_quantiles : sequence of float in (0, 1), default=(0.05, 0.25, 0.5)
        Quantiles of the familiarity of X drawn as contours; empty for none.
    resolution : int, default=80
        Grid points per axis.
    margin : float, default=0.1
        Extra range on each side, as a fraction of each feature's range in X.
    ax : matplotlib.axes.Axes or array of them, default=None
        Axes to draw on (one per pair); new ones when None.

    Returns
    -------
    ax : matplotlib.axes.Axes, or ndarray of Axes for a list of pairs
        Each with the surface (a filled contour set or an image), the familiarity contour set,
        and scatter collections with gids ``"reference"``, ``"baseline"`` and ``"explained"``.
        For a one-feature model, one Axes with a line per class (``kind="probability"``) or an
        image and the line of the predicted class's probability (``kind="decision"``), each line
        with gid ``"probability"``; the familiarity lines (gid ``"familiarity"``); and scatter
        collections with gids ``"reference"`` and ``"explained"``.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.plotting import plot_prototype_surface
    >>> from discrim.prototype import PrototypeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3)); y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> clf = PrototypeClassifier(n_candidates=20, random_state=0).fit(X, y)
    >>> ax = plot_prototype_surface(clf, X, y, features=(0, 1), resolution=20)
    """
    from discrim.prototype import familiarity

    pre, final, _ = _parts(model)
    n_inputs, names = _input_features(model, pre, final)
    A, columns = _rows(X, n_inputs)
    names = columns or names
    if kind not in ("probability", "decision"):
        raise ValueError(f"kind must be 'probability' or 'decision'; got {kind!r}.")
    if isinstance(resolution, bool) or not isinstance(resolution, Integral) or resolution < 2:
        raise ValueError(f"resolution must be an integer >= 2; got {resolution!r}.")
    levels = np.asarray(familiarity_quantiles, dtype=np.float64).ravel()
    if np.any(~(levels > 0) | ~(levels < 1)):
        raise ValueError(f"familiarity_quantiles must lie in (0, 1); got {familiarity_quantiles!r}.")
    if n_inputs == 1:
        items = [features] if features is None or isinstance(features, (str, Integral)) else list(features)
        if len(items) != 1 or (items[0] is not None and _feature_index(items[0], names, 1) != 0):
            raise ValueError(f"the model takes one feature: features must be None or that feature (0 or its name); "
                             f"got {features!r}.")
        pairs, single = [(0, None)], True
    elif features is None:
        pairs, single = [_default_pair(final, n_inputs)], True
    else:
        items = list(features) if not isinstance(features, str) else [features]
        single = len(items) == 2 and all(isinstance(f, (str, Integral)) for f in items)
        pairs = [items] if single else items
        checked = []
        for pair in pairs:
            if isinstance(pair, str) or len(pair) != 2:
                raise ValueError(f"features must be a pair of features or a list of pairs; got {features!r}.")
            i, j = (_feature_index(f, names, n_inputs) for f in pair)
            if i == j:
                raise ValueError(f"the two features of a slice must differ; got {list(pair)!r}.")
            checked.append((i, j))
        pairs = checked
    if isinstance(baseline, str):
        if baseline not in ("median", "mean"):
            raise ValueError(f"baseline must be 'median', 'mean' or a point of {n_inputs} values; got {baseline!r}.")
        point = np.nanmedian(A, axis=0) if baseline == "median" else np.nanmean(A, axis=0)
    else:
        point = np.asarray(baseline, dtype=np.float64).ravel()
        if point.shape != (n_inputs,):
            raise ValueError(f"baseline must be 'median', 'mean' or a point of {n_inputs} values; got shape "
                             f"{np.shape(baseline)}.")
    marked = None if explain is None else _rows(explain, n_inputs, "explain")[0]
    classes = np.asarray(final.classes_)
    if target is not None and not np.any(classes == target):
        raise ValueError(f"target must be one of the classes {classes.tolist()}; got {target!r}.")
    y = None if y is None else np.asarray(y)
    if y is not None and y.shape != (A.shape[0],):
        raise ValueError(f"y must hold one label per row of X ({A.shape[0]}); got shape {y.shape}.")
    y = None if y is None else label_index(classes, y)  # each row's class index, for its colour
    if single and ax is not None:
        axes = [ax]
    elif ax is not None:
        axes = list(np.ravel(ax))
        if len(axes) != len(pairs):
            raise ValueError(f"ax must hold one Axes per pair of features ({len(pairs)}); got {len(axes)}.")
    elif single:
        axes = [new_axes()]
    else:
        _, grid_axes = pyplot().subplots(1, len(pairs), figsize=(5.5 * len(pairs), 5.0), squeeze=False)
        axes = list(grid_axes[0])
    reference_familiarity = familiarity(model, _frame_like(A, columns)) if levels.size else None
    if target is None:
        at_base = np.asarray(model.predict_proba(_frame_like(point[None, :], columns)))[0]
        target = classes[1] if classes.shape[0] == 2 else classes[int(np.argmax(at_base))]
    k_target = int(np.flatnonzero(classes == target)[0])
    for (i, j), panel in zip(pairs, axes):
        if j is None:
            _draw_line(model, panel, A, y, columns, names, kind, classes, k_target, marked, reference_familiarity,
                       levels, resolution, margin)
            continue
        _draw_slice(model, panel, A, y, columns, names, point, i, j, kind, classes, k_target, marked,
                    reference_familiarity, levels, resolution, margin)
    return axes[0] if single else np.array(axes, dtype=object)


def _axis_range(values, margin):
    """Range of each column of ``values`` (n, k), widened by ``margin`` of its span (of ``|value|`` or 1 where
    the column is constant): two ndarrays of shape (k,)."""
    lo = np.nanmin(values, axis=0)
    hi = np.nanmax(values, axis=0)
    span = np.where(hi > lo, hi - lo, np.where(lo != 0, np.abs(lo), 1.0))
    return lo - margin * span, hi + margin * span


def _level_crossings(x, f, value):
    """Where the piecewise linear curve through ``(x, f)`` (both (n,)) crosses ``value``: ndarray of x positions."""
    d = f - value
    at = np.flatnonzero((d[:-1] < 0) != (d[1:] < 0))
    return x[at] + d[at] / (d[at] - d[at + 1]) * (x[at + 1] - x[at])


def _draw_line(model, ax, A, y, columns, names, kind, classes, k_target, marked, reference_familiarity, levels,
               resolution, margin):
    """The one panel of :func:`plot_prototype_surface` for a one-feature model: probabilities against the feature."""
    from matplotlib.colors import ListedColormap

    from discrim.prototype import familiarity

    (lo,), (hi,) = _axis_range(A, margin)
    grid = np.linspace(lo, hi, resolution)
    rows = _frame_like(grid[:, None], columns)
    proba = np.asarray(model.predict_proba(rows))
    K = classes.shape[0]
    colours = [f"C{k % 10}" for k in range(K)]
    if kind == "probability":
        for k in range(K):
            ax.plot(grid, proba[:, k], color=colours[k], linewidth=2.5 if k == k_target else 1.0,
                    label=f"P({classes[k]!s} | x)", gid="probability")
        shown = proba[:, k_target]
    else:
        chosen = np.argmax(proba, axis=1)
        shown = proba.max(axis=1)
        half = (hi - lo) / (resolution - 1) / 2  # each pixel centred on its grid point
        ax.imshow(chosen[None, :], origin="lower", extent=(lo - half, hi + half, 0, 1), aspect="auto",
                  cmap=ListedColormap(colours), vmin=-0.5, vmax=K - 0.5, interpolation="nearest",
                  alpha=(0.15 + 0.6 * (shown - 1.0 / K) * K / max(K - 1, 1))[None, :])
        ax.plot(grid, shown, color="k", linewidth=1.5, label="P(predicted class | x)", gid="probability")
    if levels.size:
        fam = familiarity(model, rows)
        quantiles = np.quantile(reference_familiarity, levels)
        shares = {v: q for v, q in zip(quantiles, levels)}
        crossings = [(x, shares[v]) for v in np.unique(quantiles) for x in _level_crossings(grid, fam, v)]
        if crossings:
            ax.vlines([x for x, _ in crossings], 0, 1, colors="0.3", linestyles="dashed", linewidths=0.8,
                      gid="familiarity")
            labelled = set()
            for x, share in crossings:  # each level named once, at its first crossing (a label per crossing piled up)
                if share not in labelled:
                    labelled.add(share)
                    ax.text(x, 1.0, f"fam. q{100 * share:.0f}", rotation=90, ha="right", va="top", fontsize="x-small")
    # the strip: the rows of X below 0, one line per class
    step = 0.04
    if y is None:
        ax.scatter(A[:, 0], np.full(A.shape[0], -step), marker="|", s=40, c="tab:gray", gid="reference")
        bottom = -2 * step
    else:
        index = y
        ax.scatter(A[:, 0], -step * (index + 1), marker="|", s=40, c=[colours[k] for k in index], gid="reference")
        bottom = -step * (K + 1)
    if marked is not None:
        at = np.asarray(model.predict_proba(_frame_like(marked, columns)))
        height = at[:, k_target] if kind == "probability" else at.max(axis=1)
        ax.scatter(marked[:, 0], height, marker="*", s=200, c="gold", edgecolors="k", gid="explained",
                   label="explained", zorder=3)
    label = names[0] if names is not None else "x0"
    ax.set_xlabel(label)
    ax.set_ylabel("probability")
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom, 1.02)
    ax.set_title(f"{'P(' + str(classes[k_target]) + ')' if kind == 'probability' else 'decision'}: {label}",
                 fontsize="small")
    # the decision's shading names its classes' colours (the probability curves carry their own labels)
    ax.legend(handles=ax.get_legend_handles_labels()[0] + _class_key(classes, colours, kind, False), loc="best",
              fontsize="x-small")


def _draw_slice(model, ax, A, y, columns, names, point, i, j, kind, classes, k_target, marked, reference_familiarity,
                levels, resolution, margin):
    """One panel of :func:`plot_prototype_surface`."""
    from matplotlib.colors import ListedColormap

    from discrim.prototype import familiarity

    lo, hi = _axis_range(A[:, [i, j]], margin)
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.tile(point, (g0.size, 1))
    grid[:, i], grid[:, j] = g0.ravel(), g1.ravel()
    rows = _frame_like(grid, columns)
    proba = np.asarray(model.predict_proba(rows))
    colours = [f"C{k % 10}" for k in range(classes.shape[0])]
    if kind == "probability":
        surface = ax.contourf(g0, g1, proba[:, k_target].reshape(g0.shape), levels=np.linspace(0, 1, 11),
                              cmap="RdBu_r", alpha=0.8)
        ax.figure.colorbar(surface, ax=ax, label=f"P({classes[k_target]!s} | x)")
    else:
        chosen = np.argmax(proba, axis=1).reshape(g0.shape)
        confidence = proba.max(axis=1).reshape(g0.shape)
        half = (hi - lo) / (resolution - 1) / 2  # each pixel centred on its grid point
        extent = (lo[0] - half[0], hi[0] + half[0], lo[1] - half[1], hi[1] + half[1])
        ax.imshow(chosen, origin="lower", extent=extent, aspect="auto",
                  cmap=ListedColormap(colours), vmin=-0.5, vmax=classes.shape[0] - 0.5, interpolation="nearest",
                  alpha=0.15 + 0.6 * (confidence - 1.0 / classes.shape[0]) * classes.shape[0]
                  / max(classes.shape[0] - 1, 1))
    if levels.size:
        fam = familiarity(model, rows).reshape(g0.shape)
        values = np.unique(np.quantile(reference_familiarity, levels))
        values = values[(values > fam.min()) & (values < fam.max())]
        if values.size:
            contours = ax.contour(g0, g1, fam, levels=values, colors="k", linestyles="dashed", linewidths=1)
            shares = {v: q for v, q in zip(np.quantile(reference_familiarity, levels), levels)}
            ax.clabel(contours, fmt={v: f"fam. q{100 * shares.get(v, 0):.0f}" for v in values}, fontsize="x-small")
            contours.set_gid("familiarity")
    if y is None:
        ax.scatter(A[:, i], A[:, j], s=10, c="tab:gray", edgecolors="k", linewidths=0.2, gid="reference")
    else:
        index = y
        ax.scatter(A[:, i], A[:, j], s=10, c=[colours[k] for k in index], edgecolors="k", linewidths=0.2,
                   gid="reference")
    ax.scatter([point[i]], [point[j]], marker="X", s=90, c="white", edgecolors="k", gid="baseline", label="baseline")
    if marked is not None:
        ax.scatter(marked[:, i], marked[:, j], marker="*", s=200, c="gold", edgecolors="k", gid="explained",
                   label="explained")
    label = (lambda d: names[d]) if names is not None else (lambda d: f"x{d}")
    ax.set_xlabel(label(i))
    ax.set_ylabel(label(j))
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    others = "others at the baseline" if A.shape[1] > 2 else "all features"
    ax.set_title(f"{'P(' + str(classes[k_target]) + ')' if kind == 'probability' else 'decision'}: "
                 f"{label(i)} x {label(j)}, {others}", fontsize="small")
    ax.legend(handles=ax.get_legend_handles_labels()[0] + _class_key(classes, colours, kind, y is not None),
              loc="upper right", fontsize="x-small")


def _class_key(classes, colours, kind, with_rows):
    """Legend entries that say which colour is which class: the regions of a decision slice, or the rows' dots."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if kind == "decision":
        return [Patch(facecolor=colours[k], alpha=0.6, label=str(c)) for k, c in enumerate(classes)]
    if with_rows:
        return [Line2D([], [], marker="o", linestyle="none", markersize=5, markerfacecolor=colours[k],
                       markeredgecolor="k", markeredgewidth=0.3, label=str(c)) for k, c in enumerate(classes)]
    return []


def plot_batch_maps(model: PrototypeModel, X: ArrayLike | None = None, y: ArrayLike | None = None, *,
                    n_batches: int | None = None, explain: ArrayLike | None = None, max_marker_size: float = 200.0,
                    ncols: int = 3) -> np.ndarray:
    """Draw one prototype map per batch: a weighted PCA of its prototypes with supplementary rows.

    Batch b's prototypes are the points ``v_b * s_j`` on its active features (the space in which
    its kernel measures distance), projected on their principal axes weighted by the prototype
    weights (as :func:`discrim.plotting.plot_prototype_map` does for all batches together);
    marker area shows the weight and colour the class. Rows of X (and ``explain``) are
    projected onto the same axes as supplementary points.

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted; a pipeline transforms X with its steps before the last.
    X : array-like of shape (n_samples, n_features), default=None
        Supplementary rows, in the units the model takes.
    y : array-like of shape (n_samples,), default=None
        Their classes (labels among the model's ``classes_``), for their colours.
    n_batches : int or None, default=None
        Draw the first ``n_batches`` batches; None: all.
    explain : array-like of shape (n_explained, n_features), default=None
        Rows to mark with stars.
    max_marker_size : float, default=200.0
        Marker area of the heaviest prototype of a batch.
    ncols : int, default=3
        Panels per row of the figure.

    Returns
    -------
    axes : ndarray of Axes of shape (n_batches,)
        One per batch, each with one scatter collection per class of its prototypes (gid
        ``"prototypes"``) and, when given, the supplementary rows (gid ``"supplementary"``) and the
        explained rows (gid ``"explained"``); an empty batch shows a note.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.plotting import plot_batch_maps
    >>> from discrim.prototype import PrototypeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3)); y = (X[:, 0] > 0).astype(int)
    >>> clf = PrototypeClassifier(n_batches=2, n_candidates=20, random_state=0).fit(X, y)
    >>> plot_batch_maps(clf, X, y).shape
    (2,)
    """
    from discrim.prototype._prototype_set import check_n_batches

    pre, final, _ = _parts(model)
    B = len(final.batches_)
    n_batches = check_n_batches(n_batches, B, minimum=1)
    if isinstance(ncols, bool) or not isinstance(ncols, Integral) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer; got {ncols!r}.")
    batches = final.batches_[: n_batches or B]
    if not batches:
        raise ValueError("the model has no batches to map (n_batches=0).")
    n_inputs, _ = _input_features(model, pre, final)

    def to_model(rows, what):
        if rows is None:
            return None
        A, columns = _rows(rows, n_inputs, what)
        return np.asarray(pre.transform(_frame_like(A, columns)), dtype=np.float64) if pre is not None else A

    Z_rows, Z_marked = to_model(X, "X"), to_model(explain, "explain")
    y = None if y is None else np.asarray(y)
    if y is not None and (Z_rows is None or y.shape != (Z_rows.shape[0],)):
        raise ValueError("y must hold one label per row of X (and needs X).")
    classes = np.asarray(final.classes_)
    y = None if y is None else label_index(classes, y)  # each row's class index, for its colour
    ncols = min(ncols, len(batches))
    nrows = -(-len(batches) // ncols)
    fig, grid = pyplot().subplots(nrows, ncols, figsize=(4.5 * ncols, 4.0 * nrows), squeeze=False)
    axes = grid.ravel()
    for panel in axes[len(batches):]:
        panel.set_visible(False)
    for b, (batch, ax) in enumerate(zip(batches, axes), start=1):
        if batch.n_prototypes == 0:
            ax.text(0.5, 0.5, "no prototypes in this batch", ha="center", va="center", transform=ax.transAxes)
            ax.set_title(f"batch {b}: empty")
            continue
        v = np.asarray(batch.feature_weights, dtype=np.float64)
        index = np.asarray(batch.feature_index)
        weights = np.asarray(batch.prototype_weights, dtype=np.float64)
        scores, explained, mean, pcs = weighted_pca(np.asarray(batch.prototypes) * v, weights, return_axes=True)
        if Z_rows is not None:
            sup = (np.nan_to_num(Z_rows[:, index] * v - mean)) @ pcs
            colours = ("tab:gray" if y is None else
                       [f"C{k % 10}" for k in y])
            ax.scatter(sup[:, 0], sup[:, 1], s=6, c=colours, alpha=0.35, linewidths=0, gid="supplementary")
        sizes = max_marker_size * weights / weights.max()
        for k in np.unique(batch.target):
            mask = batch.target == k
            ax.scatter(scores[mask, 0], scores[mask, 1], s=sizes[mask], c=f"C{k % 10}", alpha=0.7, edgecolors="k",
                       linewidths=0.4, label=str(classes[k]), gid="prototypes")
        if Z_marked is not None:
            star = (np.nan_to_num(Z_marked[:, index] * v - mean)) @ pcs
            ax.scatter(star[:, 0], star[:, 1], marker="*", s=200, c="gold", edgecolors="k", gid="explained")
        ax.set_xlabel(f"weighted PC 1 ({100 * explained[0]:.0f}%)")
        ax.set_ylabel(f"weighted PC 2 ({100 * explained[1]:.0f}%)")
        ax.set_title(f"batch {b}: {batch.n_prototypes} prototypes, {index.shape[0]} features", fontsize="small")
        legend = ax.legend(loc="best", fontsize="x-small", title="class")
        for handle in legend.legend_handles:  # one marker size (the first prototype's hid light classes)
            handle.set_sizes([30.0])
    fig.tight_layout()
    return axes[: len(batches)]


def plot_feature_weights(model: PrototypeModel, *, n_batches: int | None = None,
                         units: Literal["model", "original"] = "model", ax: Axes | None = None) -> Axes:
    """Draw the feature weights ``v_bd`` of every batch as a heat map (batches by active features).

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted.
    n_batches : int or None, default=None
        Draw the first ``n_batches`` batches; None: all.
    units : {"model", "original"}, default="model"
        The weights of the model's features, or per unit of the pipeline's input features (see
        :func:`discrim.prototype.export`; needs a pipeline with a column-wise preprocessing that is
        affine on every active feature).
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure when None.

    Returns
    -------
    ax : matplotlib.axes.Axes
        With one image of shape (n_batches, n_active_features) (0 where a batch does not use a
        feature), labelled by feature names and batch numbers, and a colour bar.

    Raises
    ------
    ValueError
        For ``units="original"`` without a column-wise preprocessing, or when it is not affine on
        an active feature (e.g. a log): such a feature has no weight per input unit.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.plotting import plot_feature_weights
    >>> from discrim.prototype import PrototypeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3)); y = (X[:, 0] > 0).astype(int)
    >>> clf = PrototypeClassifier(n_batches=2, n_candidates=20, random_state=0).fit(X, y)
    >>> ax = plot_feature_weights(clf)
    """
    import warnings

    from discrim.prototype._prototype_set import check_n_batches
    from discrim.prototype._report import _model_names, _units

    pre, final, input_names = _parts(model)
    B = len(final.batches_)
    n_batches = check_n_batches(n_batches, B)
    if units not in ("model", "original"):
        raise ValueError(f"units must be 'model' or 'original'; got {units!r}.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the note that a preprocessing has no original units
        scale = _units(pre, final, input_names) if pre is not None else None
    # the names export and explain show (the pipeline's input names for a column-wise preprocessing)
    names = _model_names(pre, final, None, scale)
    batches = final.batches_[: B if n_batches is None else n_batches]
    W = np.zeros((len(batches), len(names)))
    for b, batch in enumerate(batches):
        W[b, np.asarray(batch.feature_index)] = batch.feature_weights
    active = np.flatnonzero((W > 0).any(axis=0))  # in the model's units, where 0 means unused
    if units == "original":
        if scale is None:
            raise ValueError("units='original' needs a Pipeline whose steps before the model scale each feature "
                             "(e.g. StandardScaler).")
        curved = [names[d] for d in active if np.isnan(scale.slope[d])]
        if curved:
            raise ValueError(f"units='original': the preprocessing is not affine on the active feature(s) {curved} "
                             "(e.g. a log), so their weights have no value per input unit; use units='model'.")
        W = W * scale.slope  # per input unit, as export's <f>_weight_original
    ax = new_axes(ax, figsize=(max(4.0, 0.6 * len(active) + 2.5), max(3.0, 0.4 * len(batches) + 1.5)))
    if active.size == 0:
        ax.text(0.5, 0.5, "no active features\n(every batch is empty)", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_title("feature weights")
        return ax
    image = ax.imshow(W[:, active], aspect="auto", cmap="viridis", interpolation="nearest")
    ax.figure.colorbar(image, ax=ax, label="feature weight" + (" per input unit" if units == "original" else ""))
    ax.set_xticks(np.arange(active.size), [names[d] for d in active], rotation=45, ha="right")
    ax.set_yticks(np.arange(len(batches)), [str(b + 1) for b in range(len(batches))])
    ax.set_xlabel("feature")
    ax.set_ylabel("batch")
    ax.set_title("feature weights per batch")
    return ax
