"""Cholesky factors of Gaussian covariances and their inverses: one policy for every Gaussian model.

The Gaussian component family (mixtures) and the discriminant rules (LDA, QDA) factor their
covariances here; they differ only in how close to collinear a covariance may be.
"""

import numpy as np
import scipy.linalg

_LOG_2PI = np.log(2.0 * np.pi)


class SingularCovarianceError(ValueError):
    """A covariance matrix is singular or numerically so; ``index`` is its position in a stack."""

    def __init__(self, index, message):
        super().__init__(message)
        self.index = index


# The discriminant rules' policy: below this share of a feature's variance left unexplained by
# the features before it, a covariance is singular (collinear features), since the rule would
# divide by rounding noise. The mixtures pass 0: their reg_covar keeps a collapsing component
# positive definite, and model choice judges such fits (see ComponentFamily.min_relative_variance).
COLLINEAR_RTOL = 1e-10


def cholesky_factors(cov, collinear_rtol=COLLINEAR_RTOL):
    """Lower Cholesky factors of a stack of covariance matrices, rejecting singular ones.

    Parameters
    ----------
    cov : ndarray of shape (n_matrices, n_features, n_features)
    collinear_rtol : float, default=COLLINEAR_RTOL (1e-10)
        Smallest share of a feature's variance the features before it may leave unexplained;
        0 checks positive definiteness only.

    Returns
    -------
    chol : ndarray of shape (n_matrices, n_features, n_features)
        Lower triangular ``L_k`` with ``L_k L_k' = cov_k``.

    Raises
    ------
    SingularCovarianceError
        For the first matrix that is not positive definite, or whose features are collinear to
        relative precision ``collinear_rtol``. ``(L_jj)^2 / cov_jj`` is the share of feature j's variance not
        explained by features 1..j-1, so the test does not depend on the units of the features.
    """
    cov = np.asarray(cov)
    try:
        # numpy factors a stack matrix by matrix with LAPACK's potrf, as single calls do
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:  # the first matrix that fails, and why, one by one
        chol = np.empty_like(cov)
        for k in range(cov.shape[0]):
            try:
                chol[k] = np.linalg.cholesky(cov[k])
            except np.linalg.LinAlgError:
                raise SingularCovarianceError(k, "not positive definite") from None
            _check_collinear(chol[k : k + 1], cov[k : k + 1], collinear_rtol, first=k)
    _check_collinear(chol, cov, collinear_rtol)
    return chol


def _check_collinear(chol, cov, collinear_rtol, first=0):
    """Raise SingularCovarianceError for the first matrix of a stack whose features are collinear."""
    if collinear_rtol == 0.0 and np.isfinite(np.diagonal(chol, axis1=1, axis2=2)).all():
        # Cholesky succeeded, so every cov_jj > 0 and the shares are positive: only a non-finite
        # factor (from a non-finite covariance) could fail the test below
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        unexplained = np.diagonal(chol, axis1=1, axis2=2) ** 2 / np.diagonal(cov, axis1=1, axis2=2)
    bad = ~np.all(np.isfinite(unexplained), axis=1) | (unexplained.min(axis=1, initial=np.inf) < collinear_rtol)
    if bad.any():
        raise SingularCovarianceError(first + int(np.argmax(bad)), "numerically singular (collinear features)")


def inverse_factors(chol):
    """Inverse Cholesky factors ``W_k = L_k^{-1}`` and ``log |2 pi Sigma_k|``.

    Parameters
    ----------
    chol : ndarray of shape (n_matrices, n_features, n_features)

    Returns
    -------
    inv : ndarray of shape (n_matrices, n_features, n_features)
        Lower triangular, with ``(x - mu)' Sigma^{-1} (x - mu) = ||W (x - mu)||^2``.
    log_det_2pi : ndarray of shape (n_matrices,)
        ``log |2 pi Sigma_k| = n_features log(2 pi) + 2 sum_j log L_jj``.
    """
    n_features = chol.shape[-1]
    # C order, the layout a saved model's arrays have after loading: the products over these
    # factors then sum in the same order in a fitted and in a loaded model (bit-identical output).
    inv = inverse_lower(chol, np.empty_like(chol, order="C"))
    log_det = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
    return inv, n_features * _LOG_2PI + log_det


def inverse_lower(chol, out):
    """The inverses ``L_k^{-1}`` of a stack of lower triangular factors, written into ``out``.

    Parameters
    ----------
    chol : ndarray of shape (n_matrices, n_features, n_features)
        Lower triangular, finite, with a positive diagonal.
    out : ndarray of shape (n_matrices, n_features, n_features)
        Any strides (e.g. a slice of a larger buffer).

    Returns
    -------
    out : ndarray of shape (n_matrices, n_features, n_features)
        Lower triangular.
    """
    eye = identity(chol.shape[-1])
    for k, L in enumerate(chol):
        out[k] = _solve_lower(L, eye)
    return out


_IDENTITIES = {}


def identity(d):
    """The (d, d) identity, read-only, made once per d (the triangular solves' right-hand side, the Cayley map's)."""
    eye = _IDENTITIES.get(d)
    if eye is None:
        eye = np.eye(d)
        eye.flags.writeable = False
        eye = _IDENTITIES.setdefault(d, eye)
    return eye


def _solve_lower(L, B):
    """``scipy.linalg.solve_triangular(L, B, lower=True)`` for a finite float matrix L, without its checks.

    The same LAPACK call (trtrs) with the same arguments as scipy's function: on the transposed
    system for a C-ordered L, as scipy does. Its input checks and array conversions cost more
    than the solve for the small matrices of a mixture's components.
    """
    trtrs = _TRTRS.get(L.dtype.char) or scipy.linalg.get_lapack_funcs("trtrs", (L, B))
    if L.flags.f_contiguous:
        x, info = trtrs(L, B, lower=1, trans=0)
    else:
        x, info = trtrs(L.T, B, lower=0, trans=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"singular triangular factor (trtrs info {info})")
    return x


_TRTRS = {"d": scipy.linalg.lapack.dtrtrs}
