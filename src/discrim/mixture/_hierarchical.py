"""Model-based hierarchical agglomeration, mclust's start for EM (Banfield and Raftery, 1993; Fraley, 1998).

Starting from singletons, each stage merges the two clusters whose union increases the
criterion of an unconstrained Gaussian model (mclust's "VVV") the least, as mclust 6's
``hc(X, modelName = "VVV")`` does (R function ``hcVVV``, Fortran subroutines ``hcvvv`` and
``vvvtij`` of mclust's ``src/mclust.f``). The criterion of a partition is the sum over its
clusters of a term that depends on the cluster's number of rows ``l``, the scatter ``W`` of
its rows about their mean and the trace ``t = tr W``, in ``p`` features (``vvvtij``):

* ``l log(beta (t + alpha) / l)`` when ``l <= p``, and for two rows whatever ``p`` (``hcvvv``
  scores a pair of singletons so); a singleton's term is ``log(beta alpha)``;
* ``l log(|W / l| + beta (t + alpha) / l)`` when ``l > max(p, 2)``, ``|W / l|`` counted as
  0 when ``W`` is singular or ``t = 0``.

Merging two clusters changes the criterion by ``term(union) - term(one) - term(other)``.
``beta`` is ``hcVVV``'s ``beta`` (default 1) and ``alpha`` is ``hcVVV``'s ``alpha`` (default 1)
times ``traceW(data / sqrt(n p))``, the trace of the data's scatter over ``n p`` (the mean
variance per feature), and at least the machine epsilon.

Of equal changes, ``hcvvv`` merges the pair it scans last (column ``j``, then row ``i < j`` of
its clusters' slots, the union of slots ``i < j`` taking slot ``i`` and the last slot moving
to ``j``); the same slots and order are kept here. Changes equal in exact arithmetic (rows
duplicated, or placed symmetrically about a cluster's mean, as on integer data) count as equal
when they differ by less than about 1000 units of roundoff of their terms. Where ``hcvvv``'s
own rounding separates such changes, its choice cannot be reproduced (it depends on the BLAS R
uses) and the partitions can differ from mclust's on data with many tied rows; elsewhere they
are mclust's, cluster for cluster, numbered 0, 1, ... in the order of their first row as
``hclass``'s are from 1.

Following mclust's default ``hcUse = "SVD"``, the rows are first put in the coordinates of
their scaled singular value decomposition (:func:`svd_coordinates`), and at most ``MAX_ROWS``
rows take part (mclust's ``subset`` of 2,000 rows, drawn at random).

References
----------
Banfield, J. D. and Raftery, A. E. (1993). Model-based Gaussian and non-Gaussian clustering.
Biometrics 49, 803-821.

Fraley, C. (1998). Algorithms for model-based Gaussian hierarchical clustering. SIAM Journal on
Scientific Computing 20, 270-281.

Scrucca, L., Fraley, C., Murphy, T. B. and Raftery, A. E. (2023). Model-Based Clustering,
Classification, and Density Estimation Using mclust in R. Chapman and Hall/CRC.
"""

import numpy as np

__all__ = ["MAX_ROWS", "agglomerate", "svd_coordinates"]

#: Rows the agglomeration sees at most: its cost grows with the square of the rows.
MAX_ROWS = 2000

# entries of the (rows, n, p) differences the first pairwise computation holds at a time
_BLOCK_ENTRIES = 2**22

# changes within this many units of roundoff of the terms they are made of count as equal
_TIE = 1000 * np.finfo(np.float64).eps


def svd_coordinates(X):
    """mclust's ``hcUse = "SVD"`` transformation of the rows: (n_samples, rank).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    Z : ndarray of shape (n_samples, min(n_samples, n_features))
        The columns centred and scaled to unit variance (``ddof=1``; constant ones dropped),
        then ``X V D^(-1/2)`` from their SVD ``U D V'`` (a column of a null singular value is
        zero). mclust's, up to the signs of the columns, which the agglomeration ignores.
    """
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
    keep = sd > 0
    Xs = (X[:, keep] - X[:, keep].mean(axis=0)) / sd[keep]
    _, s, Vt = np.linalg.svd(Xs, full_matrices=False)
    s = np.where(s > s.max(initial=0.0) * 1e-12, s, np.inf)  # a null direction adds nothing
    return Xs @ Vt.T / np.sqrt(s)


