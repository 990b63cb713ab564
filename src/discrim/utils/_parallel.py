"""Tasks in parallel, with follow-ups: through joblib, or in this process and forked workers when none is configured."""

import collections
import ctypes
import gc
import itertools
import multiprocessing
import numbers
import os
import queue
import signal
import sys
import threading
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

from discrim.utils._threads import limit_threads

# Keyword arguments shared by the tasks of the running forked pools, by pool: set before the
# workers fork, so that they inherit them (copy-on-write) instead of receiving pickled copies.
_INHERITED = {}
_POOL_IDS = itertools.count()


def check_n_jobs(n_jobs):
    """Refuse an ``n_jobs`` that is not joblib's: a non-zero int (-1 every core, -2 all but one) or None.

    Parameters
    ----------
    n_jobs : object

    Returns
    -------
    n_jobs : int or None
    """
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise ValueError(f"n_jobs must be a non-zero int (the number of workers; -1 for every core, -2 for all "
                         f"but one) or None; got {n_jobs!r}.")
    return n_jobs


def run_unordered(function, tasks, n_jobs=None, fork_safe=True, shared=None, follow_up=None):
    """Yield ``function(*task, **shared)`` for every task, in the order the tasks finish.

    Parameters
    ----------
    function : callable
        Picklable (a module-level function).
    tasks : iterable of tuple
        Positional arguments of each call.
    n_jobs : int or None, default=None
        Workers, in joblib's convention (None means 1 unless a ``joblib.parallel_config`` context
        says otherwise, -1 means all cores); at most one per initial task.
    fork_safe : bool, default=True
        Whether ``function`` may run in a process forked from this one (False for work that uses
        a threaded runtime which does not survive ``fork``, such as torch's).
    shared : dict or None, default=None
        Keyword arguments common to every call, typically the data. Forked workers inherit them
        from this process without a copy; joblib backends receive them with each task (loky
        memory-maps large arrays).
    follow_up : callable or None, default=None
        ``follow_up(result) -> iterable of tasks``: tasks that may only start once the one that
        gave ``result`` has finished (the next stretch of a chain). Called in this process,
        possibly from a helper thread; it must be quick and only build the tasks.

    Yields
    ------
    result : object
        The return value of one call.

    Notes
    -----
    With a joblib backend configured by the caller (``joblib.parallel_config(backend="dask")``
    and the like), the tasks go through ``joblib.Parallel`` with that backend, in rounds: the
    follow-ups of one round make the next. Otherwise, on Linux, this process works on the tasks
    itself, beside ``n_jobs - 1`` forked worker processes that take the next ready task as soon
    as they are free: joblib's default loky workers start a fresh interpreter that imports numpy,
    scipy and scikit-learn again, which takes longer than a whole
    search on small data, whereas a forked worker starts in milliseconds with the modules already
    loaded (the original proset's search forks its workers the same way); and this process,
    instead of idling until the last result, does a worker's share. Each worker, this process
    included while the pool runs, limits its BLAS threads to its share of the cores. Elsewhere
    (macOS, Windows, ``fork_safe=False``, or while other threads run: see :func:`_no_other_threads`)
    joblib's default backend is used.
    """
    from joblib import effective_n_jobs

    ready = collections.deque(tasks)
    shared = dict(shared or {})
    follow_up = follow_up or (lambda result: ())
    configured = _joblib_backend_configured()
    n_workers = n_jobs if configured else min(effective_n_jobs(n_jobs), len(ready))
    if not configured and n_workers <= 1:
        while ready:
            result = function(*ready.popleft(), **shared)
            ready.extend(follow_up(result))
            yield result
    elif configured or not (fork_safe and _can_fork() and _no_other_threads()):
        yield from _run_joblib_rounds(function, ready, n_workers, shared, follow_up)
    else:
        yield from _run_forked(function, ready, n_workers, shared, follow_up)


