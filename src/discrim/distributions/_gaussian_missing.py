"""Full and tied Gaussian components seen through a mask of observed entries.

One computation serves the E-step (the marginal density of each row's observed entries), the
M-step (conditional means and covariances of the missing entries) and imputation. With the
precision ``P = Sigma^-1``, ``z = x - mu`` holding any value ``z_m`` on a row's missing features
``m``, and ``y = P z``:

- ``z_o' Sigma_oo^-1 z_o = z' P z - y_m' P_mm^-1 y_m`` (the Schur complement of ``P_mm``: ``z' P z``
  exceeds its minimum over ``z_m`` by ``y_m' P_mm^-1 y_m``),
- ``log |Sigma_oo| = log |Sigma| + log |P_mm|``,
- ``E[x_m | x_o] = mu_m + z_m - P_mm^-1 y_m`` and ``Cov[x_m | x_o] = P_mm^-1``.

Here ``z_m = 0`` (the missing entries at the component's mean): every term is then of the size of
the observed entries' distances, ``y_m = P_mo z_o``, and nothing cancels. (A fill ``z_m`` far from
0 made ``z_m`` and ``P_mm^-1 y_m`` large and their difference, the conditional mean, lose digits: the
observed mean of the rows' feature, the fill before, was 0 for a feature missing in every row
scored, and far from ``mu`` beside an outlier, so that near 1e8 the marginal lost 13 of its 14
digits and a row's density depended on the other rows of the call.)

``z' P z`` and ``y`` are one batched GEMM over all rows and components, as for complete data.
``P_mm^-1`` and ``log |P_mm|`` depend only on the set of missing features, so they are computed
once per pattern and component (one batched inverse per number of missing features) and
gathered for the rows. The rows' own work is then ``c^2`` multiply-adds per row and component
for ``c`` missing features, as a few vector operations over the rows of each count ``c``: no loop
over patterns, and no ``d x d`` matrix per row (the ``d x d`` form of the same correction, the
precision of the observed block padded with zeros, would gather ``d^2`` numbers per row and
component instead of ``c^2``).
"""

import threading

import numpy as np

from discrim.backend import ops

__all__ = ["BlockConditioning", "BufferPool", "ConditionedRows", "MissingPatterns", "block_entries", "centred_rows_t",
           "pattern_inverses", "pattern_table"]

_LOG_2PI = float(np.log(2 * np.pi))
_TABLE_BYTES = 2  # rows of up to 16 features are keyed through a table of 2**16 entries, without a sort
# A block's conditional scatter comes from a dense table of the pattern inverses (built once per
# parameter set for all blocks) up to this many entries (2 MB), else from a scatter of each inverse.
_DENSE_SCATTER_ENTRIES = 1 << 18