def agglomerate(Z, n_clusters, alpha=1.0, beta=1.0):
    """Partition the rows into ``n_clusters`` clusters by model-based agglomeration.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features)
        Rows in the coordinates to agglomerate in (see :func:`svd_coordinates`).
    n_clusters : int or list of int
        Stop when this many clusters are left, from 1 to ``n_samples``. A list gives the
        partition at each of these stages of one agglomeration (mclust's ``hclass``). One
        cluster alone needs no agglomeration: every row is in it.
    alpha : float, default=1.0
        mclust's ``alpha``: the criterion's ``alpha`` is this times the data's mean variance
        per feature.
    beta : float, default=1.0
        mclust's ``beta``, the weight of the trace in the criterion.

    Returns
    -------
    labels : ndarray of shape (n_samples,) of int, or dict of int to such arrays
        Cluster of every row, numbered 0, 1, ... in the order of their first row; a dict by
        cluster count when ``n_clusters`` is a list.
    """
    Z = np.asarray(Z, dtype=np.float64)
    scalar = np.ndim(n_clusters) == 0
    counts = sorted({int(c) for c in np.atleast_1d(n_clusters)}, reverse=True)
    if not counts or counts[-1] < 1 or counts[0] > Z.shape[0]:
        raise ValueError(f"n_clusters must be between 1 and the {Z.shape[0]} rows; got {n_clusters}.")
    if counts == [1]:  # one cluster holds every row, whatever the order of the merges
        found = {1: np.zeros(Z.shape[0], dtype=np.intp)}
    else:
        found = dict(_stages(Z, counts, alpha, beta))
    return found[int(n_clusters)] if scalar else found


def _regularisation(Z, alpha):
    """The criterion's ``alpha``: ``alpha`` times the mean variance per feature, at least the machine epsilon.

    Rows without coordinates (``p = 0``: a single row, or rows all alike, whose constant
    columns :func:`svd_coordinates` drops) have no variance, and take the floor. mclust's
    ``hc`` refuses such data (it cannot scale a constant column); here every merge then
    changes the criterion equally, so ties decide them as anywhere else.
    """
    n, p = Z.shape
    if n * p == 0:
        return np.finfo(np.float64).eps
    return max(alpha * float(np.sum((Z - Z.mean(axis=0)) ** 2)) / (n * p), np.finfo(np.float64).eps)


def _first_appearance(slot):
    """Relabel clusters 0, 1, ... in the order of their first row (mclust's ``partconv``)."""
    _, first, inverse = np.unique(slot, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.intp)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


def _term(size, trace, scatter, n_features, reg, beta):
    """The criterion of a stack of clusters.

    Parameters
    ----------
    size, trace : ndarray of shape (m,)
        Rows of each cluster and the trace of its scatter.
    scatter : callable
        ``scatter(mask)``: the scatter matrices, of shape (mask.sum(), p, p), of the clusters
        ``mask`` selects (only those with more rows than ``max(p, 2)`` need them).
    n_features : int
    reg, beta : float

    Returns
    -------
    term : ndarray of shape (m,)
        ``l log(|W / l| + beta (t + reg) / l)``, without ``|W / l|`` for ``l <= max(p, 2)``, a
        singular ``W`` or ``t = 0``.
    """
    log_c = np.log(beta * (trace + reg) / size)
    big = (size > max(n_features, 2)) & (trace != 0.0)
    if big.any():
        sign, logabs = np.linalg.slogdet(scatter(big))
        log_det = logabs - n_features * np.log(size[big])
        log_c[big] = np.where(sign > 0, np.logaddexp(log_det, log_c[big]), log_c[big])
    return size * log_c


def _column_minima(D, cols):
    """Smallest ``D[r, c]`` over ``r < c`` for each column c of ``cols``, and its last row.

    Parameters
    ----------
    D : ndarray of shape (m, m)
        Merge costs of the active clusters.
    cols : ndarray of shape (k,) of int

    Returns
    -------
    minimum : ndarray of shape (k,)
        ``inf`` for column 0.
    row : ndarray of shape (k,) of int
        The largest row attaining the minimum (``hcvvv`` keeps the last of equal costs).
    """
    m = D.shape[0]
    sub = D[:, cols]
    sub = np.where(np.arange(m)[:, None] < cols[None, :], sub, np.inf)
    row = m - 1 - np.argmin(sub[::-1], axis=0)
    return sub[row, np.arange(cols.size)], row


