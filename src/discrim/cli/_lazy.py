"""Data larger than memory on the command line: Parquet and Zarr read by Dask, the cluster, progress.

``--parquet PATH_OR_GLOB`` and ``--zarr PATH`` give a dask DataFrame that nothing reads until a
pass over the rows needs it; :func:`dask_cluster` connects to ``--scheduler ADDRESS`` or, for
inputs larger than the memory budget, starts a LocalCluster with one single-threaded worker per
core; :func:`em_progress` shows EM's iterations as a progress bar; :func:`write_parquet_atomic`
writes a dask DataFrame as a Parquet folder that appears only when complete.
"""

import glob
import logging
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import click
import numpy as np

from discrim.cli._io import check_output_folder, column_list
from discrim.utils._files import current_umask

__all__ = ["LAZY_OPTIONS", "dask_cluster", "em_progress", "input_bytes", "lazy_features", "numeric_columns",
           "plain_labels", "read_lazy", "write_parquet_atomic"]


def _need_dask():
    try:
        import dask.dataframe  # noqa: F401
    except ImportError:
        raise click.ClickException(
            "--parquet and --zarr need Dask: pip install 'dask[array,dataframe,distributed]' pyarrow zarr "
            "(discrim's dask extra)."
        ) from None


def _parquet_files(path):
    path = str(path)
    if any(ch in path for ch in "*?["):
        files = sorted(glob.glob(path))
    elif Path(path).is_dir():
        files = sorted(str(p) for p in Path(path).rglob("*.parquet"))
    else:
        files = [path] if Path(path).is_file() else []
    if not files:
        raise click.ClickException(f"no Parquet file found at {path!r}: give a file, a folder of .parquet files or a glob.")
    return files


def _kind(arrow_type):
    """"numbers" (integers, floats, decimals, booleans), "text", "null" (no value) or another word, for a Parquet column's type."""
    import pyarrow as pa

    if pa.types.is_null(arrow_type):  # every cell missing: any column's type
        return "null"
    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type) \
            or pa.types.is_boolean(arrow_type):
        return "numbers"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "text"
    if pa.types.is_dictionary(arrow_type):
        return "categories"
    return str(arrow_type)


def _refuse_different_columns(files):
    """Refuse Parquet files whose columns differ from the first file's (read from their footers only).

    Dask takes the first file's columns and types for all of them: a column missing from a later
    file failed deep inside a later pass, an extra one was dropped silently, and a column of
    numbers in the first file but of text in a later one failed there as "could not convert string
    to float", naming neither the column nor the file.
    """
    import pyarrow.parquet as pq

    try:
        first_schema = pq.read_schema(files[0])
        first = first_schema.names
        kinds = {name: _kind(first_schema.field(name).type) for name in first}
        for path in files[1:]:
            schema = pq.read_schema(path)
            names = schema.names
            shared = {name: _kind(schema.field(name).type) for name in names if name in kinds}
            other = [(name, kind) for name, kind in shared.items()
                     if "null" not in (kind, kinds[name]) and kind != kinds[name]]
            if other:
                shown = ", ".join(f"{name!r} ({kind} there, {kinds[name]} in the first)" for name, kind in other[:5])
                raise click.ClickException(
                    f"Parquet file {path!r} has column(s) of other types than {files[0]!r}: {shown}. Every file of a "
                    "table needs the same types: write the column as numbers in every file (e.g. "
                    "pd.to_numeric(column, errors='coerce'), which makes unreadable cells missing).")
            if set(names) != set(first):  # dask reads the columns by name: their order may differ
                missing = [c for c in first if c not in names]
                extra = [c for c in names if c not in first]
                detail = "; ".join(part for part in (f"it lacks {', '.join(map(repr, missing[:5]))}" if missing else "",
                                                     f"it adds {', '.join(map(repr, extra[:5]))}" if extra else "")
                                   if part)
                raise click.ClickException(
                    f"Parquet file {path!r} has other columns than {files[0]!r} ({detail}): every file of a table "
                    "needs the same columns.")
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise click.ClickException(f"cannot read Parquet {files[0]!r}: {exc}".splitlines()[0]) from None


