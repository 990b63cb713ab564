"""Checks of training data shared by the discriminant classifiers."""

import numpy as np
from sklearn.utils.validation import validate_data

from discrim.utils.validation import check_feature_magnitude, check_numeric_columns


def validate_training_data(estimator, X, y):
    """Validate ``X`` and ``y`` for ``fit``, with errors that name the problem.

    Parameters
    ----------
    estimator : BaseEstimator
        Receives ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame).
    X : array-like of shape (n_samples, n_features)
        Numeric, finite, with ``|x| <= max_feature_magnitude`` (1e102 for float64); at least
        two rows.
    y : array-like of shape (n_samples,)

    Returns
    -------
    X : ndarray of shape (n_samples, n_features) of float64
    y : ndarray of shape (n_samples,)
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(X, "columns"):
        check_numeric_columns(dtypes)
    elif isinstance(X, np.ndarray) and X.dtype.kind in "US":
        raise ValueError(
            f"X has dtype {X.dtype} (text): the discriminant rules need numeric features; "
            "encode them as numbers first."
        )
    X, y = validate_data(estimator, X, y, dtype=np.float64, ensure_min_samples=2)
    # Squared distances of larger values overflow to inf and the posteriors to inf - inf = NaN.
    check_feature_magnitude(X, "X")
    return X, y
