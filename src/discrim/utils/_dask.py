"""The Dask data path: row-chunked dask arrays in, one pass per statistic, dask arrays out.

Every estimator keeps one implementation of its formulas, written for an in-memory block of rows.
This module lets the same code run over data that do not fit in memory: a dask array (or dask
DataFrame) is cut along its rows only, :func:`map_row_chunks` runs a function on every row chunk
where the chunk lives and brings back only its small result (tree-reduced when asked), and
:func:`blockwise` turns a prediction method into one that returns a dask array computed chunk by
chunk. dask is an optional dependency: nothing here imports it until a dask collection is seen.
"""

import contextlib
import contextvars
import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple, ParamSpec, TypeVar, cast

import numpy as np

__all__ = [
    "align_rows",
    "blockwise",
    "is_dask",
    "map_table_chunks",
    "lazy_accuracy",
    "lazy_weighted_means",
    "map_row_chunks",
    "on_worker",
    "persist_if_it_fits",
    "prepared_rows",
    "row_chunked",
    "row_starts",
    "check_feature_names",
    "CheckedRows",
    "checked_rows",
    "class_rows",
    "gather_sample",
    "label_counts_per_chunk",
    "labelled_statistics",
    "validated_rows",
    "weight_totals",
    "weighted_total",
]

# Results merged per task of the tree reduction: deep enough that the client receives few
# objects, shallow enough that one task's merge stays small.
_TREE_WIDTH = 8


def is_dask(X):
    """Whether X is a dask collection (array, DataFrame or Series); False without importing dask."""
    if not type(X).__module__.startswith("dask"):
        return False
    from dask import is_dask_collection

    return is_dask_collection(X)


def _meta(X):
    """The empty pandas object that describes a dask DataFrame or Series (its columns, dtypes)."""
    return getattr(X, "_meta", None)


def check_feature_names(estimator, X, *, reset):
    """``n_features_in_`` and ``feature_names_in_`` from a dask collection, as scikit-learn sets them.

    Parameters
    ----------
    estimator : BaseEstimator
    X : dask.array.Array or dask.dataframe.DataFrame
    reset : bool
        True at fit (set the attributes), False at predict (check against them).
    """
    from sklearn.utils.validation import _check_feature_names, _check_n_features

    if len(X.shape) != 2:
        one = " (one feature: X.reshape(-1, 1), or X.to_frame() for a dask Series)" if len(X.shape) == 1 else ""
        raise ValueError(f"X must have shape (n_samples, n_features); the dask {type(X).__name__} has "
                         f"{len(X.shape)} dimension(s){one}.")
    meta = _meta(X)
    if meta is not None and hasattr(meta, "columns"):
        _check_feature_names(estimator, meta, reset=reset)
    elif not reset and getattr(estimator, "feature_names_in_", None) is not None:
        # As scikit-learn does for an unnamed array given to a model fitted with names.
        _check_feature_names(estimator, np.empty((0, X.shape[1])), reset=False)
    _check_n_features(estimator, np.empty((0, X.shape[1])), reset=reset)


def _columns_as_float(frame):
    """A dask DataFrame's columns as floats where the in-memory path reads them so.

    Nullable numeric and boolean columns (``Int64``, ``Float64``, ``boolean``, ... as
    ``read_parquet`` gives integer or boolean columns with nulls) become float64 with NaN where
    ``<NA>``. Object and string columns are read
    as numbers partition by partition, as in memory an object column of numbers with None is
    (:func:`~discrim.utils.validation.numbers_of_column`); dask turns such an object column into a
    string column (its ``dataframe.convert-string`` setting), so a string column is read the same
    way. A partition with a value that is no number is refused, naming the column. A label Series
    is left to the labels' own reading (integers stay integers, text stays text).
    """
    import pandas as pd

    dtypes = getattr(frame, "dtypes", None)
    if not isinstance(dtypes, pd.Series):  # a Series: one dtype
        return frame
    nullable = [c for c, t in dtypes.items() if isinstance(t, pd.api.extensions.ExtensionDtype)
                and (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))]
    if nullable:
        frame = frame.astype({c: "float64" for c in nullable})
    text = [c for c, t in dtypes.items() if t == object or pd.api.types.is_string_dtype(t)]
    if text and frame.columns.is_unique:
        meta = _meta(frame).astype({c: "float64" for c in text})
        frame = frame.map_partitions(functools.partial(_numbers_of_text, text), meta=meta)
    return frame


def _numbers_of_text(columns, partition):
    """A partition with its object or string ``columns`` read as numbers; ValueError naming the others."""
    from discrim.utils.validation import numbers_of_column, refuse_columns

    numbers = {c: numbers_of_column(partition[c]) for c in columns}
    refuse_columns([c for c, values in numbers.items() if values is None])
    partition = partition.copy()
    for c, values in numbers.items():
        partition[c] = values
    return partition


