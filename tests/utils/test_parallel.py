"""Tests of the task runner: same results serially, in forked workers and through joblib."""

import contextlib
import os
import sys
import threading
import time

import joblib
import pytest
from threadpoolctl import threadpool_limits

from discrim.utils import _parallel
from discrim.utils._parallel import _can_fork, run_unordered
from discrim.utils._threads import available_blas_threads


@pytest.fixture(autouse=True)
def _no_other_threads_but_where_tested(request, monkeypatch):
    """Earlier tests of the session leave idle threads (loky's and Dask's managers), with which the runner
    would not fork: the fork pool's own tests run as in a process without them. The test of that policy
    sees the real threads."""
    if request.node.name != "test_another_thread_running_means_no_fork":
        monkeypatch.setattr(_parallel, "_no_other_threads", lambda: True)


def _square_and_pid(x, offset):
    return x * x + offset, os.getpid()


def _fail(x):
    raise ValueError(f"task {x} failed")


TASKS = [(x, 1) for x in range(7)]
EXPECTED = sorted(x * x + 1 for x in range(7))


def test_serial_runs_in_order_in_this_process():
    results = list(run_unordered(_square_and_pid, TASKS, n_jobs=1))
    assert [r for r, _ in results] == [x * x + 1 for x in range(7)]
    assert {pid for _, pid in results} == {os.getpid()}


def _instant(x):
    return x


@pytest.mark.skipif(not _can_fork(), reason="forked workers need Linux")
def test_tasks_that_finish_before_they_are_watched_do_not_deadlock():
    # A child's future that is already done when its callback is attached runs the callback at
    # once in the submitting thread; that callback takes the pool's lock, so it must not be
    # attached while the lock is held (it was, and instant tasks hung the pool).
    # A stress test of a timing-dependent race (it hung a loaded test run once): a tiny switch
    # interval makes the submitting thread yield the GIL often, so that a child's result can come
    # back between a submit and the attaching of its callback.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(5):
            assert sorted(run_unordered(_instant, [(i,) for i in range(300)], n_jobs=2)) == list(range(300))
    finally:
        sys.setswitchinterval(interval)


def _slow_square_and_pid(x, offset):
    time.sleep(0.05)  # long enough that both this process and the worker take tasks
    return x * x + offset, os.getpid()


@pytest.mark.skipif(not _can_fork(), reason="forked workers need Linux")
def test_this_process_and_a_forked_worker_share_the_tasks():
    results = list(run_unordered(_slow_square_and_pid, TASKS, n_jobs=2))
    assert sorted(r for r, _ in results) == EXPECTED
    pids = {pid for _, pid in results}
    assert len(pids) == 2 and os.getpid() in pids


def _chain_step(chain, step, trace):
    time.sleep(0.01)
    return chain, step, trace + (step,)


def _next_step(result):
    chain, step, trace = result
    return [(chain, step + 1, trace)] if step < 3 else []


@pytest.mark.parametrize("n_jobs, backend", [(1, None), (2, None), (3, None), (2, "threading")])
def test_follow_ups_continue_each_chain_in_order(n_jobs, backend):
    if backend is None and n_jobs > 1 and not _can_fork():
        pytest.skip("forked workers need Linux")
    context = joblib.parallel_config(backend=backend, n_jobs=n_jobs) if backend else contextlib.nullcontext()
    with context:
        results = list(run_unordered(_chain_step, [(c, 0, ()) for c in range(5)], n_jobs=n_jobs,
                                     follow_up=_next_step))
    assert len(results) == 5 * 4
    finals = sorted((chain, trace) for chain, step, trace in results if step == 3)
    assert finals == [(c, (0, 1, 2, 3)) for c in range(5)]
    for chain in range(5):  # each chain's steps finish in order
        steps = [step for c, step, _ in results if c == chain]
        assert steps == [0, 1, 2, 3]


@pytest.mark.skipif(not _can_fork(), reason="forked workers need Linux")
def test_stopping_early_shuts_the_workers_down():
    results = run_unordered(_slow_square_and_pid, TASKS, n_jobs=2)
    first = next(results)
    results.close()
    assert first[0] in EXPECTED


@pytest.mark.parametrize("fork_safe", [True, False])
def test_configured_joblib_backend_is_used(fork_safe):
    with joblib.parallel_config(backend="threading", n_jobs=2):
        results = list(run_unordered(_square_and_pid, TASKS, fork_safe=fork_safe))
    assert sorted(r for r, _ in results) == EXPECTED
    assert {pid for _, pid in results} == {os.getpid()}  # threads of this process


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_task_errors_propagate(n_jobs):
    with pytest.raises(ValueError, match="task 0 failed"):
        list(run_unordered(_fail, [(0,)], n_jobs=n_jobs))
    with pytest.raises(ValueError, match="failed"):
        list(run_unordered(_fail, [(1,), (2,)], n_jobs=n_jobs))