class MissingPatterns:
    """The rows of a mask grouped by their set of missing features.

    Parameters
    ----------
    mask : ndarray of shape (n_samples, n_features) of bool
        True where an entry is observed.
    distinct : tuple of (ndarray, ndarray) or None, default=None
        ``(code, table)`` from :func:`pattern_table` of rows that include these (the rows of a
        whole data set, of which ``mask`` is a block): ``code`` (n_samples,) each row's pattern in
        ``table``, and the groups below list every pattern of the table. Blocks of one table then
        share the ``missing`` arrays, and with them the pattern inverses of a parameter set.
        None: the table of ``mask`` alone.
    shared : dict or None, default=None
        Where quantities of the table itself (not of this block's rows) are kept: one dict for all
        the blocks of one table (:meth:`of_blocks`), so that each is built and held once for the
        table, not once per block (with a pattern per row, that would grow as the number of blocks
        times the number of rows). None: this instance's own.

    Attributes
    ----------
    n_observed : ndarray of shape (n_samples,) of int
    unobserved : ndarray of int
        The rows with no observed entry.
    groups : list of (rows, missing, pattern)
        One entry per number c > 0 of missing features: ``rows`` (n_c,) the rows with c missing
        features (ordered by pattern), ``missing`` (n_patterns, c) the sorted missing features of
        each distinct pattern and ``pattern`` (n_c,) the pattern of each row (non-decreasing).
    order : ndarray of shape (n_samples,) of int or None
        The rows in the order in which conditioning lays them out (:func:`centred_rows_t`): the
        complete rows, then the rows of each group in the group's order. None: every row complete.
    inverse : ndarray of shape (n_samples,) of int or None
        Each row's place in ``order``.
    positions : list of ndarray of shape (c, n_c)
        Per group, the flat positions ``feature * n_samples + place`` of the rows' missing entries
        in a C-ordered (n_features, n_samples) array of the rows transposed in ``order``:
        ``positions[g][j]`` is each row's j-th.
    code : ndarray of shape (n_samples,) of int
        Each row's pattern in the table (complete rows included).
    table_ids : list of ndarray of shape (n_patterns,) of int
        Per group, the table's index of each of its patterns.
    counts : list of ndarray of shape (n_patterns,) of int
        Per group, the number of its rows with each of its patterns: a pattern's quantities are
        laid out for its rows by ``np.repeat`` (the rows lie in pattern order), several times
        faster than a gather by ``pattern``.
    n_patterns : int
        The number of patterns in the table.
    table_key : tuple or None
        Identifies the table and the counts of missing features of ``groups``: blocks with equal
        keys share every quantity derived from their groups (None: no incomplete row).
    shape : tuple of int
        ``(n_samples, n_features)``.
    """

    def __init__(self, mask, distinct=None, shared=None):
        miss = ~np.asarray(mask, dtype=bool)
        n, d = miss.shape
        count = miss.sum(axis=1)
        self.n_observed = d - count
        self.unobserved = np.flatnonzero(count == d)
        self.shape = (n, d)
        self.groups, self.positions, self.table_ids, self.counts = [], [], [], []
        self.code, table = pattern_table(~miss) if distinct is None else distinct
        self.n_patterns = table.shape[0]
        self._by_components = {}  # the rows' positions by number of components (flat_positions)
        self._shared = {} if shared is None else shared  # the table's (scatter_positions)
        incomplete = np.flatnonzero(count > 0)
        self.table_key = self.order = self.inverse = None
        if incomplete.shape[0] == 0:
            return
        code = self.code[incomplete]
        placed = n - incomplete.shape[0]  # the rows laid out so far (the complete rows come first)
        table_count = table.sum(axis=1)
        row_count = count[incomplete]
        for c in np.unique(table_count[table_count > 0]):
            ids = np.flatnonzero(table_count == c)
            at = np.flatnonzero(row_count == c)
            if distinct is not None and at.shape[0] == 0:
                continue
            local = np.full(table.shape[0], -1)
            local[ids] = np.arange(ids.shape[0])
            missing = np.nonzero(table[ids])[1].reshape(ids.shape[0], c)  # row-major: sorted per pattern
            # the group's rows in the order of their patterns (see ``order``)
            by_pattern = np.argsort(local[code[at]], kind="stable")
            rows, pattern = incomplete[at[by_pattern]], local[code[at[by_pattern]]]
            slots = np.arange(placed, placed + rows.shape[0])
            placed += rows.shape[0]
            self.groups.append((rows, missing, pattern))
            self.positions.append(np.ascontiguousarray((missing[pattern] * n + slots[:, None]).T))
            self.table_ids.append(ids)
            self.counts.append(np.bincount(pattern, minlength=ids.shape[0]))
        # the complete rows first, then each group's in pattern order: a pattern's rows lie side by
        # side, so that the gathers and scatters of their missing entries read and write runs of
        # memory, and so do the gathers of their pattern's quantities (twice as fast as in row order)
        self.order = np.concatenate([np.flatnonzero(count == 0)] + [rows for rows, _, _ in self.groups])
        self.inverse = np.empty(n, dtype=np.intp)
        self.inverse[self.order] = np.arange(n)
        # blocks of one table with the same counts of missing features have the same groups
        self.table_key = (table.shape, table.tobytes(), tuple(missing.shape[1] for _, missing, _ in self.groups))

    def pattern_totals(self, weights):
        """The sum of ``weights`` over the rows of every pattern of the table, per component.

        Parameters
        ----------
        weights : ndarray of shape (n_components, n_samples)

        Returns
        -------
        totals : ndarray of shape (n_components, n_patterns)
        """
        k, t = weights.shape[0], self.n_patterns
        index = (self.code + (np.arange(k) * t)[:, None]).reshape(-1)
        totals = np.bincount(index, weights=np.asarray(weights, dtype=np.float64).reshape(-1), minlength=k * t)
        return totals.reshape(k, t)

    def flat_positions(self, n_components):
        """Per group, where its rows lie in arrays with a leading component axis.

        Computed once per number of components: EM asks every iteration for the same.

        Parameters
        ----------
        n_components : int

        Returns
        -------
        positions : list of ndarray of int
            Per group, of shape (c, n_components, n_c): the flat positions of its rows' missing
            entries in a C-ordered (n_components, n_features, n_samples) array, the rows in
            ``order``.
        """
        found = self._by_components.get(n_components)
        if found is None:
            n, d = self.shape
            entries = (np.arange(n_components) * (n * d))[:, None]
            found = [at[:, None, :] + entries for at in self.positions]
            self._by_components[n_components] = found
        return found

    def scatter_positions(self, n_components, per_pattern=False):
        """Per group, where each (pattern, component) inverse adds to a (K, d, d) scatter.

        Computed once per number of components for all the blocks of a table (``shared``): they
        depend on the table's patterns only.

        Parameters
        ----------
        n_components : int
        per_pattern : bool, default=False
            Positions in a (n_components, n_patterns, d * d) array instead: every pattern of the
            table its own d x d matrix.

        Returns
        -------
        positions : list of ndarray of int
            Per group, of shape (c, c, n_components, n_patterns): the flat position of entry
            ``(i, j)`` of pattern ``p``'s inverse under component ``k`` in a C-ordered
            (n_components, n_features, n_features) array (or the array of ``per_pattern``).
        """
        d, k = self.shape[1], n_components
        component_stride = d * d * (self.n_patterns if per_pattern else 1)
        found = []
        for (_, missing, _), ids in zip(self.groups, self.table_ids):
            # a group is the table's patterns with its count of missing features: one key per count
            key = ("scatter", per_pattern, missing.shape, n_components)
            where = self._shared.get(key)
            if where is None:  # blocks in threads may both build it: equal arrays, either kept
                where = block_entries(missing, d)[:, :, None, :] + (np.arange(k) * component_stride)[:, None]
                if per_pattern:
                    where += ids * (d * d)
                self._shared[key] = where
            found.append(where)
        return found

    @classmethod
    def of_blocks(cls, mask, slices):
        """The patterns of every block of rows of ``mask``, from one table of the whole mask.

        Parameters
        ----------
        mask : ndarray of shape (n_samples, n_features) of bool
        slices : list of slice
            The blocks' rows.

        Returns
        -------
        patterns : list of MissingPatterns
            One per slice, numbered in one table: every block of a count of missing features has
            the same ``missing`` array.
        """
        mask = np.asarray(mask, dtype=bool)
        code, table = pattern_table(mask)
        shared = {}
        return [cls(mask[sl], (code[sl], table), shared) for sl in slices]


