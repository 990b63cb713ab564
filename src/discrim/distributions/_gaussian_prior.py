"""The conjugate prior of Fraley and Raftery (2007) for Gaussian mixtures: defaults and MAP moments, as mclust."""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Real

import numpy as np

__all__ = ["GaussianPrior", "PRIOR_MODELS", "map_moments", "resolve_prior"]

#: The covariance models mclust fits with a prior, and the form of their prior scale: a
#: scalar ``varsigma_P`` for the spherical and diagonal models, a d x d matrix ``Lambda_P`` for
#: the others (mclust 6 has no prior for VEE, EVE, VVE and EVV).
PRIOR_MODELS = {
    "EII": "scalar", "VII": "scalar", "EEI": "scalar", "VEI": "scalar", "EVI": "scalar", "VVI": "scalar",
    "EEE": "matrix", "EEV": "matrix", "VEV": "matrix", "VVV": "matrix",
}


@dataclass(frozen=True)
class GaussianPrior:
    """The conjugate prior of Fraley and Raftery (2007) on the means and covariances of Gaussian components.

    ``mu_k | Sigma_k ~ N(mean, Sigma_k / shrinkage)`` and, for the covariances, an inverse
    Wishart (``dof``, ``scale``) or, for the spherical and diagonal models, inverse gamma
    distributions with a scalar scale. A field left None takes mclust's data-dependent default
    (``priorControl()``) when a :class:`~discrim.mixture.FiniteMixture` is fitted.

    Parameters
    ----------
    shrinkage : float, default=0.01
        ``kappa_P >= 0``; 0 puts a flat prior on the means (they are not shrunk).
    mean : array-like of shape (n_features,) or None, default=None
        ``mu_P``; None: the column means of the data.
    dof : float or None, default=None
        ``nu_P > d - 1``; None: ``d + 2``.
    scale : float, array-like of shape (n_features, n_features) or None, default=None
        ``varsigma_P`` (a float, for the models "EII", "VII", "EEI", "VEI", "EVI", "VVI") or
        ``Lambda_P`` (a positive definite matrix, for "EEE", "EEV", "VEV", "VVV"); None: for
        the former ``G^(-2/d)`` times the mean of the columns' variances, for the latter
        ``G^(-2/d)`` times the covariance matrix of the data (its diagonal when there are no
        more rows than features), with ``G`` the number of components.

    Notes
    -----
    The data's moments behind the defaults are the weighted mean and the weighted covariance
    with divisor ``total weight - 1`` (R's ``var`` for unit weights) of all the rows a mixture
    is fitted to. :class:`~discrim.mixture.FiniteMixture` computes them once per fit from the
    family's own additive statistics with a single component (one pass over the rows, in
    blocks or on Dask), with missing entries completed by the columns' observed means. A
    family used outside a mixture (whose M-step meets an unresolved default) takes them from
    the pooled statistics of its components instead: the same moments when the
    responsibilities of every row sum to one.

    Examples
    --------
    >>> from discrim.distributions import Gaussian, GaussianPrior
    >>> fam = Gaussian(covariance_type="VVV", prior=GaussianPrior(shrinkage=0.01))
    >>> fam.prior.dof is None
    True
    """

    shrinkage: float = 0.01
    mean: object = None
    dof: float | None = None
    scale: object = None

    def check(self, model: str, n_features: int | None = None) -> GaussianPrior:
        """Validate the fields for a covariance model; raise a one-line ValueError naming the field.

        Parameters
        ----------
        model : str
            mclust's name of the covariance model.
        n_features : int or None, default=None
            Checks the shapes of ``mean`` and ``scale`` when given.

        Returns
        -------
        prior : GaussianPrior
            Self.
        """
        if model not in PRIOR_MODELS:
            raise ValueError(f"prior is not available for the covariance model {model!r} (nor in mclust): "
                             f"choose one of {sorted(PRIOR_MODELS)} or prior=None.")
        s = self.shrinkage
        if isinstance(s, bool) or not isinstance(s, Real) or not (np.isfinite(s) and s >= 0):
            raise ValueError(f"GaussianPrior shrinkage must be a finite float >= 0; got {s!r}.")
        if self.dof is not None:
            low = 0.0 if n_features is None else n_features - 1.0
            if isinstance(self.dof, bool) or not isinstance(self.dof, Real) or not self.dof > low:
                raise ValueError(f"GaussianPrior dof must be a float > n_features - 1 (or None for n_features + 2); "
                                 f"got {self.dof!r}.")
        if self.mean is not None and n_features is not None:
            mean = np.asarray(self.mean, dtype=np.float64)
            if mean.shape != (n_features,) or not np.all(np.isfinite(mean)):
                raise ValueError(f"GaussianPrior mean must be {n_features} finite floats (one per feature); "
                                 f"got shape {mean.shape}.")
        if self.scale is not None:
            scale = np.asarray(self.scale, dtype=np.float64)
            if PRIOR_MODELS[model] == "scalar":
                if scale.ndim != 0 or not (np.isfinite(scale) and scale >= 0):
                    raise ValueError(f"GaussianPrior scale must be a float >= 0 for the model {model!r}; "
                                     f"got {self.scale!r}.")
            elif n_features is not None:
                if scale.shape != (n_features, n_features) or not np.all(np.isfinite(scale)):
                    raise ValueError(f"GaussianPrior scale must be a ({n_features}, {n_features}) matrix for the "
                                     f"model {model!r}; got shape {scale.shape}.")
                if not np.allclose(scale, scale.T) or np.linalg.eigvalsh(0.5 * (scale + scale.T))[0] < 0:
                    raise ValueError("GaussianPrior scale must be symmetric positive semi-definite.")
        return self

    @property
    def resolved(self):
        """Whether every field is set (no data-dependent default is left)."""
        return self.mean is not None and self.dof is not None and self.scale is not None


