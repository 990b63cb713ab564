"""Choosing candidates for a batch: bins by class and correctness, the bins algorithm, the lemma."""

import warnings

import numpy as np

from discrim.utils._warnings import user_stacklevel
from discrim.utils.validation import plain_label


def round_half_up(h):
    """Round to the nearest integer with halves rounded up (the rounding the lemma assumes).

    Parameters
    ----------
    h : ndarray of float, entries >= 0

    Returns
    -------
    rounded : ndarray of int
    """
    return np.floor(np.asarray(h, dtype=np.float64) + 0.5).astype(np.int64)


def assign_bins(proba, y_idx):
    """Bin of each sample: ``2 * class + correct``.

    A sample is correctly classified iff the probability of its true class is greater than
    that of every other class (ties count as incorrect).

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        Probabilities (or any positive multiples per row) under the current model.
    y_idx : ndarray of shape (n_samples,) of int

    Returns
    -------
    bins : ndarray of shape (n_samples,) of int in [0, 2 * n_classes)
    """
    n = y_idx.shape[0]
    rows = np.arange(n)
    true = proba[rows, y_idx]
    others = proba.copy()
    others[rows, y_idx] = -np.inf
    correct = true > others.max(axis=1)
    return 2 * y_idx + correct.astype(np.int64)


def candidates_per_bin(bin_counts, n_candidates, max_fraction):
    """Number of candidates to draw from each bin: the seed's algorithm "Choose number of
    prototypes per bin".

    Bins are processed from the smallest to the largest. While the remaining budget ``R``
    split evenly over the remaining bins exceeds ``eta`` times the current bin's size, the bin
    gives its maximum ``eta * g_i`` and the budget shrinks by that amount (the seed's step [4]
    updates ``R`` after advancing ``i``; this is the corrected order). Otherwise every remaining
    bin gives the even share. Finally each count is rounded, halves up.

    Parameters
    ----------
    bin_counts : array-like of shape (n_bins,) of int
        ``g``, samples available in each bin, in any order.
    n_candidates : int
        ``M``, the total number of candidates wanted.
    max_fraction : float in (0, 1)
        ``eta``, the largest share of a bin that may be drawn.

    Returns
    -------
    h : ndarray of shape (n_bins,) of int
        Candidates per bin, in the order of ``bin_counts``; ``h <= round(eta * g) < g`` for
        every non-empty bin when the minimum-cases condition holds.

    Notes
    -----
    If ``sum(g) < M`` every bin gives its maximum ``eta * g_i``. If ``eta * g_i >= M / n_bins``
    for every bin, each gives ``M / n_bins``. (The seed states the latter for
    ``g_i <= M / n_bins``; with the cap ``eta`` the algorithm then gives ``eta * g_i``, which
    is what is implemented.)
    """
    g = np.asarray(bin_counts, dtype=np.float64)
    n_bins = g.shape[0]
    order = np.argsort(g, kind="stable")
    h_sorted = np.zeros(n_bins)
    remaining = float(n_candidates)
    for i, b in enumerate(order):
        share = remaining / (n_bins - i)
        limit = max_fraction * g[b]
        if share <= limit:
            h_sorted[i:] = share
            break
        h_sorted[i] = limit
        remaining -= limit
    h = np.empty(n_bins)
    h[order] = h_sorted
    return round_half_up(h)


def min_cases_violations(class_counts, max_fraction):
    """Classes that violate the minimum-cases condition (the lemma's compact form).

    For every class, ``ceil(N_k / 2) * eta >= 0.5`` (some candidate is drawn whatever the split
    into correctly and incorrectly classified samples) and ``ceil(N_k / 2) * (1 - eta) > 0.5``
    (some sample of the class remains for scoring).

    Parameters
    ----------
    class_counts : array-like of shape (n_classes,) of int
        ``N_k``, rows of each class.
    max_fraction : float in (0, 1)
        ``eta``.

    Returns
    -------
    bad : ndarray of bool of shape (n_classes,)
    """
    half = np.ceil(0.5 * np.asarray(class_counts, dtype=np.float64))
    # (1 - eta) * half > 0.5 written as the seed's eta * n < n - 0.5, so that rounding agrees
    # with the per-split condition at the boundary
    return ~((max_fraction * half >= 0.5) & (max_fraction * half < half - 0.5))


