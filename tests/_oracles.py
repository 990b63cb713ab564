"""The specification's formulas written plainly, once: the oracles the tests compare against.

Each function transcribes an equation of the seeds (the prototype set classifier's kernel, class
scores and batch objective, the posterior rule) directly, with no expanded squares, chunks, GEMMs
or class blocks: the library's fast paths are tested against these, not against each other.
They take numpy or torch arrays (through array-api-compat), so torch's autograd can
differentiate the same text. The component families' oracle table (scipy.stats densities,
marginal over unobserved entries) is at the end.
"""

import numpy as np
import scipy.stats
from array_api_compat import array_namespace


def kernel(X, S, v):
    """``K_v(x - s) = exp(-1/2 sum_d (v_d (x_d - s_d))^2)`` for every row and prototype.

    Parameters
    ----------
    X : array of shape (n, D)
    S : array of shape (J, D)
    v : array of shape (D,)

    Returns
    -------
    K : array of shape (n, J)
    """
    xp = array_namespace(X, S, v)
    diff = (X[:, None, :] - S[None, :, :]) * v
    return xp.exp(-0.5 * xp.sum(diff**2, axis=2))


def class_scores(q0, K, w, target, n_classes):
    """``q_k(x) = q0_k(x) + sum_{j: y_j = k} w_j K_j(x)``.

    Parameters
    ----------
    q0 : array of shape (n, n_classes)
        Scores before this batch (the marginals, plus earlier batches).
    K : array of shape (n, J)
    w : array of shape (J,)
    target : array of shape (J,) of int
    n_classes : int

    Returns
    -------
    q : array of shape (n, n_classes)
    """
    xp = array_namespace(q0, K, w)
    onehot = xp.asarray(np.eye(n_classes)[np.asarray(target)], dtype=K.dtype)
    return q0 + (K * w) @ onehot


def batch_objective(theta, X, y, coef, q0, S, target):
    """The seed's reweighted negative log-likelihood of one batch, ``-sum_i c_i log p_{y_i}(x_i)``.

    Parameters
    ----------
    theta : array of shape (D + J,)
        Feature weights ``v`` then prototype weights ``w``.
    X : array of shape (R, D)
        Scoring rows.
    y : array of shape (R,) of int
    coef : array of shape (R,)
        The rows' coefficients ``c_i`` (sample weight and class reweighting).
    q0 : array of shape (R, n_classes)
    S : array of shape (J, D)
        Candidates.
    target : array of shape (J,) of int

    Returns
    -------
    value : scalar array
    """
    xp = array_namespace(theta, X, q0)
    D = X.shape[1]
    v, w = theta[:D], theta[D:]
    q = class_scores(q0, kernel(X, S, v), w, target, q0.shape[1])
    rows = xp.arange(X.shape[0])
    return -xp.sum(coef * xp.log(q[rows, xp.asarray(y)] / xp.sum(q, axis=1)))


def model_scores(model, X):
    """``q_k(x)`` of a fitted PrototypeClassifier, batch by batch from its stored prototypes.

    Parameters
    ----------
    model : PrototypeClassifier
    X : ndarray of shape (n, n_features)
        In the units the model was fitted on.

    Returns
    -------
    q : ndarray of shape (n, n_classes)
    """
    X = np.asarray(X, dtype=np.float64)
    n_classes = len(model.classes_)
    q = np.tile(np.asarray(model.marginals_, dtype=np.float64), (X.shape[0], 1))
    for batch in model.batches_:
        if len(batch.target):
            K = kernel(X[:, batch.feature_index], np.asarray(batch.prototypes, dtype=np.float64),
                       np.asarray(batch.feature_weights, dtype=np.float64))
            q = class_scores(q, K, np.asarray(batch.prototype_weights, dtype=np.float64), batch.target, n_classes)
    return q


def posterior(scores):
    """``p_k(x) = q_k(x) / sum_l q_l(x)``, rows of positive scores normalised."""
    scores = np.asarray(scores, dtype=np.float64)
    return scores / scores.sum(axis=1, keepdims=True)


# --- component families: scipy's densities, one row and one component at a time --------------


def _independent(dist_of):
    """Marginal log-density of the observed entries of a row: the sum of scipy log-pmfs/pdfs."""
    return lambda params, k, x, observed: sum(
        dist_of(params, k, d, x[d]) for d in range(x.shape[0]) if observed[d]
    )


def _gaussian(cov_of):
    """Marginal log-density of the observed entries: the normal of the observed sub-vector."""

    def logpdf(params, k, x, observed):
        if not observed.any():
            return 0.0
        mean = np.asarray(params["mean"][k])[observed]
        cov = np.asarray(cov_of(params, k))[np.ix_(observed, observed)]
        return scipy.stats.multivariate_normal(mean, cov).logpdf(x[observed])

    return logpdf


_COV_FULL = np.array([[[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], [[1.0, 0.0, 0.0], [0.0, 3.0, 0.9], [0.0, 0.9, 1.0]]])
_MEAN = np.array([[0.0, 1.0, -1.0], [2.0, -0.5, 0.3]])


def _family_oracles():
    from discrim.distributions import Bernoulli, Binomial, Categorical, Gaussian, Poisson

    return [
        (
            Binomial(n_trials=10),
            {"prob": [[0.3, 0.9], [0.55, 0.05]]},
            _independent(lambda p, k, d, x: scipy.stats.binom(10, p["prob"][k][d]).logpmf(x)),
        ),
        (
            Bernoulli(),
            {"prob": [[0.3, 0.9], [0.55, 0.05]]},
            _independent(lambda p, k, d, x: scipy.stats.bernoulli(p["prob"][k][d]).logpmf(x)),
        ),
        (
            Poisson(),
            {"rate": [[0.7, 4.0], [2.5, 0.2]]},
            _independent(lambda p, k, d, x: scipy.stats.poisson(p["rate"][k][d]).logpmf(x)),
        ),
        (
            Categorical(n_categories=3),
            {"probs": [[[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], [[0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]]]},
            _independent(lambda p, k, d, x: scipy.stats.multinomial(1, p["probs"][k][d]).logpmf(np.eye(3)[int(x)])),
        ),
        (
            Gaussian("full"),
            {"mean": _MEAN, "covariance": _COV_FULL},
            _gaussian(lambda p, k: p["covariance"][k]),
        ),
        (
            Gaussian("diag"),
            {"mean": _MEAN, "covariance": [[2.0, 1.0, 0.5], [0.1, 3.0, 1.0]]},
            _gaussian(lambda p, k: np.diag(p["covariance"][k])),
        ),
        (
            Gaussian("tied"),
            {"mean": _MEAN, "covariance": _COV_FULL[0]},
            _gaussian(lambda p, k: p["covariance"]),
        ),
        (
            Gaussian("spherical"),
            {"mean": _MEAN, "covariance": [0.7, 2.0]},
            _gaussian(lambda p, k: p["covariance"][k] * np.eye(3)),
        ),
    ]


#: (family, params, logpdf(params, k, x, observed)): the marginal log-density of the observed
#: entries of row x under component k, from scipy.stats.
FAMILY_ORACLES = _family_oracles()
