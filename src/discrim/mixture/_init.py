"""Starting responsibilities for EM: k-means++ seeding, k-means, hierarchical agglomeration, random starts, a given partition."""

from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans, kmeans_plusplus

from discrim.backend import array_namespace, ops
from discrim.mixture._hierarchical import MAX_ROWS, _first_appearance, agglomerate, svd_coordinates

__all__ = ["INIT_METHODS", "InitialAssignment", "check_enough_distinct_rows", "given_assignment", "hierarchical_partitions",
           "initial_assignment", "quantile_classes"]

INIT_METHODS = ("kmeans++", "kmeans", "hierarchical", "random", "random_from_data")


def check_enough_distinct_rows(X, sample_weight, n_components):
    """Raise ``ValueError`` if the rows of positive weight hold fewer than ``n_components`` distinct rows.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    sample_weight : ndarray of shape (n_samples,)
    n_components : int
    """
    rows = X[sample_weight > 0]
    # Cheap first: distinct rows among the first few usually settle it without sorting all of X,
    # and distinct values of their first feature (a 1-d sort) without comparing whole rows.
    head = rows[: 4 * n_components]
    if head.shape[1] and np.unique(head[:, 0]).shape[0] >= n_components:
        return
    if np.unique(head, axis=0).shape[0] >= n_components:
        return
    n_distinct = np.unique(rows, axis=0).shape[0]
    if n_distinct < n_components:
        # float32 keeps about 7 significant digits: rows far from 0 against their spread become equal
        fix = ("Reduce n_components or provide more data." if X.dtype != np.float32 else
               "In float32 (dtype='float32'), which keeps about 7 significant digits, rows that differ beyond them "
               "are equal: centre X (e.g. X - X.mean(axis=0)) or fit with dtype='float64'; otherwise reduce "
               "n_components or provide more data.")
        raise ValueError(
            f"X has {n_distinct} distinct row(s) with positive weight (n_samples={X.shape[0]}) but "
            f"n_components={n_components}: a mixture needs at least as many distinct rows as components. {fix}"
        )


def _nearest(X, offset, centers):
    """Index (n_samples,) of the nearest center to each row, in the namespace and on the device of X.

    Squared Euclidean distances in float64, expanded about ``offset`` (see :func:`initial_assignment`).
    """
    xp = array_namespace(X)
    Xf = ops.as_float64(X) - ops.like(offset, X, "float64")
    c = ops.like(centers, Xf)
    return xp.argmin(xp.sum(c * c, axis=1) - 2.0 * (Xf @ c.T), axis=1)


@dataclass(frozen=True)
class InitialAssignment:
    """The starting responsibilities of any block of rows, from which the first M-step starts EM.

    Either a hard assignment of each row to its nearest center (``centers``, about ``offset``),
    or random soft assignments: the rows of ``resp`` when they were drawn for all rows at once,
    else a stream seeded by ``seed`` and the block's first row.
    """

    n_components: int
    offset: np.ndarray = None
    centers: np.ndarray = None
    resp: np.ndarray = None
    seed: int = None

    def __call__(self, X, first_row=0):
        """Responsibilities (n_block, n_components) of the rows ``X`` starting at ``first_row``.

        In the namespace, on the device and in the dtype of X.
        """
        if self.centers is not None:
            labels = _nearest(X, self.offset, self.centers)
            return ops.one_hot(labels[:, None], self.n_components, X.dtype)[:, 0, :]
        if self.resp is not None:
            return ops.like(self.resp[first_row : first_row + X.shape[0]], X)
        resp = np.random.default_rng([self.seed, first_row]).uniform(size=(X.shape[0], self.n_components))
        return ops.like(resp / resp.sum(axis=1, keepdims=True), X)


@dataclass(frozen=True)
class LabelledRowsStart:
    """The first M-step from the labelled rows alone, each in its label's component.

    A semi-supervised fit (known labels for some rows, one component per label) starts where the
    labels put the components, as mclust's ``MclustSSC``: a seeding over all rows numbers its
    clusters arbitrarily, and EM from there can pin the labelled rows in the wrong components.
    The responsibilities here are 0; the labelled rows' come from their labels (the block data's
    ``allowed``), and the unlabelled rows take no part (see :func:`~discrim.mixture._em.stats_from_assignment`).
    """

    n_components: int
    labelled_only = True

    def __call__(self, X, first_row=0):
        return ops.like(np.zeros((X.shape[0], self.n_components)), X)


