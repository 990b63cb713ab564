"""The prototype fit over a dask X: the rows stay on the workers, only candidates come to the client.

A batch of the in-memory fit (:meth:`PrototypeClassifier._fit_one_batch`) needs, of all the rows,
only: the class counts that size the subsample and the bins, the rows drawn as candidates (at most
``n_candidates``), and the batch objective's value and gradient over the scoring rows. Here each
row chunk computes those where it lives:

1. the rows of positive weight per class and chunk (once per fit);
2. per batch, the members of each bin per chunk, from the chunk's current scores ``q``;
3. the client draws the subsample and the candidates as ranks within classes and bins, with the
   same random calls as the in-memory fit (:func:`~discrim.prototype._candidates.ranks_per_group`),
   so the same rows are drawn; the chunks return their candidates and class totals;
4. each chunk builds the batch objective of its scoring rows (a
   :class:`~discrim.prototype._likelihood.PrototypeLikelihood`), persisted on its worker; every
   L-BFGS-B evaluation on the client sums their values and gradients;
5. the chunks add the new batch's scores to ``q``.
"""

import functools

import dask
import dask.array as da
import numpy as np

from discrim.prototype._candidates import (
    assign_bins,
    candidates_per_bin,
    check_min_cases,
    ranks_per_group,
    stratified_take,
)
from discrim.prototype._likelihood import PrototypeLikelihood
from discrim.utils._dask import map_row_chunks, on_worker, row_starts

__all__ = ["DaskTrainingRows", "DistributedLikelihood"]


def _members(keys, n_keys, local_ranks):
    """Boolean mask of the rows whose rank within their key's rows is in ``local_ranks[key]``."""
    mask = np.zeros(keys.shape[0], dtype=bool)
    for key in range(n_keys):
        if local_ranks[key].size:
            mask[np.flatnonzero(keys == key)[local_ranks[key]]] = True
    return mask


def _localise(ranks, counts):
    """Global ranks within each group, as per-chunk local ranks.

    Parameters
    ----------
    ranks : list of ndarray of int
        One array per group of ranks among the group's rows in row order.
    counts : ndarray of shape (n_chunks, n_groups) of int
        The group's rows in every chunk.

    Returns
    -------
    local : list (one per chunk) of list (one per group) of ndarray of int
    """
    offsets = np.concatenate([np.zeros((1, counts.shape[1]), dtype=np.int64), np.cumsum(counts, axis=0)])
    local = []
    for c in range(counts.shape[0]):
        per_group = []
        for g, r in enumerate(ranks):
            lo, hi = offsets[c, g], offsets[c + 1, g]
            per_group.append(np.sort(r[(r >= lo) & (r < hi)] - lo))
        local.append(per_group)
    return local


def _sub_mask(yb, wb, n_classes, sub_ranks):
    """The rows of a chunk in the batch's subsample: positive weight, and drawn when subsampling."""
    eligible = np.asarray(wb) > 0
    if sub_ranks is None:
        return eligible
    keys = np.where(eligible, yb, -1)
    return _members(keys, n_classes, sub_ranks)


def _class_counts(n_classes, yb, wb, first_row):
    return np.bincount(np.asarray(yb)[np.asarray(wb) > 0], minlength=n_classes)[None, :]


def _bin_keys(n_classes, yb, wb, qb, cb, sub_ranks):
    """A chunk's subsample mask and each row's bin, -1 outside the subsample or with missing values.

    ``cb`` marks the complete rows: a row with missing values scores candidates but is never one.
    """
    sub = _sub_mask(yb, wb, n_classes, sub_ranks)
    keys = np.full(yb.shape[0], -1)
    keys[sub] = assign_bins(np.asarray(qb)[sub], np.asarray(yb)[sub])
    keys[~np.asarray(cb)] = -1
    return sub, keys


@on_worker
def _bin_counts(n_classes, yb, wb, qb, cb, sub_ranks, first_row):
    _, keys = _bin_keys(n_classes, yb, wb, qb, cb, sub_ranks)
    return np.bincount(keys[keys >= 0], minlength=2 * n_classes)[None, :]


def _batch_masks(n_classes, yb, wb, qb, cb, sub_ranks, cand_ranks):
    """(subsample, candidate) masks of a chunk's rows."""
    sub, keys = _bin_keys(n_classes, yb, wb, qb, cb, sub_ranks)
    return sub, _members(keys, 2 * n_classes, cand_ranks)