def pattern_table(mask):
    """The distinct sets of missing features of a mask's rows, and each row's set.

    Parameters
    ----------
    mask : ndarray of shape (n_samples, n_features) of bool
        True where observed.

    Returns
    -------
    code : ndarray of shape (n_samples,) of int
        Each row's index in ``table``.
    table : ndarray of shape (n_patterns, n_features) of bool
        True where missing, one row per distinct pattern.
    """
    return _distinct_rows(~np.asarray(mask, dtype=bool))


def _distinct_rows(miss):
    """``(code, distinct)``: each row's index among the distinct rows of a bool matrix, and those rows."""
    d = miss.shape[1]
    # C order whatever the mask's (a Fortran-ordered X, as pandas often gives, packs to Fortran
    # order): the keys below view each row's bytes as one number
    packed = np.ascontiguousarray(np.packbits(miss, axis=1))
    if packed.shape[1] <= _TABLE_BYTES:
        # a key below 2**16 per row: a lookup table numbers the keys in one pass, without a sort
        keys = packed[:, 0].astype(np.intp)
        if packed.shape[1] > 1:
            keys = (keys << 8) | packed[:, 1]
        table = np.zeros(1 << (8 * packed.shape[1]), dtype=np.intp)
        table[keys] = 1
        present = np.flatnonzero(table)
        table[present] = np.arange(present.shape[0])
        as_bytes = np.stack([present >> 8, present & 255], axis=1)[:, -packed.shape[1]:].astype(np.uint8)
        return table[keys], np.unpackbits(as_bytes, axis=1, count=d).astype(bool)
    if packed.shape[1] <= 8:
        keys = np.pad(packed, ((0, 0), (0, 8 - packed.shape[1]))).view(np.uint64).reshape(-1)
    else:
        keys = packed.view(np.dtype((np.void, packed.shape[1]))).reshape(-1)
    _, first, code = np.unique(keys, return_index=True, return_inverse=True)
    return code.reshape(-1), miss[first]


