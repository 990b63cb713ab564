"""Gaussian components with full, diagonal, tied or spherical covariances."""

from dataclasses import dataclass
from numbers import Real

import numpy as np

from discrim.distributions import _constraints as constraints
from discrim.backend import ops
from discrim.distributions._base import (
    ComponentFamily,
    Params,
    Stats,
    component_totals,
    host,
    mask_patterns,
    per_feature_weight,
    weighted_resp_t,
)
from discrim.distributions._gaussian_linalg import (
    SingularCovarianceError,
    cholesky_factors,
    inverse_factors,
)

__all__ = ["Gaussian", "GaussianParams", "GaussianStats"]

_COVARIANCE_TYPES = ("full", "diag", "tied", "spherical")
_LOG_2PI = float(np.log(2 * np.pi))
# Rows per block when log_prob is called on a large X directly (EM passes its own blocks).
_BLOCK_ELEMENTS = 1 << 22
# Bytes of rows per block in the scatter of labelled rows: a block stays in cache and the
# temporaries stay small however large X is.
_SCATTER_BLOCK_BYTES = 1 << 23


@dataclass(frozen=True)
class GaussianParams(Params):
    """Means (n_components, n_features) and covariances stored as scikit-learn does.

    ``covariance`` has shape (n_components, n_features, n_features) for "full",
    (n_components, n_features) for "diag", (n_features, n_features) for "tied" and
    (n_components,) for "spherical".
    """

    mean: np.ndarray
    covariance: np.ndarray


@dataclass(frozen=True)
class GaussianStats(Stats):
    """Weighted totals (K,), weighted means (K, d) and centred scatter of a block of rows.

    ``scatter`` is ``sum_i w_i r_ik (x_i - mean_k)(x_i - mean_k)'`` of shape (K, d, d) for the
    "full" and "tied" types, and its diagonal (K, d) for "diag" and "spherical". Centred moments
    keep the covariance exact for data far from the origin; ``+`` merges two blocks with the
    exact pooled-moment rule (Chan, Golub and LeVeque), so the statistics stay additive over row
    blocks. With a mask, "diag" and "spherical" keep ``observed`` (K, d), the weighted total of
    the rows that observed each feature, and ``mean`` and ``scatter`` are over those rows; "full"
    and "tied" complete the unobserved entries by their conditional expectations instead.
    """

    weight: np.ndarray
    mean: np.ndarray
    scatter: np.ndarray
    observed: np.ndarray = None

    def __add__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        # per-feature totals with a mask, else the component totals broadcast over features
        na, nb = per_feature_weight(self), per_feature_weight(other)
        n = na + nb
        safe = np.where(n > 0, n, 1.0)
        delta = other.mean - self.mean
        mean = self.mean + delta * (nb / safe)
        coef = na * nb / safe
        if self.scatter.ndim == 3:
            extra = coef[:, :, None] * delta[:, :, None] * delta[:, None, :]
        else:
            extra = coef * delta**2
        observed = None if self.observed is None else n
        return GaussianStats(weight=self.weight + other.weight, mean=mean, scatter=self.scatter + other.scatter + extra,
                             observed=observed)


