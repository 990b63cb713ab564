"""Built-in data sets: the benchmark cases of the proset technical report and EM's two-coin example."""

from __future__ import annotations

from typing import TYPE_CHECKING

from discrim.datasets._benchmark import list_datasets, load_benchmark, load_dataset
from discrim.datasets._synthetic import make_checkerboard, make_continuous_xor

if TYPE_CHECKING:
    import numpy as np


def coin_tosses() -> np.ndarray:
    """Heads in five experiments of ten tosses each: the two-coin example of EM.

    Returns
    -------
    heads : ndarray of shape (5, 1) of int
        The counts 5, 9, 8, 4 and 7, one row per experiment; fit with
        ``FiniteMixture(Binomial(n_trials=10), n_components=2)``.

    Examples
    --------
    >>> from discrim.datasets import coin_tosses
    >>> coin_tosses().ravel().tolist()
    [5, 9, 8, 4, 7]
    """
    import numpy as np

    return np.array([[5], [9], [8], [4], [7]])


__all__ = ["coin_tosses", "list_datasets", "load_benchmark", "load_dataset", "make_checkerboard", "make_continuous_xor"]
