"""mclust's ``hc`` and ``hclass`` as one public function: the partitions of the hierarchical start."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from discrim._typing import ArrayLike, RandomStateLike
from discrim.mixture._hierarchical import MAX_ROWS
from discrim.mixture._init import hierarchical_partitions
from discrim.utils._random import as_seed_sequence
from discrim.utils.validation import check_feature_magnitude, check_mixture_table

__all__ = ["hierarchical_clusters"]


def hierarchical_clusters(X: ArrayLike, n_clusters: int | list[int], *,
                          random_state: RandomStateLike = None) -> np.ndarray | dict[int, np.ndarray]:
    """Partitions of the rows by mclust's model-based hierarchical agglomeration.

    The start of ``FiniteMixture(init_params="hierarchical")``, on its own: mclust's
    ``hclass(hc(X, modelName = "VVV", use = "SVD"), G)`` (Banfield and Raftery, 1993), numbered
    from 0. From singletons, each stage merges the two clusters whose union increases the
    criterion of an unconstrained Gaussian model the least, in the coordinates of the rows'
    scaled singular value decomposition. One agglomeration gives the partitions at every
    requested count, nested in one another. On one feature the start is mclust's there, its
    quantile classes (``qclass``: k classes of about equal counts between quantiles), which
    need not be nested; the agglomeration only where a quantile class would be empty.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Complete rows (no missing values).
    n_clusters : int or list of int
        The number of clusters, from 1 to the rows agglomerated; a list gives the partition at
        each count.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the 2,000 rows agglomerated when X has more (the agglomeration's time and memory
        grow with the square of its rows; mclust's ``subset``). Unused for fewer rows.

    Returns
    -------
    labels : ndarray of shape (n_samples,) of int, or dict of int to such arrays
        Each row's cluster, numbered 0, 1, ... in the order of the clusters' first rows (mclust's
        ``hclass`` less one); -1 for a row left out of the agglomeration. A dict by cluster count
        when ``n_clusters`` is a list.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from discrim.mixture import hierarchical_clusters
    >>> X = load_iris().data
    >>> labels = hierarchical_clusters(X, 3)
    >>> [int((labels == k).sum()) for k in range(3)]  # table(hclass(hc(iris[, 1:4]), 3)) in mclust 6
    [49, 62, 39]
    >>> nested = hierarchical_clusters(X, [2, 3])
    >>> bool(((nested[3] == 1) <= (nested[2] == 1)).all())  # a cluster of 3 lies in one of 2
    True
    """
    from sklearn.utils import check_array

    X = check_array(check_mixture_table(X), dtype=np.float64, ensure_min_samples=1, ensure_all_finite="allow-nan")
    if np.isnan(X).any():  # scikit-learn's check said only "Input contains NaN."
        rows = np.flatnonzero(np.isnan(X).any(axis=1))
        raise ValueError(
            f"X has missing values (NaN) in {rows.size} row(s) (first index {rows[0]}): the agglomeration needs "
            "complete rows. Complete them first (FiniteMixture(init_params='hierarchical') starts from its rows "
            "completed by the columns' observed means), or leave those rows out."
        )
    X = check_feature_magnitude(X, training=True)
    counts = np.atleast_1d(n_clusters)
    if counts.ndim != 1 or counts.size == 0 or not all(isinstance(c, Integral) for c in counts.tolist()):
        raise ValueError(f"n_clusters must be a whole number or a list of them; got {n_clusters!r}.")
    seen = min(X.shape[0], MAX_ROWS)
    bad = [int(c) for c in counts if not 1 <= c <= seen]
    if bad:
        raise ValueError(f"n_clusters must lie between 1 and the {seen} rows agglomerated; got {bad[0]}.")
    rng = np.random.default_rng(as_seed_sequence(random_state))
    found = hierarchical_partitions(X, np.ones(X.shape[0]), sorted({int(c) for c in counts}), rng)
    return found[int(n_clusters)] if np.ndim(n_clusters) == 0 else {int(c): found[int(c)] for c in counts}
