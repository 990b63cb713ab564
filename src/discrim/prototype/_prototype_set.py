"""Fitted batches of prototypes: the PrototypeBatch record, its kernel, merging of duplicates, batch counts."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.spatial
from scipy.cluster.hierarchy import DisjointSet

import array_api_compat.numpy as _np_xp

from discrim._typing import Array
from discrim.backend import array_namespace, ops
from discrim.backend._device import is_tensor
from discrim.prototype._likelihood import kernel_matrix
from discrim.utils import _fitted_state as state

# Prototypes whose active features and target agree within this max-norm distance are merged.
MERGE_TOL = 1e-8
# Up to this many (pairs x coordinates) entries, merge_equivalent compares all pairs directly.
BRUTE_FORCE_MERGE_ELEMENTS = 2**16


@dataclass(frozen=True, eq=False)
class PrototypeBatch:
    """One batch of the prototype set model, after merging of equivalent prototypes.

    Attributes
    ----------
    prototypes : ndarray of shape (J, n_active)
        Feature values of the prototypes on the active features, in the units of the X passed
        to fit (not multiplied by the feature weights).
    target : ndarray of shape (J,) of int
        Class of each prototype as an index into ``classes_``; sorted ascending.
    feature_index : ndarray of shape (n_active,) of int
        Columns of X with positive feature weight.
    feature_weights : ndarray of shape (n_active,)
        ``v_b`` on the active features, > 0.
    prototype_weights : ndarray of shape (J,)
        ``w_b``, > 0.
    sample_index : ndarray of shape (J,) of int
        Row of the training X whose features the prototype carries (the first in training order
        for a merged group).

    Examples
    --------
    A fitted :class:`PrototypeClassifier` keeps one batch per fitted batch in ``batches_``:

    >>> import numpy as np
    >>> from discrim.prototype import PrototypeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = PrototypeClassifier(n_batches=1, n_candidates=20, random_state=0).fit(X, y)
    >>> batch = clf.batches_[0]
    >>> batch.prototypes.shape == (batch.n_prototypes, batch.feature_index.size)
    True
    >>> bool(np.all(np.diff(batch.target) >= 0) and np.all(batch.prototype_weights > 0))
    True
    >>> batch.class_scores(X[:3], n_classes=2).shape
    (3, 2)
    """

    prototypes: np.ndarray
    target: np.ndarray
    feature_index: np.ndarray
    feature_weights: np.ndarray
    prototype_weights: np.ndarray
    sample_index: np.ndarray

    @property
    def n_prototypes(self) -> int:
        """Number of prototypes ``J``."""
        return int(self.target.shape[0])

    def _check_state(self, n_features, n_classes, where):
        """Check a batch read from a model file against the model's features and classes.

        Raises FittedStateError naming the field (``where`` is the batch, e.g. "batches_[0]") unless every
        field is an array of its dtype and shape (J prototypes, n_active active features), the active
        features are distinct columns of X, the targets classes, and the weights positive and finite.

        Parameters
        ----------
        n_features : int
            The model's ``n_features_in_``.
        n_classes : int
        where : str
        """
        n_prototypes = state.array(self.target, f"{where}.target", (None,), kind="i").shape[0]
        n_active = state.array(self.feature_index, f"{where}.feature_index", (None,), kind="i").shape[0]
        state.array(self.prototypes, f"{where}.prototypes", (n_prototypes, n_active),
                    dims="(len(target), len(feature_index))")
        state.array(self.feature_weights, f"{where}.feature_weights", (n_active,), dims="(len(feature_index),)",
                    positive=True)
        state.array(self.prototype_weights, f"{where}.prototype_weights", (n_prototypes,), dims="(len(target),)",
                    positive=True)
        state.array(self.sample_index, f"{where}.sample_index", (n_prototypes,), kind="i", dims="(len(target),)",
                    nonnegative=True)
        if n_active and not (self.feature_index[0] >= 0 and self.feature_index[-1] < n_features
                             and np.all(np.diff(self.feature_index) > 0)):
            raise state.FittedStateError(f"{where}.feature_index holds {self.feature_index.tolist()[:10]}, not "
                                         f"increasing columns of X in [0, n_features_in_ = {n_features})")
        if n_prototypes and not (self.target.min() >= 0 and self.target.max() < n_classes):
            raise state.FittedStateError(f"{where}.target holds classes outside [0, n_classes = {n_classes})")

    def kernel(self, X: Array, center: np.ndarray | None = None) -> Array:
        """Kernel values ``K_v(x - s_j)`` over the active features.

        Parameters
        ----------
        X : array of shape (n, n_features_in)
            Full feature matrix in the units of fit, numpy or torch on any device (the kernel
            is computed there); the active columns are selected here.
        center : ndarray of shape (n_features_in,) or None, default=None
            Subtracted from the rows and from the prototypes before the kernel's GEMM, which
            expands the square ``|v (x - s)|^2`` and so loses the digits of the spread that
            ``|v x|^2`` spends on an offset: the fitted model's ``center_``. The kernel is the
            same in exact arithmetic; None subtracts nothing.

        Returns
        -------
        K : array of shape (n, J)
            In X's namespace, on its device; in [0, 1] up to rounding (the expanded square's, of about eps times ``|v (x - c)|^2``).
        """
        X = X if is_tensor(X) else np.asarray(X)
        xp = _np_xp if isinstance(X, np.ndarray) else array_namespace(X)
        if self.n_prototypes == 0:
            return xp.zeros((X.shape[0], 0), dtype=X.dtype, **ops.device_of(X))
        Xa = ops.take_columns(X, self.feature_index)
        S = self.prototypes
        if center is not None:
            # differences in float64, then the model's dtype: both sides are shifted alike
            c = np.asarray(center, dtype=np.float64)[self.feature_index]
            Xa = ops.subtract_inplace(Xa, c)  # Xa is a copy (fancy indexing)
            S = S - c
        return kernel_matrix(Xa, ops.like(S, Xa), ops.like(self.feature_weights, Xa), xp)

    def class_scores(self, X: Array, n_classes: int, center: np.ndarray | None = None) -> Array:
        """Unscaled contributions ``sum_{j: y_j = k} w_j K_v(x - s_j)`` of this batch.

        Parameters
        ----------
        X : array of shape (n, n_features_in)
            numpy or torch (see :meth:`kernel`).
        n_classes : int
        center : ndarray of shape (n_features_in,) or None, default=None
            See :meth:`kernel`.

        Returns
        -------
        scores : array of shape (n, n_classes)
            In X's namespace, on its device.
        """
        K = self.kernel(X, center)
        onehot = np.zeros((self.n_prototypes, n_classes))
        onehot[np.arange(self.n_prototypes), self.target] = self.prototype_weights
        return K @ ops.like(onehot, K)


def check_finite_scores(scores, center):
    """Refuse kernel scores that overflowed, which would make probabilities inf / inf = NaN.

    The kernel's GEMM expands the square, so its exponent can round above 0; on centred rows by
    about eps times ``|v (x - c)|^2`` (harmless), but for a model without ``center_`` (saved
    before it existed) on rows far from 0, by enough for ``exp`` to overflow.

    Parameters
    ----------
    scores : ndarray of shape (n, n_classes)
        One batch's class scores.
    center : ndarray or None
        The model's centre (None: the model has none).

    Raises
    ------
    ValueError
        If a score is not finite.
    """
    if not np.isfinite(scores).all():
        fix = ("refit the model with this version of discrim (it centres the rows first)" if center is None
               else "rescale the features (e.g. with StandardScaler)")
        raise ValueError(f"the prototype kernel overflowed on some rows of X, which lie too far from the "
                         f"prototypes in floating point: {fix}.")


def check_n_batches(n_batches, n_fitted, *, allow_list=False, minimum=0, note=""):
    """``n_batches`` checked: None (all batches), one count, or (with ``allow_list``) a list of counts.

    The one checker of every ``n_batches`` argument of a fitted model (the prediction methods,
    export, explain, familiarity and the plots). One count is an int or a 0-d integer array in
    ``[minimum, n_fitted]``; a list of counts is a non-empty list, tuple or 1-D array of such
    counts (nested lists and 2-D arrays are refused, not flattened).

    Parameters
    ----------
    n_batches : object
        The argument as given.
    n_fitted : int
        Number of fitted batches.
    allow_list : bool, default=False
        Accept a list of counts (the methods that return one result per count).
    minimum : int, default=0
        The smallest count accepted.
    note : str, default=""
        Appended to the range in the message (e.g. why a list is not taken here).

    Returns
    -------
    n_batches : None, int or list of int

    Raises
    ------
    ValueError
        One line naming ``n_batches``, the accepted forms and the value given.
    """
    forms = f"None or an integer in [{minimum}, {n_fitted}]{note}"
    if allow_list:
        forms = f"None, an integer in [{minimum}, {n_fitted}] (the fitted batches){note} or a flat list of them"

    def count(n):
        if isinstance(n, np.ndarray) and n.ndim == 0:
            n = n[()]
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, Integral) or not minimum <= n <= n_fitted:
            raise ValueError(f"n_batches must be {forms}; got {n_batches!r}.")
        return int(n)

    if n_batches is None:
        return None
    if isinstance(n_batches, np.ndarray) and n_batches.ndim == 0:
        return count(n_batches)
    if not isinstance(n_batches, (list, tuple, np.ndarray)):
        return count(n_batches)
    if not allow_list:
        raise ValueError(f"n_batches must be {forms}, one count here; got {n_batches!r}.")
    items = list(n_batches)
    if not items:
        raise ValueError("n_batches must not be an empty list.")
    if any(isinstance(n, (list, tuple)) or (isinstance(n, np.ndarray) and n.ndim > 0) for n in items):
        raise ValueError(f"n_batches must be {forms}, not a nested list or a 2-D array; got {n_batches!r}.")
    return [count(n) for n in items]


def merge_equivalent(prototypes, target, weights, sample_index, tol=MERGE_TOL):
    """Merge prototypes whose features and target agree within ``tol`` in the maximum norm.

    Pairs within ``tol`` are joined by edges; each connected component of that graph becomes one
    prototype with the summed weight and the features of its member that comes first in the
    training data (smallest ``sample_index``).

    Parameters
    ----------
    prototypes : ndarray of shape (J, n_active)
    target : ndarray of shape (J,) of int
    weights : ndarray of shape (J,)
    sample_index : ndarray of shape (J,) of int
    tol : float, default=MERGE_TOL

    Returns
    -------
    prototypes, target, weights, sample_index
        The merged arrays, sorted by target and then by sample index.
    """
    J = target.shape[0]
    labels = np.arange(J)
    if J > 1:
        points = np.column_stack([prototypes, target.astype(np.float64)])
        if points.size * J <= BRUTE_FORCE_MERGE_ELEMENTS:
            # few points: all pairwise distances, coordinate by coordinate, cost less than
            # building a k-d tree
            near = np.ones((J, J), dtype=bool)
            for column in points.T:
                near &= np.abs(column[:, None] - column[None, :]) <= tol
            pairs = np.argwhere(np.triu(near, 1))
        else:
            pairs = scipy.spatial.cKDTree(points).query_pairs(r=tol, p=np.inf, output_type="ndarray")
        if len(pairs):  # connected components of the pairs, numbered 0..n_comp-1
            components = DisjointSet(range(J))
            for a, b in pairs.tolist():
                components.merge(a, b)
            roots = np.array([components[j] for j in range(J)])
            _, labels = np.unique(roots, return_inverse=True)
    n_comp = int(labels.max()) + 1 if J else 0
    if n_comp < J:
        combined = np.bincount(labels, weights=weights, minlength=n_comp)
        # first member (in training order) of each component
        order = np.lexsort((sample_index, labels))
        first = order[np.r_[0, np.flatnonzero(np.diff(labels[order])) + 1]]
        prototypes, target, sample_index = prototypes[first], target[first], sample_index[first]
        weights = combined[labels[first]]
    order = np.lexsort((sample_index, target))
    return prototypes[order], target[order], weights[order], sample_index[order]
