"""The batch objective of the prototype set classifier: the seed's formula once, and one fused CPU path.

:func:`reference_value_and_grad` writes the value and gradient as the seed states them, against an
array namespace: it is the path for torch (and its devices) and what the fused numpy path of
:class:`PrototypeLikelihood` is tested against. The fused path computes the same quantities with
preallocated buffers, cached feature subsets and a reduction over classes chosen by problem size.
"""

from typing import NamedTuple

import numpy as np

from discrim.backend import _ops as ops
from discrim.utils._threads import BlockMapper

# Rows of reference (or scoring) data processed at once. A (rows x prototypes) chunk of about
# CHUNK_ELEMENTS entries stays in cache while all passes of one call run over it (the passes
# then read cache instead of memory), and memory stays bounded.
CHUNK_ELEMENTS = 2**18
# On a device (torch) the reference path takes larger chunks: each array operation is a kernel
# launch, and device memory holds them.
DEVICE_CHUNK_ELEMENTS = 2**24
# Kernel chunks of at least this many entries with at most PER_CLASS_MAX_CLASSES classes are
# reduced class block by class block (fewest passes over the chunk); smaller problems, bound by
# the number of array operations, and many-class ones (one GEMM per class) use the class-free
# form (see PrototypeLikelihood).
PER_CLASS_MIN_ELEMENTS = 2**15
PER_CLASS_MAX_CLASSES = 3
# The fused path raises the kernel's exponent to at least this floor before ``exp``, by dtype: a
# kernel entry below ``exp(floor)`` is then that tiny normal number instead of an underflow. Far
# arguments are common (a narrow bandwidth puts most pairs thousands below zero), and the exact
# result costs several times a normal one: glibc's float64 ``exp`` leaves its fast path for
# ``|x| >= 512`` and reports underflow below -745, numpy's float32 ``exp`` and the GEMMs that read
# its results slow down on subnormals (below -87.3). Each entry then differs from the seed's
# kernel by less than ``exp(floor)`` (7e-218 and 1.8e-35), far below the rounding of any ``q``
# (``q >= q0 > 0``); float32's floor leaves products with factors down to 1e-3 normal.
EXP_FLOOR = {np.dtype(np.float64): -500.0, np.dtype(np.float32): -80.0}
# A candidate is skipped in a row chunk when every kernel entry it has there is below
# ``exp(-T)``, with ``T`` chosen per evaluation so that the skipped terms change every ``q`` by
# less than PRUNE_TOLERANCE times the dtype's machine epsilon, relatively (see _far_limit). The
# lower bound on the exponent uses at most PRUNE_FEATURES features (those of largest weight): a
# sum over fewer features is still a lower bound, and it keeps the test cheap for wide data,
# where distances rarely allow skipping anyway.
PRUNE_TOLERANCE = 2.0**-10
PRUNE_FEATURES = 16