def row_chunked(X, *, name="X", ndim=2):
    """A dask collection as a dask array chunked along rows only, with known chunk sizes.

    Parameters
    ----------
    X : dask.array.Array, dask.dataframe.DataFrame or dask.dataframe.Series
    name : str, default="X"
        The parameter's name, for error messages.
    ndim : {1, 2}, default=2
        Dimensions the result must have (a one-column 2-d array is accepted for ``ndim=1``).

    Returns
    -------
    X : dask.array.Array
        One chunk across the columns; the row chunks of a DataFrame are its partitions (their
        lengths are computed when they are unknown).
    """
    import dask.array as da

    if hasattr(X, "to_dask_array"):
        X = _columns_as_float(X)
        # Chunk sizes from the array itself: the partition lengths dask computes for
        # ``lengths=True`` come from an optimised graph, which may combine the partitions of a
        # column read alone (a label Series) differently from the array's.
        X = X.to_dask_array()
    if not isinstance(X, da.Array):
        raise TypeError(f"{name} must be a dask array or a dask DataFrame/Series; got {type(X).__name__}.")
    if ndim == 1 and X.ndim == 2 and X.shape[1] == 1:
        X = X[:, 0]
    if X.ndim != ndim:
        shape = "(n_samples, n_features)" if ndim == 2 else "(n_samples,)"
        raise ValueError(f"{name} must have shape {shape}; the dask array has {X.ndim} dimension(s).")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if ndim == 2 and len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def align_rows(a, X, *, name, dtype=None):
    """A per-row companion of X (weights, labels) as a dask array chunked like X's rows.

    Parameters
    ----------
    a : array-like or dask collection of shape (n_samples,), or None
    X : dask.array.Array of shape (n_samples, ...)
        Chunked along rows (:func:`row_chunked`).
    name : str
        The parameter's name, for error messages.
    dtype : dtype or None, default=None

    Returns
    -------
    a : dask.array.Array of shape (n_samples,) or None
    """
    import dask.array as da

    if a is None:
        return None
    if is_dask(a):
        if dtype is not None and hasattr(a, "to_dask_array"):
            # by pandas, which reads a nullable column's <NA> (Float64 weights) as NaN; the array's astype fails on it
            a = a.astype(dtype)
        a = row_chunked(a, name=name, ndim=1)
    else:
        a = np.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"{name} must have shape (n_samples,); got {a.shape}.")
        a = da.from_array(a, chunks=(a.shape[0],))
    if a.shape[0] != X.shape[0]:
        raise ValueError(
            f"{name} has {a.shape[0]} rows but X has {X.shape[0]}: pass one entry per row of X."
        )
    if dtype is not None:
        a = a.astype(dtype)
    return a.rechunk({0: X.chunks[0]})


def row_starts(X):
    """Index of the first row of every row chunk of a dask array, shape (n_chunks,)."""
    return np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(np.int64)


def _merge(reduce, *parts):
    """``reduce`` over the parts that are not None (None: a chunk without rows, merged as nothing)."""
    parts = [part for part in parts if part is not None]
    return functools.reduce(reduce, parts) if parts else None


def on_worker(fn):
    """``fn`` run with the allocator settings that suit discrim's temporaries on a Dask worker.

    See :mod:`discrim.utils._malloc`: without this, dask.distributed's worker settings make every
    chunk's arithmetic about 3x slower.
    """

    @functools.wraps(fn)
    def run(*args, **kwargs):
        from discrim.utils._malloc import heap_for_temporaries

        with heap_for_temporaries():
            return fn(*args, **kwargs)

    return run


def map_row_chunks(fn, X, *others, reduce=None):
    """``fn(X_chunk, *other_chunks, first_row)`` of every row chunk, computed where the chunks live.

    Parameters
    ----------
    fn : callable
        Runs on numpy blocks; ``first_row`` is the index of the chunk's first row in X, for
        messages about a row. Its exceptions reach the caller unchanged.
    X : dask.array.Array
        Chunked along rows (:func:`row_chunked`).
    *others : dask.array.Array or None
        Per-row companions chunked like X's rows (:func:`align_rows`), or dicts of them
        (passed as dicts of blocks); None is passed as None.
    reduce : callable or None, default=None
        An associative merge ``reduce(a, b)`` of two chunks' results: the results are merged in a
        tree on the workers, in row order, and one result comes back (a result of None, a chunk
        without rows, merges as nothing). None returns the list.

    Returns
    -------
    result : list (one entry per chunk, in order) or the merged result
    """
    import dask

    def chunks(a):
        if a is None:
            return [None] * len(X.chunks[0])
        if isinstance(a, dict):
            parts = {key: chunks(value) for key, value in a.items()}
            return [{key: value[i] for key, value in parts.items()} for i in range(len(X.chunks[0]))]
        return list(a.to_delayed().ravel())

    columns = [chunks(X)] + [chunks(a) for a in others]
    task = on_worker(fn)
    tasks = [dask.delayed(task)(*parts, int(start)) for *parts, start in zip(*columns, row_starts(X))]
    if reduce is None:
        return list(dask.compute(*tasks))
    if not tasks:
        return None
    while True:  # at least one merge, so that a single chunk's None is handled as any other
        tasks = [dask.delayed(_merge)(reduce, *tasks[i : i + _TREE_WIDTH]) for i in range(0, len(tasks), _TREE_WIDTH)]
        if len(tasks) == 1:
            return dask.compute(tasks[0])[0]


