"""Model-based hierarchical agglomeration (Banfield and Raftery, 1993; Fraley, 1998): mclust's start for EM.

Starting from singletons, each stage merges the two clusters whose union lowers the
classification likelihood of an unconstrained Gaussian model (mclust's "VVV") the least. The
criterion of a partition is ``sum_C n_C log |(W_C + alpha I) / n_C|`` with ``W_C`` the scatter
of cluster C about its mean: the term ``alpha I`` (``alpha`` the mean variance of the data per
row and feature, as mclust scales it) keeps the criterion finite for clusters with fewer rows
than features. Following mclust, the rows are first put in the coordinates of their scaled
singular value decomposition (centred, scaled to unit variance, rotated onto the principal axes
and divided by the square roots of the singular values), and at most ``MAX_ROWS`` rows take
part (mclust's ``subset`` of 2,000).
"""

import numpy as np

__all__ = ["MAX_ROWS", "agglomerate", "svd_coordinates"]

#: Rows the agglomeration sees at most: its cost grows with the square of the rows.
MAX_ROWS = 2000


def svd_coordinates(X):
    """mclust's ``hcUse = "SVD"`` transformation of the rows: (n_samples, rank).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    Z : ndarray of shape (n_samples, min(n_samples, n_features))
        Centred and scaled columns (constant ones dropped), ``X V D^(-1/2)`` from their SVD
        ``U D V'``.
    """
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
    keep = sd > 0
    Xs = (X[:, keep] - X[:, keep].mean(axis=0)) / sd[keep]
    _, s, Vt = np.linalg.svd(Xs, full_matrices=False)
    s = np.where(s > s.max(initial=0.0) * 1e-12, s, np.inf)  # a null direction adds nothing
    return Xs @ Vt.T / np.sqrt(s)


def agglomerate(Z, n_clusters, alpha=1.0):
    """Partition the rows into ``n_clusters`` clusters by model-based agglomeration.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features)
        Rows in the coordinates to agglomerate in (see :func:`svd_coordinates`).
    n_clusters : int or list of int
        Stop when this many clusters are left; at most ``n_samples``. A list gives the
        partition at each of these stages of one agglomeration (mclust's ``hclass``).
    alpha : float, default=1.0
        The regulariser ``alpha I`` is ``alpha`` times the data's mean variance per feature.

    Returns
    -------
    labels : ndarray of shape (n_samples,) of int, or dict of int to such arrays
        Cluster of every row, numbered 0, 1, ... in the order of their first row; a dict by
        cluster count when ``n_clusters`` is a list.
    """
    counts = [n_clusters] if np.ndim(n_clusters) == 0 else sorted({int(c) for c in n_clusters}, reverse=True)
    found = {}
    for count, parent in _stages(np.asarray(Z, dtype=np.float64), counts, alpha):
        found[count] = _labels(parent)
    return found[n_clusters] if np.ndim(n_clusters) == 0 else found


def _labels(parent):
    """Every row's cluster from the parent links: followed to their roots, numbered by first row."""
    root = parent.copy()
    while True:
        nxt = root[root]
        if np.array_equal(nxt, root):
            break
        root = nxt
    _, labels = np.unique(root, return_inverse=True)
    return labels.reshape(-1)


def _stages(Z, counts, alpha):
    """Yield ``(count, parent links)`` when the agglomeration reaches each of ``counts`` (descending)."""
    n, d = Z.shape
    centred = Z - Z.mean(axis=0)
    reg = max(alpha * float(np.sum(centred**2)) / (n * d), np.finfo(np.float64).eps)
    size = np.ones(n)
    mean = Z.copy()
    scatter = np.zeros((n, d, d))
    cost = np.full(n, d * np.log(reg))  # a singleton: n_C log |alpha I / 1|
    active = np.ones(n, dtype=bool)
    parent = np.arange(n)
    # The change of the criterion for merging i and j, for every pair (inf on and below the diagonal).
    # Two singletons: W = delta delta' / 2 has one non-zero eigenvalue |delta|^2 / 2.
    sq = np.sum(Z**2, axis=1)
    dist = np.maximum(sq[:, None] + sq[None, :] - 2.0 * Z @ Z.T, 0.0)
    delta = 2.0 * ((d - 1) * np.log(reg) + np.log(reg + 0.5 * dist) - d * np.log(2.0)) - 2.0 * d * np.log(reg)
    delta[np.tril_indices(n)] = np.inf
    # Each row's smallest change and where (a full argmin over n^2 pairs per merge would dominate).
    best_col = np.argmin(delta, axis=1)
    best = delta[np.arange(n), best_col]
    pending = list(counts)
    for left in range(n, 0, -1):
        while pending and pending[0] == left:
            yield pending.pop(0), parent.copy()
        if not pending:
            return
        i = int(np.argmin(best))
        j = int(best_col[i])  # i < j: j joins i
        diff = mean[i] - mean[j]
        total = size[i] + size[j]
        scatter[i] += scatter[j] + (size[i] * size[j] / total) * np.outer(diff, diff)
        mean[i] = (size[i] * mean[i] + size[j] * mean[j]) / total
        size[i] = total
        cost[i] = _cost(scatter[i][None], size[i : i + 1], reg)[0]
        active[j] = False
        parent[j] = i
        delta[j, :] = np.inf
        delta[:, j] = np.inf
        best[j] = np.inf
        others = np.flatnonzero(active)
        others = others[others != i]
        if others.size:
            merged = _merged_cost(i, others, size, mean, scatter, reg)
            change = merged - cost[i] - cost[others]
            lower = others < i
            delta[others[lower], i] = change[lower]
            delta[i, others[~lower]] = change[~lower]
        # rows whose best pair involved i or j are searched again; the others compare with column i
        stale = active & ((best_col == i) | (best_col == j))
        stale[i] = True  # i is active: the sorted rows of np.union1d(rows, [i])
        stale = np.flatnonzero(stale)
        best_col[stale] = np.argmin(delta[stale], axis=1)
        best[stale] = delta[stale, best_col[stale]]
        rows = others[others < i]
        better = delta[rows, i] < best[rows]
        best[rows[better]] = delta[rows[better], i]
        best_col[rows[better]] = i


def _cost(W, size, reg):
    """``n_C log |(W_C + reg I) / n_C|`` for a stack of clusters."""
    d = W.shape[-1]
    logdet = np.linalg.slogdet(W + reg * np.eye(d))[1]
    return size * (logdet - d * np.log(size))


def _merged_cost(i, others, size, mean, scatter, reg):
    """The criterion of cluster i merged with each cluster of ``others``."""
    total = size[i] + size[others]
    diff = mean[others] - mean[i]
    W = scatter[i] + scatter[others] + ((size[i] * size[others] / total)[:, None, None]
                                        * diff[:, :, None] * diff[:, None, :])
    return _cost(W, total, reg)