class _NoPickle:
    """Shared data that refuses to be pickled: reaching a worker by inheritance is the only way."""

    value = 10

    def __reduce__(self):
        raise TypeError("shared data must not be pickled")


def _add_shared(x, *, data):
    return x + data.value


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_shared_arguments_reach_every_task_without_pickling(n_jobs):
    if n_jobs > 1 and not _can_fork():
        pytest.skip("forked workers need Linux")
    results = run_unordered(_add_shared, [(x,) for x in range(5)], n_jobs=n_jobs, shared={"data": _NoPickle()})
    assert sorted(results) == [10, 11, 12, 13, 14]


def test_shared_arguments_through_joblib():
    with joblib.parallel_config(backend="threading", n_jobs=2):
        results = list(run_unordered(_add_shared, [(1,), (2,)], shared={"data": _NoPickle()}))
    assert sorted(results) == [11, 12]


def _threads_of_this_process(x):
    time.sleep(0.05)  # long enough that both this process and the worker take tasks
    return os.getpid(), len(os.listdir("/proc/self/task")), available_blas_threads()


@pytest.mark.skipif(not _can_fork(), reason="forked workers need Linux")
def test_forked_worker_inherits_the_thread_limit_without_starting_a_blas_pool():
    # OpenBLAS's set_num_threads, called in a freshly forked process, starts a thread pool that
    # busy-waits and takes the cores from the search: the workers must inherit their limit.
    share = max(1, joblib.cpu_count() // 2)
    with threadpool_limits(limits=share):
        before = available_blas_threads()
        results = list(run_unordered(_threads_of_this_process, [(x,) for x in range(6)], n_jobs=2))
        assert available_blas_threads() == before
    in_worker = [(n_threads, blas) for pid, n_threads, blas in results if pid != os.getpid()]
    assert in_worker
    assert all(blas == share for _, blas in in_worker)
    assert all(n_threads == 1 for n_threads, _ in in_worker)


def _blas_threads_seen(_):
    from discrim.utils._threads import available_blas_threads

    return available_blas_threads()


def test_threaded_backend_tasks_run_under_one_blas_limit():
    """Tasks in threads share the BLAS pool: it is held at the workers' share of the cores for
    the whole run, instead of each task setting and undoing its own limit under the others
    (which changed the rounding, and the model the search selected, under the threading backend)."""
    from joblib import cpu_count, parallel_config
    from threadpoolctl import threadpool_info

    if not [info for info in threadpool_info() if info["user_api"] == "blas"]:
        pytest.skip("no BLAS library found by threadpoolctl")
    with parallel_config(backend="threading"):
        seen = list(run_unordered(_blas_threads_seen, [(i,) for i in range(6)], n_jobs=2))
    assert seen == [max(1, cpu_count() // 2)] * 6


@pytest.mark.skipif(not _can_fork(), reason="forked workers need Linux")
def test_an_interruption_while_the_pool_starts_propagates_not_a_shutdown_error(monkeypatch):
    # CI once ended a Ctrl-C'd search with "RuntimeError: cannot join thread before it is
    # started": the signal handler raised while submit() waited for the pool's manager thread to
    # start, and shutdown() then refused to join the launched but not yet started thread. Here the
    # thread starts a moment after the interruption, as it did there.
    from concurrent.futures import process

    original_start = process._ExecutorManagerThread.start

    def start_late_and_interrupt(thread):
        threading.Timer(0.2, original_start, [thread]).start()
        raise KeyboardInterrupt

    monkeypatch.setattr(process._ExecutorManagerThread, "start", start_late_and_interrupt)
    with pytest.raises(KeyboardInterrupt):
        list(run_unordered(_slow_square_and_pid, TASKS, n_jobs=2))


@pytest.mark.skipif(not _can_fork(), reason="forked workers need Linux")
def test_another_thread_running_means_no_fork():
    """A fork while another thread is inside a multi-threaded BLAS call deadlocks (select_mixture(n_jobs=2) beside
    a thread of matrix products hung within a few calls): with another thread alive, joblib's workers run the
    tasks, none of them in this process."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        # os.getpid: a task that joblib's workers can import (this module is not on their path)
        pids = list(run_unordered(os.getpid, [()] * 4, n_jobs=2))
    finally:
        stop.set()
        other.join()
    assert len(pids) == 4 and os.getpid() not in pids


@pytest.mark.skipif(not _can_fork(), reason="forked workers need Linux")
def test_fork_pool_keeps_the_applications_own_gc_freeze():
    """A pre-forking server's gc.freeze() survives a parallel search (the pool unfroze every object on exit)."""
    import gc

    gc.freeze()
    try:
        before = gc.get_freeze_count()
        assert sorted(r for r, _ in run_unordered(_slow_square_and_pid, TASKS, n_jobs=2)) == EXPECTED
        assert gc.get_freeze_count() >= before * 0.99  # objects freed meanwhile leave the count
    finally:
        gc.unfreeze()