def read_lazy(parquet=None, zarr=None):
    """The table named by ``--parquet`` or ``--zarr`` as a dask DataFrame, nothing read yet.

    Parameters
    ----------
    parquet : str or None
        A Parquet file, a folder of ``.parquet`` files, or a glob.
    zarr : str or None
        A Zarr store holding a 2-D array (columns named by its ``columns`` attribute, else
        ``x0, x1, ...``) or a group of equally long 1-D arrays (one per column).

    Returns
    -------
    frame : dask.dataframe.DataFrame
    """
    _need_dask()
    import dask.array as da
    import dask.dataframe as dd

    if parquet is not None:
        files = _parquet_files(parquet)
        _refuse_different_columns(files)
        try:
            return dd.read_parquet(files)
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"cannot read Parquet {parquet!r}: {exc}".splitlines()[0]) from None
    try:
        import zarr as zarr_module
    except ImportError:
        raise click.ClickException("--zarr needs the zarr package: pip install zarr.") from None
    try:
        store = zarr_module.open(zarr, mode="r")
    except Exception as exc:  # zarr raises several types for a missing or broken store
        raise click.ClickException(f"cannot open Zarr store {zarr!r}: {exc}".splitlines()[0]) from None
    if hasattr(store, "shape"):
        if len(store.shape) != 2:
            raise click.ClickException(f"Zarr array {zarr!r} has shape {store.shape}; a table needs 2 dimensions.")
        names = list(store.attrs.get("columns", [f"x{j}" for j in range(store.shape[1])]))
        return dd.from_dask_array(da.from_zarr(store).rechunk({1: -1}), columns=names)
    arrays = {name: da.from_zarr(store[name]) for name in sorted(store.array_keys())}
    lengths = {a.shape[0] for a in arrays.values()} | {-1 if any(a.ndim != 1 for a in arrays.values()) else 0}
    if not arrays or len(lengths - {0}) != 1 or -1 in lengths:
        raise click.ClickException(f"Zarr group {zarr!r} must hold 1-D arrays of one length, one per column.")
    first = next(iter(arrays.values()))
    columns = [dd.from_dask_array(a.rechunk(first.chunks), columns=name) for name, a in arrays.items()]
    return dd.concat(columns, axis=1)


def input_bytes(parquet=None, zarr=None):
    """Bytes the input takes on disk: the measure of 'larger than memory' for :func:`dask_cluster`."""
    if parquet is not None:
        return sum(os.path.getsize(f) for f in _parquet_files(parquet))
    return sum(p.stat().st_size for p in Path(zarr).rglob("*") if p.is_file())


def _default_budget():
    try:
        import psutil

        return psutil.virtual_memory().available // 2
    except ImportError:
        return 2**33


