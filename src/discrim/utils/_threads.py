"""Thread counts of the native thread pools (BLAS, OpenMP), read and limited through threadpoolctl."""

import os
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_CONTROLLER = []  # one ThreadpoolController, built on first use (it scans the loaded libraries)


def thread_pools():
    """The process's :class:`threadpoolctl.ThreadpoolController`, built once."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def available_cores():
    """Number of CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def available_blas_threads():
    """Threads the BLAS would use here: respects threadpoolctl limits and joblib workers' limits.

    Returns
    -------
    n_threads : int
        The smallest thread count of the loaded BLAS libraries, at least 1 (1 without any).
    """
    counts = [info["num_threads"] for info in thread_pools().select(user_api="blas").info()]
    return max(1, min(counts)) if counts else 1


@contextmanager
def limit_threads(n_threads, user_api=None):
    """Hold the native thread pools at ``n_threads`` threads, setting only those not already there.

    Unlike ``threadpoolctl.threadpool_limits``, a library whose count already is ``n_threads``
    is left alone. OpenBLAS's fork handler shuts its thread pool down, and the next call to its
    ``set_num_threads``, even one that keeps the count, starts a new pool whose threads
    busy-wait for a while before they sleep: in a process just forked for a parallel search
    those threads take the cores from the search.

    Parameters
    ----------
    n_threads : int
    user_api : {"blas", "openmp"} or None, default=None
        The libraries to limit; None: all of them.

    Yields
    ------
    None
        The previous counts are restored on exit.
    """
    controller = thread_pools()
    libraries = controller.lib_controllers if user_api is None else controller.select(user_api=user_api).lib_controllers
    changed = []
    try:
        for library in libraries:
            previous = library.num_threads
            if previous != n_threads:
                library.set_num_threads(n_threads)
                changed.append((library, previous))
        yield
    finally:
        for library, previous in reversed(changed):
            library.set_num_threads(previous)
