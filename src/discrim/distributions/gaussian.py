"""Gaussian components with any of the 14 covariance models of mclust (scikit-learn's four among them)."""

import copy
from dataclasses import dataclass
from numbers import Real

import numpy as np

from discrim.distributions import _constraints as constraints
from discrim.backend import ops, to_numpy
from discrim.distributions._base import (
    ComponentFamily,
    Params,
    Stats,
    component_totals,
    host,
    merged_moments,
    per_feature_weight,
    weighted_moments,
    weighted_resp_t,
)
from discrim.distributions._covariance_models import (
    COVARIANCE_MODELS,
    M_STEP_METHODS,
    SKLEARN_TYPES,
    UNIVARIATE_TYPES,
    covariance_mle,
    model_name,
    n_covariance_parameters,
    storage_of,
)
from discrim.distributions._gaussian_prior import PRIOR_MODELS, GaussianPrior, map_moments, resolve_prior
from discrim.distributions._gaussian_missing import (
    BlockConditioning,
    BufferPool,
    ConditionedRows,
    MissingPatterns,
)
from discrim.distributions._gaussian_linalg import (
    SingularCovarianceError,
    cholesky_factors,
    inverse_lower,
)

__all__ = ["Gaussian", "GaussianParams", "GaussianStats"]

_COVARIANCE_TYPES = (*SKLEARN_TYPES, *COVARIANCE_MODELS, *UNIVARIATE_TYPES)
_LOG_2PI = float(np.log(2 * np.pi))
# Rows per block when log_prob is called on a large X directly (EM passes its own blocks).
_BLOCK_ELEMENTS = 1 << 22
# A covariance is collapsing (Gaussian.collapsing_components) when its smallest eigenvalue lies within
# _COLLAPSE_FLOORS times reg_covar and below _COLLAPSE_SHARE of its largest.
_COLLAPSE_FLOORS = 100.0
_COLLAPSE_SHARE = 1e-4
# Bytes of rows per block in the scatter of labelled rows: a block stays in cache and the
# temporaries stay small however large X is.
_SCATTER_BLOCK_BYTES = 1 << 23
# The name of a block's missingness patterns in its per-row data (see Gaussian.block_rows).
_PATTERNS = "missing patterns"


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
        mean, scatter, n = merged_moments(per_feature_weight(self), self.mean, self.scatter,
                                          per_feature_weight(other), other.mean, other.scatter)
        return GaussianStats(weight=self.weight + other.weight, mean=mean, scatter=scatter,
                             observed=None if self.observed is None else n)


