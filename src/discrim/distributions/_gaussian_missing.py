"""Full and tied Gaussian components seen through a mask of observed entries.

One computation serves the E-step (the marginal density of each row's observed entries), the
M-step (conditional means and covariances of the missing entries) and imputation. With the
precision ``P = Sigma^-1``, ``z = x - mu`` set to 0 on a row's missing features ``m`` and
``y = P z``:

- ``z_o' Sigma_oo^-1 z_o = z' P z - y_m' P_mm^-1 y_m`` (the Schur complement of ``P_mm``),
- ``log |Sigma_oo| = log |Sigma| + log |P_mm|``,
- ``E[x_m | x_o] = mu_m - P_mm^-1 y_m`` and ``Cov[x_m | x_o] = P_mm^-1``.

``z' P z`` and ``y`` are one pair of GEMMs over all rows and components, as for complete data.
``P_mm^-1`` and ``log |P_mm|`` depend only on the set of missing features, so they are computed
once per pattern and component (rows are grouped by their number of missing features, then by
the set) and gathered for the rows: the cost stays close to the complete-data pass however the
patterns are spread.
"""

import numpy as np

__all__ = ["ConditionedRows", "MissingPatterns", "pattern_inverses"]

_LOG_2PI = float(np.log(2 * np.pi))


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
    """

    def __init__(self, mask):
        miss = ~np.asarray(mask, dtype=bool)
        count = miss.sum(axis=1)
        self.n_observed = miss.shape[1] - count
        self.groups = []
        incomplete = np.flatnonzero(count > 0)
        if incomplete.shape[0] == 0:
            return
        # one sortable key per row (its missing set as bits): a 1-d unique, much faster than rows'
        first, code = np.unique(_row_keys(miss[incomplete]), return_index=True, return_inverse=True)[1:]
        code = code.reshape(-1)
        pattern_miss = miss[incomplete[first]]  # (n_patterns, d)
        pattern_count = pattern_miss.sum(axis=1)
        for c in np.unique(pattern_count):
            ids = np.flatnonzero(pattern_count == c)
            local = np.full(first.shape[0], -1)
            local[ids] = np.arange(ids.shape[0])
            at = np.flatnonzero(pattern_count[code] == c)
            missing = np.nonzero(pattern_miss[ids])[1].reshape(ids.shape[0], c)  # row-major: sorted per pattern
            self.groups.append((incomplete[at], missing, local[code[at]]))


def _row_keys(miss):
    """One key per row of a bool matrix, equal exactly when the rows are equal."""
    packed = np.packbits(miss, axis=1)
    if packed.shape[1] <= 8:
        return np.pad(packed, ((0, 0), (0, 8 - packed.shape[1]))).view(np.uint64).reshape(-1)
    return np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).reshape(-1)


def pattern_inverses(precision, patterns):
    """``P_mm^-1`` (n_patterns, Kp, c, c) and ``log |P_mm|`` (n_patterns, Kp) for each pattern."""
    block = precision[:, patterns[:, :, None], patterns[:, None, :]]  # (Kp, n_patterns, c, c)
    block = np.swapaxes(block, 0, 1)
    # P_mm is a principal block of a positive definite matrix: positive definite itself. Batched
    # inv (LU) beats the inverse from the Cholesky factor (a general solve against the identity)
    # on stacks of small matrices; the factor gives the log-determinant.
    log_det = 2.0 * np.log(np.diagonal(np.linalg.cholesky(block), axis1=-2, axis2=-1)).sum(axis=-1)
    inv = np.linalg.inv(block)
    return 0.5 * (inv + np.swapaxes(inv, -1, -2)), log_det


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
    """

    def __init__(self, X, patterns, mask, mean, precision, log_det_cov, inverses=None):
        n, d = X.shape
        k = mean.shape[0]
        self._patterns, self._mean, self._log_det_cov = patterns, mean, log_det_cov
        own = precision  # (Kp, d, d): a tied covariance's pattern inverses are shared by all components
        self._inverses = [(inverses or (lambda m: pattern_inverses(own, m)))(missing)
                          for _, missing, _ in patterns.groups]
        precision = np.broadcast_to(precision, (k, d, d))
        # centred on the mean of the component means, as the complete rows' log_prob is
        self._center = mean.mean(axis=0)
        self._observed = np.asarray(mask, dtype=np.float64)
        self._x0 = np.where(mask, np.asarray(X, dtype=np.float64) - self._center, 0.0)  # (n, d)
        self._mu = mean - self._center  # (K, d)
        # y_ik = P_k z_ik with z_ik = x0_i - mask_i * mu_k: two GEMMs for all components
        stacked = precision.transpose(1, 0, 2).reshape(d, k * d)
        shifted = (self._mu[:, :, None] * precision).transpose(1, 0, 2).reshape(d, k * d)
        y = self._x0 @ stacked
        y -= self._observed @ shifted
        self._y = y.reshape(n, k, d)
        # per group: the flat positions of the missing entries in y (n_c, K, c), y_m and P_mm^-1 y_m
        self._solved = []
        for (rows, missing, pattern), (inv, _) in zip(patterns.groups, self._inverses):
            at = (rows[:, None, None] * (k * d) + np.arange(0, k * d, d)[None, :, None]) + missing[pattern][:, None, :]
            y_m = self._y.reshape(-1)[at]
            v = np.einsum("nkij,nkj->nki", np.broadcast_to(inv[pattern], y_m.shape + y_m.shape[-1:]), y_m)
            self._solved.append((at, y_m, v))

    @property
    def marginal(self):
        """``(maha, log_det)``, both (n_samples, n_components): the Mahalanobis distance of each row's
        observed entries and ``log |Sigma_oo|`` of their marginal (both 0 for a row with none)."""
        n, k, _ = self._y.shape
        # z' P z with z_ik = x0_i - mask_i * mu_k, without the (n, K, d) z
        quad = np.einsum("nd,nkd->nk", self._x0, self._y)
        quad -= np.einsum("nd,kd,nkd->nk", self._observed, self._mu, self._y, optimize=True)
        log_det = np.broadcast_to(np.asarray(self._log_det_cov, dtype=np.float64), (n, k)).copy()
        for (rows, _, pattern), (_, log_det_mm), (_, y_m, v) in zip(self._patterns.groups, self._inverses,
                                                                    self._solved):
            quad[rows] -= np.einsum("nkc,nkc->nk", y_m, v)
            log_det[rows] += log_det_mm[pattern]
        nothing = self._patterns.n_observed == 0  # density 1, without rounding
        quad[nothing], log_det[nothing] = 0.0, 0.0
        return quad, log_det

    @property
    def log_prob(self):
        quad, log_det = self.marginal
        return -0.5 * (self._patterns.n_observed[:, None] * _LOG_2PI + log_det + quad)

    @property
    def completed(self):
        n, k, d = self._y.shape
        completed = np.broadcast_to(self._x0[:, None, :] + self._center, (n, k, d)).copy()
        for (rows, missing, pattern), (at, _, v) in zip(self._patterns.groups, self._solved):
            completed.reshape(-1)[at] = self._mean[:, missing[pattern]].transpose(1, 0, 2) - v
        return completed.transpose(1, 0, 2)

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
        _, k, d = self._y.shape
        wr_t = np.asarray(wr_t, dtype=np.float64)
        out = np.zeros((k, d * d))
        for (rows, missing, pattern), (inv, _) in zip(self._patterns.groups, self._inverses):
            n_patterns = missing.shape[0]
            at = (missing[:, :, None] * d + missing[:, None, :]).reshape(-1)  # (P * c * c,) flat (i, j)
            inv = np.broadcast_to(inv, (n_patterns, k) + inv.shape[2:])
            for j in range(k):
                totals = np.bincount(pattern, weights=wr_t[j, rows], minlength=n_patterns)
                out[j] += np.bincount(at, weights=(totals[:, None, None] * inv[:, j]).reshape(-1), minlength=d * d)
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
            cov = inv[pattern, components[rows] if inv.shape[1] > 1 else 0]  # (n_c, c, c)
            noise = (np.linalg.cholesky(cov) @ rng.standard_normal(cov.shape[:2])[..., None])[..., 0]
            at, block = missing[pattern], out[rows]
            np.put_along_axis(block, at, np.take_along_axis(block, at, axis=1) + noise, axis=1)
            out[rows] = block
        return out
