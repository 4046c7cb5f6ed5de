"""A background prefetch whose queue each call replaces.

Why its own piece: the screenshot store (`lib.data.shots.store`) gets the next and the
previous trajectory ready while the visitor looks at this one; it must drop what was asked
before when the visitor moves on, work one item at a time in one thread, and never let a
failure escape: the open that follows does the work again, visibly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterable

log = logging.getLogger(__name__)

MAX_QUEUED = 2  # the next and the previous


class Prefetcher:
    """One daemon thread that runs `work(key)` for each queued key, oldest first."""

    def __init__(self, work: Callable[[Hashable], None], what: str) -> None:
        self._work = work
        self._what = what
        self._queue: list[Hashable] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._running = False  # under the lock: a thread will still look at the queue

    def replace(self, keys: Iterable[Hashable]) -> None:
        """Queue these keys (at most `MAX_QUEUED`) instead of whatever was waiting; the item
        being worked on finishes."""
        wanted = list(keys)[:MAX_QUEUED]
        with self._lock:
            self._queue = wanted
            # `_running`, not `is_alive()`: a thread that has just found the queue empty is
            # still alive for a moment and would never see these keys
            if wanted and not self._running:
                self._running = True
                self._thread = threading.Thread(target=self._loop, daemon=True)
                self._thread.start()

    def join(self, timeout: float) -> None:
        """Wait for the queue to run out (tests, benchmarks)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def is_alive(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def _next(self) -> Hashable | None:
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
            self._running = False
            return None

    def _loop(self) -> None:
        try:
            while (key := self._next()) is not None:
                try:
                    self._work(key)
                except Exception as exc:  # silent: the open that follows does it again
                    log.info("%s of %s skipped: %s", self._what, key, exc)
        finally:  # whatever ended this thread, the next call starts another
            with self._lock:
                if self._thread is threading.current_thread():
                    self._running = False