def chunk_rows(n_cols, elements=CHUNK_ELEMENTS):
    """Rows per chunk so that a (rows x ``n_cols``) buffer holds about ``elements`` entries."""
    return max(1, elements // max(int(n_cols), 1))


def _augment(Z, row_term, first, xp):
    """Append a column of ones and ``row_term``, in the order that makes one GEMM give the exponent.

    ``first=True`` gives the rows' side ``[Z, row_term, 1]``, False the candidates' side
    ``[Z, 1, row_term]``.
    """
    ones = xp.ones_like(row_term)[:, None]
    cols = [Z, row_term[:, None], ones] if first else [Z, ones, row_term[:, None]]
    return xp.concat(cols, axis=1)


def without_missing(X, xp):
    """X with its missing entries (NaN) set to 0, and the float mask of observed entries.

    Returns ``(X, None)`` when every entry is observed: the complete-data arithmetic, unchanged.

    Parameters
    ----------
    X : array of shape (n, n_features)
    xp : namespace

    Returns
    -------
    X0 : array of shape (n, n_features)
    observed : array of shape (n, n_features) of X's dtype, or None
    """
    missing = xp.isnan(X)
    if not bool(xp.any(missing)):
        return X, None
    return xp.where(missing, xp.zeros_like(X), X), xp.astype(~missing, X.dtype)


def kernel_matrix(X, S, v, xp, out=None):
    """Gaussian kernel ``K_v(x - s) = exp(-1/2 sum_d (v_d (x_d - s_d))^2)`` for all pairs.

    Computed as one GEMM on feature-weighted, augmented matrices,
    ``[vx, -|vx|^2/2, 1] @ [vs, 1, -|vs|^2/2]' = -|v(x - s)|^2 / 2``, followed by one in-place
    exponential: no (rows x prototypes x features) temporary. A missing entry of a row (NaN)
    contributes the factor 1 (the product kernel over the observed features): the sum runs over the
    row's observed features, ``[vx_0, -|vx_0|^2/2, m] @ [vs, 1, -(vs)^2/2]'`` with ``x_0`` the
    row with zeros for its missing entries and ``m`` its 0/1 mask of observed ones.

    Parameters
    ----------
    X : array of shape (n, n_features)
        NaN marks a missing entry.
    S : array of shape (J, n_features)
        Finite.
    v : array of shape (n_features,)
        Feature weights (inverse bandwidths), >= 0.
    xp : namespace
    out : array of shape (n, J) or None
        Buffer to write into (numpy and torch).

    Returns
    -------
    K : array of shape (n, J), entries in (0, 1] up to rounding
    """
    X, observed = without_missing(X, xp)
    U = X * v
    Sv = S * v
    ua = _augment(U, -0.5 * xp.sum(U * U, axis=1), True, xp)
    sa = _augment(Sv, -0.5 * xp.sum(Sv * Sv, axis=1), False, xp)
    if observed is not None:
        # the ones column of the rows' side becomes the mask, the candidates' |vs|^2 its terms
        ua = xp.concat([ua[:, :-1], observed], axis=1)
        sa = xp.concat([sa[:, :-1], -0.5 * Sv * Sv], axis=1)
    return ops.exp_inplace(ops.matmul_into(ua, sa.T, out, xp), xp)


def class_blocks(target, n_classes):
    """Start and stop of each class's block in a target vector sorted ascending.

    Parameters
    ----------
    target : ndarray of shape (J,) of int, sorted
    n_classes : int

    Returns
    -------
    bounds : list of (start, stop), one per class
    """
    target = np.asarray(target)
    if target.size and np.any(np.diff(target) < 0):
        raise ValueError("target must be sorted ascending (candidates grouped by class).")
    edges = np.searchsorted(target, np.arange(n_classes + 1))
    return [(int(edges[k]), int(edges[k + 1])) for k in range(n_classes)]


class _FeatureSubset(NamedTuple):
    """A batch's data restricted to its active features (host arrays), with the GEMM's side buffers.

    ``active`` is None when every feature is active (the arrays are then the full ones);
    ``XX`` is ``[1, X^2, X]`` over the active features; ``sa`` of shape (J, d + 2) holds the
    candidates' side of the augmented kernel GEMM, and ``bufs`` per thread its kernel buffer and a
    (chunk rows, d + 2) buffer for the rows' side, the ones columns already in place. ``rows``
    holds per row chunk the views ``(X, XX, X^2)`` of its rows; ``lo`` and ``hi`` of shape
    (n_chunks, d) each chunk's bounding box (None when candidates are never left out).
    """

    active: object
    X: np.ndarray
    S: np.ndarray
    S2: np.ndarray
    XX: np.ndarray
    two_S: np.ndarray
    sa: np.ndarray
    bufs: list
    rows: list
    lo: object
    hi: object


def reference_value_and_grad(theta, X, onehot, coef, q0, S, member, target, xp, rows_per_chunk):
    """Value and gradient of the unpenalised batch objective, as the seed writes them.

    ``l(v, w) = -sum_n c_n log(q_{n,y_n} / T_n)`` with ``q_{n,k} = q0_{n,k} + sum_{j: y_j = k}
    w_j K_v(x_n - s_j)`` and ``T_n = sum_k q_{n,k}``. With ``A[n, k] = c_n (1{k = y_n} / q_{n,y_n}
    - 1 / T_n)`` and ``G[n, j] = A[n, y_j] K_nj``:
    ``dl/dw_j = -sum_n G_nj`` and ``dl/dv_d = v_d sum_{n,j} G_nj w_j (x_nd - s_jd)^2``, where a
    row's missing entries (NaN) leave their terms out of the kernel and of the sum.

    Parameters
    ----------
    theta : array of shape (n_features + J,)
        ``[v, w]``.
    X : array of shape (R, n_features)
    onehot : array of shape (R, n_classes)
        The rows' classes, one-hot.
    coef : array of shape (R,)
    q0 : array of shape (R, n_classes)
    S : array of shape (J, n_features)
    member : array of shape (J, n_classes)
        The candidates' classes, one-hot.
    target : array of shape (J,) of int
        The candidates' classes.
    xp : namespace
    rows_per_chunk : int
        Rows of X per chunk: the (rows x J) kernel chunk bounds the memory.

    Returns
    -------
    value : float
    grad : array of shape (n_features + J,)
    """
    D = X.shape[1]
    v, w = theta[:D], theta[D:]
    value = 0.0
    cw = xp.zeros_like(w)  # sum_n G_nj = -dl/dw_j
    bracket = xp.zeros_like(v)  # sum_{n,j} G_nj w_j (x_nd - s_jd)^2
    for start in range(0, X.shape[0], rows_per_chunk):
        rows = slice(start, start + rows_per_chunk)
        Xc, c = X[rows], coef[rows]
        K = kernel_matrix(Xc, S, v, xp)  # (n, J)
        Xc, observed = without_missing(Xc, xp)
        q = q0[rows] + K @ (member * w[:, None])  # (n, C)
        T = xp.sum(q, axis=1)
        qy = xp.sum(q * onehot[rows], axis=1)
        value -= float(c @ xp.log(qy / T))
        A = onehot[rows] * (c / qy)[:, None] - (c / T)[:, None]
        G = K * xp.take(A, target, axis=1)
        Gw = G * w
        cw = cw + xp.sum(G, axis=0)
        # sum_{n,j} Gw_nj m_nd (x_nd - s_jd)^2 expanded over n and j (m: 1 where x_nd is observed)
        s_term = xp.sum(Gw, axis=0) @ (S * S) if observed is None else xp.sum((Gw.T @ observed) * (S * S), axis=0)
        bracket = bracket + (xp.sum(Gw, axis=1) @ (Xc * Xc) - 2.0 * xp.sum(Xc * (Gw @ S), axis=0) + s_term)
    return value, xp.concat([v * bracket, -cw])


class PrototypeLikelihood:
    """Reweighted negative log-likelihood of one batch, ``l(v, w)`` of the seed without penalty.

    ``l(v, w) = -sum_n c_n log p_{y_n}(x_n)`` over the reference rows, with
    ``p_k = q_k / sum_l q_l`` and ``q_k(x) = q0_k(x) + sum_{j: y_j = k} w_j K_v(x - s_j)``, where
    ``q0`` holds the marginals plus the frozen earlier batches (precomputed once per batch) and
    ``c_n = weight_n / W * N_k / (N_k - J_k)`` for ``k = y_n`` is the seed's reweighting with
    sample weights. The parameter vector is ``theta = [v (n_features), w (J)]``.

    Arrays of another namespace than numpy (torch, on any device) are evaluated by
    :func:`reference_value_and_grad`. numpy arrays take the fused path, which computes the same
    value and analytic gradient (see the reference for the formulas) with fewer passes over
    memory: with ``g_n = sum_j G_nj w_j`` and ``P = G @ (w S)``, the bracket of ``dl/dv_d`` is
    ``sum_n x_nd^2 g_n + sum_j s_jd^2 w_j c_j - 2 sum_n x_nd P_nd``.

    Per call and row chunk, the fused path runs one GEMM for the kernel and one in-place
    ``exp``, then one of two equivalent reductions over classes, fixed at construction:

    - class-free (small chunks, or more than PER_CLASS_MAX_CLASSES classes): one thin GEMM for the
      class sums ``Q = K @ (w one-hot)``, ``G`` formed in the kernel buffer by one gathered
      product, and one GEMM ``G^T [1, X^2, X]`` for ``c_j`` and both sums of the bracket. A fixed
      number of array operations whatever the number of classes: small problems are bound by
      their count.
    - per class (large chunks, few classes): one GEMM ``K_k @ [w, w S]_k`` per class block for
      ``[Q_k, P_k]`` and one GEMV per class block for ``c_j``: the fewest passes over the chunk.

    Row chunks of about CHUNK_ELEMENTS kernel entries stay in cache through all of these passes
    and bound the memory; they run in ``n_threads`` threads, and their terms are summed in chunk
    order, so the result does not depend on the thread count. Only features with ``v_d > 0``
    enter the GEMMs (the others have zero gradient). The candidates must be sorted by class.

    Two things keep the number of ``exp`` calls, most of the cost, down without changing the
    result beyond rounding. The kernel's exponent is raised to EXP_FLOOR before ``exp`` (far pairs
    are otherwise the slow arguments of ``exp``). And with several chunks and no missing entries,
    the rows are ordered so that each chunk is compact in feature space (k-d splits,
    :func:`_compact_order`), and per evaluation a candidate whose kernel entries over a chunk's
    bounding box are all below ``exp(-T)`` is left out of that chunk's GEMMs, with ``T`` chosen
    from ``w`` and ``min q0`` so that this moves every ``q`` by less than a fraction of the
    machine epsilon (:meth:`_far_limit`). Narrow kernels (large ``v``, many rows) skip most pairs.

    Parameters
    ----------
    X : array of shape (R, n_features)
        Reference rows.
    y : ndarray of shape (R,) of int
    coef : array of shape (R,)
        ``c_n``.
    q0 : array of shape (R, n_classes)
        Unscaled probabilities of the frozen model, > 0.
    S : array of shape (J, n_features)
        Candidates, sorted by class.
    target : ndarray of shape (J,) of int, sorted
    n_classes : int
    xp : namespace
    device : device or None
    n_threads : int, default=1
        Threads over row chunks (numpy only); call :meth:`close` when done.
    rows_per_chunk : int or None, default=None
        Rows per chunk; None sizes chunks of about CHUNK_ELEMENTS kernel entries (numpy) or
        DEVICE_CHUNK_ELEMENTS (other namespaces).
    """

    def __init__(self, X, y, coef, q0, S, target, n_classes, xp, device=None, n_threads=1, rows_per_chunk=None):
        self.xp = xp
        self.device = device
        self.dtype = X.dtype
        self.n_classes = n_classes
        self.n_features = X.shape[1]
        self.n_candidates = S.shape[0]
        self.blocks = class_blocks(target, n_classes)
        self._fused = isinstance(X, np.ndarray)
        self._exp_floor = EXP_FLOOR.get(np.dtype(self.dtype), -500.0) if self._fused else None
        # a scoring row's missing entries leave the kernel (factor 1): the fused path carries the
        # rows with zeros there and their mask; the reference path finds the NaN itself
        self._observed = None
        if self._fused:
            X, self._observed = without_missing(X, xp)
        R = X.shape[0]
        elements = CHUNK_ELEMENTS if self._fused else DEVICE_CHUNK_ELEMENTS
        step = chunk_rows(self.n_candidates, elements) if rows_per_chunk is None else max(1, int(rows_per_chunk))
        self._step = step
        self._chunks = [(a, min(a + step, R)) for a in range(0, R, step)]
        # Candidates far from every row of a chunk are skipped there (see _near): the
        # rows are put in an order whose chunks are compact in feature space (the objective is a
        # sum over rows, so their order does not matter). Not with missing entries (a missing
        # feature has no extent), nor in one chunk (nothing to gain against the extra work).
        self._prune = self._fused and self._observed is None and len(self._chunks) > 1
        if self._prune:
            order, self._chunks = _compact_order(X, len(self._chunks))
            X, y, coef, q0 = X[order], np.asarray(y)[order], coef[order], q0[order]
            starts = np.array([a for a, _ in self._chunks])
            # per chunk, the lowest and highest value of each feature: (n_chunks, n_features)
            self._lo = np.minimum.reduceat(X, starts, axis=0)
            self._hi = np.maximum.reduceat(X, starts, axis=0)
            self._q0_min = float(np.min(q0))
        self.X, self.S = X, S
        self._y = np.asarray(y)  # the rows' classes (host), in the rows' order here
        self.S2 = S * S
        self.coef, self.q0 = coef, q0
        onehot = np.zeros((y.shape[0], n_classes))
        onehot[np.arange(y.shape[0]), y] = 1.0
        self.onehot = ops.asarray(onehot, xp, self.dtype, device)
        # (J, n_classes) one-hot of the candidates' classes: Q = K @ (w * it)
        member = np.zeros((S.shape[0], n_classes))
        member[np.arange(S.shape[0]), np.asarray(target)] = 1.0
        self.member = ops.asarray(member, xp, self.dtype, device)
        self._target = np.asarray(target)
        self._ones_K = ops.asarray(np.ones(n_classes), xp, self.dtype, device)
        # per chunk, the flat positions of the rows' true classes in the chunk's (rows, n_classes) q
        true_cell = np.arange(y.shape[0]) * n_classes + np.asarray(y)
        self._true_cells = [ops.asarray(true_cell[a:b] - a * n_classes, xp, None, device) for a, b in self._chunks]
        self._pool = None
        self.n_threads = 1
        if not self._fused:
            self._target_xp = ops.asarray(self._target, xp, None, device)
            return
        # [1, X^2, X]: the class-free form's one GEMM G^T @ it gives c_j and the v-gradient sums;
        # columns 1..D (X^2) also serve the row side of the kernel GEMM
        # ([1, X^2, X, m] with a mask m of observed entries: G^T m replaces c_j per feature)
        self.XX = np.concatenate([np.ones((R, 1), dtype=self.dtype), X * X, X]
                                 + ([] if self._observed is None else [self._observed]), axis=1)
        # numpy releases the GIL in BLAS and ufunc loops, so row chunks run in parallel threads;
        # each thread owns one (rows x J) kernel buffer that it reuses for all of its chunks.
        self.n_threads = max(1, min(int(n_threads), len(self._chunks)))
        # per chunk, the views of its rows that every evaluation reads
        self._chunk_rows = [(q0[a:b], self.onehot[a:b], coef[a:b], cells)
                            for (a, b), cells in zip(self._chunks, self._true_cells)]
        n_buf = max((b - a for a, b in self._chunks), default=0)
        large = n_buf * self.n_candidates >= PER_CLASS_MIN_ELEMENTS
        # (missing entries: the class-free form, whose one GEMM also gives G^T m)
        self._per_class = n_classes <= PER_CLASS_MAX_CLASSES and large and self._observed is None
        self._kernel_bufs = [np.empty((n_buf, self.n_candidates), dtype=self.dtype) for _ in range(self.n_threads)]
        self._n_buf = n_buf
        # the arrays restricted to the active features, and the GEMM's side buffers for them, built
        # when the set of active features changes (it rarely does between evaluations)
        self._subset_key = None
        self._subset = None
        if self.n_threads > 1:
            self._pool = BlockMapper(self.n_threads)

    def value_at_zero(self):
        """The value at ``theta = 0`` (an empty batch): the frozen model's loss, from ``q0`` alone.

        Returns
        -------
        value : float
            ``-sum_n c_n log(q0_{n, y_n} / sum_k q0_{n, k})``, what :meth:`value_and_grad`
            gives at zero, without the kernel.
        """
        value = 0.0
        for i, (start, stop) in enumerate(self._chunks):
            q0 = self.q0[start:stop]
            qy = q0.reshape(-1)[self._true_cells[i]]
            value -= float(self.coef[start:stop] @ self.xp.log(qy / (q0 @ self._ones_K)))
        return value

    def subsample(self, n_rows, dtype=None):
        """The same objective over ``n_rows`` evenly spread scoring rows, scaled to the same total weight.

        The rows are taken at even steps through the rows' order here (with several chunks, the
        k-d order of :func:`_compact_order`, so the subset covers the feature space as the rows
        do), and their ``c_n`` are multiplied by ``sum c / sum c_subset``: the value keeps its
        scale, so the solvers' tolerances mean the same on both. The candidates, ``q0`` of the
        rows taken and the thread count are this objective's.

        Parameters
        ----------
        n_rows : int
            Rows to keep; all of them when there are not more.
        dtype : dtype or None, default=None
            The new objective's floating dtype; None keeps this one's.

        Returns
        -------
        objective : PrototypeLikelihood
        """
        R = self._y.shape[0]
        dtype = self.dtype if dtype is None else dtype
        if not isinstance(self.X, np.ndarray) and isinstance(dtype, (type, np.dtype)):
            dtype = getattr(self.xp, np.dtype(dtype).name)  # numpy's float32 (the screen's) as torch's
        if n_rows >= R and dtype == self.dtype:
            return self
        take = np.unique(np.linspace(0, R - 1, max(min(int(n_rows), R), 1)).round().astype(np.int64))
        xp = self.xp
        X = ops.take_rows(self.X, take)
        if self._observed is not None:  # the rows' missing entries back as NaN
            X = xp.where(ops.take_rows(self._observed, take) > 0, X, xp.nan)
        coef = ops.take_rows(self.coef, take)
        coef = coef * (float(xp.sum(self.coef)) / float(xp.sum(coef)))
        X, coef, q0, S = (xp.astype(a, dtype) for a in (X, coef, ops.take_rows(self.q0, take), self.S))
        return PrototypeLikelihood(X, self._y[take], coef, q0, S, self._target, self.n_classes, xp,
                                   device=self.device, n_threads=self.n_threads)

    def close(self):
        """Release the worker threads (if any)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def value_and_grad(self, theta):
        """Value and gradient of the unpenalised objective.

        Parameters
        ----------
        theta : array of shape (n_features + J,)

        Returns
        -------
        value : float
        grad : array of shape (n_features + J,)
        """
        if not self._fused:
            return reference_value_and_grad(theta, self.X, self.onehot, self.coef, self.q0, self.S, self.member,
                                            self._target_xp, self.xp, self._step)
        D = self.n_features
        v, w = theta[:D], theta[D:]
        # Features at v_d = 0 do not enter the kernel and have zero gradient (K depends on v_d^2):
        # the GEMMs run over the features that are still active.
        sub = self._subset_for(v > 0)
        active, S2 = sub.active, sub.S2
        d = sub.X.shape[1]
        va = v if active is None else v[active]
        if d == 0:  # no feature left: every kernel entry is exp(0) = 1
            return self._constant_kernel(w, v)
        h = va * va * -0.5
        # the candidates' side of the kernel GEMM, [v s, 1, -|v s|^2 / 2], in its buffer
        sa = sub.sa
        np.multiply(sub.S, va, out=sa[:, :d])
        if self._observed is None:
            np.matmul(S2, h, out=sa[:, d + 1])
        else:  # one term per feature, met by the rows' mask
            np.multiply(S2, h, out=sa[:, d + 1 :])
        if self._per_class:
            mixing = np.concatenate([w[:, None], w[:, None] * sub.S], axis=1)  # [w, w S]: (J, d + 1)
        else:
            mixing = self.member * w[:, None]  # (J, n_classes): w_j in the column of its class
        near = floored = None
        if self._prune and d:
            limit = self._far_limit(w)
            near, floored = self._near(sub, va, limit), self._floored(sub, va, limit)
        context = (sub, va, h, w, mixing, near, floored)
        n_chunks = len(self._chunks)
        if n_chunks == 1:
            terms = [self._chunk_terms(0, sub.bufs[0], context)]
        elif self._pool is None:
            terms = [self._chunk_terms(i, sub.bufs[0], context) for i in range(n_chunks)]
        else:
            groups = [range(i, n_chunks, self.n_threads) for i in range(self.n_threads)]
            parts = self._pool(lambda item: [self._chunk_terms(i, item[1], context) for i in item[0]],
                               list(zip(groups, sub.bufs)))
            by_chunk = {i: t for group, part in zip(groups, parts) for i, t in zip(group, part)}
            terms = [by_chunk[i] for i in range(n_chunks)]
        # summed in chunk order: the result does not depend on the number of threads
        value, cw, gx = terms[0]
        for loss, cw_i, gx_i in terms[1:]:
            value += loss
            cw = cw + cw_i
            gx = gx + gx_i
        if self._observed is None:  # the candidates' part of the bracket (with a mask: in gx)
            gx = gx + (w * cw) @ S2
        return value, _full_gradient(va * gx, cw, active, v, self.xp)

    def _constant_kernel(self, w, v):
        """Value and gradient where every feature weight is 0, so that every kernel entry is 1.

        The class sums are then the class totals of ``w`` on every row, ``c_j`` is
        ``sum_n A[n, y_j]``, and ``dl/dv = 0``: no pass over a (rows x candidates) kernel.
        """
        totals = w @ self.member  # (n_classes,): the same class sums on every row
        value, a_sum = 0.0, np.zeros(self.n_classes)
        for i in range(len(self._chunks)):
            loss, A = self._loss_and_weights(i, totals)
            value += loss
            a_sum += A.sum(axis=0)
        return value, _full_gradient(np.zeros(0), a_sum[self._target], np.zeros(0, dtype=np.int64), v, self.xp)

    def _chunk_terms(self, i, buf, context):
        """Chunk ``i``'s value, ``c_j`` (J,) and bracket ``sum_n x_nd^2 g_n - 2 sum_n x_nd P_nd`` (d,).

        The candidates' part of the bracket, ``sum_j s_jd^2 w_j c_j``, is added once by the caller;
        with missing entries it is ``sum_j s_jd^2 w_j (G^T m)_jd`` and part of the chunk's bracket.
        Candidates too far from the chunk's rows to matter (:meth:`_near`) are left out of its
        GEMMs: their kernel entries there, all below ``exp(-T)`` (:meth:`_far_limit`), count as 0.
        """
        sub, va, h, w, mixing, near, floored = context
        d = va.shape[0]
        X, XX, X2 = sub.rows[i]
        floor = floored is None or bool(floored[i])
        near = None if near is None else near[i]
        sa, target, two_S, blocks, w_near = sub.sa, self._target, sub.two_S, self.blocks, w
        if near is not None:
            if near.size == 0:  # no candidate reaches the chunk: the frozen model's loss alone
                loss, _ = self._loss_and_weights(i, 0.0)
                return loss, np.zeros_like(w), np.zeros(d, dtype=va.dtype)
            sa, mixing, target, two_S, w_near = sa[near], mixing[near], target[near], two_S[near], w[near]
            if self._per_class:  # the class blocks of the candidates kept (sorted by class, as all are)
                edges = np.searchsorted(target, np.arange(self.n_classes + 1))
                blocks = list(zip(edges[:-1].tolist(), edges[1:].tolist()))
        K = self._kernel(X, X2, va, h, sa, buf, XX, floor)
        if not self._per_class:
            loss, A = self._loss_and_weights(i, K @ mixing)
            np.multiply(K, A[:, target], out=K)  # K becomes G: G[n, j] = A[n, y_j] K_nj
            M = K.T @ XX  # [c_j, (G^T X^2)_j, (G^T X)_j] (and (G^T m)_j)
            # sum_n x_nd^2 g_n - 2 sum_n x_nd P_nd = sum_j w_j [(G^T X^2)_jd - 2 s_jd (G^T X)_jd]
            bracket = M[:, 1 : d + 1] - two_S * M[:, d + 1 : 2 * d + 1]
            if self._observed is not None:
                bracket += sub.S2 * M[:, 2 * d + 1 :]
            return loss, _spread(M[:, 0], near, w), w_near @ bracket
        # per class block k: [Q_k, K_k @ (w S)_k], stacked to (rows, n_classes, d + 1)
        Z = np.stack([K[:, a:b] @ mixing[a:b] for a, b in blocks], axis=1)
        loss, A = self._loss_and_weights(i, Z[:, :, 0])
        cw = np.concatenate([A[:, k] @ K[:, a:b] for k, (a, b) in enumerate(blocks)])
        # Y[:, 0] = g_n = sum_k A_nk Q_nk and Y[:, 1:] = P = sum_k A_nk (K_k @ (w S)_k)
        Y = np.einsum("nk,nkd->nd", A, Z)
        return loss, _spread(cw, near, w), Y[:, 0] @ X2 - 2.0 * np.einsum("nd,nd->d", X, Y[:, 1:])

    def _far_limit(self, w):
        """The exponent ``T`` beyond which a candidate's kernel entries are left out, for weights ``w``.

        A left-out entry is below ``exp(-T)``; with ``T = log(max(sum_j w_j, 1) / min q0) -
        log(tol)``, ``tol`` = PRUNE_TOLERANCE times the machine epsilon, all left-out entries
        together change a ``q_{n,k} >= min q0`` by less than ``tol`` relatively (so the value by
        less than about ``2 tol sum_n c_n``), and each ``dl/dw_j`` by less than ``tol sum_n c_n``.
        """
        total = float(np.sum(w))
        if not (self._q0_min > 0 and np.isfinite(total)):  # nothing is left out (a NaN stays visible)
            return np.inf
        tol = PRUNE_TOLERANCE * float(np.finfo(self.dtype).eps)
        return float(np.log(max(total, 1.0) / self._q0_min) - np.log(tol))

    def _near(self, sub, va, limit):
        """Per row chunk, the positions of the candidates that may reach one of its rows (None: all).

        A lower bound on ``|v (x - s)|^2 / 2`` over a chunk's rows ``x`` is the weighted squared
        distance from ``s`` to the chunk's bounding box (over at most PRUNE_FEATURES features of
        largest ``v``); a candidate whose bound is at least ``limit`` is left out of the chunk.

        Returns
        -------
        near : list of (ndarray of int or None), one per chunk
        """
        lo, hi, S = sub.lo, sub.hi, sub.S
        if va.shape[0] > PRUNE_FEATURES:
            top = np.argpartition(va, -PRUNE_FEATURES)[-PRUNE_FEATURES:]
            lo, hi, S, va = lo[:, top], hi[:, top], S[:, top], va[top]
        near = []
        # chunks in groups, so the (chunks, J) temporaries stay small
        group = max(1, CHUNK_ELEMENTS // 4 // max(1, S.shape[0]))
        for a in range(0, lo.shape[0], group):
            bound = np.zeros((min(group, lo.shape[0] - a), S.shape[0]), dtype=S.dtype)
            for f in range(S.shape[1]):  # the squared weighted distance to the box, feature by feature
                gap = np.maximum(lo[a : a + group, f, None] - S[:, f], S[:, f] - hi[a : a + group, f, None])
                np.maximum(gap, 0.0, out=gap)  # > 0 outside the box along feature f
                gap *= va[f]
                gap *= gap
                bound += gap
            reach = bound < 2.0 * limit
            near.extend(None if row.all() else np.flatnonzero(row) for row in reach)
        return near

    def _floored(self, sub, va, limit):
        """Per row chunk, whether an exponent of the candidates kept there (:meth:`_near`) may be below EXP_FLOOR.

        A candidate kept in a chunk has ``|v (b - s)| < sqrt(2 limit)`` for the point ``b`` of the
        chunk's bounding box nearest to it, so for every row ``x`` of the chunk ``|v (x - s)| <
        |v width| + sqrt(2 limit)``, ``width`` the box's extent (triangle inequality). The GEMM
        computes the exponent from the expansion ``-|v x|^2 / 2 - |v s|^2 / 2 + (v x) . (v s)``,
        whose rounding error is below ``(d + 2) eps (|v x| + |v s|)^2``. Where the two together stay
        above the floor, raising to it changes no entry, and the pass over the chunk is left out
        (the result is bit-identical). Only when the bound of :meth:`_near` uses every active
        feature (at most PRUNE_FEATURES).

        Returns
        -------
        floored : ndarray of shape (n_chunks,) of bool, or None
            True where the chunk's exponents must be raised to the floor; None: everywhere.
        """
        d = va.shape[0]
        if not np.isfinite(limit) or d > PRUNE_FEATURES:
            return None
        reach = 0.5 * (np.sqrt(np.square((sub.hi - sub.lo) * va).sum(axis=1)) + np.sqrt(2.0 * limit)) ** 2
        largest_x = np.sqrt(np.square(np.maximum(np.abs(sub.lo), np.abs(sub.hi)) * va).sum(axis=1))
        largest_s = np.sqrt(-2.0 * float(np.min(sub.sa[:, d + 1])))  # sa's last column: -|v s|^2 / 2
        rounding = (d + 2) * float(np.finfo(self.dtype).eps) * (largest_x + largest_s) ** 2
        return reach + rounding >= -self._exp_floor

    def _subset_for(self, positive):
        """The cached :class:`_FeatureSubset` of the active features, rebuilt when they change.

        Parameters
        ----------
        positive : ndarray of shape (n_features,) of bool
            ``v > 0``.

        Returns
        -------
        subset : _FeatureSubset
        """
        key = positive.tobytes()
        if key != self._subset_key:
            self._subset, self._subset_key = self._host_subset(positive), key
        return self._subset

    def _host_subset(self, positive):
        """The arrays restricted to the features with ``positive`` weight, and their GEMM buffers.

        Parameters
        ----------
        positive : ndarray of shape (n_features,) of bool

        Returns
        -------
        subset : _FeatureSubset
        """
        D = self.n_features
        if positive.all():
            active, X, S, S2, XX = None, self.X, self.S, self.S2, self.XX
        else:
            active = np.flatnonzero(positive)
            # np.take keeps the rows contiguous (fancy indexing of columns would not, which changes
            # the BLAS kernels' summation order and so the rounding)
            X, S, S2 = (np.take(a, active, axis=1) for a in (self.X, self.S, self.S2))
            blocks = [[0], active + 1, active + 1 + D] + ([] if self._observed is None else [active + 1 + 2 * D])
            XX = np.take(self.XX, np.concatenate(blocks), axis=1)
        d = X.shape[1]
        # the ones column of each side of the augmented GEMM is written here once; with missing
        # entries the rows' side ends in their mask and the candidates' in one term per feature
        width = d + 2 if self._observed is None else 2 * d + 1
        sa = np.ones((self.n_candidates, width), dtype=self.dtype)
        bufs = [(K_buf, np.ones((self._n_buf, width), dtype=self.dtype)) for K_buf in self._kernel_bufs]
        rows = [(X[a:b], XX[a:b], XX[a:b, 1 : d + 1]) for a, b in self._chunks]
        lo, hi = (None, None) if not self._prune else (self._lo, self._hi) if active is None else \
            (np.take(self._lo, active, axis=1), np.take(self._hi, active, axis=1))
        return _FeatureSubset(active, X, S, S2, XX, 2.0 * S, sa, bufs, rows, lo, hi)

    def _kernel(self, X, X2, va, h, sa, buf, XX, floor=True):
        """Kernel of one row chunk against the candidates, written into ``buf``: (rows, J).

        One GEMM, ``[v x, -|v x|^2 / 2, 1] @ [v s, 1, -|v s|^2 / 2]' = -|v (x - s)|^2 / 2``
        (``h = -v^2 / 2``; ``sa`` is the candidates' side, all of them or those near the chunk),
        raised to EXP_FLOOR (unless ``floor`` is False: no exponent can be below it, see
        :meth:`_floored`), then an in-place ``exp``. ``buf`` is the thread's (kernel buffer,
        rows' side buffer); the rows' side is written into the latter.
        ``XX`` is the chunk's ``[1, X^2, X(, m)]``: with missing entries its mask ends the rows' side.
        """
        n, d = X.shape
        K_buf, ua = buf
        # rows x candidates, contiguous at the front of the thread's buffer (a chunk may be
        # shorter, and its candidates fewer, than the buffer's)
        K_buf = K_buf.reshape(-1)[: n * sa.shape[0]].reshape(n, sa.shape[0])
        ua = ua[:n]
        np.multiply(X, va, out=ua[:, :d])
        np.matmul(X2, h, out=ua[:, d])
        if ua.shape[1] > d + 2:  # missing entries: the rows' mask, the last block of [1, X^2, X, m]
            ua[:, d + 1 :] = XX[:, 2 * d + 1 :]
        K = np.matmul(ua, sa.T, out=K_buf)
        if floor:
            np.maximum(K, self._exp_floor, out=K)
        return np.exp(K, out=K)

    def _loss_and_weights(self, i, scores):
        """Chunk ``i``'s share of the value and its ``A`` (see the class docstring).

        ``scores`` of shape (rows, n_classes) holds the batch's class sums ``Q``.
        """
        q0, onehot, c, true_cells = self._chunk_rows[i]
        q = q0 + scores
        T = q @ self._ones_K
        qy = q.reshape(-1)[true_cells]
        A = onehot * (c / qy)[:, None] - (c / T)[:, None]
        return -float(c @ np.log(qy / T)), A


def _full_gradient(gv, cw, active, v, xp):
    """The gradient ``[dl/dv, dl/dw]`` from its parts over the active features.

    Parameters
    ----------
    gv : array of shape (n_active,)
        ``dl/dv`` of the active features.
    cw : array of shape (J,)
        ``-dl/dw``.
    active : array of int or None
        Positions of the active features; None when all are active.
    v : array of shape (n_features,)
        The feature weights (their shape and dtype for the inactive features' zeros).
    xp : namespace

    Returns
    -------
    grad : array of shape (n_features + J,)
    """
    if active is not None:
        full = xp.zeros_like(v)
        full[active] = gv
        gv = full
    return xp.concat([gv, -cw])


def _spread(values, near, like):
    """``values`` of the candidates at positions ``near`` in a zero vector shaped like ``like``.

    ``near=None`` means every candidate: ``values`` itself.
    """
    if near is None:
        return values
    out = np.zeros_like(like)
    out[near] = values
    return out


def _compact_order(X, n_parts):
    """A row order whose ``n_parts`` consecutive parts of nearly equal size are compact in space.

    k-d splits: a group of rows meant for ``m`` parts is split at the median-like position
    ``round(n floor(m / 2) / m)`` of its feature of widest range, recursively, so each part's
    bounding box is small (what lets :meth:`PrototypeLikelihood._near` leave candidates out).

    Parameters
    ----------
    X : ndarray of shape (R, n_features)
        Finite.
    n_parts : int

    Returns
    -------
    order : ndarray of shape (R,) of int
    parts : list of (start, stop)
        The parts' positions in ``X[order]``, in order.
    """
    order = np.arange(X.shape[0])
    parts = []
    stack = [(0, X.shape[0], n_parts)]
    while stack:
        a, b, m = stack.pop()
        if m <= 1 or b - a <= 1:
            parts.append((a, b))
            continue
        rows = order[a:b]
        Xg = X[rows]
        feature = int(np.argmax(Xg.max(axis=0) - Xg.min(axis=0)))
        left = m // 2
        cut = min(max(int(round((b - a) * left / m)), 1), b - a - 1)
        order[a:b] = rows[np.argpartition(Xg[:, feature], cut, kind="introselect")]
        stack.extend([(a + cut, b, m - left), (a, a + cut, left)])
    return order, sorted(parts)
