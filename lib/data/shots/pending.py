"""The screenshots of a store still being written (the demo before its mirror is on disk).

Why: the demo's first page is served from generated tables while a niced builder process
draws the mirror (`lib.data.demo`). A trajectory opened in that window gets a job like any
fetch (`FetchJob`, polled by `ui.fetch`), whose progress is the writer's own (what it has
drawn of the whole mirror, `progress()`); once the store is written (`ready_file` exists)
the job reads the row from it and the viewer fills in. From then on every call goes to
that store. No screenshot is drawn here: there is one screenshot store, `ShotStore`.

A writer that is not running (`writing()` false for `GRACE` seconds, e.g. killed) ends
the job with an error; the viewer's Retry (`start`) asks `restart()` for a new writer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lib.data.shots.protocol import FetchJob, Shots

log = logging.getLogger(__name__)
POLL = 0.2
GRACE = 20.0
"""Seconds without a writer (and without the store) before a waiting job gives up."""
WAITING = "waiting for the synthetic demo's screenshots to be generated"


class PendingShots:
    """Screenshots of a store not written yet; see the module."""

    def __init__(
        self,
        ready_file: Path,
        open_store: Callable[[], Shots],
        progress: Callable[[], tuple[int, int, str] | None],
        writing: Callable[[], bool],
        restart: Callable[[], object] = lambda: None,
    ) -> None:
        self.ready_file = ready_file
        self.gone = ""  # never a Hub revision
        self._open_store = open_store
        self._progress = progress
        self._writing = writing
        self._restart = restart
        self._store: Shots | None = None
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, int], FetchJob] = {}

    def store(self) -> Shots | None:
        """The written store (opened once), else None."""
        if self._store is None and self.ready_file.is_file():
            with self._lock:
                if self._store is None:
                    try:
                        self._store = self._open_store()
                    except Exception as exc:  # a half-written store: keep waiting
                        log.warning("the written screenshots could not be opened yet: %s", exc)
        return self._store

    def _waiting(self, split: str, row: int) -> FetchJob | None:
        with self._lock:
            job = self._jobs.get((split, row))
        return job if job is not None and not job.finished else None

    def _run(self, key: tuple[str, int], job: FetchJob) -> None:
        split, row = key
        try:
            alive = time.monotonic()  # when a writer was last seen
            while (store := self.store()) is None:
                seen = self._progress()
                if seen is not None:
                    job.report(seen[0], seen[1])
                if self._writing():
                    alive = time.monotonic()
                elif time.monotonic() - alive > GRACE:
                    job.error = "the synthetic demo's screenshots are not being generated"
                    return
                time.sleep(POLL)
            done = store.wait(split, row)
            job.report(job.total_bytes, job.total_bytes)
            if done is not None:
                job.error, job.path, job.gone = done.error, done.path, done.gone
        except Exception as exc:  # a worker must never die silently: the page shows this
            log.exception("waiting for the demo's screenshots failed")
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            job.finished = True

    # -- the Shots calls -------------------------------------------------------------------
    def ready(self, split: str, row: int) -> bool:
        store = self.store()
        return store is not None and self._waiting(split, row) is None and store.ready(split, row)

    def job(self, split: str, row: int) -> FetchJob | None:
        store = self.store()
        with self._lock:
            job = self._jobs.get((split, row))
        if store is not None and (job is None or (job.finished and not job.error)):
            return store.job(split, row)
        return job

    def start(self, split: str, row: int) -> FetchJob | None:
        """Join (or start) the wait for a row; the store's own fetch once it is written. A
        failed wait is restarted, and so is the writer (the Retry)."""
        store = self.store()
        waiting = self._waiting(split, row)
        if waiting is not None:
            return waiting
        if store is not None:
            return store.start(split, row)
        with self._lock:
            old = self._jobs.get((split, row))
            if old is not None and old.error:
                self._restart()
            job = FetchJob(f"pending-{split}-{row}", WAITING)
            job.counts_items = True
            self._jobs[(split, row)] = job
        threading.Thread(target=self._run, args=((split, row), job), daemon=True).start()
        return job

    def wait(self, split: str, row: int, timeout: float = 600.0) -> FetchJob | None:
        job = self.start(split, row)
        return None if job is None else job.wait_finished(timeout)

    def prefetch(self, split: str, rows: list[int]) -> None:
        """The store's prefetch once it is written; nothing to get ready before."""
        store = self.store()
        if store is not None:
            store.prefetch(split, rows)

    def pngs(self, split: str, row: int, fetch: bool = True) -> list[bytes | None] | None:
        if self.store() is None and fetch:
            self.wait(split, row)
        store = self.store()
        return None if store is None else store.pngs(split, row, fetch)

    def thumbs(self, split: str, row: int) -> list[bytes | None] | None:
        store = self.store()
        return None if store is None else store.thumbs(split, row)

    def fetch_path(self, split: str, row: int) -> str:
        store = self.store()
        return "" if store is None else store.fetch_path(split, row)
