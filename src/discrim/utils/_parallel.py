"""Independent tasks in parallel: through joblib, or in forked worker processes when none is configured."""

import itertools
import multiprocessing
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed

# Keyword arguments shared by the tasks of the running forked pools, by pool: set before the
# workers fork, so that they inherit them (copy-on-write) instead of receiving pickled copies.
_INHERITED = {}
_POOL_IDS = itertools.count()


def run_unordered(function, tasks, n_jobs=None, fork_safe=True, shared=None):
    """Yield ``function(*task, **shared)`` for every task, in the order the tasks finish.

    Parameters
    ----------
    function : callable
        Picklable (a module-level function).
    tasks : iterable of tuple
        Positional arguments of each call.
    n_jobs : int or None, default=None
        Workers, in joblib's convention (None means 1 unless a ``joblib.parallel_config`` context
        says otherwise, -1 means all cores).
    fork_safe : bool, default=True
        Whether ``function`` may run in a process forked from this one (False for work that uses
        a threaded runtime which does not survive ``fork``, such as torch's).
    shared : dict or None, default=None
        Keyword arguments common to every call, typically the data. Forked workers inherit them
        from this process without a copy; joblib backends receive them with each task (loky
        memory-maps large arrays).

    Yields
    ------
    result : object
        The return value of one call.

    Notes
    -----
    With a joblib backend configured by the caller (``joblib.parallel_config(backend="dask")``
    and the like), the tasks go through ``joblib.Parallel`` with that backend. Otherwise, on
    Linux, they run in a pool of forked processes: joblib's default loky workers start a fresh
    interpreter that imports numpy, scipy and scikit-learn again, about 2 s on a 2-core machine,
    which is longer than a whole search on small data; a forked worker starts in milliseconds
    with the modules already loaded (the original proset's search forks its workers the same
    way). Each forked worker limits its BLAS threads to its share of the cores. Elsewhere (macOS,
    Windows, or ``fork_safe=False``) joblib's default backend is used.
    """
    from joblib import Parallel, cpu_count, delayed, effective_n_jobs

    tasks = list(tasks)
    shared = dict(shared or {})
    configured = _joblib_backend_configured()
    n_workers = n_jobs if configured else min(effective_n_jobs(n_jobs), len(tasks))
    if not configured and n_workers <= 1:
        for task in tasks:
            yield function(*task, **shared)
        return
    if configured or not (fork_safe and _can_fork()):
        parallel = Parallel(n_jobs=n_workers, return_as="generator_unordered")
        yield from parallel(delayed(function)(*t, **shared) for t in tasks)
        return
    pool_id = next(_POOL_IDS)
    _INHERITED[pool_id] = shared
    try:
        threads = max(1, cpu_count() // n_workers)
        with warnings.catch_warnings():
            # Python 3.12+ warns that fork() in a process with threads (the BLAS's) may deadlock;
            # the workers only run numpy/scipy code, whose BLAS (OpenBLAS, MKL) re-initialises
            # after fork.
            warnings.simplefilter("ignore", DeprecationWarning)
            executor = ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context("fork"),
                                           initializer=_limit_threads, initargs=(threads,))
            # the workers fork on the first submit, after _INHERITED holds this pool's arguments
            futures = [executor.submit(_call_inherited, pool_id, function, task) for task in tasks]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            executor.shutdown(wait=True, cancel_futures=True)
    finally:
        del _INHERITED[pool_id]


def _call_inherited(pool_id, function, task):
    """Run one task in a forked worker with the shared arguments it inherited."""
    return function(*task, **_INHERITED[pool_id])


def _joblib_backend_configured():
    """Whether the caller chose a joblib backend other than the default (loky)."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return type(backend).__name__ != "LokyBackend"


def _can_fork():
    """Linux, fork available, and not inside a daemonic process (which may not have children)."""
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )


def _limit_threads(n_threads):
    """Worker initializer: cap the BLAS/OpenMP thread pools for the life of the worker."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n_threads)
