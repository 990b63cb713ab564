"""The specification's formulas written plainly, once: the oracles the tests compare against.

Each function transcribes an equation of the seeds (the prototype set classifier's kernel, class
scores and batch objective, the posterior rule) directly, with no expanded squares, chunks, GEMMs
or class blocks: the library's fast paths are tested against these, not against each other.
They take numpy or torch arrays (through array-api-compat), so torch's autograd can
differentiate the same text.
"""

import numpy as np
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
