"""The ML and Bayes decision rules in log space, shared by the discriminant classifiers and EM."""

import numpy as np

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
