"""Numerics of the Gaussian discriminant rules that are theirs alone: the origin, shrinkage,
centred distances and linear scores. Class moments come from the Gaussian family
(:meth:`~discrim.distributions.Gaussian.labelled_stats`), covariance factors from
:mod:`discrim.distributions._gaussian_linalg`."""

import numpy as np
import scipy.linalg

from discrim.backend import ops, to_numpy
from discrim.backend._device import device_type

# Rows per block in the O(n_samples * n_features^2) passes: a block of float64 rows stays in cache
# and the temporaries stay small however large X is. On a GPU a block is a few kernel launches
# and one copy to the host: blocks there are as large as some hundred MB of temporaries.
_BLOCK_BYTES = 1 << 23
_DEVICE_BLOCK_BYTES = 1 << 28


def _block_rows(width, X):
    size = _DEVICE_BLOCK_BYTES if device_type(X) == "cuda" else _BLOCK_BYTES
    return max(256, size // (8 * max(int(width), 1)))


def fit_origin(X, sample_weight=None):
    """The origin the Gaussian rules work about: the first training row of positive weight.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        numpy or torch.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        A row of weight 0 is no part of the fit and may lie anywhere (an outlier weighted out):
        about it, every other row would carry the rounding of its distance (posteriors 1e-7 off
        with such a row at 1e8 before the iris rows). None: the first row.

    Returns
    -------
    origin : ndarray of shape (n_features,) of float64, on the host
        A data point, so ``x - origin`` is of the size of the spread of the data, and exactly
        representable for data on a grid: data translated by a representable offset give the
        same ``x - origin``, hence the same fit, bit for bit. Means and scatter accumulated
        about it do not carry the rounding of ``|offset|`` (the sufficient statistics stay
        shifted; only the reported ``means_`` add the origin back).
    """
    first = 0 if sample_weight is None else int(np.argmax(np.asarray(sample_weight) > 0))
    return np.array(to_numpy(X[first]), dtype=np.float64)


def shrink(cov, reg_param):
    """Shrink covariance matrices towards the identity, ``(1 - r) S + r I``.

    Parameters
    ----------
    cov : ndarray of shape (..., n_features, n_features)
    reg_param : float in [0, 1]

    Returns
    -------
    cov : ndarray of the same shape
        A new array (``cov`` itself when ``reg_param == 0``).
    """
    if reg_param == 0:
        return cov
    out = (1.0 - reg_param) * cov
    idx = np.arange(cov.shape[-1])
    out[..., idx, idx] += reg_param
    return out


def shrunk_covariance(cov, shrinkage, emp_cov, n_samples):
    """A covariance after ``shrinkage`` (LDA's and QDA's parameter), and the intensity applied.

    A number ``s`` or "oas" shrinks towards the identity scaled to the mean variance,
    ``(1 - s) S + s (tr S / d) I`` (:func:`shrink_to_scaled_identity`; "oas": the intensity of
    :func:`shrinkage_intensity`), which depends on the features' units. "auto" is scale-free, as
    scikit-learn's "auto": the OAS intensity of the correlation matrix, towards the diagonal,
    ``(1 - s) S + s diag(S)`` (the correlations shrink, the variances stay).

    Parameters
    ----------
    cov : ndarray of shape (n_features, n_features)
        The estimate to shrink.
    shrinkage : float in [0, 1], "oas" or "auto"
    emp_cov : ndarray of shape (n_features, n_features)
        The maximum-likelihood covariance (divisor ``n_samples``) the intensity is computed from.
    n_samples : float
        The (weighted) sample size.

    Returns
    -------
    cov : ndarray of shape (n_features, n_features)
        A new array.
    intensity : float in [0, 1]
    """
    if shrinkage != "auto":
        intensity = shrinkage_intensity(shrinkage, emp_cov, n_samples)
        return shrink_to_scaled_identity(cov, intensity), intensity
    sd = np.sqrt(np.diag(emp_cov))
    sd = np.where(sd > 0, sd, 1.0)  # a constant feature: its row of the correlation is 0
    intensity = shrinkage_intensity("oas", emp_cov / np.outer(sd, sd), n_samples)
    out = (1.0 - intensity) * cov
    idx = np.arange(cov.shape[-1])
    out[idx, idx] += intensity * np.diag(cov)
    return out, intensity


def shrinkage_intensity(shrinkage, emp_cov, n_samples):
    """The weight of the scaled identity in :func:`shrink_to_scaled_identity`.

    Parameters
    ----------
    shrinkage : float in [0, 1] or "oas"
        A fixed intensity, or Chen, Wiesel, Eldar and Hero's oracle approximating shrinkage
        computed as scikit-learn's ``OAS`` does from an empirical covariance and its sample size.
    emp_cov : ndarray of shape (n_features, n_features)
        Divisor ``n_samples`` (the maximum-likelihood covariance).
    n_samples : float
        The (weighted) sample size.

    Returns
    -------
    intensity : float in [0, 1]
    """
    if shrinkage != "oas":
        return float(shrinkage)
    d = emp_cov.shape[-1]
    if d == 1:  # the target is the covariance itself: any intensity gives it (scikit-learn's OAS says 0)
        return 0.0
    alpha = np.mean(emp_cov**2)
    mu_squared = (np.trace(emp_cov) / d) ** 2
    # alpha - mu^2 / d >= 0, 0 for a multiple of the identity, which rounding can leave a tiny
    # number of either sign (an intensity of -2e15 for a single feature): below rounding, 0
    spread = alpha - mu_squared / d
    if spread <= 1e-12 * alpha:
        return 1.0
    return float(np.clip((alpha + mu_squared) / ((n_samples + 1.0) * spread), 0.0, 1.0))


def shrink_to_scaled_identity(cov, intensity):
    """``(1 - s) S + s (tr S / d) I``: shrinkage towards the identity scaled to the mean variance.

    Parameters
    ----------
    cov : ndarray of shape (n_features, n_features)
    intensity : float in [0, 1]

    Returns
    -------
    cov : ndarray of shape (n_features, n_features)
        A new array.
    """
    out = (1.0 - intensity) * cov
    idx = np.arange(cov.shape[-1])
    out[idx, idx] += intensity * np.trace(cov) / cov.shape[-1]
    return out


def mahalanobis_tied(X, means, inv, origin=None, block_rows=None):
    """Squared Mahalanobis distances to every mean under one shared covariance.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        numpy or torch on any device: the products run there, block by block.
    means : ndarray of shape (n_classes, n_features)
        Relative to ``origin``.
    inv : ndarray of shape (n_features, n_features)
        ``W = L^{-1}`` of the shared covariance.
    origin : ndarray of shape (n_features,), default=None
        Subtracted from the rows first (0 when None); see :func:`fit_origin`.
    block_rows : int or None, default=None
        Rows per block; None keeps a block's rows and temporaries in cache.

    Returns
    -------
    dist : ndarray of shape (n_samples, n_classes), on the host
        ``(x_i - mu_k)' Sigma^{-1} (x_i - mu_k) = ||z_i||^2 - 2 z_i' m_k + ||m_k||^2`` with
        ``z_i = W (x_i - t)``, ``m_k = W (mu_k - t)`` and ``t`` the mean of the class means
        (centring keeps the expansion accurate for data far from the origin); one GEMM per
        block of rows serves all classes.
    """
    n = X.shape[0]
    center = means.mean(axis=0)
    inv_t = np.ascontiguousarray(inv.T)  # numpy's matmul can miss BLAS for a transposed view
    m = (means - center) @ inv_t  # (n_classes, n_features)
    # float64 whatever X's dtype: the products are differences of squares
    m_sq = ops.like(np.einsum("kd,kd->k", m, m), X, "float64")
    m_t = ops.like(np.ascontiguousarray(-2.0 * m.T), X, "float64")
    shift, center, inv_t = (ops.like(a, X, "float64") for a in (0.0 if origin is None else origin, center, inv_t))
    out = np.empty((n, means.shape[0]))
    step = block_rows or _block_rows(X.shape[1], X)
    for start in range(0, n, step):
        xb = ops.as_float64(X[start : start + step]) - shift
        xb -= center
        z = xb @ inv_t
        d = z @ m_t
        d += ops.row_dot(z, z)[:, None]
        d += m_sq
        ops.clip_negative_inplace(d)  # rounding can push a distance of ~0 below zero
        out[start : start + step] = to_numpy(d)
    return out


def mahalanobis_full(X, means, inv, origin=None, block_rows=None):
    """Squared Mahalanobis distances to every mean, each class with its own covariance.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        numpy or torch on any device: the products run there, block by block.
    means : ndarray of shape (n_classes, n_features)
        Relative to ``origin``.
    inv : ndarray of shape (n_classes, n_features, n_features)
        ``W_k = L_k^{-1}`` for each class.
    origin : ndarray of shape (n_features,), default=None
        Subtracted from the rows first (0 when None); see :func:`fit_origin`.
    block_rows : int or None, default=None
        Rows per block; None keeps a block's rows and temporaries in cache.

    Returns
    -------
    dist : ndarray of shape (n_samples, n_classes), on the host
        ``||W_k (x_i - mu_k)||^2``. Each block of rows, centred on the mean of the class means
        and with a column of ones appended, is multiplied by ``[W_1' ... W_K']`` stacked side
        by side over the row ``-W_k (mu_k - t)``: the O(n K D^2) work is one GEMM per block,
        followed by one fused square-and-sum.
    """
    n, n_features = X.shape
    n_classes = means.shape[0]
    center = means.mean(axis=0)
    stacked = np.empty((n_features + 1, n_classes * n_features))
    stacked[:n_features] = np.concatenate(list(np.swapaxes(inv, 1, 2)), axis=1)
    stacked[n_features] = -np.einsum("kij,kj->ki", inv, means - center).ravel()
    out = np.empty((n, n_classes))
    step = block_rows or _block_rows(n_classes * n_features, X)
    shift, center, stacked = (ops.like(a, X, "float64") for a in (0.0 if origin is None else origin, center, stacked))
    for start in range(0, n, step):
        xb = ops.as_float64(X[start : start + step])
        rows = xb.shape[0]
        xa = ops.centred_with_ones(xb - shift, center)
        z = (xa @ stacked).reshape(rows, n_classes, n_features)
        out[start : start + rows] = to_numpy(ops.row_dot(z, z))
    return out


def gaussian_log_density(dist, log_det_2pi):
    """``log N(x; mu_k, Sigma_k) = -(dist_k + log |2 pi Sigma_k|) / 2``.

    Parameters
    ----------
    dist : ndarray of shape (n_samples, n_classes)
        Squared Mahalanobis distances.
    log_det_2pi : ndarray of shape (n_classes,) or float

    Returns
    -------
    log_dens : ndarray of shape (n_samples, n_classes)
        Computed in place in ``dist``.
    """
    dist += log_det_2pi
    dist *= -0.5
    return dist


def linear_coefficients(means, chol, center=None):
    """Coefficients of the seed's linear discriminant functions, halved, about an origin.

    Parameters
    ----------
    means : ndarray of shape (n_classes, n_features)
    chol : ndarray of shape (n_features, n_features)
        Lower Cholesky factor of the shared covariance ``Sigma``.
    center : ndarray of shape (n_features,), default=None
        The origin ``t`` of the scores (0 when None).

    Returns
    -------
    coef : ndarray of shape (n_classes, n_features)
        ``Sigma^{-1} (mu_k - t)``.
    intercept : ndarray of shape (n_classes,)
        ``-(mu_k - t)' Sigma^{-1} (mu_k - t) / 2``, so that ``(x - t)' coef_k + intercept_k``
        is the seed's ``delta_k(x) / 2`` (``delta_k(x) = 2 mu_k' Sigma^{-1} x -
        mu_k' Sigma^{-1} mu_k``) up to a term that is the same for every class.

    Notes
    -----
    With ``t`` the mean of the class means the products are of the size of the class
    separation. At ``t = 0`` and data far from the origin ``x' coef_k`` and ``intercept_k`` are
    huge and cancel in the differences between classes, with an error of about
    ``eps |mu|^2 / sigma^2`` (posteriors off by 2e-4 at an offset of 1e6, predictions flipped
    at 1e7).
    """
    shifted = means if center is None else means - center
    coef = scipy.linalg.cho_solve((chol, True), shifted.T, check_finite=False).T
    return coef, -0.5 * np.einsum("kd,kd->k", coef, shifted)
