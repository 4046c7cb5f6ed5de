"""A background prefetch whose queue each call replaces.

Why one piece: the screenshot store (`lib.data.shot_cache`) and the demo's on-demand
drawing (`lib.data.demo_shots`) both get the next and the previous trajectory ready while
the visitor looks at this one, and both must drop what was asked before when the visitor
moves on, work one item at a time in one thread, and never let a failure escape: the
open that follows does the work again, visibly.
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

    def replace(self, keys: Iterable[Hashable]) -> None:
        """Queue these keys (at most `MAX_QUEUED`) instead of whatever was waiting; the item
        being worked on finishes."""
        wanted = list(keys)[:MAX_QUEUED]
        with self._lock:
            self._queue = wanted
            if wanted and (self._thread is None or not self._thread.is_alive()):
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

    def _loop(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    return
                key = self._queue.pop(0)
            try:
                self._work(key)
            except Exception as exc:  # silent: the open that follows does it again, visibly
                log.info("%s of %s skipped: %s", self._what, key, exc)