def block_entries(missing, n_features):
    """Where each pattern's missing block lies in a flattened (n_features, n_features) matrix.

    Parameters
    ----------
    missing : ndarray of shape (n_patterns, c) of int
        The missing features of each pattern.
    n_features : int

    Returns
    -------
    entries : ndarray of shape (c, c, n_patterns) of int
        ``entries[i, j, p] = missing[p, i] * n_features + missing[p, j]``.
    """
    return missing.T[:, None, :] * n_features + missing.T[None, :, :]


def pattern_inverses(precision, patterns):
    """``P_mm^-1`` and ``log |P_mm|`` of each pattern's missing block, by the sweep operator.

    Sweeping ``P_mm`` on each of its pivots in turn (Gauss-Jordan elimination without pivoting,
    stable for a positive definite matrix: the pivots are Schur complements, all positive) turns it
    into ``-P_mm^-1``, and the pivots multiply to its determinant. The sweeps run on all patterns and
    components at once, ``c`` steps of vector operations: a batched LAPACK inverse and Cholesky
    factor would instead make one call per small matrix. The symmetric form of the sweep (row and
    column of a pivot scaled alike) takes its column from its row: fewer operations per step.

    Parameters
    ----------
    precision : ndarray of shape (Kp, n_features, n_features)
    patterns : ndarray of shape (n_patterns, c) of int
        The missing features of each pattern.

    Returns
    -------
    inverse : ndarray of shape (c, c, Kp, n_patterns)
        Pattern and component along the last, contiguous axes: ``inverse[i, j]`` is gathered for
        rows as one vector.
    log_det : ndarray of shape (Kp, n_patterns)
    """
    c = patterns.shape[1]
    kp, d = precision.shape[0], precision.shape[1]
    flat = np.asarray(precision, dtype=np.float64).reshape(kp, d * d)
    entries = block_entries(patterns, d)
    A = np.take(flat, entries, axis=1).transpose(1, 2, 0, 3).copy()  # (c, c, Kp, P)
    if c == 1:
        return 1.0 / A, np.log(A[0, 0])
    pivots = np.empty((c,) + A.shape[2:])
    for q in range(c):
        pivot = pivots[q]
        pivot[...] = A[q, q]
        row = A[q] / pivot
        A -= A[q][:, None] * row[None, :]  # A[q] is the pivot's column too (A stays symmetric)
        A[q] = row
        A[:, q] = row
        np.divide(-1.0, pivot, out=A[q, q])
    log_det = np.log(pivots).sum(axis=0)
    # -P_mm^-1, symmetric to rounding: the mean of it and its transpose, negated
    A += A.transpose(1, 0, 2, 3)
    A *= -0.5
    return A, log_det