def resolve_prior(prior, model, mean, covariance, n_components):
    """The prior with mclust's data-dependent defaults filled in (``defaultPrior``).

    Parameters
    ----------
    prior : GaussianPrior
    model : str
        mclust's name of the covariance model.
    mean : ndarray of shape (n_features,)
        The data's (weighted) column means.
    covariance : ndarray of shape (n_features, n_features) or (n_features,)
        The data's covariance matrix (divisor ``n - 1``), or its diagonal only (enough for the
        spherical and diagonal models).
    n_components : int
        G, the number of Gaussian components.

    Returns
    -------
    prior : GaussianPrior
        Every field set: ``mean`` (d,), ``dof`` a float, ``scale`` a float or (d, d).
    """
    d = mean.shape[0]
    factor = (1.0 / n_components) ** (2.0 / d)
    scale = prior.scale
    if scale is None:
        variances = covariance if covariance.ndim == 1 else np.diag(covariance)
        if PRIOR_MODELS[model] == "scalar":
            scale = float(factor * variances.sum() / d)
        else:
            scale = factor * (covariance if covariance.ndim == 2 else np.diag(covariance))
    else:
        scale = np.asarray(scale, dtype=np.float64)
        scale = float(scale) if scale.ndim == 0 else scale
    return replace(prior, mean=np.asarray(mean if prior.mean is None else prior.mean, dtype=np.float64),
                   dof=float(d + 2 if prior.dof is None else prior.dof), scale=scale)


def _counts(model, n_k, kappa, nu, d):
    """The effective counts ``n'_k`` (K,) that turn mclust's MAP covariances into its MLE forms."""
    G = n_k.shape[0]
    pos = kappa > 0
    extra = {
        "EII": (nu + 2.0) / (G * d) + 1.0,  # nu + (n + G) d + 2 in all, for any kappa
        "E": (nu + 2.0) / G + 1.0,  # one feature: nu + n + G + 2 in all, for any kappa
        "V": nu + 3.0,  # one feature: for any kappa (VII's is nu + 2 for kappa = 0)
        "VII": (nu + 2.0 + (d if pos else 0.0)) / d,
        "EEI": (nu + 1.0 + pos) / G,
        "VEI": (nu + 2.0 + pos) / d,
        "EVI": (nu + 1.0 + pos) / G,
        "VVI": nu + 2.0 + pos,
        "EEE": (nu + d + 1.0 + (G if pos else 0.0)) / G,
        "EEV": (nu + d + 1.0 + pos) / G,
        "VEV": 0.0,
        "VVV": nu + d + 2.0,
    }[model]
    return n_k + extra