class Gaussian(ComponentFamily):
    """Multivariate normal components ``N(mean_k, covariance_k)``.

    Parameters
    ----------
    covariance_type : str, default="full"
        scikit-learn's "full" (one general covariance per component), "diag" (one diagonal
        covariance per component), "tied" (one general covariance shared by all components),
        "spherical" (one variance per component), or any of mclust's 14 models "EII", "VII",
        "EEI", "VEI", "EVI", "VVI", "EEE", "VEE", "EVE", "VVE", "EEV", "VEV", "EVV", "VVV"
        (the four are "VVV", "VVI", "EEE" and "VII"); see Notes. For one feature also mclust's
        "E" (equal variances, EII there) and "V" (varying, VII there).
    reg_covar : float, default=1e-6
        Non-negative amount added to the diagonal of every covariance by the M-step
        (:meth:`params_from_stats`). ``FiniteMixture(reg_covar=...)`` sets it for a fit.
    prior : None, "default" or GaussianPrior, default=None
        None: maximum-likelihood M-steps. "default" (``GaussianPrior()``, mclust's
        ``priorControl()``) or a :class:`GaussianPrior`: the conjugate prior of Fraley and
        Raftery (2007), and EM then finds the posterior mode (MAP) as mclust's EM with a prior
        does; available for the models "EII", "VII", "EEI", "VEI", "EVI", "VVI", "EEE", "EEV",
        "VEV" and "VVV" (as in mclust). ``reg_covar`` is still added: pass ``reg_covar=0`` for
        mclust's estimates. See Notes.
    m_step : {"exact", "mclust"}, default="exact"
        How the M-step finds the covariances of EVE and VVE, the models whose orientation has no
        closed form. "exact": it maximises the expected complete-data log-likelihood (to a
        relative change of 1e-10). "mclust": it runs mclust 6's inner iterations instead, from
        mclust's starting point and with its stopping rule, so that EM from mclust's start
        reproduces mclust's fit (``me``, ``Mclust``); mclust's VVE M-step does not maximise the
        likelihood over the common orientation, and its EM mostly ends lower. Every other model
        has one M-step for both. See Notes.

    Notes
    -----
    **Covariance models.** mclust's models (Celeux and Govaert, 1995) decompose each covariance
    as ``Sigma_k = lambda_k D_k A_k D_k'``: volume ``lambda_k = |Sigma_k|^(1/d)``, a diagonal
    shape ``A_k`` of determinant 1 and an orthogonal orientation ``D_k``. The three letters of a
    name say whether volume, shape and orientation are Equal across components, Variable, or the
    Identity:

    =====  ==========================  =======================  ========================
    model  covariance                  M-step                   stored as
    =====  ==========================  =======================  ========================
    EII    ``lambda I``                closed form              "spherical" (K,)
    VII    ``lambda_k I``              closed form              "spherical" (K,)
    EEI    ``lambda A``                closed form              "diag" (K, d)
    VEI    ``lambda_k A``              alternating              "diag" (K, d)
    EVI    ``lambda A_k``              closed form              "diag" (K, d)
    VVI    ``lambda_k A_k``            closed form              "diag" (K, d)
    EEE    ``lambda D A D'``           closed form              "tied" (d, d)
    VEE    ``lambda_k D A D'``         alternating              "full" (K, d, d)
    EVE    ``lambda D A_k D'``         alternating (MM for D)   "full" (K, d, d)
    VVE    ``lambda_k D A_k D'``       alternating (MM for D)   "full" (K, d, d)
    EEV    ``lambda D_k A D_k'``       closed form              "full" (K, d, d)
    VEV    ``lambda_k D_k A D_k'``     alternating              "full" (K, d, d)
    EVV    ``lambda D_k A_k D_k'``     closed form              "full" (K, d, d)
    VVV    ``lambda_k D_k A_k D_k'``   closed form              "full" (K, d, d)
    =====  ==========================  =======================  ========================

    The alternating M-steps (see :mod:`discrim.distributions._covariance_models`) start from
    the current parameters and iterate to a relative change of 1e-10 in the likelihood. The
    number of free parameters is mclust's (``nVarParams``), so BIC is mclust's up to its sign.

    **mclust's EVE and VVE.** mclust updates the common orientation ``D`` by the
    majorise-minimise algorithms of Browne and McNicholas (2014), ``sum_k tr(D' W_k D A_k^-1)``
    with the shapes ``A_k`` of its previous inner iteration, and stops when that sum changes by
    less than sqrt(machine epsilon), relative (its ``emControl()$tol[2]``). For EVE this is the
    likelihood's own step and EM ends where discrim's exact M-step does. For VVE the update
    leaves out the volumes ``lambda_k`` (the likelihood's orientation step minimises
    ``sum_k tr(D' W_k D A_k^-1) / lambda_k``), so even run to convergence it does not maximise
    the likelihood, and EM from the same start ends at another fit, mostly of lower likelihood
    (iris and wine by 1e-3 to 7e-2 of the BIC). ``m_step="mclust"`` reproduces these
    iterations, including mclust's start ``D = I``, ``A_k = I`` in EM's first M-step.

    Parameters are ``mean`` (n_components, n_features) and ``covariance``, stored as in
    :class:`sklearn.mixture.GaussianMixture` (column "stored as" above). Log-densities use the Cholesky factor of each
    precision matrix: for "full", the factors of all components are stacked into one
    (n_features, n_components * n_features) matrix, so the Mahalanobis terms of every component
    come from a single matrix product. The weighted MLE adds ``reg_covar`` to the diagonal of
    every covariance (to every scatter matrix ``W_k``, as ``reg_covar n_k I``, so that every
    model keeps its constraints), which keeps a component that collapses onto a few points
    positive definite. With a mask of observed entries, a row's density is the marginal density of its
    observed entries; the statistics of "full" and "tied" components complete the unobserved
    entries by their conditional expectations under the E-step's parameters (the EM of
    Little and Rubin, Statistical Analysis with Missing Data, section 11.2).

    **Prior.** With ``prior``, the M-step returns mclust's MAP means and covariances
    (:func:`discrim.distributions._gaussian_prior.map_moments` tabulates them), the mixing
    weights stay ``n_k / n``, and a mixture's log-likelihood, ``lower_bounds_`` and BIC are those
    of the data at the MAP estimate, without the log prior (as mclust's ``loglik`` and BIC).
    The prior's defaults that depend on the data (its mean and scale) are filled in by
    :class:`~discrim.mixture.FiniteMixture` once per fit (see :class:`GaussianPrior`).

    References
    ----------
    Browne, R. P. and McNicholas, P. D. (2014). Estimating common principal components in high
    dimensions. Advances in Data Analysis and Classification, 8(2), 217-226.

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
    fit_options = ("reg_covar", "prior", "m_step")
    # The default for objects restored from files written before reg_covar was an option of the
    # family (their mixtures carried it and still pass it to the family).
    reg_covar = 1e-6
    cli_names = {"gaussian": {"covariance_type": "full"}, "gaussian-diag": {"covariance_type": "diag"},
                 "gaussian-tied": {"covariance_type": "tied"}, "gaussian-spherical": {"covariance_type": "spherical"},
                 **{f"gaussian-{name}": {"covariance_type": name} for name in COVARIANCE_MODELS}}

    # The defaults for objects restored from files written before the prior and m_step were options.
    prior = None
    m_step = "exact"

    def __init__(self, covariance_type: str = "full", reg_covar: float = 1e-6,
                 prior: "str | GaussianPrior | None" = None, m_step: str = "exact") -> None:
        self.covariance_type = covariance_type
        self.reg_covar = reg_covar
        self.prior = prior
        self.m_step = m_step

    def _prior(self):
        """The prior as a GaussianPrior, or None."""
        return GaussianPrior() if isinstance(self.prior, str) and self.prior == "default" else self.prior

    def uses_data_defaults(self) -> bool:
        """Whether the prior has defaults that depend on the data (see :meth:`fill_data_defaults`).

        Returns
        -------
        needed : bool
        """
        prior = self._prior()
        return prior is not None and not prior.resolved

    def fill_data_defaults(self, data_stats: Stats, n_components: int) -> "Gaussian":
        """The family with its prior's data-dependent defaults set from the statistics of all rows.

        Parameters
        ----------
        data_stats : GaussianStats
            :meth:`suff_stats` of all rows with a single component (responsibilities 1).
        n_components : int
            G, the number of Gaussian components.

        Returns
        -------
        family : Gaussian
            A copy whose ``prior`` is a resolved :class:`GaussianPrior`; self without a prior.
        """
        prior = self._prior()
        if prior is None or prior.resolved:
            return self
        resolved = _resolve_from_stats(prior, self.model_name, data_stats, n_components)
        return type(self)(covariance_type=self.covariance_type, reg_covar=self.reg_covar, prior=resolved,
                          m_step=self.m_step)

    def check_data(self, X, rows=None):
        if self.covariance_type in UNIVARIATE_TYPES and X.shape[1] != 1:
            raise ValueError(
                f"covariance_type={self.covariance_type!r} is mclust's name of a model of one feature; X has "
                f"{X.shape[1]}: use the model's name for several, e.g. {self.covariance_type + 'II'!r}."
            )
        return super().check_data(X, rows)

    def check_options(self):
        if self.covariance_type not in _COVARIANCE_TYPES:
            raise ValueError(
                f"covariance_type must be one of {_COVARIANCE_TYPES}; got {self.covariance_type!r}."
            )
        reg = self.reg_covar
        if isinstance(reg, bool) or not isinstance(reg, Real) or not (np.isfinite(reg) and reg >= 0):
            raise ValueError(f"reg_covar must be a finite float >= 0; got {reg!r}.")
        if not (isinstance(self.m_step, str) and self.m_step in M_STEP_METHODS):
            raise ValueError(f"m_step must be one of {M_STEP_METHODS}; got {self.m_step!r}.")
        prior = self.prior
        if prior is not None:
            if not (isinstance(prior, GaussianPrior) or (isinstance(prior, str) and prior == "default")):
                raise ValueError(f"prior must be None, 'default' or a GaussianPrior(...); got {prior!r}.")
            if self.model_name not in PRIOR_MODELS:
                raise ValueError(f"prior is not available for covariance_type={self.covariance_type!r} (nor in "
                                 f"mclust): choose one of {sorted(PRIOR_MODELS)} or prior=None.")
            self._prior().check(self.model_name)
        return self

    @property
    def _storage(self):
        """How the covariances are stored: "full", "diag", "tied" or "spherical"."""
        return storage_of(self.covariance_type)

    @property
    def model_name(self):
        """mclust's name of the covariance model ("VVV" for scikit-learn's "full", ...)."""
        return model_name(self.covariance_type)

    @property
    def arg_constraints(self):
        cov = constraints.positive_definite if self._storage in ("full", "tied") else constraints.positive
        return {"mean": constraints.real, "covariance": cov}

    def row_footprint(self, n_components, n_features):
        # "full" holds (x - mu_k) P_k for every k: K * d floats per row
        if self._storage == "full":
            return n_components * n_features
        return n_components + 2 * n_features

    def shared_params(self):
        return ("covariance",) if self._storage == "tied" else ()

    is_discrete = False

    def rows_per_component(self, n_features):
        # A covariance with its own orientation needs d + 1 points in general position, its own
        # volume or shape two; what is pooled over all components needs none of its own. With a
        # prior the posterior mode is defined on any rows (mclust reports such fits).
        if self.prior is not None:
            return 0
        volume, shape, orientation = self.model_name
        if orientation == "V":
            return n_features + 1
        return 2 if "V" in (volume, shape) else 0

    def min_relative_variance(self, params, occupied, feature_var):
        ctype = self._storage
        reg_covar = self.reg_covar
        cov = params.covariance
        d = feature_var.shape[0]
        # A constant feature has no spread to compare with: it does not mark components singular.
        scale = np.where(feature_var > 0, feature_var, np.inf)
        if not np.isfinite(scale).any():  # every feature constant (a single row): nothing to compare with
            return np.inf
        if ctype in ("full", "tied"):
            mats = cov[occupied] if ctype == "full" else cov[None]
            inv_sd = 1.0 / np.sqrt(scale)
            scaled = (mats - reg_covar * np.eye(d)) * inv_sd[:, None] * inv_sd[None, :]
            return float(np.min(np.linalg.eigvalsh(scaled)))
        if ctype == "diag":
            return float(np.min((cov[occupied] - reg_covar) / scale))
        return float(np.min((cov[occupied] - reg_covar) / np.max(scale[np.isfinite(scale)], initial=0.0)))

    def collapsing_components(self, params, scale=None):
        # within _COLLAPSE_FLOORS times reg_covar, and a small share of the largest variance of the
        # components (or of ``scale``): data in tiny units, whose variances are all near reg_covar,
        # are not collapsing; a component whose every variance sank there beside others is
        cov = np.asarray(params.covariance, dtype=np.float64)
        if self._storage in ("full", "tied"):
            values = np.linalg.eigvalsh(cov if cov.ndim == 3 else cov[None])
        elif self._storage == "spherical":
            values = cov.reshape(-1, 1)
        else:
            values = np.sort(cov, axis=1)
        smallest = values[:, 0]
        largest = values[:, -1].max() if scale is None else max(float(scale), values[:, -1].max())
        # the spread of the means too: components that all collapsed onto distinct points have no
        # larger variance of their own to be compared with
        largest = max(largest, float(np.var(np.asarray(params.mean, dtype=np.float64), axis=0).max()))
        collapsing = (smallest < _COLLAPSE_FLOORS * self.reg_covar) & (smallest < _COLLAPSE_SHARE * largest)
        if self._storage == "tied":
            return np.arange(params.mean.shape[0]) if collapsing[0] else np.zeros(0, dtype=int)
        return np.flatnonzero(collapsing)

    def log_penalty(self, params, stats):
        # The M-step adds reg_covar n_k I to every scatter W_k (covariance_mle): it maximises
        # the expected log-likelihood less (reg_covar / 2) sum_k n_k tr(Sigma_k^-1). With a mask,
        # VVI and VII weigh each feature by the total of the rows that observed it. A prior's
        # MAP step is another objective, not stated here.
        if self._prior() is not None:
            return None
        if self.reg_covar == 0:
            return 0.0
        n = np.asarray(stats.weight, dtype=np.float64)
        if self._storage in ("full", "tied"):
            precision = params._cached("precision", lambda: _precisions(self._storage, params))[0]
            traces = np.trace(precision, axis1=1, axis2=2)  # (K,) full, (1,) tied
            weighted = float(n @ traces) if self._storage == "full" else float(n.sum() * traces[0])
            return -0.5 * self.reg_covar * weighted
        cov = np.asarray(params.covariance, dtype=np.float64)  # (K, d) diag, (K,) spherical
        if stats.observed is not None and self.model_name in ("VVI", "VII"):
            observed = np.asarray(stats.observed, dtype=np.float64)  # (K, d)
            per_feature = observed if self._storage == "diag" else observed.sum(axis=1)
            return -0.5 * self.reg_covar * float(np.sum(per_feature / cov))
        # n_k times tr(Sigma_k^-1): the inverse variances of diag, d / variance of spherical
        inverse = (1.0 / cov).sum(axis=1) if self._storage == "diag" else params.mean.shape[1] / cov
        return -0.5 * self.reg_covar * float(n @ inverse)

    def param_shapes(self, n_components, n_features):
        k, d = n_components, n_features
        cov = {"full": (k, d, d), "diag": (k, d), "tied": (d, d), "spherical": (k,)}[self._storage]
        return {"mean": (k, d), "covariance": cov}

    def n_parameters(self, n_features, n_components=1):
        return n_components * n_features + n_covariance_parameters(self.covariance_type, n_features, n_components)

    # log-density -----------------------------------------------------------------------

    def _precision_cholesky(self, params, single=False):
        """Cached per parameter set and precision: the factors log_prob needs (see :meth:`log_prob`)."""
        return params._cached(("precision_cholesky", single), lambda: _precision_terms(self._storage, params, single))

    def log_prob(self, X, params, *, mask=None, rows=None):
        if mask is not None:
            return self._masked_log_prob(X, params, mask, rows)
        terms = self._precision_cholesky(params, single=_is_single(X))
        n = X.shape[0]
        k, d = params.mean.shape
        step = max(4096, _BLOCK_ELEMENTS // max(1, k * d))
        if n <= step:
            return _log_prob_block(self._storage, X, terms, d).T
        return ops.concat_rows([_log_prob_block(self._storage, X[s : s + step], terms, d).T
                                for s in range(0, n, step)])

    def _masked_log_prob(self, X, params, mask, rows):
        """Marginal log-densities of the observed entries of every row (see :meth:`log_prob`)."""
        if self._storage in ("diag", "spherical"):
            # independent features: the marginal density is the sum over the observed ones, from
            # the same centred terms as the complete rows' (see _precision_terms)
            terms = self._precision_cholesky(params, single=_is_single(X))
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
        # full or tied: each row conditioned on its observed entries (see _gaussian_missing)
        return ops.like(self._conditioned(X, mask, params, rows, keep=True).log_prob, X)

    def block_rows(self, mask, rows, slices):
        # "full" and "tied" with a mask: each block's missingness patterns, found once per fit from
        # one table of the whole mask, so that all blocks share the pattern inverses of a parameter set
        data = super().block_rows(mask, rows, slices)
        if mask is None or self._storage in ("diag", "spherical"):
            return data
        patterns, pool = MissingPatterns.of_blocks(_host_bool(mask), slices), BufferPool()
        return [{**(block or {}), _PATTERNS: BlockConditioning(p, pool)} for block, p in zip(data, patterns)]

    def _conditioned(self, X, mask, params, rows=None, keep=False):
        """The rows of X with missing entries conditioned on the observed ones ("full", "tied").

        With the block data of a fit (:meth:`block_rows`) the patterns are the fit's, and the
        E-step's conditioning (``keep=True``) serves the M-step of the same parameters, which
        releases it (:meth:`ConditionedRows.release`); otherwise the rows' patterns are found here.
        """
        precision, log_det_cov = params._cached("precision", lambda: _precisions(self._storage, params))
        host_mask = _host_bool(mask)

        # the pattern inverses of one call (one per count of missing features, and their table),
        # twice over for two calls at once: what a fitted model keeps from one call to the next
        limit = 2 * (host_mask.shape[1] + 1)

        def cache(key, compute):
            return params._cached_for_rows(key, compute, limit)

        def condition(patterns, pool=None, rows_t=None):
            return ConditionedRows(host(X), patterns, host_mask, params.mean, precision, log_det_cov, cache, pool,
                                   rows_t)

        block = None if rows is None else rows.get(_PATTERNS)
        if block is None:
            return condition(MissingPatterns(host_mask))
        return block.conditioned(params, condition, keep)

    # M-step ----------------------------------------------------------------------------

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        wr_t = weighted_resp_t(resp, sample_weight)
        if mask is None:
            return self._moments(X, wr_t)
        if self._storage in ("diag", "spherical"):
            return self._observed_moments(X, wr_t, mask)
        if params is None:
            raise ValueError(
                f"suff_stats of a {self.covariance_type!r} Gaussian with a mask needs params (the "
                "E-step's parameters): unobserved entries are completed by their conditional expectations."
            )
        conditioned = self._conditioned(X, mask, params, rows)
        wr_t = host(wr_t)
        # the moments of the completed rows (about each component's mean, where they lie), and the
        # conditional covariance of their missing entries
        in_order = wr_t if conditioned.order is None else np.take(wr_t, conditioned.order, axis=1)
        stats = self._moments(conditioned.centred_t, in_order, origin=params.mean)
        scatter = stats.scatter + conditioned.conditional_scatter(wr_t)
        conditioned.release()
        return GaussianStats(weight=stats.weight, mean=stats.mean, scatter=scatter)

    def _moments(self, X, wr_t, origin=None):
        """Statistics of fully observed rows under weighted responsibilities ``wr_t`` (K, n).

        ``X`` (n, d) holds the rows of all components; with ``origin`` (K, d), "full" and "tied"
        only, ``X`` (K, d, n) holds each component's own rows less its origin, transposed (rows
        completed under each component, less its mean), and the moments are taken about that origin.
        """
        weight, mean, scatter = weighted_moments(X, wr_t, self._storage in ("full", "tied"), origin)
        return GaussianStats(weight=weight, mean=mean, scatter=scatter)

    def _observed_moments(self, X, wr_t, mask):
        """Per-feature statistics of the observed entries ("diag", "spherical")."""
        M = ops.like(mask, X)
        wr_t = ops.like(wr_t, X)
        weight = component_totals(wr_t)
        observed = host(ops.matmul(wr_t, M))
        safe = np.where(observed > 0, observed, 1.0)
        ones = ops.like(np.ones(X.shape[0]), X)
        # centre about the mean of the observed entries of each feature, as _moments does
        count = host(ops.matmul(ones, M))
        center = host(ops.matmul(ones, X * M)) / np.where(count > 0, count, 1.0)
        Xc = (X - ops.like(center, X)) * M
        mean_c = host(ops.matmul(wr_t, Xc)) / safe
        second = host(ops.matmul(wr_t, ops.square_inplace(Xc * 1.0)))
        scatter = np.maximum(second - observed * mean_c**2, 0.0)
        mean = np.where(observed > 0, mean_c + center, 0.0)
        return GaussianStats(weight=weight, mean=mean, scatter=scatter, observed=observed)

    def component_means(self, params, n_rows=1, rows=None):
        return params.mean

    def conditional_mean(self, X, params, observed, rows=None):
        if self._storage in ("diag", "spherical"):  # independent features
            return super().conditional_mean(X, params, observed, rows)
        return self._conditioned(X, np.broadcast_to(observed, X.shape), params).completed

    def conditional_sample(self, X, params, observed, components, rng, rows=None):
        if self._storage in ("diag", "spherical"):
            return super().conditional_sample(X, params, observed, components, rng, rows)
        return self._conditioned(X, np.broadcast_to(observed, X.shape), params).draw(components, rng)

    def labelled_stats(self, X: "np.typing.ArrayLike", labels: np.ndarray, sample_weight: np.ndarray,
                       n_components: int) -> GaussianStats:
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
        full = self._storage in ("full", "tied")
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
        mean, scatter = stats.mean.copy(), stats.scatter
        prior = self._prior()
        if stats.observed is not None:  # a mask, and the "diag" or "spherical" storage
            if self.model_name in ("VVI", "VII") and prior is None:
                return GaussianParams(mean=mean, covariance=self._observed_variances(stats))
            mean, scatter = _completed_moments(stats, current)
        previous = None if current is None else current.covariance
        weight = stats.weight
        if prior is not None:
            if not prior.resolved:  # outside a mixture's fit: the pooled statistics of the components
                prior = _resolve_from_stats(prior, self.model_name, sum(_split(stats)), stats.weight.shape[0])
            prior.check(self.model_name, mean.shape[1])
            mean, weight, scatter = map_moments(self._map_model(weight.shape[0], mean.shape[1]), prior, weight, mean,
                                                scatter)
        cov = covariance_mle(self.covariance_type, weight, scatter, self.reg_covar, previous, self.m_step)
        return GaussianParams(mean=mean, covariance=cov)

    # set on the fitted copy by beside_noise(): not an option of the model, so not in get_params
    _beside_noise = False

    def beside_noise(self):
        if self._prior() is None:  # without a prior one component's M-step is every model's own
            return self
        family = copy.copy(self)
        family._beside_noise = True
        return family

    def _map_model(self, n_components, n_features):
        """The model whose MAP formulas a prior's M-step takes, as mclust's EM picks them.

        Its own, except: for one component, mclust fits every model by its single-component one
        (``mvnXII``, ``mvnXXI``, ``mvnXXX``), whose formulas are VII's, VVI's and EEE's (EII, 1 and
        VII, 1 were two fits of one model), unless a noise component is beside it (:meth:`beside_noise`:
        mclust's EM then fits it by the model's own formulas, EII,1 and VII,1 two models); on one feature with several components, mclust's
        univariate "E" and "V" (``me1ep``, ``me1vp``), whose formulas differ from EII's and VII's
        (see :func:`~discrim.distributions._gaussian_prior.map_moments`).
        """
        if n_components == 1 and not self._beside_noise:
            return {"spherical": "VII", "diag": "VVI"}.get(self._storage, "EEE")
        if n_features == 1 and self.model_name in ("EII", "VII"):
            return self.model_name[0]
        return self.model_name

    def params_given(self, stats: Stats, fixed: "dict[str, tuple[np.ndarray, np.ndarray]]",
                     current: "Params | None" = None) -> GaussianParams:
        """The M-step with fixed entries: a fixed mean moves the scatter to it before the covariance step.

        The covariance that maximises the likelihood about a mean ``mu_k`` is that of the scatter
        about ``mu_k``: ``W_k + n_k (m_k - mu_k)(m_k - mu_k)'`` with ``m_k`` the weighted mean.
        Fixed entries of a mean row are either the whole row or, with independent features
        ("diag" and "spherical" storage), any of its entries; the free entries keep ``m_k``.

        Parameters
        ----------
        stats : GaussianStats
        fixed : dict of str to tuple of (ndarray, ndarray of bool)
            As in :meth:`ComponentFamily.params_given`.
        current : GaussianParams or None, default=None

        Returns
        -------
        params : GaussianParams
        """
        if "mean" not in fixed:
            return super().params_given(stats, fixed, current)
        value, where = fixed["mean"]
        partial = where.any(axis=1) & ~where.all(axis=1)
        if self._storage in ("full", "tied") and partial.any():
            raise ValueError(
                "a Gaussian with a full or tied covariance takes a fixed mean only for whole components "
                "(all features of a component's mean): fix every feature of those components' means."
            )
        mean = np.where(where, value, stats.mean)
        shift = stats.mean - mean
        weight = per_feature_weight(stats)
        if stats.scatter.ndim == 3:
            scatter = stats.scatter + weight[:, :1, None] * shift[:, :, None] * shift[:, None, :]
        else:
            scatter = stats.scatter + weight * shift**2
        moved = GaussianStats(weight=stats.weight, mean=mean, scatter=scatter, observed=stats.observed)
        return super().params_given(moved, fixed, current)

    def _observed_variances(self, stats):
        """VVI and VII from the moments of the observed entries: their direct MLE with a mask."""
        w = stats.observed
        if self._storage == "spherical":  # pooled over the observed entries of the component's rows
            total = w.sum(axis=1)
            cov = stats.scatter.sum(axis=1) / np.where(total > 0, total, 1.0)
        else:
            cov = np.where(w > 0, stats.scatter / np.where(w > 0, w, 1.0), 1.0)
        cov[stats.weight <= 0] = 1.0
        return cov + self.reg_covar

    # sampling ---------------------------------------------------------------------------

    def sample(self, params, n_per_component, rng):
        ctype = self._storage
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


def _split(stats):
    """The statistics of every component as separate one-component statistics (their sum pools them)."""
    return [GaussianStats(weight=stats.weight[j : j + 1], mean=stats.mean[j : j + 1],
                          scatter=stats.scatter[j : j + 1],
                          observed=None if stats.observed is None else stats.observed[j : j + 1])
            for j in range(stats.weight.shape[0])]


def _resolve_from_stats(prior, model, data_stats, n_components):
    """A resolved prior from one-component statistics of all rows: their mean and covariance (divisor n - 1)."""
    n = float(data_stats.weight[0])
    if data_stats.observed is not None:
        mean, scatter = _completed_moments(data_stats, None)
    else:
        mean, scatter = data_stats.mean, data_stats.scatter
    cov = scatter[0] / max(n - 1.0, np.finfo(float).tiny)
    d = mean.shape[1]
    if cov.ndim == 2 and n <= d:  # mclust: the diagonal when there are no more rows than features
        cov = np.diag(np.diag(cov))
    return resolve_prior(prior, model, mean[0], cov, n_components)


def _completed_moments(stats, current):
    """Means (K, d) and scatter diagonals (K, d) of the rows with their missing entries completed.

    The EM of independent features with missing entries (Little and Rubin, section 11.2): a
    missing entry of a row of component k is ``N(mu_kj, sigma2_kj)`` under the E-step's
    parameters, so it adds its expected value to the mean and its variance about the new mean to
    the scatter. Without current parameters (the first M-step) they are the observed moments.
    ``stats`` are per-feature moments of the observed entries (``stats.observed`` not None).
    """
    observed, weight = stats.observed, stats.weight[:, None]
    safe = np.where(observed > 0, observed, 1.0)
    if current is None:
        old_mean, old_var = stats.mean, np.where(observed > 0, stats.scatter / safe, 1.0)
    else:
        old_mean = current.mean
        old_var = np.broadcast_to(current.covariance if current.covariance.ndim == 2 else current.covariance[:, None],
                                  stats.mean.shape)
    unobserved = np.maximum(weight - observed, 0.0)
    total = np.where(weight > 0, weight, 1.0)
    mean = (observed * stats.mean + unobserved * old_mean) / total
    shift = observed * unobserved / total * (stats.mean - old_mean) ** 2
    return mean, stats.scatter + unobserved * old_var + shift


def _inverse_factors_or_raise(cov, what, out=None):
    """Inverse Cholesky factors ``W_k = L_k^{-1}`` of a (K, d, d) stack, or a one-line ValueError.

    ``out`` (K, d, d), of any strides, receives them when given (a fresh array otherwise).
    """
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
    return inverse_lower(chol, np.empty_like(chol) if out is None else out)


def _precision_terms(ctype, params, single=False):
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
    With ``single`` (float32 rows), ``center`` is rounded to float32 first and the terms are taken
    about the rounded value: the rows then subtract exactly the centre the terms assume (rounded
    in the subtraction instead, it would err by a float32 ulp of the data's offset).
    """
    k, d = params.mean.shape
    center = np.add.reduce(params.mean, axis=0) / k  # the arithmetic of params.mean.mean(axis=0)
    if single:
        center = center.astype(np.float32).astype(np.float64)
    mean = params.mean - center
    cov = params.covariance
    if ctype == "full":
        # Row e of block k of Wb is [W_k[e], -W_k[e] m_k] with W_k = inv(L_k), so that
        # Wb @ [x - center, 1] stacks W_k (x - mu_k) for every k: the shift rides in the GEMM, and
        # ||W_k (x - mu_k)||^2 is the Mahalanobis distance.
        Wb = np.empty((k, d, d + 1))
        inv = _inverse_factors_or_raise(cov, "a component covariance", out=Wb[:, :, :d])
        log_det = np.log(np.diagonal(inv, axis1=1, axis2=2)).sum(axis=1)
        np.matmul(inv, mean[:, :, None], out=Wb[:, :, d:])
        np.negative(Wb[:, :, d], out=Wb[:, :, d])
        return {"center": center, "log_det": log_det, "Wb": Wb.reshape(k * d, d + 1)}
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