def min_cases_brute_force(n_k, max_fraction):
    """The minimum-cases condition for one class checked over every split, as the seed states it.

    Parameters
    ----------
    n_k : int
        Rows of the class.
    max_fraction : float
        ``eta``.

    Returns
    -------
    ok : bool
    """
    eta = max_fraction
    for n in range(n_k + 1):
        m = n_k - n
        drawn = (eta * n >= 0.5) or (eta * m >= 0.5)
        kept = (eta * n < n - 0.5) or (eta * m < m - 0.5)
        if not (drawn and kept):
            return False
    return True


def check_min_cases(class_counts, max_fraction, classes, what="training data", fixes=("add rows", "merge rare classes")):
    """Raise a ValueError naming the first class with too few rows for the bins algorithm.

    Parameters
    ----------
    class_counts : ndarray of shape (n_classes,) of int
    max_fraction : float
    classes : ndarray of shape (n_classes,)
        Labels, for the message.
    what : str
        Which data the counts describe, for the message.
    fixes : sequence of str, default=("add rows", "merge rare classes")
        The remedies the message offers. "move max_fraction towards 0.5" is added when it would
        help, i.e. when the class's count meets the condition at ``max_fraction=0.5`` (where the
        fewest rows are needed) but not at ``max_fraction``.
    """
    bad = np.flatnonzero(min_cases_violations(class_counts, max_fraction))
    if bad.size:
        k = bad[0]
        label = plain_label(classes[k])
        need = _min_rows(max_fraction)
        fixes = list(fixes)
        if not min_cases_violations([class_counts[k]], 0.5)[0]:
            fixes.append("move max_fraction towards 0.5")
        advice = " or ".join(fixes) if len(fixes) <= 2 else ", ".join(fixes[:-1]) + ", or " + fixes[-1]
        raise ValueError(
            f"class {label!r} has {int(class_counts[k])} row(s) with positive weight in the "
            f"{what}, but max_fraction={max_fraction} needs at least {need} per class so that "
            f"every class supplies both candidates and scoring samples: {advice}."
        )


def check_complete_candidates(complete_counts, classes):
    """Raise or warn when missing values leave classes without a row that can be a prototype.

    Rows with a missing value are scored but never drawn as candidates, so a class without a
    complete row of positive weight can have no prototype: with no such row at all the model
    could only predict the class frequencies, whatever its options.

    Parameters
    ----------
    complete_counts : ndarray of shape (n_classes,) of int
        Per class, the complete rows (no NaN) of positive weight.
    classes : ndarray of shape (n_classes,)
        Labels, for the message.

    Raises
    ------
    ValueError
        No class has a complete row.
    """
    advice = ("Impute the missing values first (for example PrototypeClassifierCV(transformer=make_pipeline("
              "IterativeImputer(), StandardScaler())), which fits the imputer inside each fold, or "
              "FiniteMixture(Gaussian(), n_components).fit(X).impute(X)), or drop the features that are "
              "missing most often.")
    if not np.any(complete_counts):
        raise ValueError(
            "X: every row of positive weight has a missing value (NaN), and prototypes are drawn from "
            "complete rows only, so the model could only predict the class frequencies. " + advice)
    lacking = np.flatnonzero(complete_counts == 0)
    if lacking.size:
        labels = [plain_label(classes[k]) for k in lacking]
        warnings.warn(
            f"class(es) {labels} have no complete row (every one has a missing value): prototypes are drawn "
            "from complete rows only, so no batch can hold a prototype of them and they are predicted "
            "from the other classes' prototypes and the class frequencies alone. " + advice,
            UserWarning, stacklevel=user_stacklevel())