@contextmanager
def dask_cluster(scheduler=None, nbytes=0, memory_budget=None):
    """The Dask scheduler a lazy command computes with.

    Parameters
    ----------
    scheduler : str or None
        ``--scheduler ADDRESS``: connect to that cluster (``tcp://host:8786``).
    nbytes : int
        Size of the input.
    memory_budget : int or None
        Inputs larger than this start a LocalCluster (one single-threaded worker process per
        core, the budget shared among them); smaller ones use Dask's threads in this process.
        None: half of the available memory.

    Yields
    ------
    description : str
        What computes, for the report.
    """
    budget = _default_budget() if memory_budget is None else memory_budget
    if scheduler is None and nbytes <= budget:
        yield "Dask threads in this process"
        return
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise click.ClickException(f"cannot connect to the Dask scheduler {scheduler!r}: {exc}") from None
        with client:
            yield f"the Dask cluster at {scheduler} ({len(client.scheduler_info()['workers'])} workers)"
        return
    workers = os.cpu_count() or 1
    with LocalCluster(n_workers=workers, threads_per_worker=1, memory_limit=max(budget // workers, 2**28),
                      dashboard_address=None, processes=True) as cluster, Client(cluster):
        yield f"a local Dask cluster of {workers} worker processes"


class _EMProgress(logging.Handler):
    """Advances a rich progress bar on EM's iteration records."""

    def __init__(self, progress, task):
        super().__init__(logging.DEBUG)
        self.progress, self.task = progress, task

    def emit(self, record):
        iteration = getattr(record, "em_iteration", None)
        if iteration is not None:
            self.progress.update(self.task, completed=iteration, total=record.em_max_iter,
                                 description=f"EM, log-likelihood {record.args[2]:.6g}")


@contextmanager
def em_progress(enabled=True):
    """A progress bar of EM's iterations on standard error while the block runs."""
    if not enabled:
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    logger = logging.getLogger("discrim.mixture._em")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        handler = _EMProgress(progress, progress.add_task("EM", total=None))
        old_level = logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        try:
            yield
        finally:
            logger.removeHandler(handler)
            logger.setLevel(old_level)


def write_parquet_atomic(frame, path, overwrite=False):
    """Write a dask DataFrame as a Parquet folder that appears at ``path`` only once complete.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
    path : str
    overwrite : bool, default=False
        Replace an existing folder or file at ``path``.
    """
    target = Path(path)
    tmp = Path(tempfile.mkdtemp(dir=target.resolve().parent, prefix=f".{target.name}."))
    try:
        frame.to_parquet(str(tmp), write_index=False)
        tmp.chmod(0o777 & ~current_umask())  # mkdtemp's folder is private (0700); the output gets the usual mode
        if target.exists():
            # checked before the work (check_output_folder); again here, as it replaces a whole folder
            check_output_folder(path, "--output", overwrite=overwrite)
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def lazy_features(frame, names=None, *, exclude=(), what="features"):
    """The numeric feature columns of a lazy table, checked without reading it.

    Non-numeric columns are refused with the message of a CSV's (nothing is dropped silently,
    so the CSV and Parquet copies of a table give one model); booleans are features 0/1.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
    names : sequence of str or None
        The columns to take (a model's ``feature_names_in_``); None: every column not in
        ``exclude``.
    exclude : sequence of str
        Columns that are not features (the target).
    what : str, default="features"
        Word used in error messages.

    Returns
    -------
    X : dask.dataframe.DataFrame
    """
    import pandas as pd

    from discrim.cli._io import non_numeric_message

    meta = frame._meta
    if names is None:
        names = [c for c in frame.columns if c not in exclude]
        if not names:
            raise click.ClickException(f"the table has no {what} column.")
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise click.ClickException(
            f"column(s) {', '.join(map(repr, missing))} not in the table; it has: {column_list(frame.columns)}."
        )
    bad = [c for c in names if not pd.api.types.is_numeric_dtype(meta[c])]
    if bad:
        raise click.ClickException(non_numeric_message(what, bad))
    return frame[list(names)].astype(np.float64)


def numeric_columns(frame):
    """The columns of a lazy table that :func:`lazy_features` takes (numbers and booleans), from its dtypes."""
    import pandas as pd

    return [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame._meta[c])]


def plain_labels(column):
    """A lazy label column in a NumPy dtype, so that Dask turns it into an array without a warning.

    Dask warns ("limited support for converting pandas extension dtypes") whenever a column of an
    extension dtype (pandas' strings, categories, Int64, boolean) becomes an array; the warning
    is Dask's internal business, not the user's. The labels keep their values: an extension
    dtype becomes its NumPy counterpart (Int64 -> int64; the labels have no missing value here),
    or object (strings, categories).

    Parameters
    ----------
    column : dask.dataframe.Series

    Returns
    -------
    column : dask.dataframe.Series
    """
    import pandas as pd

    dtype = column._meta.dtype
    if not pd.api.types.is_extension_array_dtype(dtype):
        return column
    numpy_dtype = getattr(dtype, "numpy_dtype", None)  # (a NumPy dtype is falsy: no `or` here)
    return column.astype(object if numpy_dtype is None else numpy_dtype)


LAZY_OPTIONS = [
    click.option("--parquet", type=str, default=None, metavar="PATH_OR_GLOB",
                 help="Parquet file, folder or glob, read lazily by Dask (data larger than memory)."),
    click.option("--zarr", type=str, default=None, metavar="PATH",
                 help="Zarr store (a 2-D array, or a group of 1-D column arrays), read lazily by Dask."),
    click.option("--scheduler", type=str, default=None, metavar="ADDRESS",
                 help="Compute on this Dask cluster (e.g. tcp://host:8786); otherwise inputs larger than "
                      "half the free memory start a local cluster."),
]


def lazy_options(command):
    """Add ``--parquet``, ``--zarr`` and ``--scheduler`` to a click command."""
    for option in reversed(LAZY_OPTIONS):
        command = option(command)
    return command