def centred_rows_t(X, patterns, mask, center):
    """The rows transposed (in the patterns' order), less ``center``, and 0 where missing.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    patterns : MissingPatterns
        The rows' missing features.
    mask : ndarray of shape (n_samples, n_features) of bool
        True where observed.
    center : ndarray of shape (n_features,)
        Subtracted from every row: a point near the component means, so that a missing entry's
        ``z_m = center - mu`` is small (see the module docstring).

    Returns
    -------
    rows_t : ndarray of shape (n_features, n_samples)
        C-ordered, the rows in ``patterns.order``.
    center : ndarray of shape (n_features,)
        ``center``, as float64.
    """
    n, d = X.shape
    center = np.asarray(center, dtype=np.float64)
    if patterns.order is not None:
        X = X[patterns.order]
    rows_t = np.subtract(X.T, center[:, None], out=np.empty((d, n)))  # C-ordered (numpy would keep X's order)
    if patterns.positions:
        rows_t.reshape(-1)[np.concatenate(patterns.positions, axis=None)] = 0.0
    return rows_t, center


class ConditionedRows:
    """Rows with missing entries, each conditioned on its observed entries under every component.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Missing entries hold any value (NaN included).
    patterns : MissingPatterns
        The rows' missing features.
    mask : ndarray of shape (n_samples, n_features) of bool
        True where observed.
    mean : ndarray of shape (n_components, n_features)
    precision : ndarray of shape (1 or n_components, n_features, n_features)
        ``Sigma_k^-1``; one matrix for all components with a tied covariance.
    log_det_cov : ndarray of shape (1 or n_components,)
        ``log |Sigma_k|``.
    cache : callable or None, default=None
        ``cache(key, compute)`` -> ``compute()``, computed once per parameter set (e.g.
        :meth:`Params._cached`): the E- and M-step and the blocks of a fit that share a pattern
        table then compute its pattern inverses once; None: computed here.
    pool : BufferPool or None, default=None
        Where the two (n_components, n_features, n_samples) arrays come from (and go back to, see
        :meth:`release`); None: fresh arrays.
    rows_t : tuple of two ndarrays or None, default=None
        :func:`centred_rows_t` of ``X`` (the attribute of an earlier instance on the same rows),
        kept from one parameter set to the next; None: computed here.

    Attributes
    ----------
    marginal : tuple of two ndarrays of shape (n_samples, n_components)
        The Mahalanobis distance of each row's observed entries and the log-determinant of their
        marginal covariance.
    log_prob : ndarray of shape (n_samples, n_components)
        Log marginal density of each row's observed entries (0 for a row with none).
    completed : ndarray of shape (n_components, n_samples, n_features)
        The rows with their missing entries replaced by the conditional means.
    centred_t : ndarray of shape (n_components, n_features, n_samples)
        ``completed`` less each component's mean, transposed (samples along the contiguous axis),
        the rows in ``order``.
    order : ndarray of shape (n_samples,) of int or None
        The rows of ``centred_t`` (``patterns.order``; None: every row complete, in its own order).
    """

    def __init__(self, X, patterns, mask, mean, precision, log_det_cov, cache=None, pool=None, rows_t=None):
        X = np.asarray(X, dtype=np.float64)
        mask = np.asarray(mask)
        mask = mask if mask.dtype == bool else mask != 0
        mean = np.asarray(mean, dtype=np.float64)
        n, d = X.shape
        k = mean.shape[0]
        self._patterns, self._mean, self._X, self._mask, self._pool = patterns, mean, X, mask, pool
        flat = patterns.flat_positions(k)
        # Rows along the last, contiguous axis: (K, d, n), so that every step below runs over long
        # rows of samples and the M-step's scatter of each component is one contiguous (d, n) block.
        # z_k = x - mu_k, 0 on a row's missing entries (see the module docstring: with
        # v = P_mm^-1 y_m, -v is the conditional mean less mu and z' P z - y_m' v the observed
        # entries' Mahalanobis distance). The rows less a centre near the means are kept from one
        # parameter set to the next (``rows_t``); the missing entries are zeroed per parameter set,
        # a scatter of the missing entries only.
        self.rows_t = centred_rows_t(X, patterns, mask, mean.mean(axis=0)) if rows_t is None else rows_t
        xt, center = self.rows_t
        empty = np.empty if pool is None else pool.take
        z, y = empty((k, d, n)), empty((k, d, n))
        np.add(xt[None], (center - mean)[:, :, None], out=z)
        y_flat, z_flat = y.reshape(-1), z.reshape(-1)
        for at in flat:
            z_flat[at] = 0.0
        np.matmul(precision, z, out=y)  # P_k z_k: one GEMM per component
        # the pattern inverses only now: blocks in threads that share them (inverses cached on the
        # parameters) compute them once, while the other blocks do the work above
        # (Kp, d, d) precision: a tied covariance's pattern inverses are shared by all components
        self._cache = cache = cache or (lambda key, compute: compute())
        self._inverses = [cache(("pattern inverses", missing.shape, missing.tobytes()),
                                lambda m=missing: pattern_inverses(precision, m))
                          for _, missing, _ in patterns.groups]
        # per group of rows with c missing features: v = P_mm^-1 y_m (c, K, n_c), each row's P_mm^-1
        # repeated from its pattern's, and -v written over z_m = 0: a few vector operations per
        # group, the gathers and scatters of z and y each one index of flat positions in a flat
        # view: the gather by np.take, which runs without the GIL (blocks in threads then gather at
        # once; a fancy index holds it) and as fast; the scatters by a fancy index (np.put is twice
        # as slow)
        log_det_table = np.zeros((precision.shape[0], patterns.n_patterns))  # log |P_mm| of every pattern
        for at, ids, counts, (inv, log_det_p) in zip(flat, patterns.table_ids, patterns.counts, self._inverses):
            y_m = np.take(y_flat, at)  # at: (c, K, n_c)
            rows_inv = np.repeat(inv, counts, axis=3)  # (c, c, Kp, n_c)
            if rows_inv.shape[2] == k:
                v = np.einsum("ijkn,jkn->ikn", rows_inv, y_m)
            else:  # tied: one inverse per row for every component
                v = np.einsum("ijn,jkn->ikn", rows_inv[:, :, 0], y_m)
            # the conditional mean less mu: z becomes the completed rows less the mean
            z_flat[at] = np.negative(v, out=v)
            log_det_table[:, ids] = log_det_p
        # z' P z less the Schur complement's correction y_m' P_mm^-1 y_m is the completed rows' z
        # (z_m less v) times y = P z (z_m itself): the product of the two, per row and component
        quad = np.einsum("kdn,kdn->kn", z, y)
        if patterns.inverse is not None:
            quad = np.take(quad, patterns.inverse, axis=1)  # the rows back in their own order
        log_det = np.take(log_det_table, patterns.code, axis=1)  # 0 for a complete row
        log_det += np.asarray(log_det_cov, dtype=np.float64).reshape(-1, 1)
        if log_det.shape[0] != k:  # tied: one covariance for all components
            log_det = np.repeat(log_det, k, axis=0)
        nothing = patterns.unobserved  # density 1, without rounding
        quad[:, nothing], log_det[:, nothing] = 0.0, 0.0
        if pool is not None:
            pool.give(y)
        self._quad, self._log_det, self._centred_t = quad, log_det, z

    def release(self):
        """Give the completed rows' array back to the pool they came from; the rows are gone after."""
        if self._pool is not None and self._centred_t is not None:
            self._pool.give(self._centred_t)
        self._centred_t = None

    @property
    def marginal(self):
        """``(maha, log_det)``, both (n_samples, n_components): the Mahalanobis distance of each row's
        observed entries and ``log |Sigma_oo|`` of their marginal (both 0 for a row with none)."""
        return self._quad.T, self._log_det.T

    @property
    def log_prob(self):
        out = self._patterns.n_observed[None, :] * _LOG_2PI + self._log_det
        out += self._quad
        out *= -0.5
        return out.T

    @property
    def centred_t(self):
        """The completed rows less each component's mean, transposed: (n_components, n_features, n_samples).

        The rows in :attr:`order`."""
        return self._centred_t

    @property
    def order(self):
        """The rows of :attr:`centred_t`: ``patterns.order`` (None: every row complete, in its own order)."""
        return self._patterns.order

    @property
    def completed(self):
        completed = self._centred_t + self._mean[:, :, None]
        if self.order is not None:
            completed = np.take(completed, self._patterns.inverse, axis=2)
        completed = completed.transpose(0, 2, 1)
        np.copyto(completed, self._X, where=self._mask)  # the observed entries exactly, not (x - mu) + mu
        return completed

    def conditional_scatter(self, wr_t):
        """``sum_i wr_ik Cov_k[x_i,m | x_i,o]`` on the missing block, zero elsewhere.

        Parameters
        ----------
        wr_t : ndarray of shape (n_components, n_samples)
            Weighted responsibilities.

        Returns
        -------
        scatter : ndarray of shape (n_components, n_features, n_features)
        """
        k, d, _ = self._centred_t.shape
        if not self._inverses:  # every row complete
            return np.zeros((k, d, d))
        patterns = self._patterns
        totals = patterns.pattern_totals(wr_t)  # the responsibility of every (component, pattern)
        kp = self._inverses[0][0].shape[2]
        if kp * patterns.n_patterns * d * d <= _DENSE_SCATTER_ENTRIES:
            # every (component, pattern)'s inverse in a d x d matrix, once per parameter set for the
            # blocks of one table: a block's share is then K products, where the scatter below makes
            # a dozen calls per count of missing features (bincount holding the GIL)
            table = self._cache(("embedded pattern inverses", patterns.table_key), self._embedded_inverses)
            if kp == 1:
                return ops.matmul(totals, table[0]).reshape(k, d, d)
            return np.stack([ops.matmul(totals[j], table[j]) for j in range(k)]).reshape(k, d, d)
        out = np.zeros(k * d * d)
        for where, ids, (inv, _) in zip(patterns.scatter_positions(k), patterns.table_ids, self._inverses):
            # P_mm^-1 of every (component, pattern) times its responsibility, scattered to (k, i, j)
            weight = totals[:, ids]
            component, pattern = np.nonzero(weight)
            if 2 * component.shape[0] < weight.size:
                # labelled rows weigh under their own class only (a discriminant's EM over rows with
                # missing values): only the pairs of positive weight, a 1/K share of them there
                inv = inv[:, :, component if inv.shape[2] > 1 else 0, pattern]
                where, weight = where[:, :, component, pattern], weight[component, pattern]
            out += np.bincount(where.reshape(-1), weights=(weight * inv).reshape(-1), minlength=k * d * d)
        return out.reshape(k, d, d)

    def _embedded_inverses(self):
        """``P_mm^-1`` of every (component, pattern) of the table in a d x d matrix: (Kp, n_patterns, d * d)."""
        patterns, d = self._patterns, self._centred_t.shape[1]
        kp = self._inverses[0][0].shape[2]
        table = np.zeros(kp * patterns.n_patterns * d * d)
        for where, (inv, _) in zip(patterns.scatter_positions(kp, per_pattern=True), self._inverses):
            table[where] = inv
        return table.reshape(kp, patterns.n_patterns, d * d)

    def draw(self, components, rng):
        """The rows with their missing entries drawn from one component's conditional distribution.

        Parameters
        ----------
        components : ndarray of shape (n_samples,) of int
            The component each row's draw comes from.
        rng : numpy.random.Generator

        Returns
        -------
        rows : ndarray of shape (n_samples, n_features)
        """
        out = self.completed[components, np.arange(components.shape[0])]
        for (rows, missing, pattern), (inv, _) in zip(self._patterns.groups, self._inverses):
            # a tied covariance has one conditional covariance per pattern for every component
            cov = inv[:, :, components[rows] if inv.shape[2] > 1 else 0, pattern].transpose(2, 0, 1)  # (n_c, c, c)
            noise = (np.linalg.cholesky(cov) @ rng.standard_normal(cov.shape[:2])[..., None])[..., 0]
            at, block = missing[pattern], out[rows]
            np.put_along_axis(block, at, np.take_along_axis(block, at, axis=1) + noise, axis=1)
            out[rows] = block
        return out


