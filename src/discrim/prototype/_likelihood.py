"""The batch objective of the prototype set classifier, written once against an array namespace."""

# numpy by default; torch plugs in through array-api-compat. The in-place helpers (backend._ops) fall back
# to allocating operations for namespaces without ``out=`` support.

from typing import NamedTuple

import numpy as np
from array_api_compat import is_torch_namespace

from discrim.backend import _ops as ops

# Rows of reference (or scoring) data processed at once. A (rows x prototypes) chunk of about
# CHUNK_ELEMENTS entries stays in cache while all passes of one call run over it (the passes
# then read cache instead of memory), and memory stays bounded.
CHUNK_ELEMENTS = 2**18
# Kernel chunks of at least this many entries with at most PER_CLASS_MAX_CLASSES classes are
# reduced class block by class block (fewest passes over the chunk); smaller problems, bound by
# the number of array operations, and many-class ones (one GEMM per class) use the class-free
# form (see PrototypeLikelihood).
PER_CLASS_MIN_ELEMENTS = 2**15
PER_CLASS_MAX_CLASSES = 3


def chunk_rows(n_cols):
    """Rows per chunk so that a (rows x ``n_cols``) buffer holds about CHUNK_ELEMENTS entries."""
    return max(1, CHUNK_ELEMENTS // max(int(n_cols), 1))


def _augment(Z, row_term, first, xp, ones=None):
    """Append a column of ones and ``row_term``, in the order that makes one GEMM give the exponent.

    ``first=True`` gives the rows' side ``[Z, row_term, 1]``, False the candidates' side
    ``[Z, 1, row_term]``; ``ones`` is an optional precomputed (len(Z), 1) column of ones.
    """
    if ones is None:
        ones = xp.ones_like(row_term)[:, None]
    cols = [Z, row_term[:, None], ones] if first else [Z, ones, row_term[:, None]]
    return xp.concat(cols, axis=1)


def kernel_matrix(X, S, v, xp, out=None):
    """Gaussian kernel ``K_v(x - s) = exp(-1/2 sum_d (v_d (x_d - s_d))^2)`` for all pairs.

    Computed as one GEMM on feature-weighted, augmented matrices,
    ``[vx, -|vx|^2/2, 1] @ [vs, 1, -|vs|^2/2]' = -|v(x - s)|^2 / 2``, followed by one in-place
    exponential: no (rows x prototypes x features) temporary.

    Parameters
    ----------
    X : array of shape (n, n_features)
    S : array of shape (J, n_features)
    v : array of shape (n_features,)
        Feature weights (inverse bandwidths), >= 0.
    xp : namespace
    out : array of shape (n, J) or None
        Buffer to write into (numpy and torch).

    Returns
    -------
    K : array of shape (n, J), entries in (0, 1] up to rounding
    """
    U = X * v
    Sv = S * v
    ua = _augment(U, -0.5 * xp.sum(U * U, axis=1), True, xp)
    sa = _augment(Sv, -0.5 * xp.sum(Sv * Sv, axis=1), False, xp)
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
    (chunk rows, d + 2) buffer for the rows' side, the ones columns already in place.
    """

    active: object
    X: np.ndarray
    S: np.ndarray
    S2: np.ndarray
    XX: np.ndarray
    two_S: np.ndarray
    sa: np.ndarray
    bufs: list


class PrototypeLikelihood:
    """Reweighted negative log-likelihood of one batch, ``l(v, w)`` of the seed without penalty.

    ``l(v, w) = -sum_n c_n log p_{y_n}(x_n)`` over the reference rows, with
    ``p_k = q_k / sum_l q_l`` and ``q_k(x) = q0_k(x) + sum_{j: y_j = k} w_j K_v(x - s_j)``, where
    ``q0`` holds the marginals plus the frozen earlier batches (precomputed once per batch) and
    ``c_n = weight_n / W * N_k / (N_k - J_k)`` for ``k = y_n`` is the seed's reweighting with
    sample weights.

    The parameter vector is ``theta = [v (n_features), w (J)]``. The gradient is analytic:
    with ``A[n, k] = c_n (1{k = y_n} / q_{n,y_n} - 1 / T_n)``, ``T_n = sum_k q_{n,k}`` and
    ``G[n, j] = A[n, y_j] K_nj``,

    - ``dl/dw_j = -sum_n G_nj``;
    - ``dl/dv_d = v_d [sum_n x_nd^2 g_n + sum_j s_jd^2 w_j c_j - 2 sum_n x_nd P_nd]`` with
      ``g_n = sum_j G_nj w_j``, ``c_j = -dl/dw_j`` and ``P = G @ (w S)``, i.e. the expansion of
      ``sum_{n,j} G_nj w_j (x_nd - s_jd)^2``.

    Per call and row chunk: one GEMM for the kernel and one in-place ``exp``, then one of two
    equivalent reductions, fixed at construction:

    - class-free (small chunks, or more than PER_CLASS_MAX_CLASSES classes): one thin GEMM for the
      class sums ``Q = K @ (w one-hot)``, ``G`` formed in the kernel buffer (one gathered product
      for small chunks, one broadcast product per class block otherwise), and one GEMM
      ``G^T [1, X^2, X]`` for ``c_j`` and both sums of the ``v``-gradient bracket. A fixed number
      of array operations whatever the number of classes: small problems are bound by their count.
    - per class (large chunks, few classes): one GEMM ``K_k @ [w, w S]_k`` per class block for
      ``[Q_k, P_k]`` and one GEMV per class block for ``c_j``: the fewest passes over the chunk.

    Row chunks of about CHUNK_ELEMENTS kernel entries stay in cache through all of these passes
    and bound the memory; they run in ``n_threads`` threads. Only features with ``v_d > 0`` enter
    the GEMMs (the others have zero gradient). The candidates must be sorted by class.


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
        Threads over row chunks (numpy namespace only); call :meth:`close` when done.
    rows_per_chunk : int or None, default=None
        Rows per chunk; None sizes chunks of about CHUNK_ELEMENTS kernel entries.
    reduction : {"auto", "class_free", "per_class"}, default="auto"
        How a chunk is reduced over classes; "auto" picks by chunk size and class count (see
        PER_CLASS_MIN_ELEMENTS). Every choice computes the same value and gradient: the others
        exist for the tests, which check each against the specification's formula.
    """

    def __init__(self, X, y, coef, q0, S, target, n_classes, xp, device=None, n_threads=1, rows_per_chunk=None,
                 reduction="auto"):
        self.xp = xp
        self.device = device
        self.dtype = X.dtype
        self.n_classes = n_classes
        self.n_features = X.shape[1]
        self.n_candidates = S.shape[0]
        self.blocks = class_blocks(target, n_classes)
        self.X, self.S = X, S
        self.S2 = S * S
        # [1, X^2, X]: the class-free form's one GEMM G^T @ it gives c_j and the v-gradient sums;
        # columns 1..D (X^2) also serve the row side of the kernel GEMM
        self.XX = xp.concat([ops.asarray(np.ones((X.shape[0], 1)), xp, self.dtype, device), X * X, X], axis=1)
        self._column_0 = ops.asarray(np.zeros(1, dtype=np.int64), xp, None, device)
        onehot = np.zeros((y.shape[0], n_classes))
        onehot[np.arange(y.shape[0]), y] = 1.0
        self.onehot = ops.asarray(onehot, xp, self.dtype, device)
        # (J, n_classes) one-hot of the candidates' classes: Q = K @ (w * it)
        member = np.zeros((S.shape[0], n_classes))
        member[np.arange(S.shape[0]), np.asarray(target)] = 1.0
        self.member = ops.asarray(member, xp, self.dtype, device)
        self.coef, self.q0 = coef, q0
        R = X.shape[0]
        step = chunk_rows(self.n_candidates) if rows_per_chunk is None else max(1, int(rows_per_chunk))
        self._chunks = [(a, min(a + step, R)) for a in range(0, R, step)]
        # numpy releases the GIL in BLAS and ufunc loops, so row chunks run in parallel threads;
        # each thread owns one (rows x J) kernel buffer that it reuses for all of its chunks.
        self.n_threads = max(1, min(int(n_threads), len(self._chunks))) if not is_torch_namespace(xp) else 1
        n_buf = min(step, R)
        if reduction not in ("auto", "class_free", "per_class"):
            raise ValueError(f"reduction must be 'auto', 'class_free' or 'per_class'; got {reduction!r}.")
        large = n_buf * self.n_candidates >= PER_CLASS_MIN_ELEMENTS
        self._per_class = (n_classes <= PER_CLASS_MAX_CLASSES and large) if reduction == "auto" else (
            reduction == "per_class")
        # numpy on the host: with every feature active (the usual case) both sides of the kernel
        # GEMM are written into preallocated augmented buffers, and a small class-free chunk forms
        # G with one gathered product instead of one product per class block (fewer array
        # operations, which is what small problems are bound by)
        self._host = isinstance(X, np.ndarray)
        self._gather_G = self._host and not large
        self._target = np.asarray(target)
        # per thread: the (rows x J) kernel buffer, and (on the host, see _host_subset) one for the
        # rows' side of the kernel GEMM
        self._kernel_bufs = [ops.empty((n_buf, self.n_candidates), xp, self.dtype, device) for _ in range(self.n_threads)]
        self._n_buf = n_buf
        # on the host: the arrays restricted to the active features, and the GEMM's side buffers for
        # them, built when the set of active features changes (it rarely does between evaluations)
        self._subset_key = None
        self._subset = None
        # constants of the augmented kernel GEMM and the flat position of each row's true class
        self._ones_R = ops.asarray(np.ones((n_buf, 1)), xp, self.dtype, device)
        self._ones_J = ops.asarray(np.ones((self.n_candidates, 1)), xp, self.dtype, device)
        self._ones_K = ops.asarray(np.ones(n_classes), xp, self.dtype, device)
        # per chunk, the flat positions of the rows' true classes in the chunk's (rows, n_classes) q
        true_cell = np.arange(y.shape[0]) * n_classes + np.asarray(y)
        self._true_cells = [ops.asarray(true_cell[a:b] - a * n_classes, xp, None, device) for a, b in self._chunks]
        self._pool = None
        # one row chunk on the host in one thread, reduced class-free with a gathered G: the
        # objective of small batches, evaluated by _value_and_grad_single
        self._single = self._gather_G and not self._per_class and len(self._chunks) == 1 and self.n_threads == 1
        if self.n_threads > 1:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=self.n_threads)

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

    def close(self):
        """Release the worker threads (if any)."""
        if self._pool is not None:
            self._pool.shutdown()
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
        if self._single:
            return self._value_and_grad_single(theta)
        xp = self.xp
        D = self.n_features
        v, w = theta[:D], theta[D:]
        # Features at v_d = 0 do not enter the kernel and have zero gradient (K depends on v_d^2):
        # the GEMMs run over the features that are still active.
        positive = v > 0
        if self._host:
            sub = self._subset_for(positive)
            active, X, S, S2, XX = sub.active, sub.X, sub.S, sub.S2, sub.XX
            n_active = X.shape[1]
            va = v if active is None else v[active]
            h = va * va * -0.5
            # the candidates' side of the kernel GEMM, [v s, 1, -|v s|^2 / 2], in its buffer
            sa = sub.sa
            np.multiply(S, va, out=sa[:, :n_active])
            np.matmul(S2, h, out=sa[:, n_active + 1])
            bufs = sub.bufs
        else:
            active = xp.nonzero(positive)[0]
            n_active = int(active.shape[0])
            if n_active < D:
                X, S, S2, va = xp.take(self.X, active, axis=1), xp.take(self.S, active, axis=1), \
                    xp.take(self.S2, active, axis=1), xp.take(v, active)
                XX = xp.take(self.XX, xp.concat([self._column_0, active + 1, active + 1 + D]), axis=1)
            else:
                X, S, S2, va, XX = self.X, self.S, self.S2, v, self.XX
                active = None
            h = va * va * -0.5
            sa = _augment(S * va, S2 @ h, False, xp, ones=self._ones_J)
            bufs = [(K_buf, None) for K_buf in self._kernel_bufs]
        if self._per_class:
            wS = xp.concat([w[:, None], w[:, None] * S], axis=1)  # (J, n_active + 1)
            feats, partial = (XX, X, va, h, sa, wS), self._partial_per_class
        else:
            wm = self.member * w[:, None]  # (J, n_classes): w_j in the column of its class
            feats, partial = (XX, X, va, h, sa, wm), self._partial_class_free
        n_chunks = len(self._chunks)
        if self._pool is None:
            groups = [range(n_chunks)]
            parts = [partial(groups[0], bufs[0], feats)]
        else:
            groups = [range(i, n_chunks, self.n_threads) for i in range(self.n_threads)]
            parts = list(self._pool.map(partial, groups, bufs, [feats] * self.n_threads))
        # Each thread returns its chunks' terms; summed in chunk order, the result does not depend
        # on how many threads there are (the thread count follows the BLAS limits of the moment).
        by_chunk = {i: terms for group, part in zip(groups, parts) for i, terms in zip(group, zip(*part))}
        ordered = list(zip(*(by_chunk[i] for i in range(n_chunks))))
        value = 0.0
        for loss in ordered[0]:
            value += loss
        sums = [value] + [_total(list(terms)) if terms[0] is not None else 0.0 for terms in ordered[1:]]
        if self._per_class:
            value, cw, gx = sums
        else:
            value, M = sums
            cw = M[:, 0]
            # sum_n x_nd^2 g_n - 2 sum_n x_nd P_nd = sum_j w_j [(G^T X^2)_jd - 2 s_jd (G^T X)_jd]
            gx = w @ (M[:, 1 : n_active + 1] - (sub.two_S if self._host else 2.0 * S) * M[:, n_active + 1 :])
        return value, _full_gradient(va * (gx + (w * cw) @ S2), cw, active, v, xp)

    def _value_and_grad_single(self, theta):
        """:meth:`value_and_grad` of a small problem on the host: one row chunk, one thread.

        The same array operations in the same order as the general path with the class-free
        reduction and the gathered ``G`` (so the same rounding), without its per-chunk calls and
        bookkeeping: small problems are bound by the count of operations, and the search over a
        prototype set's penalties evaluates them tens of thousands of times.
        """
        D = self.n_features
        v, w = theta[:D], theta[D:]
        sub = self._subset_for(v > 0)
        active, X, S2, XX = sub.active, sub.X, sub.S2, sub.XX
        d = X.shape[1]
        va = v if active is None else v[active]
        h = va * va * -0.5
        # the kernel GEMM's candidates' side [v s, 1, -|v s|^2 / 2] and rows' side [v x, -|v x|^2 / 2, 1]
        sa = sub.sa
        np.multiply(sub.S, va, out=sa[:, :d])
        np.matmul(S2, h, out=sa[:, d + 1])
        K_buf, ua = sub.bufs[0]
        np.multiply(X, va, out=ua[:, :d])
        np.matmul(XX[:, 1 : d + 1], h, out=ua[:, d])
        K = np.matmul(ua, sa.T, out=K_buf)
        np.exp(K, out=K)
        q = self.q0 + K @ (self.member * w[:, None])
        T = q @ self._ones_K
        qy = q.reshape(-1)[self._true_cells[0]]
        c = self.coef
        A = self.onehot * (c / qy)[:, None] - (c / T)[:, None]
        value = -float(c @ np.log(qy / T))
        np.multiply(K, A[:, self._target], out=K)  # G
        M = K.T @ XX
        cw = M[:, 0]
        gv = va * (w @ (M[:, 1 : d + 1] - sub.two_S * M[:, d + 1 :]) + (w * cw) @ S2)
        return value, _full_gradient(gv, cw, active, v, self.xp)

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
            XX = np.take(self.XX, np.concatenate([[0], active + 1, active + 1 + D]), axis=1)
        d = X.shape[1]
        # the ones column of each side of the augmented GEMM is written here once
        sa = np.ones((self.n_candidates, d + 2), dtype=self.dtype)
        bufs = [(K_buf, np.ones((self._n_buf, d + 2), dtype=self.dtype)) for K_buf in self._kernel_bufs]
        return _FeatureSubset(active, X, S, S2, XX, 2.0 * S, sa, bufs)

    def _kernel(self, X, X2, va, h, sa, buf):
        """Kernel of one row chunk against the candidates, written into ``buf``: (rows, J).

        One GEMM, ``[v x, -|v x|^2 / 2, 1] @ [v s, 1, -|v s|^2 / 2]' = -|v (x - s)|^2 / 2``
        (``h = -v^2 / 2``; ``sa`` is the candidates' side), then an in-place ``exp``. ``buf`` is
        the thread's (kernel buffer, rows' side buffer); on the host (numpy) the rows' side is
        written into the latter, elsewhere it is None and the rows' side is built.
        """
        n = X.shape[0]
        K_buf, ua_buf = buf
        if ua_buf is not None:
            d = X.shape[1]
            ua = ua_buf[:n]
            np.multiply(X, va, out=ua[:, :d])
            np.matmul(X2, h, out=ua[:, d])
            K = np.matmul(ua, sa.T, out=K_buf[:n])
            return np.exp(K, out=K)
        ua = _augment(X * va, X2 @ h, True, self.xp, ones=self._ones_R[:n])
        return ops.exp_inplace(ops.matmul_into(ua, sa.T, K_buf[:n], self.xp), self.xp)

    def _loss_and_weights(self, i, scores):
        """Chunk ``i``'s share of the value and its ``A`` (see the class docstring).

        ``scores`` of shape (rows, n_classes) holds the batch's class sums ``Q``.
        """
        start, stop = self._chunks[i]
        q = self.q0[start:stop] + scores
        T = q @ self._ones_K
        qy = q.reshape(-1)[self._true_cells[i]]
        c = self.coef[start:stop]
        A = self.onehot[start:stop] * (c / qy)[:, None] - (c / T)[:, None]
        return -float(c @ self.xp.log(qy / T)), A

    def _partial_class_free(self, chunks, buf, feats):
        """Per chunk of ``chunks``, in order: the value and ``G^T [1, X^2, X]`` (lists).

        ``G[n, j] = A[n, y_j] K_nj`` is formed in the kernel buffer; column 0 of the product is
        ``c_j``, and the caller turns the others into the v-gradient bracket.
        """
        xp = self.xp
        XX_all, X_all, va, h, sa, wm = feats
        d = va.shape[0]
        value, M = [], []
        for i in chunks:
            start, stop = self._chunks[i]
            XX = XX_all[start:stop]
            K = self._kernel(X_all[start:stop], XX[:, 1 : d + 1], va, h, sa, buf)
            loss, A = self._loss_and_weights(i, K @ wm)
            value.append(loss)
            # K becomes G in place: G[n, j] = A[n, y_j] K_nj
            if self._gather_G:
                np.multiply(K, A[:, self._target], out=K)
            else:
                for k, (a, b) in enumerate(self.blocks):
                    if b > a:
                        ops.multiply_inplace(K[:, a:b], A[:, k : k + 1], xp)
            M.append(K.T @ XX)
        return value, M

    def _partial_per_class(self, chunks, buf, feats):
        """Per chunk of ``chunks``, in order: value, ``c_j`` and the v-gradient bracket (lists; the
        bracket is None without active features).

        The bracket is ``sum_n x_nd^2 g_n - 2 sum_n x_nd P_nd`` (see the class docstring); the
        candidates' part ``sum_j s_jd^2 w_j c_j`` is added once by the caller. Per class block k,
        one GEMM ``K_k @ (w S)_k`` gives ``[Q_k, K_k (w S)_k]`` and one GEMV ``A_k @ K_k`` gives
        ``c_j``: two reads of the kernel chunk after the ``exp``.
        """
        xp = self.xp
        XX_all, X_all, va, h, sa, wS = feats
        d = va.shape[0]
        value, cw, gx = [], [], []
        for i in chunks:
            start, stop = self._chunks[i]
            X, X2 = X_all[start:stop], XX_all[start:stop, 1 : d + 1]
            K = self._kernel(X, X2, va, h, sa, buf)
            # per class k: [Q_k, K_k @ (w S)_k], stacked to (rows, n_classes, n_active + 1)
            Z = xp.stack([K[:, a:b] @ wS[a:b] for a, b in self.blocks], axis=1)
            loss, A = self._loss_and_weights(i, Z[:, :, 0])
            value.append(loss)
            cw.append(xp.concat([A[:, k] @ K[:, a:b] for k, (a, b) in enumerate(self.blocks)]))
            if d:
                # Y[:, 0] = g_n = sum_k A_nk Q_nk and Y[:, 1:] = P = sum_k A_nk (K_k @ (w S)_k)
                Y = xp.einsum("nk,nkd->nd", A, Z)
                gx.append(Y[:, 0] @ X2 - 2.0 * xp.einsum("nd,nd->d", X, Y[:, 1:]))
            else:
                gx.append(None)
        return value, cw, gx


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


def _total(parts):
    """Sum of a non-empty list of arrays (per-chunk partial sums)."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total
