"""Where an estimator computes, and the namespace its outputs return in.

Every estimator has a ``device`` parameter. None computes with numpy on the host, unless the
input is a torch tensor: the computation then follows the tensor to its device (scikit-learn's
array API convention). A device ("cpu", "cuda", "cuda:1", a ``torch.device``) computes with
torch there; numpy input goes to the device once, in :func:`rows_on_device`. Fitted attributes
stay numpy on the host whatever the device, so persistence, plots and the CLI never see a
tensor; prediction methods return in the namespace and on the device of their input
(:func:`like_input`).

This module imports torch only when a device or a tensor asks for it.
"""

import numpy as np
from array_api_compat import is_torch_array

from discrim.backend._torch import torch_namespace

__all__ = ["check_device", "compute_device", "device_type", "is_tensor", "like_input", "rows_on_device", "validated_tensor"]


def is_tensor(x):
    """Whether ``x`` is a torch tensor (without importing torch)."""
    return is_torch_array(x)


def device_type(x):
    """"cuda", "cpu", ... for a tensor's device; None for anything else (numpy on the host)."""
    return x.device.type if is_tensor(x) else None


def check_device(device, name="device"):
    """The torch device ``device`` names, or None for numpy on the host.

    Parameters
    ----------
    device : str, torch.device or None
        "cpu", "cuda", "cuda:1", ... or a ``torch.device``.
    name : str, default="device"
        The parameter's name in error messages.

    Returns
    -------
    device : torch.device or None

    Raises
    ------
    ImportError
        Without torch.
    ValueError
        For a string torch does not read as a device, or a CUDA device that is not there.
    """
    if device is None:
        return None
    torch_namespace(f"{name}={device!r}")  # a clear ImportError without torch
    import torch

    if name.startswith("--"):  # a command-line option
        fix, moved = f"leave out {name} (numpy on the host) or give {name} cpu", ""
    else:
        fix = f"use {name}=None (numpy on the host) or 'cpu'"
        moved = " (a model fitted on another machine: set_params(device=...))"
    try:
        placed = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"{name}={device!r} is not a device: {fix}, 'cuda' or 'cuda:<index>'.") from None
    if placed.type == "cuda":
        available = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (placed.index or 0) >= available:
            raise ValueError(
                f"{name}={device!r} but torch sees {available} CUDA device(s) on this machine: {fix}{moved}."
            )
    return placed


def compute_device(device, X=None):
    """The device an estimator with ``device`` computes on for input X (None: numpy on the host).

    Parameters
    ----------
    device : str, torch.device or None
        The estimator's ``device`` parameter.
    X : array-like or None, default=None
        A torch tensor's own device is used when ``device`` is None.

    Returns
    -------
    device : torch.device or None
    """
    placed = check_device(device)
    if placed is None and X is not None and is_tensor(X):
        return X.device
    return placed


def _torch_dtype(dtype, X):
    import torch

    if dtype is None:  # keep a floating dtype numpy-style: float32 stays, anything else is float64
        return torch.float32 if X.dtype == torch.float32 else torch.float64
    return {np.dtype(np.float64): torch.float64, np.dtype(np.float32): torch.float32}[np.dtype(dtype)]


def validated_tensor(estimator, X, *, reset, dtype, min_samples=1, name="X"):
    """Validate a torch tensor of rows where it lives, as scikit-learn's ``validate_data`` does numpy.

    Checks the shape, the number of features (``n_features_in_`` is set when ``reset``),
    finiteness and the magnitude discrim supports, then casts to ``dtype``; nothing is copied to
    the host.

    Parameters
    ----------
    estimator : BaseEstimator
    X : torch.Tensor of shape (n_samples, n_features)
    reset : bool
        True in fit: record ``n_features_in_`` (and forget ``feature_names_in_``).
    dtype : numpy dtype, str or None
        float64 or float32; None keeps float32 and makes anything else float64.
    min_samples : int, default=1
    name : str, default="X"

    Returns
    -------
    X : torch.Tensor of shape (n_samples, n_features)
        On X's device, in ``dtype``.
    """
    import torch

    from discrim.utils.validation import max_feature_magnitude

    owner = type(estimator).__name__
    X = X.detach()  # values only: nothing here is differentiated (and numpy() refuses a tensor that requires grad)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-dimensional {name} (n_samples, n_features); got a tensor of shape "
                         f"{tuple(X.shape)}. Reshape it, e.g. {name}.reshape(-1, 1) for a single feature.")
    if X.is_complex():
        raise ValueError(f"{name} is complex; {owner} needs real-valued features.")
    n, d = X.shape
    if n < min_samples:
        raise ValueError(f"Found array with {n} sample(s) (shape=({n}, {d})) while a minimum of {min_samples} "
                         f"is required by {owner}.")
    if d == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required by {owner}.")
    if reset:
        estimator.n_features_in_ = d
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
    elif hasattr(estimator, "n_features_in_") and d != estimator.n_features_in_:
        raise ValueError(f"{name} has {d} features, but {owner} is expecting {estimator.n_features_in_} features "
                         "as input.")
    X = X.to(_torch_dtype(dtype, X))
    dtype = str(X.dtype).removeprefix("torch.")
    finite = torch.isfinite(X)
    if not bool(finite.all()):
        if bool(torch.isnan(X).any()):
            raise ValueError(f"Input {name} contains NaN: missing values are handled on the host (numpy) path only; "
                             "give numpy rows with device=None, or impute them first.")
        raise ValueError(f"Input {name} contains infinity or a value too large for {np.dtype(dtype)}.")
    largest = float(X.abs().max()) if X.numel() else 0.0
    limit = max_feature_magnitude(np.dtype(dtype))
    if largest > limit:
        raise ValueError(
            f"{name} has values of magnitude up to {largest:.3g}; discrim supports |value| <= {limit:.0e} for "
            f"{np.dtype(dtype)} data: rescale the features (e.g. with StandardScaler or a change of units)."
        )
    return X


def rows_on_device(estimator, X, validate, *, reset, dtype, min_samples=1, nan_on_device=None, nan_on_host=False):
    """Validated rows of X where ``estimator`` computes: numpy on the host, or a tensor on its device.

    Parameters
    ----------
    estimator : BaseEstimator
        With a ``device`` parameter (absent: None).
    X : array-like or torch.Tensor of shape (n_samples, n_features)
    validate : callable
        ``validate(X) -> ndarray``: the estimator's own validation of host input (numpy,
        DataFrames, lists).
    reset : bool
        True in fit.
    dtype : numpy dtype, str or None
        Of a tensor X (:func:`validated_tensor`); ``validate`` casts host input itself.
    min_samples : int, default=1
    nan_on_device : str or None, default=None
        The message of the ValueError raised, before anything crosses, when validated host rows
        hold NaN (missing values) and would cross to a device where the estimator has no
        missing-value path; None lets them cross.
    nan_on_host : bool, default=False
        Keep validated host rows that hold NaN on the host (numpy), for an estimator whose
        missing-value path is host code over host attributes: the result is then numpy, as the
        input was.

    Returns
    -------
    X : ndarray or torch.Tensor of shape (n_samples, n_features)
        A tensor exactly when the estimator computes on a device; host input crosses to the
        device once, here.
    """
    device = compute_device(getattr(estimator, "device", None), X)
    if is_tensor(X):
        if nan_on_host and bool(X.isnan().any()):
            # missing values: the host path, as for host rows (the caller returns in X's namespace)
            from discrim.backend import host_input  # lazy: the package imports this module

            X = host_input(X)
        else:
            return validated_tensor(estimator, X, reset=reset, dtype=dtype, min_samples=min_samples).to(device)
    from discrim.utils.validation import numeric_object_columns  # lazy: validation imports the backend

    X = validate(numeric_object_columns(X))
    if device is None:
        return X
    if (nan_on_device is not None or nan_on_host) and np.isnan(X).any():
        if nan_on_host:
            return X
        raise ValueError(nan_on_device)
    import torch

    if X.flags.writeable:
        return torch.as_tensor(X, device=device)  # on the CPU, the tensor shares X's memory
    # a read-only array (a memory map, a broadcast view): torch would share it with a warning that
    # writing is undefined; a copy crosses instead (to a GPU the rows are copied anyway)
    return torch.tensor(X, device=device)


def like_input(result, X):
    """A prediction ``result`` in the namespace and on the device of the input X.

    Parameters
    ----------
    result : ndarray or torch.Tensor
    X : array-like or torch.Tensor
        The input of the prediction method.

    Returns
    -------
    result : ndarray or torch.Tensor
        A tensor on X's device for tensor input (labels that are not numbers stay numpy, as in
        scikit-learn); numpy otherwise.
    """
    if is_tensor(X):
        import torch

        if isinstance(result, np.ndarray) and result.dtype.kind not in "biuf":
            return result
        return torch.as_tensor(result, device=X.device)
    if is_tensor(result):
        return result.detach().cpu().numpy()
    return result
