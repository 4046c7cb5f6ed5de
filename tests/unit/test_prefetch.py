"""lib.data.shots.prefetch.Prefetcher: a call replaces what waits, the last call's keys are
always worked (also when it lands while the thread is finding its queue empty), at most
two are queued, one thread works at a time, and a failure is silent."""

from __future__ import annotations

import threading
import time

from lib.data.shots import MAX_QUEUED, Prefetcher


def _wait_for(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


class _SlowToEnd(Prefetcher):
    """A thread that lingers after finding its queue empty (as one does between the check
    and its exit, on a busy machine): the window where a call used to be lost."""

    def __init__(self, work) -> None:
        super().__init__(work, "test")
        self.found_empty = threading.Event()

    def _next(self):
        key = super()._next()
        if key is None:
            self.found_empty.set()
            time.sleep(0.3)
        return key


def test_a_call_while_the_thread_is_ending_is_still_worked() -> None:
    done: list[int] = []
    prefetcher = _SlowToEnd(done.append)
    prefetcher.replace([1])
    assert prefetcher.found_empty.wait(10) and done == [1]
    prefetcher.replace([2])  # the first thread is still alive here
    assert _wait_for(lambda: done == [1, 2])


def test_one_thread_at_a_time_and_the_last_call_worked() -> None:
    done: list[int] = []
    busy, most = [0], [0]
    lock = threading.Lock()

    def work(key: int) -> None:
        with lock:
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        done.append(key)
        with lock:
            busy[0] -= 1

    prefetcher = Prefetcher(work, "test")
    for burst in range(300):
        prefetcher.replace([burst])
        if burst % 5 == 0:
            time.sleep(0.0005)
    assert _wait_for(lambda: 299 in done)
    assert most[0] == 1


def test_a_call_replaces_what_waits_and_queues_at_most_two() -> None:
    started, release, done = threading.Event(), threading.Event(), []

    def work(key: str) -> None:
        if key == "held":
            started.set()
            assert release.wait(10)
        done.append(key)

    prefetcher = Prefetcher(work, "test")
    prefetcher.replace(["held", "dropped"])
    assert started.wait(10)
    prefetcher.replace(["a", "b", "c"][: MAX_QUEUED + 1])
    release.set()
    assert _wait_for(lambda: not prefetcher.is_alive())
    assert done == ["held", "a", "b"]


def test_a_failure_is_silent_and_the_queue_goes_on() -> None:
    done: list[int] = []

    def work(key: int) -> None:
        if key == 1:
            raise ValueError("a failed fetch")
        done.append(key)

    prefetcher = Prefetcher(work, "test")
    prefetcher.replace([1, 3])
    assert _wait_for(lambda: done == [3])
    prefetcher.join(10)
    prefetcher.replace([4])
    assert _wait_for(lambda: done == [3, 4])