def _least_change(D, col_min, col_row, term):
    """The pair of slots ``i < j`` to merge: the least change, the last of equal ones in hcvvv's order.

    ``hcvvv`` scans the pairs by column j, then row i, and keeps the last of equal changes.
    Changes equal in exact arithmetic (as for duplicated rows, or rows placed symmetrically
    about a cluster's mean) can differ by rounding, here or in ``hcvvv``: two changes count as
    equal when they differ by less than ``_TIE`` times the magnitudes of the terms they are
    made of.

    Parameters
    ----------
    D : ndarray of shape (n, n)
        Merge changes; only the active slots, the leading m, are read.
    col_min, col_row : ndarray of shape (m,)
        Each column's smallest change over its rows ``r < j``, and the last row attaining it.
    term : ndarray of shape (m,)
        The criterion of each active cluster.

    Returns
    -------
    i, j : int
    """
    j = int(np.argmin(col_min))
    least = col_min[j]

    def magnitude(change, rows, col):  # |term(i u j)| + |term(i)| + |term(j)|
        parts = np.abs(term[rows]) + np.abs(term[col])
        return parts + np.abs(change + term[rows] + term[col])

    scale = magnitude(least, col_row[j], j)
    bound = least + _TIE * (scale + np.abs(least) + 4.0 * np.max(np.abs(term)) + 1.0)
    for col in np.flatnonzero(col_min <= bound)[::-1]:
        change = D[:col, col]
        rows = np.flatnonzero(change <= least + _TIE * (scale + magnitude(change, np.arange(col), col)))
        if rows.size:
            return int(rows[-1]), int(col)
    return int(col_row[j]), j


def _stages(Z, counts, alpha, beta):
    """Yield ``(count, labels)`` when the agglomeration reaches each of ``counts`` (descending).

    The clusters sit in slots 0..m-1 as in ``hcvvv``: the union of slots i < j takes slot i and
    the last slot moves to j. ``D[i, j]`` is the change of the criterion for merging slots i
    and j; the pair merged is the one of least change, ties going to the largest ``(j, i)``
    (:func:`_least_change`). ``col_min`` and ``col_row`` keep each column's least change and its
    last row, updated where a merge changed the column.
    """
    n, p = Z.shape
    reg = _regularisation(Z, alpha)
    log_single = np.log(beta * reg)  # a singleton's term
    size = np.ones(n)
    mean = Z.copy()
    trace = np.zeros(n)
    term = np.full(n, log_single)
    scatter = np.zeros((n, p, p))
    slot = np.arange(n)  # every row's cluster
    # two singletons: t = |delta|^2 / 2, term 2 log(beta (t + alpha) / 2) at any p
    D = np.empty((n, n))
    block = max(1, _BLOCK_ENTRIES // max(n * p, 1))
    for start in range(0, n, block):
        diff = Z[start:start + block, None, :] - Z[None, :, :]
        half = 0.5 * np.einsum("ijk,ijk->ij", diff, diff)
        D[start:start + block] = 2.0 * np.log(beta * (half + reg) / 2.0) - 2.0 * log_single
    np.fill_diagonal(D, np.inf)
    col_min, col_row = _column_minima(D, np.arange(n))
    pending = list(counts)
    m = n
    while True:
        while pending and pending[0] == m:
            yield pending.pop(0), _first_appearance(slot)
        if not pending:
            return
        i, j = _least_change(D, col_min[:m], col_row[:m], term[:m])
        diff = mean[j] - mean[i]
        total = size[i] + size[j]
        factor = size[i] * size[j] / total
        scatter[i] += scatter[j] + factor * np.outer(diff, diff)
        trace[i] += trace[j] + factor * (diff @ diff)
        mean[i] += (size[j] / total) * diff
        size[i] = total
        term[i] = _term(size[i:i + 1], trace[i:i + 1], lambda big: scatter[i:i + 1][big], p, reg, beta)[0]
        slot[slot == j] = i
        last = m - 1
        if j != last:  # the last slot moves to j
            for a in (size, mean, trace, term, scatter):
                a[j] = a[last]
            slot[slot == last] = j
            D[j, :m] = D[last, :m]
            D[:m, j] = D[:m, last]
            D[j, j] = np.inf
        m = last
        others = np.delete(np.arange(m), i)
        if others.size:
            diff = mean[others] - mean[i]
            total = size[others] + size[i]
            factor = size[others] * size[i] / total
            merged_trace = trace[others] + trace[i] + factor * np.einsum("ij,ij->i", diff, diff)

            def merged_scatter(big):
                return (scatter[others[big]] + scatter[i]
                        + factor[big, None, None] * diff[big, :, None] * diff[big, None, :])

            change = _term(total, merged_trace, merged_scatter, p, reg, beta) - term[others] - term[i]
            D[i, others] = change
            D[others, i] = change
        # columns whose entries changed: i and j wholly; the others at rows i and j
        cols = np.arange(m)
        stale = (cols == i) | (cols == j) | (((col_row[:m] == i) | (col_row[:m] == j)) & (cols > i))
        for r in (i, j):
            if r >= m:
                continue
            later = cols[r + 1:]
            value = D[r, later]
            better = (value < col_min[later]) | ((value == col_min[later]) & (r > col_row[later]))
            col_min[later[better]] = value[better]
            col_row[later[better]] = r
        stale = np.flatnonzero(stale)
        col_min[stale], col_row[stale] = _column_minima(D[:m, :m], stale)