def map_moments(model, prior, weight, mean, scatter):
    """Means, effective counts and scatter whose maximum-likelihood covariances are mclust's MAP ones.

    Parameters
    ----------
    model : str
        mclust's name of a model in ``PRIOR_MODELS``, or of its models of one feature, "E" and
        "V" (with several components).
    prior : GaussianPrior
        Resolved (every field set).
    weight : ndarray of shape (n_components,)
        ``n_k``.
    mean : ndarray of shape (n_components, n_features)
        The weighted means ``ybar_k``.
    scatter : ndarray of shape (n_components, n_features, n_features) or (n_components, n_features)
        ``W_k`` about ``ybar_k`` (its diagonal for the diagonal and spherical models).

    Returns
    -------
    mean : ndarray of shape (n_components, n_features)
        ``(n_k ybar_k + kappa mu_P) / (n_k + kappa)`` (``ybar_k`` for "EEI", as mclust).
    counts : ndarray of shape (n_components,)
        ``n'_k``: 0 for an empty component.
    scatter : ndarray
        ``W'_k``, the shape of ``scatter``.

    Notes
    -----
    With ``c_k = kappa n_k / (n_k + kappa)``, ``delta_k = ybar_k - mu_P`` and
    ``B_k = W_k + c_k delta_k delta_k'``, mclust 6's EM (its Fortran routines ``me*p``) sets

    =====  =========================================================  ==================================
    model  covariance                                                  n'_k
    =====  =========================================================  ==================================
    EII    ``sigma^2 = sum_k tr B_k / (nu + (n + G) d + 2)``           ``n_k + 1 + (nu + 2) / (G d)``
    VII    ``sigma_k^2 = (s + tr B_k) / (nu + (n_k + 1) d + 2)``       ``n_k + 1 + (nu + 2) / d``
    EEI    ``diag(s + sum_k B_k) / (nu + n + 2)``                      ``n_k + (nu + 2) / G``
    VEI    ``lambda_k = tr(A^-1 (s + B_k)) / (d n_k + nu + 3)``        ``n_k + (nu + 3) / d``
    EVI    ``lambda = sum_k |s + B_k|^(1/d) / (nu + n + 2)``           ``n_k + (nu + 2) / G``
    VVI    ``diag(s + B_k) / (nu + n_k + 3)``                          ``n_k + nu + 3``
    EEE    ``(Lambda + sum_k B_k) / (nu + n + d + 1 + G)``             ``n_k + (nu + d + 1 + G) / G``
    EEV    eigenvalues of ``Lambda + B_k`` pooled over ``nu + n + d + 2``  ``n_k + (nu + d + 2) / G``
    VEV    eigen-decomposition of ``Lambda + B_k``, counts ``n_k``     ``n_k``
    VVV    ``(Lambda + B_k) / (nu + n_k + d + 2)``                     ``n_k + nu + d + 2``
    E      ``sigma^2 = (s + sum_k B_k) / (nu + n + G + 2)``            ``n_k + 1 + (nu + 2) / G``
    V      ``sigma_k^2 = (s + B_k) / (nu + n_k + 3)``                  ``n_k + nu + 3``
    =====  =========================================================  ==================================

    (``s`` is ``varsigma_P`` on the diagonal, ``n = sum_k n_k`` the weight of the Gaussian
    components; for ``kappa = 0`` the terms that mclust adds for the mean's prior go.) The
    effective scatter ``W'_k`` and counts ``n'_k`` are spread over the components so that the
    model's maximum-likelihood M-step (:func:`~discrim.distributions._covariance_models.covariance_mle`)
    returns exactly these. Three entries differ from the paper's formulas and follow mclust:
    EII leaves ``varsigma_P`` out, EEI does not shrink the means, VEV counts no prior degrees of
    freedom. On one feature mclust's EM fits EII and VII by its univariate "E" and "V" instead
    (``me1ep``, ``me1vp``): "E" keeps ``varsigma_P``, and "V" counts ``nu + 3`` also for
    ``kappa = 0``. With ``kappa = 0`` and one component the full models take EEE's counts
    (mclust's ``mvnXXX``: ``nu + n + d + 1``).
    """
    kappa, nu = float(prior.shrinkage), float(prior.dof)
    occupied = weight > 0
    n_k = np.where(occupied, weight, 0.0)
    k, d = mean.shape
    delta = mean - prior.mean
    c = np.where(occupied, kappa * n_k / np.where(occupied, n_k + kappa, 1.0), 0.0)
    if scatter.ndim == 3:
        B = scatter + c[:, None, None] * delta[:, :, None] * delta[:, None, :]
        share = 1.0 / max(1, int(occupied.sum())) if model == "EEE" else 1.0
        B = B + share * np.asarray(prior.scale)[None]
    else:
        B = scatter + c[:, None] * delta**2
        s = float(prior.scale)
        if model == "VII":
            B = B + s / d
        elif model in ("EEI", "E"):
            B = B + s / max(1, int(occupied.sum()))
        elif model != "EII":
            B = B + s
    B = np.where(occupied.reshape((-1,) + (1,) * (B.ndim - 1)), B, 0.0)
    counts = np.zeros_like(n_k)
    counts[occupied] = _counts(model, n_k[occupied], kappa, nu, d)
    if model == "EEI" or kappa == 0:
        new_mean = mean
    else:
        new_mean = np.where(occupied[:, None], (n_k[:, None] * mean + kappa * prior.mean)
                            / (n_k + kappa)[:, None], mean)
    return new_mean, counts, B