def _is_single(X):
    """Whether the rows (numpy or torch) are float32: log_prob then takes its terms about a float32 centre."""
    return str(X.dtype).endswith("float32")


def _host_bool(mask):
    """A mask (numpy or torch) as a numpy bool array: the patterns and their gathers run on the host."""
    return np.asarray(to_numpy(mask), dtype=bool)


def _precisions(ctype, params):
    """``Sigma_k^-1`` (Kp, d, d) and ``log |Sigma_k|`` (Kp,) of the "full" (Kp = K) or "tied" (Kp = 1) type."""
    cov = params.covariance if ctype == "full" else params.covariance[None]
    inv = _inverse_factors_or_raise(cov, "a component covariance")  # W = L^-1, Sigma^-1 = W'W
    log_det = -2.0 * np.log(np.diagonal(inv, axis1=1, axis2=2)).sum(axis=1)
    return np.einsum("kij,kil->kjl", inv, inv), log_det


def _log_prob_block(ctype, X, terms, d):
    """Log-densities of one block of rows from :func:`_precision_terms`, as (K, n) (transposed).

    The transposed layout keeps the samples along contiguous rows, so the squares, the sums over
    features and the later exp run over long vectors instead of short rows of length d or K.
    """
    center = ops.like(terms["center"], X)
    if ctype == "full":
        Xa = ops.centred_with_ones(X, center)  # (n, d + 1)
        Y = ops.matmul(ops.like(terms["Wb"], X), Xa.T)  # (K*d, n): rows (x - mu_k) P_k
        maha = ops.square_inplace(Y).reshape(-1, d, X.shape[0]).sum(1)
    elif ctype == "tied":
        Z = ops.matmul(ops.like(terms["P"].T, X), (X - center).T)  # (d, n)
        mP = ops.like(terms["mP"], X)
        maha = ops.matmul(mP, Z)
        maha *= -2.0
        maha += (Z * Z).sum(0)
        maha += (mP * mP).sum(1)[:, None]
    else:
        XT = (X - center).T
        prec = ops.like(terms["prec"], X)
        maha = ops.matmul(ops.like(terms["mp"], X), XT)
        maha *= -2.0
        XT = ops.square_inplace(XT)  # the centred copy is ours: square it in place
        if ctype == "diag":
            maha += ops.matmul(prec, XT)
        else:
            maha += prec[:, None] * XT.sum(0)
        maha += ops.like(terms["c"], X)[:, None]
    maha *= -0.5
    maha += ops.like(terms["log_det"] - 0.5 * d * _LOG_2PI, X)[:, None]
    return maha