def _with_names(block, names):
    """A block of rows as the model saw them at fit: a DataFrame with its feature names, if it had them."""
    if names is None:
        return block
    import pandas as pd

    return pd.DataFrame(block, columns=names)


# The rows of X that a chunk method is called with: (start, stop, n_rows of X), or None for all of X.
_CHUNK_ROWS = contextvars.ContextVar("discrim_chunk_rows", default=None)


def chunk_rows():
    """``(start, stop, n_rows)``: where the rows a chunk method is running on lie in the whole X (None: all of X).

    A method with per-row data of its own (a Binomial's trial counts, one per row of X) takes
    the chunk's share of it from here.
    """
    return _CHUNK_ROWS.get()


@contextlib.contextmanager
def _running_on_rows(window):
    token = _CHUNK_ROWS.set(None if window is None else tuple(int(v) for v in window))
    try:
        yield
    finally:
        _CHUNK_ROWS.reset(token)


def _chunk_location(block_info, n_rows):
    """``(start, stop, n_rows)`` of a dask block from its ``block_info`` (None without one)."""
    if not block_info:
        return None
    start, stop = block_info[0]["array-location"][0]
    return start, stop, n_rows


def _probe(method, estimator, X, names, args=(), kwargs=None):
    """The shape after the row axis and the dtype of ``method``'s output (called with ``args`` and
    ``kwargs`` after X), from one zero row taken as the first of the dask array X's rows.

    A model may refuse a zero row that X never holds: it lies outside the support of a Gamma or
    LogNormal family, or of densities on x > 0. The probe then reads X's first row (one row,
    not X) and calls ``method`` on that; an error there is one the computation would raise.
    """
    n_rows = X.shape[0]

    def call(row):
        with _running_on_rows((0, 1, n_rows)):
            return np.asarray(method(estimator, _with_names(row, names), *args, **(kwargs or {})))

    try:
        out = call(np.zeros((1, X.shape[1]), dtype=X.dtype))
    except ValueError:
        if n_rows == 0:
            raise
        out = call(np.asarray(X[:1].compute()))
    return out.shape[1:], out.dtype


_P = ParamSpec("_P")
_R = TypeVar("_R")


