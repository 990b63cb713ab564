"""Full and tied Gaussian components seen through a mask of observed entries.

One computation serves the E-step (the marginal density of each row's observed entries), the
M-step (conditional means and covariances of the missing entries) and imputation. With the
precision ``P = Sigma^-1``, ``z = x - mu`` set to 0 on a row's missing features ``m`` and
``y = P z``:

- ``z_o' Sigma_oo^-1 z_o = z' P z - y_m' P_mm^-1 y_m`` (the Schur complement of ``P_mm``),
- ``log |Sigma_oo| = log |Sigma| + log |P_mm|``,
- ``E[x_m | x_o] = mu_m - P_mm^-1 y_m`` and ``Cov[x_m | x_o] = P_mm^-1``.

``z' P z`` and ``y`` are one batched GEMM over all rows and components, as for complete data.
``P_mm^-1`` and ``log |P_mm|`` depend only on the set of missing features, so they are computed
once per pattern and component (one batched inverse per number of missing features) and
gathered for the rows. The rows' own work is then ``c^2`` multiply-adds per row and component
for ``c`` missing features, as a few vector operations over the rows of each count ``c``: no loop
over patterns, and no ``d x d`` matrix per row (the ``d x d`` form of the same correction, the
precision of the observed block padded with zeros, would gather ``d^2`` numbers per row and
component instead of ``c^2``).
"""

import functools
import weakref

import numpy as np

__all__ = ["ConditionedRows", "MissingPatterns", "pattern_inverses"]

_LOG_2PI = float(np.log(2 * np.pi))
_TABLE_BYTES = 2  # rows of up to 16 features are keyed through a table of 2**16 entries, without a sort


class MissingPatterns:
    """The rows of a mask grouped by their set of missing features.

    Parameters
    ----------
    mask : ndarray of shape (n_samples, n_features) of bool
        True where an entry is observed.

    Attributes
    ----------
    n_observed : ndarray of shape (n_samples,) of int
    groups : list of (rows, missing, pattern)
        One entry per number c > 0 of missing features: ``rows`` (n_c,) the rows with c missing
        features, ``missing`` (n_patterns, c) the sorted missing features of each distinct
        pattern and ``pattern`` (n_c,) the pattern of each row.
    positions : list of ndarray of shape (c, n_c)
        Per group, the flat positions ``row * n_features + feature`` of the rows' missing entries
        in a C-ordered (n_samples, n_features) array: ``positions[g][j]`` is each row's j-th.
    """

    def __init__(self, mask):
        miss = ~np.asarray(mask, dtype=bool)
        n, d = miss.shape
        count = miss.sum(axis=1)
        self.n_observed = d - count
        self.groups, self.positions = [], []
        incomplete = np.flatnonzero(count > 0)
        if incomplete.shape[0] == 0:
            return
        code, pattern_miss = _distinct_rows(miss[incomplete])
        pattern_count = pattern_miss.sum(axis=1)
        row_count = count[incomplete]
        for c in np.unique(pattern_count):
            ids = np.flatnonzero(pattern_count == c)
            local = np.full(pattern_miss.shape[0], -1)
            local[ids] = np.arange(ids.shape[0])
            at = np.flatnonzero(row_count == c)
            rows = incomplete[at]
            missing = np.nonzero(pattern_miss[ids])[1].reshape(ids.shape[0], c)  # row-major: sorted per pattern
            pattern = local[code[at]]
            self.groups.append((rows, missing, pattern))
            self.positions.append(np.ascontiguousarray((missing[pattern] + (rows * d)[:, None]).T))

    @classmethod
    def of(cls, mask):
        """``MissingPatterns(mask)``, remembered while the array that owns ``mask``'s memory lives.

        EM passes the same row blocks of one mask in every iteration: their patterns are found once
        per fit. A block is looked up by where it lies in its owner and found only if its entries
        are still the same (a comparison, a small part of the cost of finding them).
        """
        mask = np.asarray(mask, dtype=bool)
        owner = mask.base if mask.base is not None else mask
        try:
            where = (mask.__array_interface__["data"][0], mask.shape, mask.strides)
            entry = _REMEMBERED.get(id(owner))
            if entry is None or entry[0]() is not owner:
                entry = (weakref.ref(owner, functools.partial(_forget, id(owner))), {})
                _REMEMBERED[id(owner)] = entry
        except TypeError:  # an owner without weak references
            return cls(mask)
        found = entry[1].get(where)
        if found is not None and np.array_equal(found[0], mask):
            return found[1]
        patterns = cls(mask)
        entry[1][where] = (mask.copy(), patterns)
        return patterns


_REMEMBERED = {}  # id(owner) -> (weak reference to the owner, {block's place: (its mask, its patterns)})


def _forget(key, _):
    _REMEMBERED.pop(key, None)


def _distinct_rows(miss):
    """``(code, distinct)``: each row's index among the distinct rows of a bool matrix, and those rows."""
    d = miss.shape[1]
    packed = np.packbits(miss, axis=1)
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
        keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).reshape(-1)
    _, first, code = np.unique(keys, return_index=True, return_inverse=True)
    return code.reshape(-1), miss[first]


