"""Checks of training data shared by the discriminant classifiers."""

import numpy as np

from discrim.utils.validation import check_numeric_table, validated_training_data


def validate_training_data(estimator, X, y, keep_float32=False, allow_nan=False):
    """Validate ``X`` and ``y`` for ``fit``, with errors that name the problem.

    Parameters
    ----------
    estimator : BaseEstimator
        Receives ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame).
    X : array-like of shape (n_samples, n_features)
        Numeric, finite, with ``|x| <= max_feature_magnitude`` (1e102 for float64); at least
        two rows.
    y : array-like of shape (n_samples,)
    keep_float32 : bool, default=False
        Keep float32 X in float32 (anything else becomes float64).
    allow_nan : bool, default=False
        Accept NaN in host X as a missing value.

    Returns
    -------
    X : ndarray or torch.Tensor of shape (n_samples, n_features) of float64
        Where the estimator computes (:func:`discrim.backend._device.rows_on_device`).
    y : ndarray of shape (n_samples,)
        On the host.
    """
    X = check_numeric_table(X)
    dtype = [np.float64, np.float32] if keep_float32 else np.float64
    return validated_training_data(estimator, X, y, dtype=dtype, allow_nan=allow_nan)
