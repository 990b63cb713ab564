"""Starting responsibilities for EM: k-means++ seeding, random soft assignments, random rows."""

import numpy as np
from sklearn.cluster import kmeans_plusplus

__all__ = ["INIT_METHODS", "check_enough_distinct_rows", "initial_resp"]

INIT_METHODS = ("kmeans++", "random", "random_from_data")


def check_enough_distinct_rows(X, sample_weight, n_components):
    """Raise ``ValueError`` if the rows of positive weight hold fewer than ``n_components`` distinct rows.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    sample_weight : ndarray of shape (n_samples,)
    n_components : int
    """
    rows = X[sample_weight > 0]
    # Cheap first: distinct rows among the first few usually settle it without sorting all of X.
    head = rows[: 4 * n_components]
    if np.unique(head, axis=0).shape[0] >= n_components:
        return
    n_distinct = np.unique(rows, axis=0).shape[0]
    if n_distinct < n_components:
        raise ValueError(
            f"X has {n_distinct} distinct row(s) with positive weight (n_samples={X.shape[0]}) but "
            f"n_components={n_components}: a mixture needs at least as many distinct rows as "
            "components. Reduce n_components or provide more data."
        )


def _nearest(X, centers):
    """Index (n_samples,) of the nearest center by squared Euclidean distance, in row blocks."""
    out = np.empty(X.shape[0], dtype=np.intp)
    c2 = (centers**2).sum(axis=1)
    step = 65536
    for s in range(0, X.shape[0], step):
        B = X[s : s + step]
        out[s : s + step] = np.argmin(c2 - 2.0 * (B @ centers.T), axis=1)
    return out


def _hard(labels, n_components, dtype):
    resp = np.zeros((labels.shape[0], n_components), dtype=dtype)
    resp[np.arange(labels.shape[0]), labels] = 1.0
    return resp


def initial_resp(X, sample_weight, n_components, method, rng):
    """Starting responsibilities from which the first M-step gives the initial parameters.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    sample_weight : ndarray of shape (n_samples,)
    n_components : int
    method : {"kmeans++", "random", "random_from_data"}
        "kmeans++": centers by k-means++ seeding (weighted), each row assigned to its nearest
        center; "random": uniform random soft assignments normalised per row; "random_from_data":
        ``n_components`` distinct rows of positive weight drawn uniformly as centers, each row
        assigned to its nearest center.
    rng : numpy.random.Generator

    Returns
    -------
    resp : ndarray of shape (n_samples, n_components)
    """
    n = X.shape[0]
    if method == "random":
        resp = rng.uniform(size=(n, n_components))
        return resp / resp.sum(axis=1, keepdims=True)
    # Distances below are expanded squares (|x|^2 - 2 x'c + |c|^2, also inside kmeans_plusplus):
    # about a data row they involve the data's spread, not its offset from the origin, so the
    # seeding and the assignment do not change when the data are translated.
    Xf = np.asarray(X, dtype=np.float64)
    Xf = Xf - Xf[np.argmax(sample_weight > 0)]
    if method == "kmeans++":
        seed = int(rng.integers(0, 2**31 - 1))
        _, idx = kmeans_plusplus(Xf, n_components, sample_weight=sample_weight, random_state=seed)
    elif method == "random_from_data":
        idx = _distinct_rows(Xf, sample_weight, n_components, rng)
    else:
        raise ValueError(f"init_params must be one of {INIT_METHODS}; got {method!r}.")
    centers = Xf[idx]
    if np.unique(centers, axis=0).shape[0] < n_components:
        # k-means++ picks duplicates only when it has run out of distinct rows of positive weight.
        centers = Xf[_distinct_rows(Xf, sample_weight, n_components, rng)]
    return _hard(_nearest(Xf, centers), n_components, np.float64)


def _distinct_rows(X, sample_weight, n_components, rng):
    """Indices of ``n_components`` distinct rows of positive weight, drawn uniformly."""
    candidates = np.flatnonzero(sample_weight > 0)
    rng.shuffle(candidates)
    chosen, seen = [], set()
    for i in candidates:
        key = X[i].tobytes()
        if key not in seen:
            seen.add(key)
            chosen.append(i)
            if len(chosen) == n_components:
                return np.asarray(chosen)
    raise ValueError(
        f"X has only {len(chosen)} distinct row(s) with positive weight but n_components={n_components}."
    )