def initial_assignment(X, sample_weight, n_components, method, rng, *, n_rows=None):
    """How EM's starting responsibilities are drawn: centers from (a sample of) the rows.

    Parameters
    ----------
    X : ndarray of shape (n_sample, n_features)
        All the rows, or a sample of them (data that do not fit in memory).
    sample_weight : ndarray of shape (n_sample,)
    n_components : int
    method : {"kmeans++", "kmeans", "hierarchical", "random", "random_from_data"}
        "kmeans++": centers by k-means++ seeding (weighted), each row assigned to its nearest
        center; "kmeans": the centers of a weighted k-means fit (Lloyd's algorithm from a
        k-means++ seeding), each row assigned to its nearest center; "hierarchical": mclust's
        model-based agglomeration (:mod:`~discrim.mixture._hierarchical`) of the rows of positive
        weight, or of ``MAX_ROWS`` (2,000) of them drawn uniformly when there are more (the
        others then take no part in the first M-step, as mclust's ``subset``; from a sample of
        data not in memory, the clusters' means are the centers of all rows); "random": uniform random soft
        assignments normalised per row; "random_from_data": ``n_components`` distinct rows of
        positive weight drawn uniformly as centers, each row assigned to its nearest center.
    rng : numpy.random.Generator
    n_rows : int or None, default=None
        Number of rows of the whole data; None (or ``n_sample``) when X holds them all. "random"
        draws all rows' responsibilities at once then; from a sample it seeds a stream per block.

    Returns
    -------
    assign : InitialAssignment
    """
    n = X.shape[0]
    if method == "random":
        if n_rows is None or n_rows == n:
            resp = rng.uniform(size=(n, n_components))
            return InitialAssignment(n_components, resp=resp / resp.sum(axis=1, keepdims=True))
        return InitialAssignment(n_components, seed=int(rng.integers(0, 2**63 - 1)))
    # Distances below are expanded squares (|x|^2 - 2 x'c + |c|^2, also inside kmeans_plusplus):
    # about a data row they involve the data's spread, not its offset from the origin, so the
    # seeding and the assignment do not change when the data are translated.
    Xf = np.asarray(X, dtype=np.float64)
    offset = Xf[np.argmax(sample_weight > 0)].copy()
    Xf = Xf - offset
    if method == "hierarchical":
        return _hierarchical(Xf, sample_weight, n_components, rng, offset, all_rows=n_rows is None or n_rows == n)
    if method == "kmeans":
        seed = int(rng.integers(0, 2**31 - 1))
        kmeans = KMeans(n_components, n_init=1, random_state=seed).fit(Xf, sample_weight=sample_weight)
        if np.unique(kmeans.cluster_centers_, axis=0).shape[0] == n_components:
            return InitialAssignment(n_components, offset=offset, centers=kmeans.cluster_centers_)
        idx = _distinct_rows(Xf, sample_weight, n_components, rng)
    elif method == "kmeans++":
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
    return InitialAssignment(n_components, offset=offset, centers=centers)


def hierarchical_partitions(X, sample_weight, counts, rng):
    """mclust's hierarchical start at several component counts: one agglomeration, its partitions.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Complete rows.
    sample_weight : ndarray of shape (n_samples,)
    counts : list of int
    rng : numpy.random.Generator
        Draws the ``MAX_ROWS`` rows agglomerated when more have positive weight.

    Returns
    -------
    partitions : dict of int to ndarray of shape (n_samples,) of int
        By count: each row's cluster, or -1 for a row the agglomeration did not see, which then
        takes no part in the first M-step (as mclust's ``subset``).

    Notes
    -----
    On one feature mclust's ``Mclust`` and ``mclustBIC`` start from its quantile classes
    (``qclass``), not from ``hc``: so does this (:func:`quantile_classes`), except at a count
    where a class would be empty, which the agglomeration then partitions.
    """
    rows = np.flatnonzero(sample_weight > 0)
    if rows.size > MAX_ROWS:
        rows = np.sort(rng.choice(rows, MAX_ROWS, replace=False))
    found = {}
    if X.shape[1] == 1:
        distinct = np.unique(X[rows, 0]).size
        for count in counts:
            # fewer distinct values than classes leave a quantile class empty (and take qclass long)
            labels = quantile_classes(X[rows, 0], count) if count <= distinct else None
            if labels is not None and np.unique(labels).size == count:
                found[count] = _first_appearance(labels)
    rest = [count for count in counts if count not in found]
    if rest:
        found.update(agglomerate(svd_coordinates(X[rows]), rest))
    out = {}
    for count, labels in found.items():
        out[count] = np.full(X.shape[0], -1)
        out[count][rows] = labels
    return out