def _run_joblib_rounds(function, ready, n_workers, shared, follow_up):
    """The ready tasks through ``joblib.Parallel``, round after round of follow-ups."""
    from joblib import Parallel, cpu_count, delayed, effective_n_jobs

    # The native thread pools are process-wide: tasks in threads (joblib's threading backend)
    # share them, and one task's limit, set and undone while others run, changes the thread
    # count under their BLAS calls (and the rounding of some of them). The share of the cores per
    # worker is set once here, as the fork pool does before it forks; process workers (loky,
    # Dask) limit their own pools.
    with limit_threads(max(1, cpu_count() // max(1, effective_n_jobs(n_workers)))):
        while ready:
            batch = list(ready)
            ready.clear()
            parallel = Parallel(n_jobs=n_workers, return_as="generator_unordered")
            for result in parallel(delayed(function)(*task, **shared) for task in batch):
                ready.extend(follow_up(result))
                yield result


def _run_forked(function, ready, n_workers, shared, follow_up):
    """This process and ``n_workers - 1`` forked workers on a common queue of ready tasks."""
    from joblib import cpu_count

    pool_id = next(_POOL_IDS)
    _INHERITED[pool_id] = shared
    threads = max(1, cpu_count() // n_workers)
    n_children = n_workers - 1
    # Tasks, the children's count of running ones and their finished results are shared with the
    # executor's thread, which runs the done-callbacks: it queues follow-ups and hands the freed
    # child its next task at once, even while this process is busy with a task of its own.
    lock = threading.Lock()
    finished = queue.SimpleQueue()  # (result, error) of the children's tasks
    state = {"in_children": 0, "closing": False}
    executor = None
    completed = False

    def feed():
        """Submit ready tasks to the free children (with the lock held); returns their futures."""
        futures = []
        while state["in_children"] < n_children and ready and not state["closing"]:
            futures.append(executor.submit(_call_inherited, pool_id, function, ready.popleft()))
            state["in_children"] += 1
        return futures

    def watch(futures):
        """Have ``on_done`` called when each future finishes (without the lock held).

        A future that has finished already runs ``on_done`` at once in this thread, which takes
        the lock: attaching it while holding the lock would deadlock.
        """
        for future in futures:
            future.add_done_callback(on_done)

    def on_done(future):
        try:
            result, error = future.result(), None
        except BaseException as exc:  # noqa: BLE001  (re-raised in the consumer's thread)
            result, error = None, exc
        with lock:
            state["in_children"] -= 1
            if error is None:
                ready.extend(follow_up(result))
            submitted = feed()
            finished.put((result, error))
        watch(submitted)

    # Objects that exist before the fork are moved out of the garbage collector's reach: a
    # collection in a worker would otherwise write to every one of them and make the worker
    # copy the pages they live on (copy-on-write). Not where the application froze objects itself
    # (a pre-forking server's gc.freeze()): unfreezing afterwards would undo its freeze too.
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    # The thread limit of every worker, this process included, is set here before the fork, so
    # the children inherit it and nobody sets it again while the pool runs: after a fork,
    # OpenBLAS's set_num_threads starts a thread pool that busy-waits (see limit_threads).
    with limit_threads(threads):
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns that fork() in a process with threads (the BLAS's) may deadlock;
                # the workers only run numpy/scipy code, whose BLAS (OpenBLAS, MKL) re-initialises
                # after fork.
                warnings.simplefilter("ignore", DeprecationWarning)
                executor = ProcessPoolExecutor(n_children, mp_context=multiprocessing.get_context("fork"),
                                               initializer=_worker_follows_parent, initargs=(os.getpid(),))
                with lock:  # the workers fork on the first submit, after _INHERITED holds the arguments
                    submitted = feed()
                watch(submitted)
            while True:
                with lock:
                    task = ready.popleft() if ready else None
                    done = task is None and state["in_children"] == 0 and finished.empty()
                if done:
                    completed = True
                    break
                if task is not None:
                    result = function(*task, **shared)
                    with lock:
                        ready.extend(follow_up(result))
                        submitted = feed()
                    watch(submitted)
                else:
                    result = _unpack(finished.get())  # wait for a child
                yield result
                while True:  # the children's results that came in meanwhile
                    try:
                        item = finished.get_nowait()
                    except queue.Empty:
                        break
                    yield _unpack(item)
        finally:
            with lock:
                state["closing"] = True
            if executor is not None:
                if not completed:  # an error, an interruption, or the consumer stopped early
                    _terminate_workers(executor)
                _shut_down(executor)
            if freeze:
                gc.unfreeze()
            del _INHERITED[pool_id]


def _terminate_workers(executor):
    """Stop the pool's worker processes now: their tasks' results are no longer wanted.

    ``shutdown`` alone waits for the running tasks to finish, which after an interruption may be
    minutes of search; SIGTERM ends the workers at once and ``shutdown`` then reaps them.
    """
    terminate = getattr(executor, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        if process.is_alive():
            process.terminate()


def _shut_down(executor, patience_s=5.0):
    """``executor.shutdown(wait=True)``, also when an interruption cut the pool's start short.

    ``submit`` starts the pool's manager thread and waits until the thread says it runs. A signal
    whose handler raises (the CLI's SIGINT/SIGTERM) during that wait leaves the thread launched but
    not yet marked as started, and ``shutdown`` then refuses to join it (RuntimeError: cannot join
    thread before it is started), which would replace the interruption on its way up. The thread
    marks itself started within moments, so the shutdown is tried again; a thread that never
    started has nothing to wait for.
    """
    deadline = time.monotonic() + patience_s
    while True:
        try:
            executor.shutdown(wait=True, cancel_futures=True)
            return
        except RuntimeError as exc:
            if "before it is started" not in str(exc):
                raise
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _worker_follows_parent(parent_pid):
    """Initializer of a forked worker: end with the parent, leave signal handling to it.

    The parent's own SIGINT/SIGTERM handlers (raising an exception in its main thread) would
    make a worker print a traceback on Ctrl-C, which the terminal sends to the whole process
    group: workers ignore SIGINT and die on SIGTERM, and the parent, which cleans up, stops them.
    If the parent is killed outright (SIGKILL), the kernel sends the worker SIGTERM
    (PR_SET_PDEATHSIG); a parent that died before that was set is caught by comparing the
    parent's process id.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux's C library: the parent terminates its workers
        pass
    if os.getppid() != parent_pid:
        os._exit(1)


def _unpack(item):
    """The result of a child's ``(result, error)``, or its error raised here."""
    result, error = item
    if error is not None:
        raise error
    return result


def _call_inherited(pool_id, function, task):
    """Run one task in a forked worker with the shared arguments it inherited."""
    return function(*task, **_INHERITED[pool_id])


def _joblib_backend_configured():
    """Whether the caller chose a joblib backend other than the default (loky)."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return type(backend).__name__ != "LokyBackend"


def _no_other_threads():
    """Whether this process runs no Python thread but the current one.

    Forking while another thread is inside a multi-threaded BLAS call deadlocks: the forking thread
    waits (holding the GIL) in OpenBLAS's pre-fork handler for a BLAS pool that the other thread
    keeps busy, and that thread waits for the GIL (measured: select_mixture(n_jobs=2) beside a thread
    of matrix products hung within a few calls). With other threads about (a service's, a
    notebook's), joblib's process workers are started instead, by spawning.
    """
    return threading.active_count() == 1


def _can_fork():
    """Linux, fork available, and not inside a daemonic process (which may not have children)."""
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )

