"""Numerical functions the array API standard lacks, one implementation per namespace family."""

import array_api_compat.numpy as _NUMPY_XP
import numpy as np
from array_api_compat import is_torch_namespace


def logsumexp(a, axis, xp):
    """Log of the sum of exponentials along ``axis``, stable for -inf entries.

    Parameters
    ----------
    a : array of shape (..., n, ...)
    axis : int
    xp : namespace

    Returns
    -------
    out : array with ``axis`` removed
        ``-inf`` where every entry along ``axis`` is ``-inf``.
    """
    if is_torch_namespace(xp):
        import torch

        return torch.logsumexp(a, dim=axis)
    # Plain numpy: scipy.special.logsumexp's input handling (weights, masked arrays, scalars) costs
    # more than the arithmetic on the small (n, K) arrays it is called on here.
    # The ufuncs' reduce methods directly: np.max and np.sum add a dispatch layer that costs as
    # much as the arithmetic on a mixture's (n, K) arrays, once per EM iteration.
    top = np.maximum.reduce(a, axis=axis, keepdims=True)
    finite = np.isfinite(top).all()
    if not finite:  # rows of -inf only (or inf): shift them by 0
        top = np.where(np.isfinite(top), top, 0.0)
    shifted = np.subtract(a, top)
    total = np.add.reduce(np.exp(shifted, out=shifted), axis=axis)
    if finite:  # every total is at least 1 (its largest term is exp(0))
        out = np.log(total)
    else:
        with np.errstate(divide="ignore"):  # log(0) = -inf for the rows of -inf
            out = np.log(total)
    out += np.squeeze(top, axis=axis)
    return out


def matmul(a, b, out=None):
    """``a @ b`` (written into ``out`` when given) that lets other threads run meanwhile.

    numpy's ``matmul`` holds the GIL through its BLAS call when the product has fewer than 500
    entries, the shape of every statistic (``resp.T @ X`` is K x d): row blocks in threads then
    ran those products one at a time (measured with numpy 2.4: ``z @ z.T`` of a (10, 16700) block
    in two threads took as long as in one; with a 23 x 16700 block, 529 entries, half as long).
    ``np.dot`` releases it, and for operands of at most two dimensions it is the same product
    (a symmetric rank update for ``z @ z.T`` too).

    Parameters
    ----------
    a, b : arrays of at most two dimensions for the GIL-free path
        numpy arrays or tensors of another namespace (then plain ``@``).
    out : array or None, default=None
        C-contiguous, of the product's shape and dtype (numpy only).

    Returns
    -------
    product : array
    """
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim <= 2 and b.ndim <= 2:
        return np.dot(a, b, out=out)
    if out is not None:
        return np.matmul(a, b, out=out)
    return a @ b


def matmul_into(a, b, out, xp):
    """``a @ b``, written into ``out`` when given."""
    if out is None:
        return matmul(a, b)
    if is_torch_namespace(xp):
        import torch

        return torch.matmul(a, b, out=out)
    return matmul(a, b, out=out)


def exp_inplace(a, xp):
    """``exp(a)``, written into ``a`` where the namespace allows."""
    if is_torch_namespace(xp):
        return a.exp_()
    if isinstance(a, np.ndarray):
        return np.exp(a, out=a)
    return xp.exp(a)


def asarray(a, xp, dtype, device):
    """``xp.asarray(a, dtype, device)``; numpy's own call for numpy (the wrapper costs microseconds)."""
    if xp is _NUMPY_XP:  # numpy's own call: array-api-compat's wrapper costs a few us per call
        return np.asarray(a, dtype=dtype)
    if device is None:
        return xp.asarray(a, dtype=dtype)
    return xp.asarray(a, dtype=dtype, device=device)


def like(a, ref, dtype=None):
    """Host array ``a`` in the namespace and on the device of ``ref``, in ``ref``'s dtype.

    Parameters
    ----------
    a : array-like
        Usually small per-component parameters held on the host.
    ref : array
        numpy or torch.
    dtype : dtype, "float64" or None, default=None
        Of ``ref``'s namespace; None: ``ref.dtype``.

    Returns
    -------
    out : array
    """
    dtype = ref.dtype if dtype is None else dtype
    if isinstance(ref, np.ndarray):
        return np.asarray(a, dtype=dtype)
    import torch

    dtype = torch.float64 if dtype == "float64" else dtype
    if isinstance(a, torch.Tensor):
        return a.to(device=ref.device, dtype=dtype)
    return torch.as_tensor(np.asarray(a), dtype=dtype, device=ref.device)


def lookup(table, codes):
    """``table[codes]`` for a host table and whole-number codes (any numeric dtype).

    Parameters
    ----------
    table : ndarray of shape (m,)
    codes : array of any shape
        numpy or torch; whole numbers in ``[0, m)``.

    Returns
    -------
    out : array of the shape of ``codes``, of ``table``'s dtype, in ``codes``' namespace
    """
    if isinstance(codes, np.ndarray):
        return table[codes.astype(np.intp)]
    import torch

    return torch.as_tensor(table, device=codes.device)[codes.to(torch.int64)]


def one_hot(codes, n_categories, dtype):
    """Indicators of category codes: (n, d) codes -> (n, d, n_categories).

    Parameters
    ----------
    codes : array of shape (n, d)
        numpy or torch; whole numbers in ``[0, n_categories)``.
    n_categories : int
    dtype : dtype of ``codes``' namespace

    Returns
    -------
    out : array of shape (n, d, n_categories)
    """
    if isinstance(codes, np.ndarray):
        n, d = codes.shape
        out = np.zeros((n, d, n_categories), dtype=dtype)
        np.put_along_axis(out, codes.astype(np.intp)[:, :, None], 1.0, axis=2)
        return out
    import torch

    return torch.nn.functional.one_hot(codes.to(torch.int64), n_categories).to(dtype)


def square_inplace(a):
    """``a * a``, written into ``a`` (a fresh temporary of the caller's)."""
    if isinstance(a, np.ndarray):
        return np.square(a, out=a)
    return a.square_()


def as_float64(x):
    """``x`` in float64, in its own namespace and on its device."""
    if isinstance(x, np.ndarray):
        return x.astype(np.float64, copy=False)
    return x.double()


def contiguous(a):
    """``a`` laid out row-major (C-contiguous), copied only when it is not."""
    if isinstance(a, np.ndarray):
        return np.ascontiguousarray(a)
    return a.contiguous()


def concat_rows(blocks):
    """Blocks of rows stacked along the first axis."""
    if isinstance(blocks[0], np.ndarray):
        return np.concatenate(blocks, axis=0)
    import torch

    return torch.cat(blocks, dim=0)


def centred_with_ones(a, center):
    """``[a - center, 1]``: the centred rows with a column of ones appended, (n, d) -> (n, d + 1)."""
    n, d = a.shape
    if isinstance(a, np.ndarray):
        out = np.empty((n, d + 1), dtype=a.dtype)
        np.subtract(a, center, out=out[:, :d])  # one pass, straight into the result
        out[:, d] = 1.0
        return out
    import torch

    return torch.cat([a - center, torch.ones((n, 1), dtype=a.dtype, device=a.device)], dim=1)


def centred_transpose(a, center):
    """``(a - center).T`` laid out row-major: (n, d) -> (d, n), C-contiguous.

    The rows of the result (one feature over all samples) are then contiguous, which the
    per-feature products that follow need to run at memory speed.
    """
    if isinstance(a, np.ndarray):
        out = np.empty(a.shape[::-1], dtype=a.dtype)
        np.subtract(a.T, center[:, None], out=out)
        return out
    return (a - center).T.contiguous()


def take_rows(a, index):
    """``a[index]`` for host integer indices, in ``a``'s namespace and on its device."""
    if isinstance(a, np.ndarray):
        return a[index]
    import torch

    return a[torch.as_tensor(np.asarray(index), device=a.device)]


def label_sums(labels, weights, X, n_labels):
    """Weighted sum of the rows of each label, ``sum_{i: labels_i = k} w_i x_i``: (n_labels, d).

    One pass over X: numpy as a sparse (n_labels, n) indicator times X, torch by index_add_.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,) of int
        On the host, in ``[0, n_labels)``.
    weights : ndarray of shape (n_samples,)
        On the host.
    X : array of shape (n_samples, n_features)
        numpy or torch.
    n_labels : int

    Returns
    -------
    sums : ndarray of shape (n_labels, n_features) of float64, on the host
    """
    n = X.shape[0]
    if isinstance(X, np.ndarray):
        import scipy.sparse

        indicator = scipy.sparse.csr_array((weights, (labels, np.arange(n))), shape=(n_labels, n))
        return np.asarray(indicator @ X, dtype=np.float64)
    import torch

    # index_add_ rather than a sparse indicator: torch's sparse constructors warn about their
    # invariant checks in some versions (2.11), and this is one pass over X either way
    index = torch.as_tensor(labels, device=X.device)
    weighted = X * torch.as_tensor(weights, dtype=X.dtype, device=X.device)[:, None]
    sums = torch.zeros((n_labels, X.shape[1]), dtype=X.dtype, device=X.device).index_add_(0, index, weighted)
    return np.asarray(sums.cpu().numpy(), dtype=np.float64)


def row_dot(a, b):
    """``sum_d a[..., d] * b[..., d]``: the dot products along the last axis."""
    if isinstance(a, np.ndarray):
        return np.einsum("...d,...d->...", a, b)
    return (a * b).sum(dim=-1)


def clip_negative_inplace(a):
    """``max(a, 0)``, written into ``a``."""
    if isinstance(a, np.ndarray):
        return np.maximum(a, 0.0, out=a)
    return a.clamp_min_(0.0)


def take_columns(a, index):
    """``a[:, index]`` (a copy) for host integer indices, in ``a``'s namespace and on its device."""
    if isinstance(a, np.ndarray):
        return a[:, index]
    import torch

    return a[:, torch.as_tensor(np.asarray(index), device=a.device)]


def subtract_inplace(a, b):
    """``a - b`` written into ``a``, computed in the wider of the two dtypes (numpy's same_kind)."""
    if isinstance(a, np.ndarray):
        return np.subtract(a, b, out=a, casting="same_kind")
    return a.copy_(a.double() - like(b, a, "float64"))


def device_of(a):
    """``{"device": a.device}`` for a tensor, ``{}`` for numpy: keyword arguments of ``xp.zeros``."""
    return {} if isinstance(a, np.ndarray) else {"device": a.device}


def stack(arrays):
    """Arrays of one shape stacked along a new first axis, in their namespace."""
    if isinstance(arrays[0], np.ndarray):
        return np.stack(arrays)
    import torch

    return torch.stack(arrays)


def where(condition, a, b):
    """``a`` where ``condition`` holds, else ``b``, in the namespace of ``condition``."""
    if isinstance(condition, np.ndarray):
        return np.where(condition, a, b)
    import torch

    return torch.where(condition, a, b)


def row_sums(a):
    """Sums along the last axis, kept as a column: (n, k) -> (n, 1)."""
    if isinstance(a, np.ndarray):
        return a.sum(axis=1, keepdims=True)
    return a.sum(dim=1, keepdim=True)


def any_nan(a):
    """Whether ``a`` (numpy or torch) holds a NaN, as a Python bool."""
    if isinstance(a, np.ndarray):
        return bool(np.isnan(a).any())
    return bool(a.isnan().any())
