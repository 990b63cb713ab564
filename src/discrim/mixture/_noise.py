"""A uniform noise component: the data region's hypervolume (mclust's hypvol) and the initial noise rows."""

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

__all__ = ["NoiseRegion", "default_noise_rows", "noise_region"]


@dataclass(frozen=True)
class NoiseRegion:
    """A box ``lower <= X @ rotation <= upper``: the region over which the noise is uniform.

    Attributes
    ----------
    rotation : ndarray of shape (n_features, n_features)
        Orthogonal: the identity (the data's bounding box) or the principal axes.
    lower : ndarray of shape (n_features,)
    upper : ndarray of shape (n_features,)
    log_volume : float
        ``sum log(upper - lower)``.
    """

    rotation: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    log_volume: float

    def sample(self, n, rng):
        """Draw ``n`` rows uniformly from the box.

        Parameters
        ----------
        n : int
        rng : numpy.random.Generator

        Returns
        -------
        X : ndarray of shape (n, n_features)
        """
        coords = rng.uniform(self.lower, self.upper, size=(n, self.lower.shape[0]))
        return coords @ self.rotation.T


# The smallest eigenvalue of the features' correlation matrix below this (times the number of
# features) is rounding: the features are collinear.
_COLLINEAR = 1e-12


def noise_region(X):
    """The smaller of the data's bounding box and its box along the principal axes (mclust's ``hypvol``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    region : NoiseRegion
        Its ``log_volume`` is ``min(sum_j log range(x_j), sum_j log range(s_j))`` over the columns
        ``x_j`` of X and ``s_j`` of its principal component scores, the log of mclust's
        ``hypvol(X)``.

    Raises
    ------
    ValueError
        When a column (or principal direction) of X has no spread: the volume is zero.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] < 2:
        raise ValueError(f"noise=True needs at least 2 samples to span a volume; got n_samples={X.shape[0]}. Pass "
                         "noise=<the volume V>, or fit without noise.")
    centred = X - X.mean(axis=0)
    scatter = centred.T @ centred
    spread = np.sqrt(np.diag(scatter))
    if np.all(spread > 0) and X.shape[1] > 1:
        # collinear features span no volume either, but rounding leaves the box along the principal
        # axes a sliver (a column the sum of two others: V = 3.8e-12, and every row went to the noise);
        # the correlations say so in any units
        correlation = scatter / np.outer(spread, spread)
        if np.linalg.eigvalsh(correlation)[0] < _COLLINEAR * X.shape[1]:
            raise ValueError("noise=True needs data that span every direction, and X's features are collinear "
                             "(one is a linear combination of others, so the hypervolume of X is 0): remove one of "
                             "them, or pass noise=<the volume V>.")
    rotation = np.linalg.eigh(scatter)[1][:, ::-1]
    best = None
    for R in (np.eye(X.shape[1]), rotation):
        coords = X @ R
        lower, upper = coords.min(axis=0), coords.max(axis=0)
        with np.errstate(divide="ignore"):
            log_volume = float(np.sum(np.log(upper - lower)))
        if best is None or log_volume < best.log_volume:
            best = NoiseRegion(R, lower, upper, log_volume)
    if not np.isfinite(best.log_volume):
        raise ValueError("noise=True needs data that span every direction (the hypervolume of X is 0): remove "
                         "constant or collinear features, or pass noise=<the volume V>.")
    return best


def default_noise_rows(X, n_neighbors=5, max_iter=200):
    """Initial noise rows by the nearest-neighbour clutter removal of Byers and Raftery (1998).

    Under a Poisson process of intensity ``rho`` in d dimensions, the volume of the ball that
    reaches a row's ``n_neighbors``-th nearest neighbour is Gamma(``n_neighbors``, ``rho``). A
    two-component mixture of such Gamma laws (clutter of low intensity, features of high
    intensity) is fitted by EM to these volumes; a row is noise when its posterior of being
    clutter exceeds one half.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_neighbors : int, default=5
    max_iter : int, default=200

    Returns
    -------
    noise : ndarray of shape (n_samples,) of bool
    """
    from sklearn.neighbors import NearestNeighbors

    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    k = int(min(n_neighbors, n - 1))
    if k < 1:
        return np.zeros(n, dtype=bool)
    dist = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)[0][:, -1]
    positive = dist[dist > 0]
    if positive.size == 0:
        return np.zeros(n, dtype=bool)
    # volumes in units of their median, in logs: no overflow for many features
    log_vol = d * (np.log(np.maximum(dist, positive.min())) - np.log(np.median(positive)))
    vol = np.exp(log_vol)
    high = vol > np.median(vol)
    if not high.any() or high.all():
        return np.zeros(n, dtype=bool)
    rate = np.array([k / vol[~high].mean(), k / vol[high].mean()])  # features, clutter
    weight = np.array([0.5, 0.5])
    previous = -np.inf
    for _ in range(max_iter):
        log_dens = k * np.log(rate) + (k - 1) * log_vol[:, None] - rate * vol[:, None] - gammaln(k) + np.log(weight)
        top = log_dens.max(axis=1, keepdims=True)
        log_norm = top[:, 0] + np.log(np.exp(log_dens - top).sum(axis=1))
        resp = np.exp(log_dens - log_norm[:, None])
        nk = resp.sum(axis=0)
        if np.any(nk <= 0):
            break
        weight = nk / n
        rate = k * nk / (resp * vol[:, None]).sum(axis=0)
        ll = log_norm.sum()
        if ll - previous < 1e-10 * abs(ll):
            break
        previous = ll
    clutter = int(np.argmin(rate))
    return resp[:, clutter] > 0.5
