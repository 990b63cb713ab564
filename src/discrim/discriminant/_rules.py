"""The ML and Bayes decision rules in log space, shared by the discriminant classifiers and EM."""

import numpy as np
from scipy.special import expit, log_expit

from discrim.backend import ops


def log_posterior(log_dens, log_prior, xp=np):
    """Posterior log-probabilities from log-densities and log-priors.

    Parameters
    ----------
    log_dens : array of shape (n_samples, n_classes)
        ``log f_k(x_i)``.
    log_prior : array of shape (n_classes,)
        ``log pi_k``; ``-inf`` for a class with prior zero.
    xp : namespace, default=numpy

    Returns
    -------
    log_post : array of shape (n_samples, n_classes)
        ``log P(k | x_i)``, normalised in log space so that far-away points do not underflow to
        0/0.
    log_norm : array of shape (n_samples,)
        ``log sum_k pi_k f_k(x_i)``, the log marginal density (``-inf`` where every joint
        density is zero; ``log_post`` is NaN on those rows and callers must reject them).
    """
    joint = log_dens + log_prior
    log_norm = ops.logsumexp(joint, axis=1, xp=xp)
    return joint - log_norm[:, None], log_norm


def check_some_density(log_norm):
    """Raise if some row has zero density under every class.

    Parameters
    ----------
    log_norm : ndarray of shape (n_samples,)
        Output of :func:`log_posterior`.
    """
    bad = np.flatnonzero(~np.isfinite(log_norm))
    if bad.size:
        shown = ", ".join(str(i) for i in bad[:5]) + (" ..." if bad.size > 5 else "")
        raise ValueError(
            f"{bad.size} row(s) of X (index {shown}) have zero density (or a non-finite one) under "
            "every class, so no class can be chosen: check that the rows lie in the support of "
            "the class densities."
        )


def proba_from_joint(jll, log=False):
    """Posterior probabilities from joint log-likelihoods, without forming logsumexp twice.

    Parameters
    ----------
    jll : ndarray of shape (n_samples, n_classes)
        ``log pi_k f_k(x_i)``, possibly up to a term that is the same for every class. It is
        overwritten (callers pass a temporary).
    log : bool, default=False
        Return log-probabilities.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
        Posterior (log-)probabilities; rows sum to one.

    Raises
    ------
    ValueError
        If some row has zero density under every class.
    """
    if jll.shape[1] == 2:
        with np.errstate(invalid="ignore"):
            return proba_from_log_odds(jll[:, 1] - jll[:, 0], log=log)
    top = jll.max(axis=1, keepdims=True)
    check_some_density(top[:, 0])
    jll -= top
    if log:
        jll -= np.log(np.exp(jll).sum(axis=1, keepdims=True))
        return jll
    np.exp(jll, out=jll)
    jll /= jll.sum(axis=1, keepdims=True)
    return jll


def proba_from_log_odds(odds, log=False):
    """Two-class posterior probabilities from the log odds of the second class.

    Parameters
    ----------
    odds : ndarray of shape (n_samples,)
        ``log P(class 1 | x) - log P(class 0 | x)``; NaN marks a row with zero density under
        both classes.
    log : bool, default=False
        Return log-probabilities.

    Returns
    -------
    proba : ndarray of shape (n_samples, 2)
        ``[sigma(-odds), sigma(odds)]``, each computed directly, so a tiny probability keeps its
        relative precision (``1 - p`` would not).
    """
    if np.isnan(odds).any():
        check_some_density(np.where(np.isnan(odds), -np.inf, 0.0))
    link = log_expit if log else expit
    out = np.empty((2, odds.shape[0]), dtype=np.result_type(odds.dtype, np.float32))
    np.negative(odds, out=out[0])
    link(out[0], out=out[0])
    link(odds, out=out[1])
    return out.T  # contiguous writes; an (n, 2) view as scikit-learn returns