def _min_rows(max_fraction):
    """Fewest rows per class that satisfy the minimum-cases condition for ``max_fraction``.

    The condition depends on ``m = ceil(N_k / 2)`` only, fails for small ``m`` and holds from
    about ``max(0.5 / eta, 0.5 / (1 - eta))`` on; the smallest such ``m`` is found by doubling
    and bisection on the condition itself (so that rounding agrees with it), and the answer is
    ``2 m - 1`` rows. Counting up from 1 would take ``0.5 / eta`` steps: forever for a tiny
    ``max_fraction``.
    """
    eta = float(max_fraction)

    def holds(m):
        return not min_cases_violations([2.0 * m - 1.0], eta)[0]

    hi = 1.0
    while not holds(hi):
        if not np.isfinite(hi):
            return hi  # beyond the float range: no count is enough
        hi *= 2.0
    lo = hi / 2.0 if hi > 1.0 else 0.0  # the condition fails at lo (or lo is 0)
    while hi - lo > max(1.0, np.spacing(hi)):
        mid = np.floor((lo + hi) / 2.0)
        if mid <= lo or mid >= hi:
            break
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    return int(2.0 * hi - 1.0)


def draw_candidates(bins, n_bins, h, rng):
    """Draw ``h[b]`` samples without replacement from each bin ``b``.

    Parameters
    ----------
    bins : ndarray of shape (n_samples,) of int
    n_bins : int
    h : ndarray of shape (n_bins,) of int
    rng : numpy.random.Generator

    Returns
    -------
    index : ndarray of int
        Positions (into ``bins``) of the drawn samples, sorted ascending.
    """
    ranks = ranks_per_group(np.bincount(bins, minlength=n_bins), h, rng)
    chosen = [np.flatnonzero(bins == b)[r] for b, r in enumerate(ranks) if r.size]
    if not chosen:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.concatenate(chosen))


def ranks_per_group(group_sizes, take, rng):
    """Draw ``take[g]`` members without replacement from each group ``g``, as ranks within it.

    A member's rank is its position among its group's members in row order, so the same draw
    selects the same rows whether the rows are in one array or spread over chunks (Dask).

    Parameters
    ----------
    group_sizes : ndarray of shape (n_groups,) of int
    take : ndarray of shape (n_groups,) of int
        At most the group's size is drawn.
    rng : numpy.random.Generator

    Returns
    -------
    ranks : list of ndarray of int
        One (unsorted) array per group, empty where nothing is drawn.
    """
    ranks = []
    for size, count in zip(group_sizes, take):
        if count > 0 and size > 0:
            ranks.append(rng.choice(int(size), size=min(int(count), int(size)), replace=False))
        else:
            ranks.append(np.zeros(0, dtype=np.int64))
    return ranks


def stratified_take(class_counts, size):
    """Rows each class gives to a class-stratified subsample of ``size`` rows, or None for all rows.

    Parameters
    ----------
    class_counts : ndarray of shape (n_classes,) of int
    size : int
        Target subsample size; each class gets ``round(size * N_k / N)`` rows (at least one).

    Returns
    -------
    take : ndarray of shape (n_classes,) of int or None
    """
    n = int(class_counts.sum())
    if size >= n:
        return None
    return np.minimum(class_counts, np.maximum(round_half_up(size * class_counts / n), 1))


def stratified_subsample(y_idx, n_classes, size, rng):
    """Rows of a class-stratified subsample without replacement.

    Parameters
    ----------
    y_idx : ndarray of shape (n_samples,) of int
    n_classes : int
    size : int
        Target subsample size; each class gets ``round(size * N_k / N)`` rows (at least one).
    rng : numpy.random.Generator

    Returns
    -------
    index : ndarray of int, sorted ascending
    """
    counts = np.bincount(y_idx, minlength=n_classes)
    take = stratified_take(counts, size)
    if take is None:
        return np.arange(y_idx.shape[0])
    ranks = ranks_per_group(counts, take, rng)
    return np.sort(np.concatenate([np.flatnonzero(y_idx == k)[r] for k, r in enumerate(ranks) if r.size]))