class BufferPool:
    """Float64 arrays that a fit's blocks take and give back, reused from one iteration to the next.

    Every iteration conditions every block again, with arrays of the same sizes. Freed, they
    would go back to the operating system and be faulted in again at the next iteration (glibc
    returns the top of a thread's arena once it exceeds the trim threshold, which the two
    (K, n, d) arrays of a block do). The pool holds no more arrays than were in use at once.
    """

    def __init__(self):
        self._free = []
        self._lock = threading.Lock()  # blocks run in threads

    def take(self, shape):
        """An uninitialised C-ordered array of ``shape``: a view of the smallest free array that holds it.

        Parameters
        ----------
        shape : tuple of int

        Returns
        -------
        array : ndarray of float64
        """
        size = int(np.prod(shape))
        with self._lock:
            fits = [i for i, base in enumerate(self._free) if base.shape[0] >= size]
            base = self._free.pop(min(fits, key=lambda i: self._free[i].shape[0])) if fits else None
        if base is None:
            base = np.empty(size)
        return base[:size].reshape(shape)

    def give(self, array):
        """Give back an array from :meth:`take` (its owner goes back to the free arrays).

        Parameters
        ----------
        array : ndarray
        """
        with self._lock:
            self._free.append(array if array.base is None else array.base)


class BlockConditioning:
    """One block of a fit's rows: its missingness patterns, and its rows conditioned under one parameter set.

    Built once per fit (:meth:`Gaussian.block_rows`). EM's E-step (the densities) and its M-step
    (the statistics) of a block see the same parameters: the E-step conditions the rows and the
    block keeps them; the M-step takes them, and the block lets go of them, so that only the
    blocks in flight hold their completed rows. The block's rows, centred and transposed, are
    kept from the first parameter set to the last.

    Parameters
    ----------
    patterns : MissingPatterns
        The block's rows grouped by their missing features.
    pool : BufferPool
        The fit's arrays, shared by its blocks.
    """

    def __init__(self, patterns, pool):
        self.patterns, self.pool = patterns, pool
        self._last = None  # (params, ConditionedRows) of the last E-step, until its M-step
        self._rows_t = None  # ConditionedRows.rows_t: the same rows under every parameter set

    def conditioned(self, params, condition, keep):
        """``condition(patterns)``, or the rows the E-step conditioned under the same ``params``.

        Parameters
        ----------
        params : Params
            The parameter set (the block holds it, so that ``is`` identifies it).
        condition : callable
            ``condition(patterns, pool, rows_t)`` -> :class:`ConditionedRows` of the block under
            ``params`` (``rows_t`` None the first time).
        keep : bool
            Keep the result for the next call (the E-step); or hand it over (the M-step), and the
            caller then calls its :meth:`~ConditionedRows.release`.

        Returns
        -------
        rows : ConditionedRows
        """
        last = self._last
        if last is not None and last[0] is params:
            rows = last[1]
        else:
            if last is not None:  # conditioned under other parameters and never taken: its arrays go back
                last[1].release()
            rows = condition(self.patterns, self.pool, self._rows_t)
            self._rows_t = rows.rows_t
        self._last = (params, rows) if keep else None
        return rows