@on_worker
def _gather_candidates(n_classes, Xb, yb, wb, qb, cb, ranks, first_row):
    """A chunk's candidates (rows, classes, indices) and its subsample's and scoring rows' class totals."""
    sub_ranks, cand_ranks = ranks
    yb, wb = np.asarray(yb), np.asarray(wb)
    sub, cand = _batch_masks(n_classes, yb, wb, qb, cb, sub_ranks, cand_ranks)
    ref = sub & ~cand
    return (np.asarray(Xb)[cand], yb[cand], np.flatnonzero(cand) + first_row,
            np.bincount(yb[sub], weights=wb[sub], minlength=n_classes),
            np.bincount(yb[ref], weights=wb[ref], minlength=n_classes))


@on_worker
def _chunk_likelihood(n_classes, center, dtype, sub_total, factor, S, target, Xb, yb, wb, qb, cb, ranks):
    """The batch objective of a chunk's scoring rows, or None when it has none."""
    sub_ranks, cand_ranks = ranks
    yb, wb = np.asarray(yb), np.asarray(wb)
    sub, cand = _batch_masks(n_classes, yb, wb, qb, cb, sub_ranks, cand_ranks)
    ref = sub & ~cand
    if not ref.any():
        return None
    Xc = np.asarray(Xb)[ref]
    Xc = np.ascontiguousarray(Xc if center is None else Xc - center, dtype=dtype)
    # as the in-memory fit computes c_n, operation for operation
    coef = np.ascontiguousarray(wb[ref] / sub_total * factor[yb[ref]], dtype=dtype)
    q0 = np.ascontiguousarray(np.asarray(qb)[ref], dtype=dtype)
    return PrototypeLikelihood(Xc, yb[ref], coef, q0, S, target, n_classes, np, n_threads=1)


@on_worker
def _value_and_grad(likelihood, theta):
    return None if likelihood is None else likelihood.value_and_grad(np.asarray(theta, dtype=likelihood.dtype))


@on_worker
def _value_at_zero(likelihood):
    return None if likelihood is None else likelihood.value_at_zero()


@on_worker
def _add_scores(estimator, batch, n_classes, Xb, qb):
    if Xb.shape[0] == 0:
        return qb
    return qb + estimator._chunked_scores(batch, np.asarray(Xb), n_classes, estimator._center())


class DistributedLikelihood:
    """The batch objective summed over the chunks' objectives, which stay persisted on the workers.

    The interface of :class:`~discrim.prototype._likelihood.PrototypeLikelihood` that
    :class:`~discrim.optim.PenalizedObjective` uses: ``value_and_grad``, ``value_at_zero``,
    ``close`` and ``xp``, ``dtype``, ``device``. The value and the gradient are sums over the
    scoring rows, so the chunks' terms add up to the whole objective.

    Parameters
    ----------
    parts : list of dask.delayed.Delayed
        Persisted per-chunk objectives (None for a chunk without scoring rows).
    dtype : dtype
    """

    xp = np
    device = None

    def __init__(self, parts, dtype):
        self.parts = parts
        self.dtype = np.dtype(dtype)

    def _results(self, fn, *args):
        """``fn(part, *args)`` of every chunk's objective that has scoring rows, in chunk order."""
        results = dask.compute(*[dask.delayed(fn)(part, *args) for part in self.parts])
        return [r for r in results if r is not None]

    def value_and_grad(self, theta):
        results = self._results(_value_and_grad, np.asarray(theta))
        value = sum(float(r[0]) for r in results)
        grad = functools.reduce(np.add, [np.asarray(r[1], dtype=np.float64) for r in results])
        return value, grad

    def value_at_zero(self):
        return sum(self._results(_value_at_zero))

    def close(self):
        self.parts = []


