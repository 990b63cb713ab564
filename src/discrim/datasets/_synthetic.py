"""Generators for the synthetic benchmark cases of the proset technical report."""

from __future__ import annotations

import numpy as np

from discrim.utils._random import as_seed_sequence

# rows a generator draws at most (8 GB of float64 pairs): more is a typo, not a benchmark
_MAX_ROWS = 10**9 // 2


def _check_count(name, value, minimum):
    """Refuse a count that is not an int >= ``minimum`` by name (numpy failed on them deep inside)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}; got {value!r}.")
    return int(value)


def _check_rows(n_rows, what):
    if n_rows > _MAX_ROWS:
        raise ValueError(f"{what} give {n_rows:,} rows, more than {_MAX_ROWS:,}: lower them.")


def make_checkerboard(n_per_square: int = 100, n_squares: int = 8, rotate: bool = False, random_state: int | np.random.RandomState | np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Uniform points on [0, 1]^2 labelled by the colour of an n x n checkerboard.

    Parameters
    ----------
    n_per_square : int, default=100
        Points drawn uniformly inside each square.
    n_squares : int, default=8
        Squares per side.
    rotate : bool, default=False
        Rotate the points by 45 degrees about the origin (the "checker rot" case).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_per_square * n_squares**2, 2)
    y : ndarray of shape (n_per_square * n_squares**2,) of int
        ``(floor(n x1) + floor(n x2)) mod 2`` computed before any rotation.

    Examples
    --------
    >>> from discrim.datasets import make_checkerboard
    >>> X, y = make_checkerboard(n_per_square=2, n_squares=2, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((8, 2), [0, 1])
    """
    n_per_square, n_squares = _check_count("n_per_square", n_per_square, 1), _check_count("n_squares", n_squares, 1)
    _check_rows(n_per_square * n_squares**2, "n_per_square and n_squares")
    rng = np.random.default_rng(as_seed_sequence(random_state))
    corners = np.array([(i, j) for i in range(n_squares) for j in range(n_squares)], dtype=float)
    offsets = rng.uniform(size=(corners.shape[0], n_per_square, 2))
    X = ((corners[:, None, :] + offsets) / n_squares).reshape(-1, 2)
    y = (np.floor(n_squares * X).astype(int).sum(axis=1) % 2).astype(int)
    if rotate:
        c = s = np.sqrt(0.5)
        X = X @ np.array([[c, s], [-s, c]])
    return X, y


def make_continuous_xor(n_features: int = 6, n_per_orthant: int = 100, n_noise: int = 0, random_state: int | np.random.RandomState | np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Uniform points on [-1, 1]^k labelled 1 where the product of the features is >= 0.

    Parameters
    ----------
    n_features : int, default=6
        Informative features k.
    n_per_orthant : int, default=100
        Points drawn uniformly in each of the 2^k orthants.
    n_noise : int, default=0
        Extra uniform features on [-1, 1] that carry no information.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_per_orthant * 2**n_features, n_features + n_noise)
    y : ndarray of shape (n_per_orthant * 2**n_features,) of int

    Examples
    --------
    >>> from discrim.datasets import make_continuous_xor
    >>> X, y = make_continuous_xor(n_features=3, n_per_orthant=2, random_state=0)
    >>> X.shape
    (16, 3)
    >>> bool(((X.prod(axis=1) >= 0) == (y == 1)).all())
    True
    """
    n_features = _check_count("n_features", n_features, 1)
    n_per_orthant, n_noise = _check_count("n_per_orthant", n_per_orthant, 1), _check_count("n_noise", n_noise, 0)
    _check_rows(n_per_orthant * 2**n_features, "n_per_orthant and n_features (2**n_features orthants)")
    rng = np.random.default_rng(as_seed_sequence(random_state))
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * n_features, indexing="ij")).reshape(n_features, -1).T
    magnitudes = rng.uniform(size=(signs.shape[0], n_per_orthant, n_features))
    X = (signs[:, None, :] * magnitudes).reshape(-1, n_features)
    y = (np.prod(X, axis=1) >= 0).astype(int)
    if n_noise:
        X = np.hstack([X, rng.uniform(-1.0, 1.0, size=(X.shape[0], n_noise))])
    return X, y