class Gaussian(ComponentFamily):
    """Multivariate normal components ``N(mean_k, covariance_k)``.

    Parameters
    ----------
    covariance_type : {"full", "diag", "spherical", "tied"}, default="full"
        "full": one general covariance per component; "diag": one diagonal covariance per
        component; "tied": one general covariance shared by all components; "spherical": one
        variance per component.
    reg_covar : float, default=1e-6
        Non-negative amount added to the diagonal of every covariance by the M-step
        (:meth:`params_from_stats`). ``FiniteMixture(reg_covar=...)`` sets it for a fit.

    Notes
    -----
    Parameters are ``mean`` (n_components, n_features) and ``covariance``, stored as in
    :class:`sklearn.mixture.GaussianMixture`. Log-densities use the Cholesky factor of each
    precision matrix: for "full", the factors of all components are stacked into one
    (n_features, n_components * n_features) matrix, so the Mahalanobis terms of every component
    come from a single matrix product. The weighted MLE adds ``reg_covar`` to the diagonal of
    every covariance, which keeps a component that collapses onto a few points positive
    definite. With a mask of observed entries, a row's density is the marginal density of its
    observed entries; the statistics of "full" and "tied" components complete the unobserved
    entries by their conditional expectations under the E-step's parameters (the EM of
    Little and Rubin, Statistical Analysis with Missing Data, section 11.2).

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> fam = Gaussian(covariance_type="diag")
    >>> params = fam.make_params({"mean": [[0.0, 0.0]], "covariance": [[1.0, 4.0]]}, 1, 2)
    >>> round(float(fam.log_prob(np.zeros((1, 2)), params)[0, 0]), 4)
    -2.531
    """

    params_class = GaussianParams
    fit_options = ("reg_covar",)
    # The default for objects restored from files written before reg_covar was an option of the
    # family (their mixtures carried it and still pass it to the family).
    reg_covar = 1e-6
    cli_names = {"gaussian": {"covariance_type": "full"}, "gaussian-diag": {"covariance_type": "diag"},
                 "gaussian-tied": {"covariance_type": "tied"}, "gaussian-spherical": {"covariance_type": "spherical"}}

    def __init__(self, covariance_type="full", reg_covar=1e-6):
        self.covariance_type = covariance_type
        self.reg_covar = reg_covar

    def check_options(self):
        if self.covariance_type not in _COVARIANCE_TYPES:
            raise ValueError(
                f"covariance_type must be one of {_COVARIANCE_TYPES}; got {self.covariance_type!r}."
            )
        reg = self.reg_covar
        if isinstance(reg, bool) or not isinstance(reg, Real) or not (np.isfinite(reg) and reg >= 0):
            raise ValueError(f"reg_covar must be a finite float >= 0; got {reg!r}.")
        return self

    @property
    def arg_constraints(self):
        cov = constraints.positive_definite if self.covariance_type in ("full", "tied") else constraints.positive
        return {"mean": constraints.real, "covariance": cov}

    def row_footprint(self, n_components, n_features):
        # "full" holds (x - mu_k) P_k for every k: K * d floats per row
        if self.covariance_type == "full":
            return n_components * n_features
        return n_components + 2 * n_features

    def shared_params(self):
        return ("covariance",) if self.covariance_type == "tied" else ()

    is_discrete = False

    def rows_per_component(self, n_features):
        # A full covariance needs d + 1 points in general position, a per-feature variance two;
        # a tied covariance is pooled over all rows.
        return {"full": n_features + 1, "diag": 2, "spherical": 2, "tied": 0}[self.covariance_type]

    def min_relative_variance(self, params, occupied, feature_var):
        ctype = self.covariance_type
        reg_covar = self.reg_covar
        cov = params.covariance
        d = feature_var.shape[0]
        # A constant feature has no spread to compare with: it does not mark components singular.
        scale = np.where(feature_var > 0, feature_var, np.inf)
        if ctype in ("full", "tied"):
            mats = cov[occupied] if ctype == "full" else cov[None]
            inv_sd = 1.0 / np.sqrt(scale)
            scaled = (mats - reg_covar * np.eye(d)) * inv_sd[:, None] * inv_sd[None, :]
            return float(np.min(np.linalg.eigvalsh(scaled)))
        if ctype == "diag":
            return float(np.min((cov[occupied] - reg_covar) / scale))
        return float(np.min((cov[occupied] - reg_covar) / np.max(scale[np.isfinite(scale)], initial=0.0)))

    def param_shapes(self, n_components, n_features):
        k, d = n_components, n_features
        cov = {"full": (k, d, d), "diag": (k, d), "tied": (d, d), "spherical": (k,)}[self.covariance_type]
        return {"mean": (k, d), "covariance": cov}

    def n_parameters(self, n_features, n_components=1):
        k, d = n_components, n_features
        cov = {"full": k * d * (d + 1) // 2, "diag": k * d, "tied": d * (d + 1) // 2, "spherical": k}
        return k * d + cov[self.covariance_type]

    # log-density -----------------------------------------------------------------------

    def _precision_cholesky(self, params):
        """Cached per parameter set: the factors log_prob needs (see :meth:`log_prob`)."""
        return params._cached("precision_cholesky", lambda: _precision_terms(self.covariance_type, params))

    def log_prob(self, X, params, *, mask=None, rows=None):
        if mask is not None:
            return self._masked_log_prob(X, params, mask)
        terms = self._precision_cholesky(params)
        n = X.shape[0]
        k, d = params.mean.shape
        step = max(4096, _BLOCK_ELEMENTS // max(1, k * d))
        if n <= step:
            return _log_prob_block(self.covariance_type, X, terms, d).T
        return ops.concat_rows([_log_prob_block(self.covariance_type, X[s : s + step], terms, d).T
                                for s in range(0, n, step)])

    def _masked_log_prob(self, X, params, mask):
        """Marginal log-densities of the observed entries of every row (see :meth:`log_prob`)."""
        if self.covariance_type in ("diag", "spherical"):
            # independent features: the marginal density is the sum over the observed ones, from
            # the same centred terms as the complete rows' (see _precision_terms)
            terms = self._precision_cholesky(params)
            prec = np.broadcast_to(terms["prec"] if terms["prec"].ndim == 2 else terms["prec"][:, None],
                                   params.mean.shape)
            m = params.mean - terms["center"]
            M = ops.like(mask, X)
            Xc = (X - ops.like(terms["center"], X)) * M
            maha = ops.like(prec, X) @ ops.square_inplace(Xc * 1.0).T
            maha -= 2.0 * (ops.like(terms["mp"], X) @ Xc.T)
            maha += ops.like(m * terms["mp"], X) @ M.T
            out = -0.5 * maha
            out += ops.like(0.5 * (np.log(prec) - _LOG_2PI), X) @ M.T
            return out.T
        # full or tied: one marginal Gaussian per pattern of observed features; a row with no
        # observed entry has density 1. Many distinct patterns: row by row, in batched solves.
        if _many_patterns(mask):
            return np.stack([_rowwise_conditional(X, mask, params.mean[j], self._precision(params, j))[0]
                             for j in range(params.n_components)], axis=1)
        out = ops.like(np.zeros((X.shape[0], params.mean.shape[0])), X)
        full = type(self)("full")
        for observed, index in mask_patterns(mask):
            if observed.any():
                out[index] = full.log_prob(X[index][:, observed], self._marginal(params, observed))
        return out

    def _marginal(self, params, observed):
        """Full-covariance parameters of the features ``observed`` (bool (d,)), cached per pattern."""

        def compute():
            cov = params.covariance if self.covariance_type == "full" else params.covariance[None]
            cov = cov[:, observed][:, :, observed]
            k = params.mean.shape[0]
            return GaussianParams(mean=params.mean[:, observed], covariance=np.broadcast_to(cov, (k,) + cov.shape[1:]))

        return params._cached(("marginal", observed.tobytes()), compute)

    # M-step ----------------------------------------------------------------------------

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        wr_t = weighted_resp_t(resp, sample_weight)
        if mask is None:
            return self._moments(X, wr_t)
        if self.covariance_type in ("diag", "spherical"):
            return self._observed_moments(X, wr_t, mask)
        if params is None:
            raise ValueError(
                f"suff_stats of a {self.covariance_type!r} Gaussian with a mask needs params (the "
                "E-step's parameters): unobserved entries are completed by their conditional expectations."
            )
        if _many_patterns(mask):
            return self._rowwise_completed_moments(X, wr_t, mask, params)
        stats = 0
        for observed, index in mask_patterns(mask):
            stats = stats + self._completed_moments(X[index], wr_t[:, index], observed, params)
        return stats

    def _precision(self, params, j):
        """Component j's precision matrix ``Sigma_j^-1`` (d, d), cached per parameter set."""
        def compute():
            cov = params.covariance if self.covariance_type == "full" else params.covariance[None]
            inv = _inverse_factors_or_raise(cov, "a component covariance")  # W = L^-1, Sigma^-1 = W'W
            return np.einsum("kij,kil->kjl", inv, inv)

        precision = params._cached("precision", compute)
        return precision[j] if precision.shape[0] > 1 else precision[0]

    def _rowwise_completed_moments(self, X, wr_t, mask, params):
        """Statistics of rows with missing values, completed row by row (many missingness patterns).

        The same moments as :meth:`_completed_moments` over every pattern: under component k each
        row's missing entries take their conditional mean, and the conditional covariance of
        the row's missing block is added to the scatter, weighted by the row's responsibility.
        """
        parts = []
        for j in range(params.n_components):
            _, completed, cond_cov = _rowwise_conditional(X, mask, params.mean[j], self._precision(params, j))
            stats = self._moments(completed, wr_t[j : j + 1])
            extra = np.einsum("n,nij->ij", np.asarray(wr_t[j], dtype=np.float64), cond_cov)
            parts.append(GaussianStats(weight=stats.weight, mean=stats.mean, scatter=stats.scatter + extra[None]))
        return GaussianStats(
            weight=np.concatenate([p.weight for p in parts]),
            mean=np.concatenate([p.mean for p in parts]),
            scatter=np.concatenate([p.scatter for p in parts]),
        )

    def _moments(self, X, wr_t):
        """Statistics of fully observed rows under weighted responsibilities ``wr_t`` (K, n)."""
        # Work with components and features along rows and samples along columns: every
        # elementwise step then runs over long contiguous rows (log_prob returns its output in
        # that layout, so resp.T is usually contiguous already).
        wr_t = ops.contiguous(ops.like(wr_t, X))
        weight = component_totals(wr_t)
        safe = np.where(weight > 0, weight, 1.0)
        # Moments about the block mean, then centred per component: exact for data far from the
        # origin, and still one GEMM for the second moments.
        n, d = X.shape
        k = wr_t.shape[0]
        center = ops.like(np.ones(n), X) @ X / n  # a GEMV: much faster than mean(axis=0)
        xc_t = ops.centred_transpose(X, center)
        mean_c = host(wr_t @ xc_t.T) / safe[:, None]
        if self.covariance_type in ("full", "tied"):
            # sum_i r_ik xc_i xc_i' = z z' with z = sqrt(r_k) xc: numpy runs z @ z.T as a
            # symmetric rank update (half the flops of a GEMM), so a loop over components does
            # half the work of one stacked GEMM of all of them.
            root = wr_t**0.5
            # one copy to the host for all components (on a device, each copy waits for the GPU)
            second = host(ops.stack([_gram(xc_t * root[j]) for j in range(k)]))
            scatter = second - weight[:, None, None] * mean_c[:, :, None] * mean_c[:, None, :]
            scatter = 0.5 * (scatter + scatter.transpose(0, 2, 1))
        else:
            second = host(wr_t @ ops.square_inplace(xc_t).T)
            scatter = np.maximum(second - weight[:, None] * mean_c**2, 0.0)
        mean = mean_c + host(center)
        mean[weight <= 0] = 0.0
        return GaussianStats(weight=weight, mean=mean, scatter=scatter)

    def _observed_moments(self, X, wr_t, mask):
        """Per-feature statistics of the observed entries ("diag", "spherical")."""
        M = ops.like(mask, X)
        wr_t = ops.like(wr_t, X)
        weight = component_totals(wr_t)
        observed = host(wr_t @ M)
        safe = np.where(observed > 0, observed, 1.0)
        ones = ops.like(np.ones(X.shape[0]), X)
        # centre about the mean of the observed entries of each feature, as _moments does
        count = host(ones @ M)
        center = host(ones @ (X * M)) / np.where(count > 0, count, 1.0)
        Xc = (X - ops.like(center, X)) * M
        mean_c = host(wr_t @ Xc) / safe
        second = host(wr_t @ ops.square_inplace(Xc * 1.0))
        scatter = np.maximum(second - observed * mean_c**2, 0.0)
        mean = np.where(observed > 0, mean_c + center, 0.0)
        return GaussianStats(weight=weight, mean=mean, scatter=scatter, observed=observed)

    def _completed_moments(self, X, wr_t, observed, params):
        """Statistics of rows sharing one pattern of ``observed`` features ("full", "tied").

        Under component k the unobserved entries m of a row are replaced by their conditional
        mean ``mu_m + S_mo S_oo^-1 (x_o - mu_o)``, and the conditional covariance
        ``S_mm - S_mo S_oo^-1 S_om`` (the same for every row of the pattern) is added to the
        scatter, weighted by the component's total responsibility for the rows.
        """
        parts = []
        for j in range(params.n_components):
            completed, cond_cov = X * 1.0, np.zeros((X.shape[1],) * 2)
            if not observed.all():
                gain, shift, cond_cov_m = self._conditional(params, observed, j)
                completed[:, ~observed] = ops.like(shift, X) + X[:, observed] @ ops.like(gain.T, X)
                cond_cov[np.ix_(~observed, ~observed)] = cond_cov_m
            stats = self._moments(completed, wr_t[j : j + 1])
            parts.append(GaussianStats(weight=stats.weight, mean=stats.mean,
                                       scatter=stats.scatter + stats.weight[:, None, None] * cond_cov))
        return GaussianStats(
            weight=np.concatenate([p.weight for p in parts]),
            mean=np.concatenate([p.mean for p in parts]),
            scatter=np.concatenate([p.scatter for p in parts]),
        )

    def _conditional(self, params, observed, j):
        """Component j's distribution of the unobserved features given the observed ones.

        Returns ``(gain, shift, cond_cov)``: ``E[x_m | x_o] = shift + gain @ x_o`` with ``gain =
        S_mo S_oo^-1`` (|m|, |o|), and the conditional covariance ``S_mm - S_mo S_oo^-1 S_om``.
        """
        S = params.covariance[j] if self.covariance_type == "full" else params.covariance
        o, m = observed, ~observed
        gain = np.linalg.solve(S[np.ix_(o, o)], S[np.ix_(o, m)]).T if o.any() else np.zeros((m.sum(), 0))
        shift = params.mean[j, m] - gain @ params.mean[j, o]
        return gain, shift, S[np.ix_(m, m)] - gain @ S[np.ix_(o, m)]

    def component_means(self, params, n_rows=1, rows=None):
        return params.mean

    def conditional_mean(self, X, params, observed, rows=None):
        if self.covariance_type in ("diag", "spherical"):  # independent features
            return super().conditional_mean(X, params, observed, rows)
        out = np.repeat(X[None].astype(np.float64), params.n_components, axis=0)
        for j in range(params.n_components):
            gain, shift, _ = self._conditional(params, observed, j)
            out[j][:, ~observed] = shift + X[:, observed] @ gain.T
        return out

    def conditional_sample(self, X, params, observed, components, rng, rows=None):
        if self.covariance_type in ("diag", "spherical"):
            return super().conditional_sample(X, params, observed, components, rng, rows)
        out = np.array(X, dtype=np.float64)
        m = ~observed
        for j in np.unique(components):
            index = np.flatnonzero(components == j)
            gain, shift, cond_cov = self._conditional(params, observed, j)
            z = rng.standard_normal((index.shape[0], int(m.sum())))
            out[np.ix_(index, m)] = shift + X[np.ix_(index, observed)] @ gain.T + z @ np.linalg.cholesky(cond_cov).T
        return out

    def labelled_stats(self, X, labels, sample_weight, n_components):
        """Statistics of rows that each belong to one component (hard assignments, class labels).

        The same moments as :meth:`suff_stats` with 0/1 responsibilities, in O(n d^2) instead of
        O(n K d^2): each row enters only its own component's sums. The discriminant rules (LDA,
        QDA) take their class means and scatter from here.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            Rows, numpy or torch on any device (the O(n d^2) work runs there); callers far from
            the origin pass them about a data point (see
            :func:`discrim.discriminant._gaussian_math.fit_origin`).
        labels : ndarray of shape (n_samples,) of int
            Component (class) index of each row, in ``[0, n_components)``; every component has
            positive total weight.
        sample_weight : ndarray of shape (n_samples,)
            Non-negative frequency weights: an integer weight counts as that many repeated rows.
        n_components : int

        Returns
        -------
        stats : GaussianStats
            ``weight`` (K,) the total weight of each component; ``mean`` (K, d) the weighted
            means ``sum_{i in k} w_i x_i / sum_{i in k} w_i``; ``scatter`` about them,
            ``sum_{i in k} w_i (x_i - mean_k)(x_i - mean_k)'`` of shape (K, d, d), or its
            diagonal (K, d) for the "diag" and "spherical" types.
        """
        n, d = X.shape
        k = n_components
        weight = np.bincount(labels, weights=sample_weight, minlength=k)
        # a label of zero weight (absent from a chunk of rows) has mean 0 and merges as empty
        mean = ops.label_sums(labels, sample_weight, X, k) / np.where(weight > 0, weight, 1.0)[:, None]
        full = self.covariance_type in ("full", "tied")
        unit = bool(np.all(sample_weight == 1.0))
        scatter = np.zeros((k, d, d) if full else (k, d))
        # Stable sort of small integer codes is a radix sort: O(n), rows of each component in order.
        codes = labels.astype(np.uint16) if k <= 1 << 16 else labels
        order = np.argsort(codes, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(labels, minlength=k))))
        step = max(256, _SCATTER_BLOCK_BYTES // (8 * max(d, 1)))
        for j in range(k):
            rows = order[bounds[j] : bounds[j + 1]]
            mean_j = ops.like(mean[j], X)
            for start in range(0, rows.shape[0], step):
                block = rows[start : start + step]
                xc = ops.take_rows(X, block)  # a copy of at most `step` rows, where X lives
                xc -= mean_j
                if not unit:
                    xc *= ops.like(np.sqrt(sample_weight[block])[:, None], xc)
                if full:
                    scatter[j] += host(xc.T @ xc)  # numpy dispatches A'A to BLAS syrk
                else:
                    scatter[j] += host(ops.row_dot(xc.T, xc.T))
        if full:
            # syrk fills one triangle and numpy mirrors it; symmetrise against rounding all the same.
            scatter = 0.5 * (scatter + np.swapaxes(scatter, 1, 2))
        return GaussianStats(weight=weight, mean=mean, scatter=scatter)

    def params_from_stats(self, stats, current=None):
        ctype = self.covariance_type
        reg_covar = self.reg_covar
        weight = stats.weight
        k, d = stats.mean.shape
        empty = weight <= 0
        safe = np.where(empty, 1.0, weight)
        if ctype == "full":
            cov = stats.scatter / safe[:, None, None]
            cov[empty] = np.eye(d)
            cov = cov + reg_covar * np.eye(d)
        elif ctype == "tied":
            cov = stats.scatter.sum(axis=0) / weight.sum() + reg_covar * np.eye(d)
        else:
            w = per_feature_weight(stats)
            var = stats.scatter / np.where(w > 0, w, 1.0)
            if ctype == "spherical" and stats.observed is None:
                cov = var.mean(axis=1)
            elif ctype == "spherical":  # pooled over the observed entries of the component's rows
                total = stats.observed.sum(axis=1)
                cov = stats.scatter.sum(axis=1) / np.where(total > 0, total, 1.0)
            else:
                cov = np.where(w > 0, var, 1.0)
            cov[empty] = 1.0
            cov = cov + reg_covar
        return GaussianParams(mean=stats.mean.copy(), covariance=cov)

    # sampling ---------------------------------------------------------------------------

    def sample(self, params, n_per_component, rng):
        ctype = self.covariance_type
        k, d = params.mean.shape
        blocks = []
        for j, m in enumerate(n_per_component):
            z = rng.standard_normal((int(m), d))
            if ctype == "full":
                z = z @ np.linalg.cholesky(params.covariance[j]).T
            elif ctype == "tied":
                z = z @ np.linalg.cholesky(params.covariance).T
            elif ctype == "diag":
                z = z * np.sqrt(params.covariance[j])
            else:
                z = z * np.sqrt(params.covariance[j])
            blocks.append(params.mean[j] + z)
        return np.concatenate(blocks, axis=0)


def _inverse_factors_or_raise(cov, what):
    """Inverse Cholesky factors ``W_k = L_k^{-1}`` of a (K, d, d) stack, or a one-line ValueError."""
    try:
        # Positive definiteness only: reg_covar keeps a collapsing component factorable, and
        # model choice judges such fits (min_relative_variance), unlike the discriminant rules.
        chol = cholesky_factors(cov, collinear_rtol=0.0)
    except SingularCovarianceError:
        raise ValueError(
            f"{what} is not positive definite: a component has collapsed onto fewer distinct "
            "points than features (or the features are collinear). Increase reg_covar, reduce "
            "n_components, or remove constant/duplicate features."
        ) from None
    return inverse_factors(chol)[0]


def _precision_terms(ctype, params):
    """Everything log_prob needs from one parameter set, computed once.

    Returns a dict with ``center`` (d,), the mean of the component means, and ``log_det`` (K,):
    ``sum log diag`` of each precision Cholesky factor, plus, per covariance type: "full": ``Wb``
    (K*d, d+1), the stacked precision factors ``P_k'`` with the column ``-P_k' m_k`` appended;
    "tied": ``P`` (d, d) and ``mP`` (K, d); "diag" and "spherical": ``prec`` (K, d) or (K,),
    ``mp`` (K, d) ``m * prec`` and ``c`` (K,) ``sum m^2 prec``, where ``m_k = mean_k - center``.

    Rows are centred by the same ``center`` before these terms meet them: the expanded squares
    ``x'Px - 2 m'Px + m'Pm`` then combine numbers of the size of the data's spread, not of its
    offset from the origin (at an offset of 1e8 they cancelled to relative errors of 10 in the
    log-density), so the densities are invariant to translations up to the rounding of the data.
    """
    center = params.mean.mean(axis=0)
    mean = params.mean - center
    k, d = mean.shape
    cov = params.covariance
    if ctype == "full":
        # P_k = inv(L_k)' so that ||(x - mu_k) P_k||^2 is the Mahalanobis distance.
        prec = np.swapaxes(_inverse_factors_or_raise(cov, "a component covariance"), 1, 2)
        log_det = np.log(np.diagonal(prec, axis1=1, axis2=2)).sum(axis=1)
        W = prec.transpose(1, 0, 2).reshape(d, k * d)
        b = np.einsum("kd,kde->ke", mean, prec).reshape(k * d)
        # [x, 1] @ [[W], [-b]] = (x - mu_k) P_k for every k at once: the shift rides in the GEMM
        return {"center": center, "log_det": log_det, "Wb": np.ascontiguousarray(np.vstack([W, -b]).T)}
    if ctype == "tied":
        P = _inverse_factors_or_raise(cov[None], "the tied covariance")[0].T
        return {"center": center, "log_det": np.full(k, np.log(np.diag(P)).sum()), "P": P, "mP": mean @ P}
    if not np.all(cov > 0):
        raise ValueError(
            "a component variance is not positive: the component collapsed onto a single value. "
            "Increase reg_covar or reduce n_components."
        )
    prec = 1.0 / cov
    if ctype == "diag":
        return {"center": center, "log_det": 0.5 * np.log(prec).sum(axis=1), "prec": prec, "mp": mean * prec,
                "c": (mean**2 * prec).sum(axis=1)}
    return {"center": center, "log_det": 0.5 * d * np.log(prec), "prec": prec, "mp": mean * prec[:, None],
            "c": (mean**2).sum(axis=1) * prec}


def _many_patterns(mask):
    """Whether rows with missing values are better completed row by row than pattern by pattern.

    Per pattern the work is a few array calls per component; with about as many patterns as
    rows (values missing at random in many features) those calls dominate, and batched
    per-row solves cost less.
    """
    incomplete = mask[~mask.all(axis=1)]
    if incomplete.shape[0] < 64:
        return False
    return np.unique(incomplete, axis=0).shape[0] > incomplete.shape[0] // 8


# Rows per batched solve of the row-wise conditionals: (rows, d, d) temporaries of some MB.
_ROWWISE_BLOCK_ELEMENTS = 1 << 21


def _rowwise_conditional(X, mask, mean, precision):
    """One component's view of rows with missing values, row by row, through the precision matrix.

    With ``P = Sigma^-1``, ``z = x - mu`` and a row's missing set ``m`` (observed ``o``): the
    conditional mean of the missing entries is ``mu_m - P_mm^-1 P_mo z_o``, their conditional
    covariance ``P_mm^-1``, the marginal Mahalanobis distance of the observed entries
    ``z_o' Sigma_oo^-1 z_o = zhat' P zhat`` (zhat: z completed by the conditional mean) and
    ``log |Sigma_oo| = log |Sigma| + log |P_mm|``. Each row's ``P_mm`` is solved inside a (d, d)
    matrix that is the identity on the observed features, so all rows go through one batched
    solve.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Missing entries hold any finite value.
    mask : ndarray of shape (n, d) of bool
        True where observed.
    mean : ndarray of shape (d,)
    precision : ndarray of shape (d, d)

    Returns
    -------
    log_prob : ndarray of shape (n,)
        Log marginal density of each row's observed entries (0 for a row with none).
    completed : ndarray of shape (n, d)
        The rows with their missing entries replaced by the conditional mean.
    cond_cov : ndarray of shape (n, d, d)
        The conditional covariance of each row's missing entries, zero elsewhere.
    """
    n, d = X.shape
    log_det_sigma = -np.linalg.slogdet(precision)[1]
    log_prob, completed, cond_cov = np.empty(n), np.empty((n, d)), np.empty((n, d, d))
    eye = np.eye(d, dtype=bool)
    step = max(1, _ROWWISE_BLOCK_ELEMENTS // (d * d))
    for s in range(0, n, step):
        obs = mask[s : s + step]
        miss = ~obs
        z = np.where(obs, X[s : s + step] - mean, 0.0)
        both = miss[:, :, None] & miss[:, None, :]
        B = np.where(both, precision, 0.0) + (eye & obs[:, :, None])  # P_mm within the identity
        inv = np.linalg.inv(B)
        rhs = np.where(miss, z @ precision, 0.0)  # P_mo z_o on the missing entries
        zhat = z - np.einsum("nij,nj->ni", inv, rhs)
        maha = np.einsum("ni,ij,nj->n", zhat, precision, zhat)
        log_det = log_det_sigma + np.linalg.slogdet(B)[1]  # log |Sigma_oo|
        n_obs = obs.sum(axis=1)
        log_prob[s : s + step] = np.where(n_obs > 0, -0.5 * (n_obs * _LOG_2PI + log_det + maha), 0.0)
        completed[s : s + step] = zhat + mean
        cond_cov[s : s + step] = np.where(both, inv, 0.0)
    return log_prob, completed, cond_cov


def _gram(z):
    """``z @ z.T``: numpy sees the same operand twice and runs a symmetric rank update (syrk)."""
    return z @ z.T


def _log_prob_block(ctype, X, terms, d):
    """Log-densities of one block of rows from :func:`_precision_terms`, as (K, n) (transposed).

    The transposed layout keeps the samples along contiguous rows, so the squares, the sums over
    features and the later exp run over long vectors instead of short rows of length d or K.
    """
    center = ops.like(terms["center"], X)
    if ctype == "full":
        Xa = ops.centred_with_ones(X, center)  # (n, d + 1)
        Y = ops.like(terms["Wb"], X) @ Xa.T  # (K*d, n): rows (x - mu_k) P_k
        maha = ops.square_inplace(Y).reshape(-1, d, X.shape[0]).sum(1)
    elif ctype == "tied":
        Z = ops.like(terms["P"].T, X) @ (X - center).T  # (d, n)
        mP = ops.like(terms["mP"], X)
        maha = mP @ Z
        maha *= -2.0
        maha += (Z * Z).sum(0)
        maha += (mP * mP).sum(1)[:, None]
    else:
        XT = (X - center).T
        prec = ops.like(terms["prec"], X)
        maha = ops.like(terms["mp"], X) @ XT
        maha *= -2.0
        XT = ops.square_inplace(XT)  # the centred copy is ours: square it in place
        if ctype == "diag":
            maha += prec @ XT
        else:
            maha += prec[:, None] * XT.sum(0)
        maha += ops.like(terms["c"], X)[:, None]
    maha *= -0.5
    maha += ops.like(terms["log_det"] - 0.5 * d * _LOG_2PI, X)[:, None]
    return maha
