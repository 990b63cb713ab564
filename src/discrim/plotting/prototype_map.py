"""Prototype map: a weighted PCA of a prototype set's prototypes, sized by weight, coloured by class."""

from __future__ import annotations

import numpy as np

from typing import TYPE_CHECKING

from discrim._typing import PrototypeModel
from discrim.plotting._mpl import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _prototype_model(model):
    """The fitted PrototypeClassifier behind ``model`` (itself, a search's refitted model or a pipeline's last step)."""
    from discrim.plotting.prototype import _parts

    return _parts(model)[1]


def scaled_prototypes(model):
    """Prototypes in the space of feature-weight-scaled features, with their weights and classes.

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted; a pipeline's last step is one of the other two.

    Returns
    -------
    Z : ndarray of shape (n_prototypes, n_active)
        Row j is ``v_b * x_j`` over the features active in any batch: the prototype's feature values
        times its batch's feature weights, 0 for features its batch does not use. Within a batch the
        Euclidean distances between rows are exactly the distances in the kernel ``K_v``.
    weights : ndarray of shape (n_prototypes,)
        Prototype weights w.
    target : ndarray of shape (n_prototypes,) of int
        Index into ``classes_``.
    features : ndarray of shape (n_active,) of int
        Columns of X that the columns of Z correspond to.
    """
    inner = _prototype_model(model)
    batches = [b for b in inner.batches_ if b.prototype_weights.shape[0]]
    if not batches:
        return np.zeros((0, 0)), np.zeros(0), np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    features = np.unique(np.concatenate([b.feature_index for b in batches]))
    blocks = []
    for b in batches:
        block = np.zeros((b.prototype_weights.shape[0], features.shape[0]))
        block[:, np.searchsorted(features, b.feature_index)] = b.prototypes * b.feature_weights
        blocks.append(block)
    Z = np.vstack(blocks)
    weights = np.concatenate([b.prototype_weights for b in batches]).astype(float)
    target = np.concatenate([b.target for b in batches]).astype(int)
    return Z, weights, target, features


def weighted_pca(Z, weights, n_components=2, return_axes=False):
    """Principal axes of the rows of Z under the weights.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
    weights : ndarray of shape (n,)
        Non-negative, with a positive sum.
    n_components : int, default=2
    return_axes : bool, default=False
        Also return the weighted mean and the axes, to project supplementary rows
        (``(rows - mean) @ axes``).

    Returns
    -------
    scores : ndarray of shape (n, n_components)
        Coordinates of the centred rows on the principal axes (zero columns when d < n_components).
    explained : ndarray of shape (n_components,)
        Fraction of the weighted variance along each axis (0 when the variance is 0).
    mean : ndarray of shape (d,)
        Only with ``return_axes``: the weighted mean of the rows.
    axes : ndarray of shape (d, n_components)
        Only with ``return_axes``: the principal axes as columns (zero columns when d < n_components).
    """
    w = weights / weights.sum()
    mean = w @ Z
    centred = Z - mean
    cov = (centred * w[:, None]).T @ centred
    values, vectors = np.linalg.eigh(cov)
    top = np.argsort(values)[::-1][:n_components]
    axes = np.zeros((Z.shape[1], n_components))
    axes[:, : top.shape[0]] = vectors[:, top]
    scores = centred @ axes
    explained = np.zeros(n_components)
    total = values.clip(min=0).sum()
    if total > 0:
        explained[: top.shape[0]] = values[top].clip(min=0) / total
    if return_axes:
        return scores, explained, mean, axes
    return scores, explained


def plot_prototype_map(model: PrototypeModel, ax: Axes | None = None, *, max_marker_size: float = 300.0) -> Axes:
    """Draw the prototypes of a prototype set on their first two weighted principal axes.

    Each prototype is the point ``v_b * x_j`` (its feature values scaled by its batch's feature
    weights, over the features active in any batch, see :func:`scaled_prototypes`); the axes are
    the principal axes of these points weighted by the prototype weights. Marker area is
    proportional to the prototype weight, colour shows the class.

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted; a search is drawn through its refitted ``best_estimator_``, a pipeline through its
        last step (the prototypes in the model's own, transformed features).
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure when None.
    max_marker_size : float, default=300.0
        Marker area (points squared) of the heaviest prototype.

    Returns
    -------
    ax : matplotlib.axes.Axes
        With one scatter collection per class present among the prototypes; a model without
        prototypes gives an empty map with a note.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from discrim.plotting import plot_prototype_map
    >>> from discrim.prototype import PrototypeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> ax = plot_prototype_map(PrototypeClassifier(random_state=0).fit(X, y))
    >>> type(ax).__name__
    'Axes'
    """
    inner = _prototype_model(model)
    Z, weights, target, features = scaled_prototypes(inner)
    ax = new_axes(ax)
    classes = np.asarray(inner.classes_)
    if Z.shape[0] == 0:
        ax.text(0.5, 0.5, "the model has no prototypes\n(it predicts the class frequencies)",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_title("prototype map")
        return ax
    scores, explained = weighted_pca(Z, weights)
    sizes = max_marker_size * weights / weights.max()
    for k in np.unique(target):
        mask = target == k
        ax.scatter(scores[mask, 0], scores[mask, 1], s=sizes[mask], c=f"C{k % 10}", alpha=0.6,
                   edgecolors="k", linewidths=0.3, label=str(classes[k]))
    ax.set_xlabel(f"weighted PC 1 ({100 * explained[0]:.0f}% of weighted variance)")
    ax.set_ylabel(f"weighted PC 2 ({100 * explained[1]:.0f}%)")
    ax.set_title(f"prototype map: {Z.shape[0]} prototypes, {features.shape[0]} active features")
    legend = ax.legend(loc="best", fontsize="small", title="class")
    for handle in legend.legend_handles:  # one marker size in the legend, whatever the weights
        handle.set_sizes([40.0])
    return ax