def quantile_classes(x, n_classes):
    """mclust's ``qclass``: the classes of one feature between its quantiles, its start on one feature.

    Parameters
    ----------
    x : ndarray of shape (n_samples,)
    n_classes : int
        k, at most the distinct values of x (with fewer, a class is empty, and finding the
        quantiles can take long, as in mclust).

    Returns
    -------
    labels : ndarray of shape (n_samples,) of int
        0 for the lowest values, ..., k - 1 for the highest (``qclass`` less one): class j holds
        ``q_j <= x < q_(j+1)``, the ``q`` the distinct quantiles (R's default type 7) at
        ``m`` equally spaced probabilities, ``m`` the least from ``k + 1`` that gives at least
        ``k + 1`` of them, less the left ends of the smallest gaps when there are more (R's
        ``order``: the first of equal gaps first), the outer two moved to
        ``min(x) - eps`` and ``max(x) + eps`` (``eps`` the standard deviation times
        ``sqrt`` of the machine epsilon). A class may be empty on heavily tied data; one class
        (zeros) for k = 1 or a constant x.
    """
    x = np.asarray(x, dtype=np.float64)
    eps = (x.std(ddof=1) if x.size > 1 else 0.0) * np.sqrt(np.finfo(np.float64).eps)
    if n_classes < 2 or np.unique(x).size < 2:
        return np.zeros(x.shape[0], dtype=np.intp)
    ordered = np.sort(x)
    q, m = np.array([]), n_classes
    while q.size < n_classes + 1:  # ends: between two values, finer grids interpolate more quantiles
        m += 1
        q = np.unique(_type7_quantiles(ordered, np.linspace(0.0, 1.0, m)))
    if q.size > n_classes + 1:
        q = np.delete(q, np.argsort(np.diff(q), kind="stable")[:q.size - n_classes - 1])
    q[0], q[-1] = x.min() - eps, x.max() + eps
    return np.searchsorted(q, x, side="right") - 1


def _type7_quantiles(ordered, probs):
    """R's default quantiles (type 7, numpy's "linear") of sorted values: (m,) for probs (m,)."""
    h = (ordered.shape[0] - 1) * probs
    low = np.floor(h).astype(np.intp)
    high = np.minimum(low + 1, ordered.shape[0] - 1)
    return ordered[low] + (h - low) * (ordered[high] - ordered[low])


def _hierarchical(X, sample_weight, n_components, rng, offset, all_rows):
    """The start of "hierarchical": a partition of the rows agglomerated, or of a sample's means."""
    if all_rows:  # the rows left out of the agglomeration start outside the first M-step
        labels = hierarchical_partitions(X, sample_weight, [n_components], rng)[n_components]
        return given_assignment(labels, X.shape[0], n_components)
    # a sample of data that are not all in memory (up to 2^17 rows): the clusters of at most MAX_ROWS
    # of them (the agglomeration's cost is quadratic in its rows), whose means are the centers of all rows
    labels = hierarchical_partitions(X, sample_weight, [n_components], rng)[n_components]
    centers = np.stack([X[labels == j].mean(axis=0) for j in range(n_components)])
    return InitialAssignment(n_components, offset=offset, centers=centers)


def given_assignment(init, n_rows, n_components):
    """The start EM takes from a user's partition or responsibilities (``init_params`` as an array).

    Parameters
    ----------
    init : array-like of shape (n_rows,) or (n_rows, n_components)
        The component of every row (ints in ``[0, n_components)``, or -1 for a row that takes
        no part in the first M-step, as the rows outside mclust's ``subset``), or
        responsibilities: non-negative rows summing to one.
    n_rows : int
    n_components : int

    Returns
    -------
    assign : InitialAssignment
    """
    resp = np.asarray(init)
    if resp.dtype.kind not in "biuf":
        raise ValueError(f"init_params as an array must be numeric (a partition or responsibilities); got dtype {resp.dtype}.")
    if resp.ndim == 1:
        labels = resp
        if resp.shape[0] != n_rows or not np.all(labels == np.round(labels)) or labels.min() < -1 or (
                labels.max() >= n_components) or np.all(labels < 0):
            raise ValueError(
                f"init_params as a partition must hold one int in [0, {n_components}) per row of X "
                f"({n_rows} rows; -1 leaves a row out of the first M-step); got shape {resp.shape} with values "
                f"in [{labels.min()}, {labels.max()}]."
            )
        inside = np.flatnonzero(labels >= 0)
        resp = np.zeros((n_rows, n_components))
        resp[inside, labels[inside].astype(np.int64)] = 1.0
        _refuse_empty_components(resp, "a partition", "no row has the label(s)")
        return InitialAssignment(n_components, resp=resp)
    elif resp.shape != (n_rows, n_components):
        raise ValueError(
            f"init_params as responsibilities must have shape ({n_rows}, {n_components}) (rows of X, "
            f"n_components); got {resp.shape}."
        )
    resp = resp.astype(np.float64)
    if not np.all(np.isfinite(resp)) or resp.min() < 0 or not np.allclose(resp.sum(axis=1), 1.0, rtol=0, atol=1e-6):
        raise ValueError("init_params as responsibilities must be finite, non-negative, and sum to one in every row.")
    _refuse_empty_components(resp, "responsibilities", "these column(s) are 0 in every row:")
    return InitialAssignment(n_components, resp=resp)


def _refuse_empty_components(resp, kind, what):
    """A start that gives a component no row would leave it at placeholder parameters (outside the
    model's constraints, e.g. a shape shared with the others): refused, naming the components."""
    empty = np.flatnonzero(resp.sum(axis=0) <= 0)
    if empty.size:
        raise ValueError(
            f"init_params as {kind} must give every one of the n_components={resp.shape[1]} components some "
            f"rows; {what} {empty.tolist()}. Lower n_components to the number of groups, or relabel them "
            f"0..{resp.shape[1] - 1}."
        )


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
