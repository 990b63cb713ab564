"""The benchmark cases, split and scaled as in the proset technical report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from sklearn import datasets as skdatasets
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from discrim._typing import RandomStateLike
from discrim.datasets._synthetic import make_checkerboard, make_continuous_xor


@dataclass(frozen=True)
class _Case:
    description: str
    load: Callable  # random_state -> (X, y, feature_names)


def _sklearn_case(loader, n_features=None):
    def load(random_state: int | np.random.RandomState | np.random.Generator | None):
        bunch = loader()
        X = bunch.data[:, :n_features] if n_features else bunch.data
        names = [str(name) for name in bunch.feature_names[: X.shape[1]]]
        y = np.asarray(bunch.target_names)[bunch.target].astype(str)
        return X, y, names

    return load


def _generated_case(make, **kwargs):
    def load(random_state: int | np.random.RandomState | np.random.Generator | None):
        X, y = make(random_state=random_state, **kwargs)
        return X, y, [f"x{i}" for i in range(X.shape[1])]

    return load


_CASES = {
    "iris": _Case("scikit-learn iris, 3 classes, 4 features, 150 samples", _sklearn_case(skdatasets.load_iris)),
    "iris-2f": _Case(
        "iris, sepal length and width only: 3 classes, 2 features, 150 samples",
        _sklearn_case(skdatasets.load_iris, n_features=2),
    ),
    "wine": _Case("scikit-learn wine: 3 classes, 13 features, 178 samples", _sklearn_case(skdatasets.load_wine)),
    "cancer": _Case(
        "scikit-learn breast cancer: 2 classes, 30 features, 569 samples",
        _sklearn_case(skdatasets.load_breast_cancer),
    ),
    "digits": _Case(
        "scikit-learn digits 8x8: 10 classes, 64 features, 1,797 samples", _sklearn_case(skdatasets.load_digits)
    ),
    "checker": _Case(
        "8x8 checkerboard on [0,1]^2, 100 points per square: 2 classes, 2 features, 6,400 samples",
        _generated_case(make_checkerboard),
    ),
    "checker-rot": _Case(
        "checkerboard rotated by 45 degrees: 2 classes, 2 features, 6,400 samples",
        _generated_case(make_checkerboard, rotate=True),
    ),
    **{
        f"xor-{k}f": _Case(
            f"continuous XOR on [-1,1]^{k}, 100 points per orthant: 2 classes, {k} features, "
            f"{100 * 2**k:,} samples",
            _generated_case(make_continuous_xor, n_features=k),
        )
        for k in (3, 4, 5, 6)
    },
    "xor-6+6f": _Case(
        "xor-6f plus 6 uniform noise features: 2 classes, 12 features, 6,400 samples",
        _generated_case(make_continuous_xor, n_features=6, n_noise=6),
    ),
}


def list_datasets() -> dict:
    """Names and descriptions of the built-in data sets.

    Returns
    -------
    datasets : dict of str to str
        Name to one-line description, in the order of the benchmark table.

    Examples
    --------
    >>> from discrim.datasets import list_datasets
    >>> list(list_datasets())[:3]
    ['iris', 'iris-2f', 'wine']
    """
    return {name: case.description for name, case in _CASES.items()}


def load_dataset(name: str, random_state: RandomStateLike = 0,
                 as_frame: bool = False) -> tuple[np.ndarray | pd.DataFrame, np.ndarray]:
    """Load all rows of a built-in data set in their own units, unsplit and unscaled.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`.
    random_state : int, default=0
        Seed of the generator of the synthetic cases (ignored by the scikit-learn cases).
    as_frame : bool, default=False
        Return the features as a pandas DataFrame with column names.

    Returns
    -------
    X : ndarray or DataFrame of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Class labels; the scikit-learn cases keep their class names as strings.

    Examples
    --------
    >>> from discrim.datasets import load_dataset
    >>> X, y = load_dataset("iris-2f", as_frame=True)
    >>> list(X.columns), X.shape
    (['sepal length (cm)', 'sepal width (cm)'], (150, 2))
    """
    X, y, names = _load(name, random_state)
    return (pd.DataFrame(X, columns=names) if as_frame else X), y


def _load(name, random_state):
    if name not in _CASES:
        raise ValueError(f"unknown data set {name!r}; choose one of: {', '.join(_CASES)}.")
    return _CASES[name].load(random_state)


def load_benchmark(name: str, random_state: RandomStateLike = 0, test_size: float = 0.3, as_frame: bool = False,
                   scale: bool = True) -> tuple[np.ndarray | pd.DataFrame, np.ndarray | pd.DataFrame, np.ndarray, np.ndarray]:
    """Load a benchmark case split 70/30 stratified, scaled on the training part.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`.
    random_state : int, default=0
        Seed of the generator (synthetic cases) and of the split.
    test_size : float, default=0.3
        Fraction of samples held out, stratified by class.
    as_frame : bool, default=False
        Return the features as pandas DataFrames with column names.
    scale : bool, default=True
        Centre and scale the features with the mean and standard deviation of the training part,
        as the benchmark protocol does. With ``scale=False`` the features keep their own units:
        fit ``make_pipeline(StandardScaler(), model)`` on them to get the same model in a form
        that predicts raw rows (what ``discrim fit --dataset`` saves).

    Returns
    -------
    X_train : ndarray or DataFrame of shape (n_train, n_features)
    X_test : ndarray or DataFrame of shape (n_test, n_features)
    y_train : ndarray of shape (n_train,)
    y_test : ndarray of shape (n_test,)
        The scikit-learn cases keep their class names as string labels.

    Examples
    --------
    >>> from discrim.datasets import load_benchmark
    >>> X_train, X_test, y_train, y_test = load_benchmark("iris-2f")
    >>> X_train.shape, X_test.shape
    ((105, 2), (45, 2))
    """
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must lie strictly between 0 and 1; got {test_size}.")
    X, y, names = _load(name, random_state)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, stratify=y, random_state=random_state
    )
    if scale:
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    if as_frame:
        X_train = pd.DataFrame(X_train, columns=names)
        X_test = pd.DataFrame(X_test, columns=names)
    return X_train, X_test, y_train, y_test
