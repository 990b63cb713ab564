"""Tests of the thread counts, and of limits that touch only the libraries whose count changes."""

import os

import pytest
from threadpoolctl import threadpool_limits

from discrim.utils._threads import available_blas_threads, available_cores, limit_threads, thread_pools

BLAS = thread_pools().select(user_api="blas").lib_controllers
needs_blas = pytest.mark.skipif(not BLAS, reason="no BLAS library found by threadpoolctl")


@pytest.fixture
def set_calls(monkeypatch):
    """Record every ``set_num_threads`` call on the BLAS libraries, as (library, count)."""
    calls = []
    for library in BLAS:
        original = library.set_num_threads

        def record(n, library=library, original=original):
            calls.append((library, n))
            return original(n)

        monkeypatch.setattr(library, "set_num_threads", record)
    return calls


@needs_blas
def test_a_library_already_at_the_limit_is_not_set(set_calls):
    with threadpool_limits(limits=1, user_api="blas"):
        with limit_threads(1, user_api="blas"):
            assert available_blas_threads() == 1
    assert set_calls == []


@needs_blas
def test_a_changed_limit_is_set_and_restored(set_calls):
    with threadpool_limits(limits=1, user_api="blas"):
        with limit_threads(2, user_api="blas"):
            assert all(library.num_threads == 2 for library in BLAS)
        assert all(library.num_threads == 1 for library in BLAS)
    assert [n for _, n in set_calls] == [2] * len(BLAS) + [1] * len(BLAS)


@needs_blas
def test_the_limit_is_restored_when_the_body_raises():
    with threadpool_limits(limits=1, user_api="blas"):
        with pytest.raises(RuntimeError, match="boom"):
            with limit_threads(2):
                raise RuntimeError("boom")
        assert available_blas_threads() == 1


def test_available_blas_threads_is_the_smallest_blas_pool():
    from threadpoolctl import threadpool_info

    counts = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    assert available_blas_threads() == (max(1, min(counts)) if counts else 1)
    if counts:
        with threadpool_limits(limits=1, user_api="blas"):
            assert available_blas_threads() == 1


def test_available_cores_is_the_affinity_mask_size(monkeypatch):
    if hasattr(os, "sched_getaffinity"):
        assert available_cores() == len(os.sched_getaffinity(0))
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert available_cores() == 1


def test_single_threaded_blas_holds_torch_at_one_thread_and_restores_it():
    torch = pytest.importorskip("torch")
    from discrim.utils._threads import single_threaded_blas

    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with single_threaded_blas():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError), single_threaded_blas():
            raise RuntimeError
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)


def test_block_mapper_runs_items_concurrently_in_order_with_the_calling_thread():
    """Two items meet at a barrier only if two threads run them at once; the caller is one of the threads."""
    import threading

    from discrim.utils._threads import BlockMapper

    barrier = threading.Barrier(2, timeout=60)
    threads = []

    def fn(item):
        threads.append(threading.get_ident())
        barrier.wait()  # BrokenBarrierError if the items ran one after another
        return item * 10

    with BlockMapper(2) as mapper:
        assert mapper(fn, [1, 2]) == [10, 20]
        assert threading.get_ident() in threads and len(set(threads)) == 2
        # more items than threads: every item once, results in item order
        assert mapper(lambda item: item ** 2, range(7)) == [0, 1, 4, 9, 16, 25, 36]
        assert mapper(lambda item: item, []) == []


@pytest.mark.parametrize("bad", [0, 5])
def test_block_mapper_raises_an_items_error(bad):
    """An error in any item, the caller's or a pool thread's, reaches the caller."""
    from discrim.utils._threads import BlockMapper

    def fn(item):
        if item == bad:
            raise ValueError(f"item {item}")
        return item

    with BlockMapper(2) as mapper:
        with pytest.raises(ValueError, match=f"item {bad}"):
            mapper(fn, range(6))
        assert mapper(lambda item: item, range(3)) == [0, 1, 2]  # usable after a failure
