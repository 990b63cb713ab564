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


def _rows(mask):
    """A short list of the row indices where ``mask`` holds, for error messages."""
    bad = np.flatnonzero(mask)
    return bad.size, ", ".join(str(i) for i in bad[:5]) + (" ..." if bad.size > 5 else "")


def check_some_density(log_norm):
    """Raise if some row has zero density under every class.

    Parameters
    ----------
    log_norm : ndarray of shape (n_samples,)
        Output of :func:`log_posterior`, or the largest joint log-likelihood of each row.
    """
    count, shown = _rows(~np.isfinite(log_norm))
    if count:
        raise ValueError(
            f"{count} row(s) of X (index {shown}) have zero density (or a non-finite one) under "
            "every class, so no class can be chosen: check that the rows lie in the support of "
            "the class densities."
        )


def check_joint(jll):
    """Raise unless every row has finite joint log-likelihoods where it has any, and some.

    Parameters
    ----------
    jll : ndarray of shape (n_samples, n_classes)
        ``log pi_k f_k(x_i)`` (up to a term common to the row). ``-inf`` (zero density or zero
        prior) is allowed as long as some class of the row is finite.

    Raises
    ------
    ValueError
        If an entry is NaN (an invalid density or parameter: the rule would otherwise pick a
        label from NaN scores), ``+inf`` (a density without a finite value there), or a row
        is ``-inf`` under every class.
    """
    count, shown = _rows(np.isnan(jll).any(axis=1))
    if count:
        classes = np.flatnonzero(np.isnan(jll).any(axis=0)).tolist()
        raise ValueError(
            f"{count} row(s) of X (index {shown}) have a NaN log-density under class index(es) "
            f"{classes}: a class density is invalid (for example a negative scale) or undefined "
            "at these rows; no posterior or class can be computed from NaN. Check the density "
            "parameters and X."
        )
    count, shown = _rows(np.isposinf(jll).any(axis=1))
    if count:
        raise ValueError(
            f"{count} row(s) of X (index {shown}) have an infinite log-density: a class density "
            "is degenerate (a point mass) at these rows, so the posteriors are undefined."
        )
    check_some_density(jll.max(axis=1))


def check_log_odds(odds):
    """Raise if a two-class log odds is NaN (zero density under both classes, or invalid).

    Parameters
    ----------
    odds : ndarray of shape (n_samples,)
    """
    count, shown = _rows(np.isnan(odds))
    if count:
        raise ValueError(
            f"{count} row(s) of X (index {shown}) have NaN log odds: zero (or an invalid, NaN) "
            "density under both classes, so no class can be chosen. Check that the rows lie in "
            "the support of the class densities and that the densities are valid."
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
        If some row has zero density under every class, or a NaN or ``+inf`` log-likelihood
        (see :func:`check_joint`).
    """
    check_joint(jll)
    if jll.shape[1] == 2:
        return proba_from_log_odds(jll[:, 1] - jll[:, 0], log=log)
    top = jll.max(axis=1, keepdims=True)
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
        ``log P(class 1 | x) - log P(class 0 | x)``; NaN (zero density under both classes, or an
        invalid density) raises ValueError.
    log : bool, default=False
        Return log-probabilities.

    Returns
    -------
    proba : ndarray of shape (n_samples, 2)
        ``[sigma(-odds), sigma(odds)]``, each computed directly, so a tiny probability keeps its
        relative precision (``1 - p`` would not).
    """
    check_log_odds(odds)
    link = log_expit if log else expit
    out = np.empty((2, odds.shape[0]), dtype=np.result_type(odds.dtype, np.float32))
    np.negative(odds, out=out[0])
    link(out[0], out=out[0])
    link(odds, out=out[1])
    return out.T  # contiguous writes; an (n, 2) view as scikit-learn returns
