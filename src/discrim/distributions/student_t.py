"""Multivariate Student-t components with full or diagonal scale matrices and estimated degrees of freedom."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Literal

import numpy as np
import scipy.optimize
import scipy.special
from array_api_compat import array_namespace

from discrim.backend import ops
from discrim.distributions import _constraints as constraints
from discrim.distributions._base import (
    ComponentFamily,
    Params,
    Stats,
    component_totals,
    host,
    merged_moments,
    weighted_moments,
    weighted_resp_t,
)
from discrim.distributions._special import stirling_remainder

__all__ = ["StudentT", "StudentTParams", "StudentTStats", "log_t_normaliser"]

_COVARIANCE_TYPES = ("full", "diag")
# The degrees of freedom are searched in this interval: below it the component has almost no
# moments, above it it is a normal component to many digits.
DOF_BOUNDS = (1e-2, 1e4)
# Degrees of freedom of the first M-step, which has no E-step (no latent scale weights) behind it.
_DOF_START = 10.0


@dataclass(frozen=True)
class StudentTParams(Params):
    """Locations ``mean`` (n_components, n_features), scale matrices ``covariance`` and degrees
    of freedom ``dof`` (n_components,).

    ``covariance`` has shape (n_components, n_features, n_features) for "full" and
    (n_components, n_features) for "diag"; the covariance of a component is
    ``dof / (dof - 2) * covariance`` (for ``dof > 2``).
    """

    mean: np.ndarray
    covariance: np.ndarray
    dof: np.ndarray


@dataclass(frozen=True)
class StudentTStats(Stats):
    """Statistics of the complete data (rows and their latent scale weights ``u``) given the E-step.

    ``weight`` (K,) the weighted responsibility totals; ``u_weight`` (K,) the totals weighted by
    ``E[u]``; ``mean`` (K, d) the ``E[u]``-weighted means of the rows (missing entries completed
    by their conditional expectation); ``scatter`` about them, (K, d, d) for "full" and (K, d)
    for "diag", including the conditional variance of missing entries; ``dof_term`` (K,) the
    weighted sums of ``E[log u] - E[u]``, NaN for statistics computed without parameters (the
    first M-step). ``+`` merges blocks with the exact pooled-moment rule.
    """

    weight: np.ndarray
    u_weight: np.ndarray
    mean: np.ndarray
    scatter: np.ndarray
    dof_term: np.ndarray

    def __add__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        mean, scatter, _ = merged_moments(self.u_weight[:, None], self.mean, self.scatter,
                                          other.u_weight[:, None], other.mean, other.scatter)
        return StudentTStats(weight=self.weight + other.weight, u_weight=self.u_weight + other.u_weight,
                             mean=mean, scatter=scatter, dof_term=self.dof_term + other.dof_term)


def solve_dof(c, bounds=DOF_BOUNDS):
    """Degrees of freedom ``nu`` solving ``log(nu / 2) - digamma(nu / 2) + 1 + c = 0`` (brentq).

    Parameters
    ----------
    c : float
        ``sum_i r_i (E[log u_i] - E[u_i]) / sum_i r_i`` of one component, <= -1.
    bounds : tuple of float, default=DOF_BOUNDS

    Returns
    -------
    nu : float
        The root, or the nearer bound when the root lies outside ``bounds``.
    """
    def f(nu):
        return np.log(nu / 2) - scipy.special.digamma(nu / 2) + 1.0 + c

    low, high = bounds
    if f(high) >= 0:  # log(x) - digamma(x) decreases to 0: no root below high
        return float(high)
    if f(low) <= 0:
        return float(low)
    return float(scipy.optimize.brentq(f, low, high, xtol=1e-12, rtol=1e-12))


def log_t_normaliser(nu, p):
    """``lgamma((nu + p) / 2) - lgamma(nu / 2) - (p / 2) log(nu pi)`` for every component and count p.

    The log-density of a t row less its log-determinant and kernel. Written with Stirling's
    remainder ``s`` as ``(a + h - 1/2) log1p(h / a) - h - h log(2 pi) + s(a + h) - s(a)``
    (``a = nu / 2``, ``h = p / 2``), an identity whose terms stay of the size of the result: the
    direct difference of the two ``lgamma`` subtracts terms of size ``nu log nu`` and lost all
    digits for large degrees of freedom (38 nats at ``dof=1e17``, where the density is the
    Gaussian's to 16 digits).

    Parameters
    ----------
    nu : ndarray of shape (n_components,)
        Degrees of freedom, > 0.
    p : ndarray of shape (n_counts,)
        Counts of observed entries (0 .. d).

    Returns
    -------
    norm : ndarray of shape (n_components, n_counts)
    """
    a = np.asarray(nu, dtype=np.float64)[:, None] / 2
    h = np.asarray(p, dtype=np.float64)[None, :] / 2
    return ((a + h - 0.5) * np.log1p(h / a) - h - h * np.log(2 * np.pi)
            + stirling_remainder(a + h) - stirling_remainder(a))


class StudentT(ComponentFamily):
    """Multivariate Student-t components ``t_dof(mean_k, covariance_k)``.

    Parameters
    ----------
    covariance_type : {"full", "diag"}, default="full"
        "full": one general scale matrix per component; "diag": one diagonal scale matrix per
        component (the features are uncorrelated but not independent: they share the scale
        weight of their row).
    dof : float or None, default=None
        Degrees of freedom shared by all components and held fixed; None estimates them per
        component by EM.
    reg_covar : float, default=1e-6
        Non-negative amount added to the diagonal of every scale matrix by the M-step;
        ``FiniteMixture(reg_covar=...)`` sets it for a fit.

    Notes
    -----
    A row's density under component k is

    .. math::

        \\frac{\\Gamma((\\nu + d)/2)}{\\Gamma(\\nu/2) (\\nu\\pi)^{d/2} |\\Sigma|^{1/2}}
        \\left(1 + \\delta / \\nu\\right)^{-(\\nu + d)/2},
        \\quad \\delta = (x - \\mu)' \\Sigma^{-1} (x - \\mu),

    with ``mean`` :math:`\\mu`, ``covariance`` :math:`\\Sigma` (the scale matrix) and ``dof``
    :math:`\\nu` (scipy's ``multivariate_t(mean, covariance, df=dof)``). EM treats every row's
    scale weight ``u ~ Gamma(nu/2, nu/2)`` as missing data (Peel and McLachlan, Robust mixture
    modelling using the t distribution, Statistics and Computing 10, 2000): the statistics use
    the E-step's parameters for ``E[u] = (nu + d) / (nu + delta)`` and ``E[log u]``, the
    M-step's mean and scale are weighted by ``E[u]``, and each component's degrees of freedom
    solve ``log(nu/2) - digamma(nu/2) + 1 + mean(E[log u] - E[u]) = 0`` by ``brentq`` in
    ``DOF_BOUNDS`` (1e-2, 1e4). The first M-step, without an E-step, fits with ``u = 1`` and
    starts the degrees of freedom at 10.

    Missing values (a mask) are supported for "diag": a row's density is the t density of its
    observed entries (with their count in place of d), and the statistics complete the missing
    entries by their conditional expectations. For "full", :meth:`log_prob` and
    :meth:`suff_stats` raise ``ValueError`` with a mask: use "diag", or impute the data first.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import StudentT
    >>> fam = StudentT(covariance_type="diag")
    >>> params = fam.make_params({"mean": [[0.0, 0.0]], "covariance": [[1.0, 1.0]], "dof": [3.0]}, 1, 2)
    >>> round(float(fam.log_prob(np.zeros((1, 2)), params)[0, 0]), 4)  # log(1 / (2 pi))
    -1.8379
    """

    params_class = StudentTParams
    fit_options = ("reg_covar",)
    is_discrete = False
    cli_names = {"student-t": {"covariance_type": "full"}, "student-t-diag": {"covariance_type": "diag"}}

    def __init__(self, covariance_type: Literal["full", "diag"] = "full", dof: float | None = None,
                 reg_covar: float = 1e-6) -> None:
        self.covariance_type = covariance_type
        self.dof = dof
        self.reg_covar = reg_covar

    def check_options(self):
        if self.covariance_type not in _COVARIANCE_TYPES:
            raise ValueError(f"covariance_type must be one of {_COVARIANCE_TYPES}; got {self.covariance_type!r}.")
        dof = self.dof
        if dof is not None and (isinstance(dof, bool) or not isinstance(dof, Real) or not (np.isfinite(dof) and dof > 0)):
            raise ValueError(f"dof must be None (estimated) or a finite float > 0; got {dof!r}.")
        reg = self.reg_covar
        if isinstance(reg, bool) or not isinstance(reg, Real) or not (np.isfinite(reg) and reg >= 0):
            raise ValueError(f"reg_covar must be a finite float >= 0; got {reg!r}.")
        return self

    @property
    def arg_constraints(self):
        cov = constraints.positive_definite if self.covariance_type == "full" else constraints.positive
        return {"mean": constraints.real, "covariance": cov, "dof": constraints.positive}

    def param_shapes(self, n_components, n_features):
        k, d = n_components, n_features
        cov = (k, d, d) if self.covariance_type == "full" else (k, d)
        return {"mean": (k, d), "covariance": cov, "dof": (k,)}

    def n_parameters(self, n_features, n_components=1):
        k, d = n_components, n_features
        cov = d * (d + 1) // 2 if self.covariance_type == "full" else d
        return k * (d + cov + (1 if self.dof is None else 0))

    def param_sizes(self, n_features):
        sizes = super().param_sizes(n_features)
        if self.dof is not None:  # fixed by the option: not a free parameter
            sizes["dof"] = 0
        return sizes

    def rows_per_component(self, n_features):
        return n_features + 1 if self.covariance_type == "full" else 2

    def row_footprint(self, n_components, n_features):
        return n_components * (n_features + 4)

    def min_relative_variance(self, params, occupied, feature_var):
        # as the Gaussian's: the smallest eigenvalue of a scale matrix less reg_covar, in the
        # standard units of the data
        scale = np.where(feature_var > 0, feature_var, np.inf)
        cov = params.covariance[occupied]
        if self.covariance_type == "diag":
            return float(np.min((cov - self.reg_covar) / scale))
        inv_sd = 1.0 / np.sqrt(scale)
        d = feature_var.shape[0]
        return float(np.min(np.linalg.eigvalsh((cov - self.reg_covar * np.eye(d)) * inv_sd[:, None] * inv_sd)))

    # --- densities ---------------------------------------------------------------------------

    def takes_missing_values(self):
        return self.covariance_type != "full"

    def _check_mask(self, mask):
        if mask is not None and not self.takes_missing_values():
            raise ValueError("StudentT(covariance_type='full') does not take missing values (NaN): use "
                             "covariance_type='diag', or impute the missing entries first.")

    def _terms(self, params):
        """Cached per parameter set: the center, whitening factors and log-determinants."""

        def compute():
            center = params.mean.mean(axis=0)
            m = params.mean - center
            if self.covariance_type == "full":
                try:
                    chol = np.linalg.cholesky(params.covariance)
                except np.linalg.LinAlgError:
                    raise ValueError("a component scale matrix is not positive definite: increase reg_covar or "
                                     "reduce n_components.") from None
                eye = np.broadcast_to(np.eye(m.shape[1]), chol.shape)
                inv = np.linalg.solve(chol, eye)  # W_k = L_k^-1: delta = |W_k (x - mu_k)|^2
                return {"center": center, "m": m, "inv": inv,
                        "log_det": 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)}
            if not np.all(params.covariance > 0):
                raise ValueError("a component scale is not positive: increase reg_covar or reduce n_components.")
            return {"center": center, "m": m, "prec": 1.0 / params.covariance}

        return params._cached("student_t_terms", compute)

    def _mahalanobis(self, X, params, mask):
        """``delta`` (K, n) over the observed entries, and the count of observed entries (n,)."""
        t = self._terms(params)
        Xc = X - ops.like(t["center"], X)
        k, d = params.mean.shape
        if self.covariance_type == "full":
            out = []
            for j in range(k):
                Z = Xc @ ops.like(t["inv"][j].T, X) - ops.like(t["m"][j] @ t["inv"][j].T, X)
                out.append((Z * Z).sum(1))
            return ops.stack(out), None
        prec, m = t["prec"], t["m"]
        if mask is None:
            sq, lin, ones = Xc * Xc, Xc, None
        else:
            M = ops.like(mask, X)
            Xc = Xc * M
            sq, lin, ones = Xc * Xc, Xc, M
        delta = ops.like(prec, X) @ sq.T - 2.0 * (ops.like(m * prec, X) @ lin.T)
        if ones is None:
            delta += ops.like((m * m * prec).sum(axis=1), X)[:, None]
            return ops.clip_negative_inplace(delta), None
        delta += ops.like(m * m * prec, X) @ ones.T
        return ops.clip_negative_inplace(delta), ones.sum(1)

    @staticmethod
    def _row_table(values, count, X):
        """``values[k, p_i]`` (K, n) in X's dtype for a host table (K, d + 1) and observed counts ``p``.

        ``count`` (n,) in X's namespace, or None when every entry is observed (p = d).
        """
        if count is None:
            return ops.like(values[:, -1], X)[:, None]
        return ops.like(ops.stack([ops.lookup(row, count) for row in values]), X)

    def log_prob(self, X, params, *, mask=None, rows=None):
        self._check_mask(mask)
        xp = array_namespace(X)
        nu = params.dof
        k, d = params.mean.shape
        delta, count = self._mahalanobis(X, params, mask)
        p = np.arange(d + 1, dtype=np.float64)
        # log normaliser for every count of observed entries p = 0..d: (K, d + 1)
        if self.covariance_type == "full":
            log_det = np.repeat(self._terms(params)["log_det"][:, None], d + 1, axis=1)
        else:
            log_det = np.zeros((k, d + 1))
        norm = log_t_normaliser(nu, p) - 0.5 * log_det
        out = self._row_table(norm, count, X)
        if self.covariance_type == "diag":  # the log-determinant of the observed entries
            log_var = np.log(params.covariance)
            if mask is None:
                out = out - 0.5 * ops.like(log_var.sum(axis=1), X)[:, None]
            else:
                out = out - 0.5 * (ops.like(log_var, X) @ ops.like(mask, X).T)
        half = self._row_table((nu[:, None] + p) / 2, count, X)
        out = out - half * xp.log1p(delta / ops.like(nu, X)[:, None])
        return out.T

    # --- M-step ------------------------------------------------------------------------------

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        self._check_mask(mask)
        wr_t = weighted_resp_t(resp, sample_weight)
        k, d = resp.shape[1], X.shape[1]
        if params is None:
            if mask is not None:
                raise ValueError("suff_stats of a StudentT with a mask needs params (the E-step's parameters): "
                                 "missing entries are completed by their conditional expectations.")
            u = ops.like(np.ones((k, 1)), X)
            dof_term = np.full(k, np.nan)
        else:
            xp = array_namespace(X)
            nu = params.dof
            delta, count = self._mahalanobis(X, params, mask)
            p = np.arange(d + 1, dtype=np.float64)
            num = self._row_table(nu[:, None] + p, count, X)
            nu_x = ops.like(nu, X)[:, None]
            u = num / (nu_x + delta)  # E[u] (K, n)
            log_u = self._row_table(scipy.special.digamma((nu[:, None] + p) / 2), count, X) \
                - xp.log((nu_x + delta) / 2)
            dof_term = host(((log_u - u) * wr_t).sum(1))
        ru = wr_t * u  # (K, n)
        weight = component_totals(wr_t)
        full = self.covariance_type == "full"
        if mask is None:
            # the Gaussian's moments under the weights E[u] r: a gross outlier (the data this family
            # is for) lies far from the block's centre, and its component's moments take a second pass
            u_weight, mean, scatter = weighted_moments(X, ru, full)
        else:
            u_weight = component_totals(ru)
            safe = np.where(u_weight > 0, u_weight, 1.0)
            # diag: a missing entry of component k is completed by mean_k and adds its
            # conditional variance E[u (x - mean)^2] = covariance_k to the scatter
            M = ops.like(mask, X)
            center = params.mean.mean(axis=0)
            Xc = (X - ops.like(center, X)) * M  # 0 at the missing entries
            mc = params.mean - center
            Mis = 1.0 - M
            # sum_i ru_i xhat_i with xhat = x (observed) or mc_k (missing)
            missing_weight = host(ops.matmul(ru, Mis))  # (K, d): sum_i ru_i over the rows missing the feature
            first = host(ops.matmul(ru, Xc)) + missing_weight * mc
            mean_c = first / safe[:, None]
            second = host(ops.matmul(ru, Xc * Xc)) + missing_weight * mc**2
            scatter = (np.maximum(second - u_weight[:, None] * mean_c**2, 0.0)
                       + host(ops.matmul(wr_t, Mis)) * params.covariance)
            mean = mean_c + center
        mean[u_weight <= 0] = 0.0
        return StudentTStats(weight=weight, u_weight=u_weight, mean=mean, scatter=scatter, dof_term=dof_term)

    def params_from_stats(self, stats, current=None):
        return self._m_step(stats, current)

    def log_penalty(self, params, stats):
        return None  # the scale's floor within the ECM step is not stated as a penalty here

    def _m_step(self, stats, current, mean=None):
        """M-step; with ``mean`` given (K, d), the scale about it instead of the weighted mean."""
        k, d = stats.mean.shape
        weight = stats.weight
        empty = weight <= 0
        safe = np.where(empty, 1.0, weight)
        scatter = stats.scatter
        if mean is None:
            mean = stats.mean.copy()
        else:
            shift = stats.mean - mean
            if scatter.ndim == 3:
                scatter = scatter + stats.u_weight[:, None, None] * shift[:, :, None] * shift[:, None, :]
            else:
                scatter = scatter + stats.u_weight[:, None] * shift**2
        if self.covariance_type == "full":
            cov = scatter / safe[:, None, None]
            cov[empty] = np.eye(d)
            cov = cov + self.reg_covar * np.eye(d)
        else:
            cov = scatter / safe[:, None]
            cov[empty] = 1.0
            cov = cov + self.reg_covar
        return StudentTParams(mean=mean, covariance=cov, dof=self._dof(stats, current))

    def _dof(self, stats, current):
        """Degrees of freedom of every component: fixed, started, or solved from the statistics."""
        k = stats.weight.shape[0]
        if self.dof is not None:
            return np.full(k, float(self.dof))
        start = np.full(k, _DOF_START) if current is None else np.asarray(current.dof, dtype=np.float64).copy()
        out = start.copy()
        for j in range(k):
            if stats.weight[j] > 0 and np.isfinite(stats.dof_term[j]):
                out[j] = solve_dof(stats.dof_term[j] / stats.weight[j])
        return out

    def params_given(self, stats, fixed, current=None):
        # The scale about a fixed mean; the mean and the degrees of freedom do not depend on the
        # scale (given the E-step's weights), nor on each other.
        mean = None
        if "mean" in fixed:
            value, where = fixed["mean"]
            mean = np.where(where, value, stats.mean)
        params = self._m_step(stats, current, mean=mean).as_dict()
        for name, (value, where) in fixed.items():
            params[name] = np.where(where, value, params[name])
        return StudentTParams(**params)

    # --- completion and sampling ---------------------------------------------------------------

    def component_means(self, params, n_rows=1, rows=None):
        return params.mean

    def conditional_mean(self, X, params, observed, rows=None):
        # uncorrelated features ("diag"): the conditional mean of a missing entry is its mean
        if not observed.all():
            self._check_mask(observed)
        return super().conditional_mean(X, params, observed, rows)

    def conditional_sample(self, X, params, observed, components, rng, rows=None):
        if observed.all():
            return np.array(X, dtype=np.float64)
        self._check_mask(observed)
        # diag: u | x_o ~ Gamma((nu + p_o) / 2, rate (nu + delta_o) / 2), x_m | u ~ N(mean_m, cov_m / u)
        mask = np.broadcast_to(observed, X.shape)
        delta, _ = self._mahalanobis(np.where(mask, X, 0.0), params, mask)
        rows_i = np.arange(X.shape[0])
        nu = params.dof[components]
        p = observed.sum()
        u = rng.gamma((nu + p) / 2.0, 2.0 / (nu + delta[components, rows_i]))
        z = rng.standard_normal(X.shape)
        draw = params.mean[components] + z * np.sqrt(params.covariance[components] / u[:, None])
        return np.where(observed, X, draw)

    def sample(self, params, n_per_component, rng):
        k, d = params.mean.shape
        blocks = []
        for j, m in enumerate(n_per_component):
            m = int(m)
            z = rng.standard_normal((m, d))
            if self.covariance_type == "full":
                z = z @ np.linalg.cholesky(params.covariance[j]).T
            else:
                z = z * np.sqrt(params.covariance[j])
            u = rng.gamma(params.dof[j] / 2.0, 2.0 / params.dof[j], size=m)
            blocks.append(params.mean[j] + z / np.sqrt(u)[:, None])
        return np.concatenate(blocks, axis=0)