def pattern_inverses(precision, patterns):
    """``P_mm^-1`` and ``log |P_mm|`` of each pattern's missing block, by the sweep operator.

    Sweeping ``P_mm`` on each of its pivots in turn (Gauss-Jordan elimination without pivoting,
    stable for a positive definite matrix: the pivots are Schur complements, all positive) turns it
    into its inverse, and the pivots multiply to its determinant. The sweeps run on all patterns and
    components at once, ``c`` steps of vector operations: a batched LAPACK inverse and Cholesky
    factor would instead make one call per small matrix.

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
    by_entry = np.asarray(precision, dtype=np.float64).transpose(1, 2, 0)  # (d, d, Kp)
    A = np.ascontiguousarray(by_entry[patterns.T[:, None, :], patterns.T[None, :, :]].transpose(0, 1, 3, 2))
    log_det = np.zeros(A.shape[2:])
    for q in range(c):
        pivot = A[q, q].copy()
        log_det += np.log(pivot)
        row = A[q] / pivot
        col = A[:, q].copy()
        A -= col[:, None] * row[None, :]
        A[q] = row
        A[:, q] = -col / pivot
        A[q, q] = 1.0 / pivot
    A += A.transpose(1, 0, 2, 3)
    A *= 0.5
    return A, log_det


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
    inverses : callable, optional
        ``inverses(patterns)`` -> the result of :func:`pattern_inverses` for one group, e.g. cached
        on the parameter set so the E- and M-step compute it once.

    Attributes
    ----------
    marginal : tuple of two ndarrays of shape (n_samples, n_components)
        The Mahalanobis distance of each row's observed entries and the log-determinant of their
        marginal covariance.
    log_prob : ndarray of shape (n_samples, n_components)
        Log marginal density of each row's observed entries (0 for a row with none).
    completed : ndarray of shape (n_components, n_samples, n_features)
        The rows with their missing entries replaced by the conditional means.
    centred : ndarray of shape (n_components, n_samples, n_features)
        ``completed`` less each component's mean.
    """

    def __init__(self, X, patterns, mask, mean, precision, log_det_cov, inverses=None):
        X = np.asarray(X, dtype=np.float64)
        mask = np.asarray(mask)
        observed = mask.astype(np.float64, copy=False)
        mask = mask if mask.dtype == bool else observed != 0
        mean = np.asarray(mean, dtype=np.float64)
        n, d = X.shape
        k = mean.shape[0]
        self._patterns, self._mean, self._X, self._mask = patterns, mean, X, mask
        own = precision  # (Kp, d, d): a tied covariance's pattern inverses are shared by all components
        self._inverses = [(inverses or (lambda m: pattern_inverses(own, m)))(missing)
                          for _, missing, _ in patterns.groups]
        # z_k = x - mu_k, 0 on the missing entries; y_k = P_k z_k: one batched GEMM
        x0 = np.where(mask, X, 0.0)
        z = np.empty((k, n, d))
        for j in range(k):  # component by component: numpy runs the (K, n, d) broadcast many times slower
            np.multiply(observed, -mean[j], out=z[j])
            z[j] += x0
        y = np.matmul(z, precision)  # P symmetric: the rows z_k' P_k
        quad = np.einsum("knd,knd->kn", z, y)  # z' P z, less the correction below
        # per group of rows with c missing features: v = P_mm^-1 y_m (c, K, n_c), each row's P_mm^-1
        # gathered by its pattern and multiplied by y_m in place: a few vector operations per group,
        # on flat positions in (K, n, d) and (K, n) arrays, so that every gather and scatter is one
        # take or put
        entries = (np.arange(k) * (n * d))[:, None]
        cells = (np.arange(k) * n)[:, None]
        correction = np.zeros((k, n))
        log_det_mm = np.zeros((k, n))
        for (rows, _, pattern), at, (inv, log_det_p) in zip(patterns.groups, patterns.positions, self._inverses):
            at = at[:, None, :] + entries  # (c, K, n_c)
            y_m = np.take(y, at)
            products = np.take(inv, pattern, axis=3)  # (c, c, Kp, n_c)
            products = np.multiply(products, y_m[None], out=products if products.shape[2] == k else None)
            v = products.sum(axis=1)
            at_rows = rows + cells
            np.put(correction, at_rows, np.einsum("ckn,ckn->kn", y_m, v))
            np.put(log_det_mm, at_rows, np.broadcast_to(np.take(log_det_p, pattern, axis=1), (k, rows.shape[0])))
            np.put(z, at, -v)  # E[x_m | x_o] - mu_m = -v: z becomes the completed rows less the mean
        quad -= correction
        log_det_mm += np.asarray(log_det_cov, dtype=np.float64).reshape(-1, 1)
        self._quad, self._log_det, self._centred = quad, log_det_mm, z
        nothing = patterns.n_observed == 0  # density 1, without rounding
        self._quad[:, nothing], self._log_det[:, nothing] = 0.0, 0.0

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
    def centred(self):
        """The completed rows less each component's mean, (n_components, n_samples, n_features)."""
        return self._centred

    @property
    def completed(self):
        completed = self._centred + self._mean[:, None, :]
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
        k, _, d = self._centred.shape
        wr_t = np.asarray(wr_t, dtype=np.float64)
        out = np.zeros(k * d * d)
        for (rows, missing, pattern), (inv, _) in zip(self._patterns.groups, self._inverses):
            n_patterns = missing.shape[0]
            # the responsibility of every (component, pattern), then P_mm^-1 scattered to (k, i, j)
            index = (np.arange(k)[:, None] * n_patterns + pattern[None, :]).reshape(-1)
            totals = np.bincount(index, weights=wr_t[:, rows].reshape(-1), minlength=k * n_patterns)
            where = ((np.arange(k) * d * d)[None, None, :, None]
                     + (missing.T[:, None, None, :] * d + missing.T[None, :, None, :]))  # (c, c, K, P)
            out += np.bincount(where.reshape(-1), weights=(totals.reshape(k, n_patterns) * inv).reshape(-1),
                               minlength=k * d * d)
        return out.reshape(k, d, d)

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
