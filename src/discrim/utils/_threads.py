"""Thread counts of the native thread pools (BLAS, OpenMP), read and limited through threadpoolctl."""

import os
import sys
import threading
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


def row_threads(n_threads=None):
    """Threads for row blocks: ``n_threads``, or the BLAS thread budget of the calling context.

    The budget is what the BLAS may use here: every core at the top level, and a worker's share
    inside discrim's parallel layer (:func:`discrim.utils._parallel.run_unordered`) and joblib's
    process workers, which limit their BLAS. Read it before :func:`single_threaded_blas`.

    Parameters
    ----------
    n_threads : int or None, default=None

    Returns
    -------
    n_threads : int
    """
    return int(n_threads) if n_threads is not None else available_blas_threads()


@contextmanager
def single_threaded_blas():
    """Hold the BLAS, and torch's CPU thread pool, at one thread while row blocks run in threads.

    The per-block operations (:class:`BlockMapper`) are small: a multi-threaded BLAS spends
    more time synchronising its threads on them than computing (several times slower on a busy
    machine), besides oversubscribing the cores the block threads already use. torch's
    intra-op pool is the same on CPU tensors, only worse: every operation on a block above its
    grain size is an OpenMP region whose threads spin at a barrier, and beside other work on the
    machine (load 5 on 2 cores) a 200,000-row EM iteration took 1.8 s instead of 0.05-0.1 s.

    Yields
    ------
    None
    """
    with limit_threads(1, user_api="blas"), _single_threaded_torch():
        yield


@contextmanager
def _single_threaded_torch():
    """torch's intra-op threads held at one (process-wide, as torch keeps them), where torch is in use."""
    torch = sys.modules.get("torch")  # never imported here: the core runs without torch
    previous = torch.get_num_threads() if torch is not None else 1
    if previous == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class BlockMapper:
    """``mapper(fn, items) -> list``: ``fn`` over items (row blocks) in ``n_threads`` threads.

    The one way discrim spreads row blocks over threads (EM's E-step, the prototype objective's
    row chunks). numpy releases the GIL in its kernels, so the blocks run truly in parallel.
    Results come back in item order, so sums over blocks are identical for any ``n_threads``.
    Use it as a context manager, or call :meth:`close`.

    The calling thread is one of the ``n_threads``: it takes items from the same queue as
    ``n_threads - 1`` pool threads, instead of handing every item over and waiting (an EM
    iteration of a few milliseconds maps its blocks twice, and each hand-over and wake-up holds
    the GIL that the blocks' array operations need between their kernels).

    Parameters
    ----------
    n_threads : int
    """

    def __init__(self, n_threads):
        self.n_threads = max(1, int(n_threads))
        self._pool = None
        if self.n_threads > 1:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.n_threads - 1)

    def __call__(self, fn, items):
        items = list(items)
        if self._pool is None or len(items) <= 1:
            return [fn(item) for item in items]
        results = [None] * len(items)
        taken = iter(range(len(items)))
        lock = threading.Lock()
        failed = threading.Event()

        def drain():
            # each thread takes the next item until none is left (or another thread failed)
            while not failed.is_set():
                with lock:
                    index = next(taken, None)
                if index is None:
                    return
                try:
                    results[index] = fn(items[index])
                except BaseException:
                    failed.set()
                    raise

        helpers = [self._pool.submit(drain) for _ in range(min(self.n_threads, len(items)) - 1)]
        try:
            drain()
        finally:
            errors = [helper.exception() for helper in helpers]  # waits for every helper
        for error in errors:
            if error is not None:
                raise error
        return results

    def close(self):
        """Stop the threads (if any)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