def blockwise(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorate a method ``method(self, X)`` of rows in, rows out so that a dask X gives a dask array.

    For a dask array or DataFrame, the method runs on every row chunk (as a numpy array, or as a
    pandas DataFrame with the fitted feature names) where the chunk lives; the result is a dask
    array with X's row chunks, computed lazily. An error in a chunk names the chunk's first row,
    since the method's own row indices count from it. Any other X goes to ``method`` unchanged,
    and its result returns in X's namespace: a torch tensor on X's device for tensor input,
    numpy otherwise (:func:`discrim.backend._device.like_input`). To type checkers the method
    keeps its signature, whose return type (``discrim._typing.Array``) covers the dask and torch
    results.
    """

    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        if not is_dask(X):
            from discrim.backend._device import like_input

            return like_input(method(self, X, *args, **kwargs), X)
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        check_feature_names(self, X, reset=False)
        X = row_chunked(X)
        names = getattr(self, "feature_names_in_", None)
        shape, dtype = _probe(method, self, X, names, args, kwargs)
        n_rows = X.shape[0]

        @on_worker
        def run(block, block_info=None):
            if block.shape[0] == 0:
                return np.empty((0,) + shape, dtype=dtype)
            block = _with_names(block, names)
            try:
                with _running_on_rows(_chunk_location(block_info, n_rows)):
                    return method(self, block, *args, **kwargs)
            except ValueError as exc:
                first = block_info[0]["array-location"][0][0] if block_info else 0
                raise ValueError(f"{exc} (row indices count from row {first} of X, the first of its chunk)") from exc

        if shape:
            chunks = (X.chunks[0],) + tuple((size,) for size in shape)
            return X.map_blocks(run, dtype=dtype, chunks=chunks, meta=np.empty((0,) + shape, dtype))
        return X.map_blocks(run, dtype=dtype, drop_axis=1, meta=np.empty((0,), dtype))

    return cast("Callable[_P, _R]", wrapper)


def map_table_chunks(fn, X, n_columns, dtype):
    """``fn`` on every row chunk of a dask array, or on every partition of a dask DataFrame as a pandas
    DataFrame (text and category columns included), lazily.

    For per-row work on columns that are no numbers (a family's ``encode`` of category values), which
    :func:`blockwise`'s float chunks cannot carry. An error in a chunk says where its rows start,
    since ``fn``'s row indices count from there.

    Parameters
    ----------
    fn : callable
        ``fn(rows) -> ndarray of shape (n_rows, n_columns)``.
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
    n_columns : int
    dtype : dtype
        Of the result.

    Returns
    -------
    out : dask.array.Array of shape (n_samples, n_columns)
        A DataFrame's row chunks are its partitions, of unknown lengths until computed.
    """
    import pandas as pd

    def run(rows, where):
        try:
            return fn(rows)
        except ValueError as exc:
            raise ValueError(f"{exc} (row indices count from {where}, the first of its chunk)") from exc

    if hasattr(X, "map_partitions"):
        def partition(part):
            return pd.DataFrame(run(part, f"index {part.index[0]!r}" if len(part) else "its start"), index=part.index)

        meta = pd.DataFrame(np.empty((0, n_columns), dtype=dtype))
        return X.map_partitions(partition, meta=meta).to_dask_array()
    X = X.rechunk({1: -1})

    def block(rows, block_info=None):
        first = block_info[0]["array-location"][0][0] if block_info else 0
        return run(rows, f"row {first} of X")

    return X.map_blocks(block, dtype=dtype, chunks=(X.chunks[0], (n_columns,)), meta=np.empty((0, n_columns), dtype))


def map_row_chunks_seeded(method, estimator, X, random_state, **kwargs):
    """``method(estimator, block, random_state=rng, **kwargs)`` on every row chunk of a dask X, lazily.

    As :func:`blockwise` for a method whose rows out have X's columns and that draws random
    numbers: each chunk gets its own generator, spawned from ``random_state`` (the same seed
    gives the same draws; they are not the in-memory call's, which draws all rows from one
    stream).

    Returns
    -------
    out : dask.array.Array of shape (n_samples, n_features) of float64
    """
    check_feature_names(estimator, X, reset=False)
    X = row_chunked(X)
    names = getattr(estimator, "feature_names_in_", None)
    from discrim.utils._random import as_seed_sequence

    seeds = as_seed_sequence(random_state).spawn(X.numblocks[0])
    n_rows = X.shape[0]

    @on_worker
    def run(block, block_info=None):
        if block.shape[0] == 0:
            return np.empty(block.shape, dtype=np.float64)
        rng = np.random.default_rng(seeds[block_info[0]["chunk-location"][0]])
        with _running_on_rows(_chunk_location(block_info, n_rows)):
            return method(estimator, _with_names(block, names), random_state=rng, **kwargs)

    return X.map_blocks(run, dtype=np.float64, meta=np.empty((0, X.shape[1]), np.float64))


def _check_chunk(estimator_name, dtype, check, allow_nan, stats, Xb, wb, first_row):
    """Validate one row chunk as fit validates in-memory X.

    Returns the chunk's summary ``[n_rows, weight total, max weight, missing cells, weight of
    the rows that observed each feature (d), weighted sum of each feature's observed values
    (d), stats(...) flattened]``; the parts after the third are zeros (and ``stats`` absent)
    unless ``allow_nan``.
    """
    from sklearn.utils import check_array

    from discrim.utils.validation import check_feature_magnitude, check_weight_entries

    Xb = check_array(Xb, dtype=dtype, ensure_min_samples=0, estimator=estimator_name, input_name="X",
                     ensure_all_finite="allow-nan" if allow_nan else True)
    check_feature_magnitude(Xb)
    check_weight_entries(wb)
    d = Xb.shape[1]
    missing = np.zeros(1 + 2 * d)
    if allow_nan:
        observed = ~np.isnan(Xb)
        if not observed.all():
            Xb = np.where(observed, Xb, 0.0).astype(Xb.dtype)  # checks see values in every support
        wb64 = np.asarray(wb, dtype=np.float64)
        missing = [[observed.size - observed.sum()], wb64 @ observed, wb64 @ Xb]
        if stats is not None:
            missing.append(np.asarray(stats(Xb, observed, wb64, first_row), dtype=np.float64).reshape(-1))
        missing = np.concatenate(missing)
    if check is not None:
        check(Xb, first_row)
    return np.concatenate([[Xb.shape[0], wb.sum(dtype=np.float64), wb.max(initial=0.0)], missing])


def _add_summaries(a, b):
    return np.concatenate([a[:2] + b[:2], [max(a[2], b[2])], a[3:] + b[3:]])


class CheckedRows(NamedTuple):
    """What one validating pass over a dask X learns (see :func:`checked_rows`)."""

    sample_weight: object
    """dask.array.Array of shape (n_samples,): float64, chunked like X (ones when None)."""
    total_weight: float
    max_weight: float
    n_missing: int
    """Missing cells (NaN) of X; 0 unless NaN was allowed."""
    observed_weight: np.ndarray
    """(n_features,): total weight of the rows that observed each feature."""
    observed_mean: np.ndarray
    """(n_features,): the weighted mean of each feature's observed values (NaN where none)."""
    stats: np.ndarray = None
    """(n_stats, n_features): the totals of ``stats`` over the chunks (None without it)."""


def refuse_device(device):
    """Raise ``ValueError`` for a device with a dask X: Dask's workers compute their chunks with numpy."""
    if device is not None:
        raise ValueError(
            f"device={device!r} computes in-memory data (numpy or torch); a dask X is computed chunk by chunk "
            "on Dask's workers with numpy: pass device=None, or X.compute() to fit in memory on the device."
        )


def prepared_rows(estimator, X, *, dtype, reset=True):
    """A dask X for fit: its feature names taken, row-chunked, in ``dtype``, persisted when it fits.

    Parameters
    ----------
    estimator : BaseEstimator
        Receives ``n_features_in_`` and ``feature_names_in_`` when ``reset``.
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
    dtype : dtype
    reset : bool, default=True

    Returns
    -------
    X : dask.array.Array of shape (n_samples, n_features)
    """
    refuse_device(getattr(estimator, "device", None))
    from discrim.utils.validation import check_numeric_columns

    if reset:
        X = _columns_as_float(X)  # object and string columns read partition by partition
        meta = _meta(X)
        if meta is not None and hasattr(meta, "columns"):
            check_numeric_columns(meta.dtypes)  # categorical columns refused before any row is read
    check_feature_names(estimator, X, reset=reset)
    return persist_if_it_fits(row_chunked(X).astype(dtype))


def checked_rows(estimator, X, *, dtype, sample_weight=None, check=None, min_samples=1, allow_nan=False,
                 stats=None):
    """Check every chunk of a prepared X (and its weights) as fit checks in-memory X, in one pass.

    Every chunk gets the checks in-memory X gets (scikit-learn's ``check_array``: finite values,
    numeric; :func:`~discrim.utils.validation.check_feature_magnitude`; ``check``), with the same
    messages; the weights are checked entry by entry and their total once.

    Parameters
    ----------
    estimator : BaseEstimator
        Named in the messages.
    X : dask.array.Array of shape (n_samples, n_features)
        From :func:`prepared_rows`.
    dtype : dtype
    sample_weight : array-like or dask collection of shape (n_samples,) or None, default=None
    check : callable or None, default=None
        ``check(X_chunk, first_row)`` raises on a chunk the model cannot take (e.g. outside a
        family's support); with ``allow_nan`` it sees 0 in place of a missing value.
    min_samples : int, default=1
    allow_nan : bool, default=False
        Accept NaN (a missing value) and count the observed entries of every feature.
    stats : callable or None, default=None
        ``stats(X_chunk, observed, sample_weight_chunk, first_row)`` -> ndarray of shape
        (n_stats, n_features): additive statistics of a chunk (0 in place of a missing value,
        ``observed`` its mask, float64 weights), totalled in ``checked.stats``; with ``allow_nan``
        only (e.g. :meth:`~discrim.distributions.ComponentFamily.completion_stats`).

    Returns
    -------
    checked : CheckedRows
    """
    import dask.array as da

    from discrim.utils.validation import check_weight_total

    if X.shape[0] < min_samples:
        raise ValueError(f"X has {X.shape[0]} sample(s); {type(estimator).__name__} needs at least {min_samples}.")
    if sample_weight is None:
        w = da.ones(X.shape[0], chunks=(X.chunks[0],), dtype=np.float64)
    else:
        w = align_rows(sample_weight, X, name="sample_weight", dtype=np.float64)
    run = functools.partial(_check_chunk, type(estimator).__name__, dtype, check, allow_nan, stats)
    summary = map_row_chunks(run, X, w, reduce=_add_summaries)
    with np.errstate(over="ignore"):
        check_weight_total(summary[1])
    d = X.shape[1]
    seen, sums = summary[4 : 4 + d], summary[4 + d : 4 + 2 * d]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / seen
    totals = summary[4 + 2 * d :].reshape(-1, d) if stats is not None and allow_nan else None
    return CheckedRows(w, float(summary[1]), float(summary[2]), int(summary[3]), seen, mean, totals)


def validated_rows(estimator, X, *, dtype, sample_weight=None, reset=True, check=None, min_samples=1,
                   allow_nan=False):
    """:func:`prepared_rows` then :func:`checked_rows`: a dask X and its weights, validated for fit.

    Returns
    -------
    X : dask.array.Array of shape (n_samples, n_features)
        Row-chunked, in ``dtype``.
    checked : CheckedRows
    """
    X = prepared_rows(estimator, X, dtype=dtype, reset=reset)
    return X, checked_rows(estimator, X, dtype=dtype, sample_weight=sample_weight, check=check,
                           min_samples=min_samples, allow_nan=allow_nan)


# Share of the cluster's worker memory that a persisted X may take: the rest is for the chunks'
# temporaries and what Dask itself holds.
PERSIST_MEMORY_FRACTION = 0.4


def persist_if_it_fits(X):
    """X persisted in the memory of a dask.distributed cluster when it fits, else X unchanged.

    Fits that pass over the rows many times (EM) then read each chunk once from its source (Parquet,
    Zarr) and the other passes from the workers' memory, as Spark caches its input; data larger
    than ``PERSIST_MEMORY_FRACTION`` of the workers' memory limits, or without a distributed
    client, are streamed from the source at every pass.

    Parameters
    ----------
    X : dask.array.Array

    Returns
    -------
    X : dask.array.Array
    """
    try:
        from distributed import get_client, wait

        client = get_client()
    except (ImportError, ValueError):
        return X
    workers = client.scheduler_info()["workers"].values()
    limits = [w.get("memory_limit") or 0 for w in workers]
    if not limits or 0 in limits or X.nbytes > PERSIST_MEMORY_FRACTION * sum(limits):
        return X
    # at least two chunks per worker thread, so that every thread has rows to work on
    threads = sum(w.get("nthreads", 1) for w in workers)
    if len(X.chunks[0]) < 2 * threads and X.shape[0] >= 2 * threads * 1024:
        X = X.rechunk({0: -(-X.shape[0] // (2 * threads))})
    X = X.persist()
    wait(X)
    return X


def _sample_chunk(seed, fraction, Xb, wb, first_row):
    rng = np.random.default_rng([seed, first_row])
    keep = rng.random(Xb.shape[0]) < fraction
    return np.asarray(Xb)[keep], np.asarray(wb)[keep]


def lazy_completion(family, stats, X, rows=None):
    """The values that complete a dask X's missing entries at the start of a fit, per chunk.

    Parameters
    ----------
    family : ComponentFamily
    stats : ndarray of shape (n_stats, n_features)
        The totals of ``family.completion_stats`` over all rows (:func:`checked_rows`).
    X : dask.array.Array of shape (n_samples, n_features)
        Row-chunked.
    rows : dict of str to dask.array.Array of shape (n_samples,) or None, default=None
        The family's per-row data, chunked like X's rows.

    Returns
    -------
    fill : ndarray of shape (n_features,) or dask.array.Array of shape (n_samples, n_features)
        One value per feature without per-row data; otherwise each chunk's rows completed from
        their own data (``family.completion``), as in memory.
    """
    if not rows:
        return np.asarray(family.completion(stats, None))
    names = list(rows)
    d = X.shape[1]

    def chunk(*values):
        block = dict(zip(names, values))
        return np.broadcast_to(family.completion(stats, block), (values[0].shape[0], d)).astype(np.float64)

    import dask.array as da

    return da.map_blocks(chunk, *(rows[name] for name in names), new_axis=1, chunks=(X.chunks[0], (d,)),
                         dtype=np.float64, meta=np.empty((0, d), np.float64))


def gather_sample(X, sample_weight, max_rows, rng):
    """Rows of a dask array brought to the client: all of them, or a uniform sample of about ``max_rows``.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
    sample_weight : dask.array.Array of shape (n_samples,)
    max_rows : int
    rng : numpy.random.Generator
        Seeds the sample (one stream per chunk, so it does not depend on the scheduler).

    Returns
    -------
    X_sample : ndarray of shape (n_sample, n_features)
        All rows in order when ``n_samples <= max_rows``; otherwise each row kept with
        probability ``max_rows / n_samples``, in order.
    sample_weight_sample : ndarray of shape (n_sample,)
    """
    import dask

    if X.shape[0] <= max_rows:
        return tuple(np.asarray(a) for a in dask.compute(X, sample_weight))
    seed = int(rng.integers(0, 2**63 - 1))
    parts = map_row_chunks(functools.partial(_sample_chunk, seed, max_rows / X.shape[0]), X, sample_weight)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def weighted_total(values, sample_weight=None):
    """``sum_i w_i v_i`` and ``sum_i w_i`` of per-row values, in memory or computed by Dask.

    Parameters
    ----------
    values : ndarray, torch.Tensor or dask.array.Array of shape (n_samples,)
    sample_weight : array-like or dask collection of shape (n_samples,) or None, default=None
        Validated as ``fit`` validates it; None gives unit weights.

    Returns
    -------
    total : float
    size : float
    """
    from discrim.utils.validation import check_sample_weight

    if not is_dask(values):
        from discrim.backend import host_input

        values = host_input(values)  # per-row values of a tensor input: summed on the host
        w = check_sample_weight(sample_weight, values.shape[0])
        return float(w @ values), float(w.sum())
    totals, size = _lazy_weighted_totals([values], sample_weight)
    return totals[0], size


def _lazy_weighted_totals(columns, sample_weight):
    """``sum_i w_i v_i`` of every dask array of per-row values in ``columns``, and ``sum_i w_i``, in one
    ``dask.compute`` (one pass over the chunks they share)."""
    import dask

    if sample_weight is None:
        *totals, size = dask.compute(*(values.sum(dtype=np.float64) for values in columns), columns[0].shape[0])
    else:
        w = align_rows(sample_weight, columns[0][:, None], name="sample_weight", dtype=np.float64)
        entries = w.map_blocks(_checked_weights, dtype=np.float64)
        *totals, size = dask.compute(*((entries * values).sum() for values in columns), entries.sum())
    from discrim.utils.validation import check_weight_total

    check_weight_total(size)
    return [float(total) for total in totals], float(size)


def lazy_accuracy(y_pred, y, sample_weight=None):
    """scikit-learn's ``accuracy_score`` of dask predictions, in one pass over their chunks.

    Only two totals per prediction come to the client: ``sum_i w_i [pred_i == y_i]`` and ``sum_i w_i``.

    Parameters
    ----------
    y_pred : dask.array.Array of shape (n_samples,), or a list of them
        Predictions computed chunk by chunk from one X (e.g. one per batch count); computed together,
        so X's chunks are read once.
    y : array-like or dask collection of shape (n_samples,)
        The true labels, aligned with the predictions' row chunks.
    sample_weight : array-like or dask collection of shape (n_samples,) or None, default=None
        Validated as :func:`weighted_total` validates it; None gives unit weights.

    Returns
    -------
    accuracy : float, or ndarray of shape (len(y_pred),) for a list
        The (weighted) share of rows whose prediction is their label.
    """
    predictions = y_pred if isinstance(y_pred, list) else [y_pred]
    y = align_rows(y, predictions[0], name="y")
    accuracy = lazy_weighted_means([pred == y for pred in predictions], sample_weight)
    return accuracy if isinstance(y_pred, list) else float(accuracy[0])


def lazy_weighted_means(columns, sample_weight=None):
    """``sum_i w_i v_i / sum_i w_i`` of dask arrays of per-row values, computed together in one pass.

    Parameters
    ----------
    columns : list of dask.array.Array of shape (n_samples,)
        Per-row values with the same row chunks (e.g. computed from one X).
    sample_weight : array-like or dask collection of shape (n_samples,) or None, default=None
        Validated as :func:`weighted_total` validates it; None gives unit weights.

    Returns
    -------
    means : ndarray of shape (len(columns),)
    """
    totals, size = _lazy_weighted_totals(columns, sample_weight)
    return np.array(totals) / size


def _checked_weights(w):
    from discrim.utils.validation import check_weight_entries

    check_weight_entries(w)
    return w


def _expand(stats, where, n_labels):
    """Statistics of some labels placed at rows ``where`` of statistics of ``n_labels`` (zeros elsewhere)."""
    fields = {}
    for field in dataclasses.fields(stats):
        value = getattr(stats, field.name)
        if value is not None:
            out = np.zeros((n_labels,) + value.shape[1:])
            out[where] = value
            value = out
        fields[field.name] = value
    return type(stats)(**fields)


def _sorted_labels(yb):
    """The sorted distinct labels of a chunk of y, and each row's index among them.

    A missing label (NaN, and None or pandas' NA in an object array) sorts last, once, as numpy
    sorts NaN: in an object array it cannot be compared with the labels, so it is set apart (the
    first one found stands for all of them).
    """
    from discrim.utils.validation import missing_labels

    missing = missing_labels(yb) if yb.dtype == object else None
    if missing is None or not missing.any():
        return _distinct_labels(yb)
    present, present_index = _distinct_labels(yb[~missing])
    index = np.full(yb.shape[0], present.shape[0], dtype=np.intp)
    index[~missing] = present_index
    return np.concatenate([present, yb[missing][:1]]), index


def _distinct_labels(yb):
    """``np.unique(yb, return_inverse=True)`` of labels none of which is missing.

    An object array of labels of several types (text beside a numeric ``unlabeled`` marker, which
    the caller sets apart, or mixed labels, which :func:`~discrim.utils.validation.check_labels`
    refuses by name) cannot be sorted by value: its labels are sorted by type name, then value.
    """
    from discrim.utils.validation import label_kind, label_kinds

    if len(label_kinds(yb)) <= 1:
        labels, index = np.unique(yb, return_inverse=True)
        return labels, index.ravel()
    values = yb.tolist()
    distinct = sorted(set(values), key=lambda v: (label_kind(v), v))
    position = {v: i for i, v in enumerate(distinct)}
    labels = np.empty(len(distinct), dtype=object)
    labels[:] = distinct
    return labels, np.fromiter((position[v] for v in values), dtype=np.intp, count=len(values))


def _union_labels(a, b):
    """The sorted union of two chunks' labels (:func:`_sorted_labels`), a missing label last, once."""
    if a.dtype != object and b.dtype != object:
        return np.union1d(a, b)
    from discrim.utils.validation import missing_labels

    missing_a, missing_b = missing_labels(a), missing_labels(b)
    present = _distinct_labels(np.concatenate([a[~missing_a], b[~missing_b]]).astype(object))[0]
    return np.concatenate([present, np.concatenate([a[missing_a], b[missing_b]]).astype(object)[:1]])


def _label_positions(labels, chunk_labels):
    """Where each of a chunk's labels sits among merged ``labels`` (:func:`_union_labels`)."""
    if labels.dtype != object:
        return np.searchsorted(labels, chunk_labels)
    from discrim.utils.validation import missing_labels

    n_present = labels.shape[0] - int(missing_labels(labels[-1:]).sum())
    missing = missing_labels(chunk_labels)
    where = np.full(chunk_labels.shape[0], n_present, dtype=np.intp)
    # by equality, not searchsorted: labels of several types have no order numpy can compare
    position = {v: i for i, v in enumerate(labels[:n_present].tolist())}
    where[~missing] = [position[v] for v in chunk_labels[~missing].tolist()]
    return where


def _merge_labelled(a, b):
    """Merge the (labels, stats, rows) of two chunks over the union of their labels."""
    labels = _union_labels(a[0], b[0])
    where_a, where_b = _label_positions(labels, a[0]), _label_positions(labels, b[0])
    n = labels.shape[0]
    rows = np.zeros(n, dtype=np.int64)
    np.add.at(rows, where_a, a[2])
    np.add.at(rows, where_b, b[2])
    stats = None
    if a[1] is not None:
        stats = _expand(a[1], where_a, n) + _expand(b[1], where_b, n)
    return labels, stats, rows


def _labelled_chunk(stats_fn, Xb, yb, wb, first_row):
    if yb.shape[0] == 0:
        return None
    labels, index = _sorted_labels(np.asarray(yb))
    rows = np.bincount(index, weights=(np.asarray(wb) > 0), minlength=labels.shape[0]).astype(np.int64)
    stats = None if stats_fn is None else stats_fn(np.asarray(Xb), index, np.asarray(wb), labels.shape[0])
    return labels, stats, rows


def labelled_statistics(X, y, sample_weight, stats_fn=None):
    """The classes of y and, per class, statistics of its rows, in one pass over the chunks.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Row-chunked.
    y : dask.array.Array of shape (n_samples,)
        Chunked like X's rows; a chunk may lack some classes.
    sample_weight : dask.array.Array of shape (n_samples,)
    stats_fn : callable or None, default=None
        ``stats_fn(X_chunk, index, w_chunk, n_labels)``: a :class:`~discrim.distributions._base.Stats`
        with a leading label axis (e.g. ``Gaussian.labelled_stats``); merged over chunks by its
        ``+``, which must accept labels of zero weight.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        Sorted labels; a missing label (NaN, and None or pandas' NA in an object y) last, once, as
        in-memory labels give it (the caller takes it for unlabelled rows, or refuses it).
    stats : Stats or None
    rows : ndarray of shape (n_classes,) of int
        Rows of positive weight in each class.
    """
    result = map_row_chunks(functools.partial(_labelled_chunk, stats_fn), X, y, sample_weight,
                            reduce=_merge_labelled)
    if result is None:
        raise ValueError("X has no rows: a classifier needs labelled training data.")
    return result


def class_rows(X, y, label, rows_per_chunk):
    """The rows of X (or of a 1-d companion) whose label is ``label``, as a dask array of known chunks.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, ...)
        Row-chunked.
    y : dask.array.Array of shape (n_samples,)
        Chunked like X's rows.
    label : scalar
    rows_per_chunk : sequence of int
        How many rows of each chunk carry ``label``.

    Returns
    -------
    X_label : dask.array.Array of shape (n_label, ...)
    """
    labels = y if X.ndim == 1 else y[:, None]
    chunks = (tuple(int(c) for c in rows_per_chunk),) + X.chunks[1:]
    return X.map_blocks(_select_rows, labels, label, chunks=chunks, dtype=X.dtype, meta=np.empty((0,) * X.ndim, X.dtype))


def _select_rows(block, labels, label):
    return block[_is_label(labels.reshape(-1), label)]


def _is_label(yb, label):
    """Which entries of a chunk of y equal ``label``; a missing one (None, pandas' NA) never does."""
    yb = np.asarray(yb)
    if yb.dtype != object:
        return yb == label
    from discrim.utils.validation import missing_labels

    present = ~missing_labels(yb)
    out = np.zeros(yb.shape, dtype=bool)
    out[present] = yb[present] == label
    return out


def label_counts_per_chunk(y, classes):
    """Rows of every class in every chunk of y: an array of shape (n_classes, n_chunks)."""
    parts = map_row_chunks(functools.partial(_count_labels, classes), y)
    return np.stack(parts, axis=1) if parts else np.zeros((len(classes), 0), dtype=np.int64)


def _count_labels(classes, yb, first_row):
    return np.array([_is_label(yb, c).sum() for c in classes], dtype=np.int64)


def weight_totals(X, index, sample_weight, n_labels):
    """The total weight of every label: the statistics :func:`labelled_statistics` needs for priors."""
    from discrim.distributions._base import LabelWeights

    return LabelWeights(weight=np.bincount(index, weights=sample_weight, minlength=n_labels))