class DaskTrainingRows:
    """The training rows of a prototype fit on Dask, with the current model's scores on each row.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Validated, in the fitted dtype, row-chunked.
    y_idx : dask.array.Array of shape (n_samples,) of int
        Class indices, chunked like X's rows.
    sample_weight : dask.array.Array of shape (n_samples,)
    n_classes : int
    """

    def __init__(self, X, y_idx, sample_weight, n_classes):
        self.X, self.y_idx, self.w = X, y_idx, sample_weight
        # the rows without missing values, the only ones drawn as candidates
        (self.complete,) = dask.persist(~da.isnan(X).any(axis=1))
        self.n_classes = n_classes
        self.starts = row_starts(X)
        self.class_counts = np.concatenate(
            map_row_chunks(functools.partial(_class_counts, n_classes), y_idx, sample_weight))
        self.q = None

    def complete_counts(self):
        """Per class, the complete rows of positive weight (the rows that can be candidates)."""
        candidate = (self.complete & (self.w > 0)).astype(np.int64)
        return np.asarray(da.bincount(self.y_idx, weights=candidate, minlength=self.n_classes).compute(),
                          dtype=np.int64)

    def set_scores(self, estimator):
        """``q`` of the fitted batches on every row, persisted (a fit's start, or a warm start)."""
        n_classes = self.n_classes
        q = self.X.map_blocks(on_worker(lambda b: estimator._unscaled(np.asarray(b))), dtype=np.float64,
                              chunks=(self.X.chunks[0], (n_classes,)))
        (self.q,) = dask.persist(q)

    def add_batch(self, estimator, batch):
        """Add a new batch's scores to ``q`` on every row."""
        if not batch.n_prototypes:
            return
        q = da.map_blocks(functools.partial(_add_scores, estimator, batch, self.n_classes), self.X, self.q,
                                  dtype=np.float64, chunks=self.q.chunks)
        (self.q,) = dask.persist(q)

    def _chunks(self, *arrays):
        return [list(a.to_delayed().ravel()) for a in arrays]

    def draw(self, estimator, rng, b):
        """The subsample and candidate draws of batch ``b`` as per-chunk ranks, as the in-memory fit draws.

        Returns
        -------
        ranks : list (one per chunk) of (subsample ranks or None, candidate ranks)
        n_drawn : int
        """
        n_classes = self.n_classes
        counts = self.class_counts
        n_chunks = counts.shape[0]
        sub_local = [None] * n_chunks
        if estimator.max_samples is not None:
            size = estimator._subsample_size(int(counts.sum()))
            take = stratified_take(counts.sum(axis=0), size)
            if take is not None:
                sub_local = _localise(ranks_per_group(counts.sum(axis=0), take, rng), counts)
                check_min_cases(take, estimator.max_fraction, estimator.classes_,
                                what=f"subsample of max_samples={estimator.max_samples} rows")
        y, w, q, complete = self._chunks(self.y_idx, self.w, self.q, self.complete)
        tasks = [dask.delayed(_bin_counts)(n_classes, y[c], w[c], q[c], complete[c], sub_local[c], int(self.starts[c]))
                 for c in range(n_chunks)]
        bin_counts = np.concatenate(dask.compute(*tasks))
        g = bin_counts.sum(axis=0)
        h = candidates_per_bin(g, estimator.n_candidates, estimator.max_fraction)
        estimator._log_bins(b, g, h)
        cand_local = _localise(ranks_per_group(g, h, rng), bin_counts)
        return list(zip(sub_local, cand_local)), int(min(h.sum(), g.sum()))

    def candidates(self, ranks):
        """The drawn candidates and the class totals of the subsample and of the scoring rows.

        Returns
        -------
        X_cand : ndarray of shape (J, n_features)
            Grouped by class, then in row order (as the in-memory fit orders them).
        y_cand : ndarray of shape (J,) of int
        cand : ndarray of shape (J,) of int
            Row indices in X.
        class_total : ndarray of shape (n_classes,)
        ref_total : ndarray of shape (n_classes,)
        """
        X, y, w, q, complete = self._chunks(self.X, self.y_idx, self.w, self.q, self.complete)
        tasks = [dask.delayed(_gather_candidates)(self.n_classes, X[c], y[c], w[c], q[c], complete[c], ranks[c],
                                                  int(self.starts[c]))
                 for c in range(len(ranks))]
        parts = dask.compute(*tasks)
        X_cand = np.concatenate([p[0] for p in parts])
        y_cand = np.concatenate([p[1] for p in parts])
        cand = np.concatenate([p[2] for p in parts])
        order = np.lexsort((cand, y_cand))  # grouped by class, then training order
        class_total = functools.reduce(np.add, [p[3] for p in parts])
        ref_total = functools.reduce(np.add, [p[4] for p in parts])
        return X_cand[order], y_cand[order], cand[order], class_total, ref_total

    def likelihood(self, estimator, ranks, sub_total, factor, S, target):
        """The batch objective over the scoring rows, its parts persisted where the chunks live."""
        X, y, w, q, complete = self._chunks(self.X, self.y_idx, self.w, self.q, self.complete)
        build = functools.partial(_chunk_likelihood, self.n_classes, estimator._center(),
                                  np.dtype(estimator.dtype), sub_total, factor, S, target)
        parts = [dask.delayed(build)(X[c], y[c], w[c], q[c], complete[c], ranks[c]) for c in range(len(ranks))]
        return DistributedLikelihood(list(dask.persist(*parts)), estimator.dtype)
