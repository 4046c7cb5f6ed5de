"""`Shots`: what the app asks of a screenshot store (the viewer, `ui.fetch`, `Bench`), and
the `FetchJob` a store hands out.

Every store satisfies it (`ShotStore`, `PendingShots`; tests/unit/test_shots_protocol.py
checks each method's signature), so `Bench.shots` is typed by it, not by one class. The
job lives here, below the stores, so the parquet reader reports progress into it without
calling back into the store."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass
class FetchJob:
    """A screenshot fetch shared by every session that asked for it; polled, never pushed."""

    key: str
    what: str
    done_bytes: int = 0
    total_bytes: int = 0
    finished: bool = False
    error: str = ""
    path: str = ""  # the fetch path taken, for the technical detail
    gone: bool = False  # the Hub no longer serves the commit read at (`hub.RevisionGone`)
    counts_items: bool = False  # done/total count trajectories drawn (`PendingShots`), not bytes
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def fraction(self) -> float:
        with self.lock:
            return self.done_bytes / self.total_bytes if self.total_bytes else 0.0

    def report(self, done: int, total: int) -> None:
        with self.lock:
            self.done_bytes, self.total_bytes = done, total

    def wait_finished(self, timeout: float) -> FetchJob:
        """Poll until the job has finished or ``timeout`` seconds passed (every store's
        `wait`); returns the job either way."""
        deadline = time.monotonic() + timeout
        while not self.finished and time.monotonic() < deadline:
            time.sleep(0.01)
        return self


@runtime_checkable
class Shots(Protocol):
    """A trajectory's screenshots on demand, by (split, row): jobs the script thread polls."""

    gone: str
    """Why the Hub no longer serves the commit read at ("" while it does, or no Hub)."""

    def ready(self, split: str, row: int) -> bool:
        """True when the screenshots can be read without waiting."""
        ...

    def job(self, split: str, row: int) -> FetchJob | None:
        """The row's running or last job, if any."""
        ...

    def start(self, split: str, row: int) -> FetchJob | None:
        """Start (or join) the row's fetch in the background; a failed job is restarted (the
        Retry). None when there is nothing to fetch."""
        ...

    def wait(self, split: str, row: int, timeout: float = 600.0) -> FetchJob | None:
        """`start`, then wait for the job (the report, tests)."""
        ...

    def prefetch(self, split: str, rows: list[int]) -> None:
        """Ready these rows in the background; a new call replaces the queue."""
        ...

    def pngs(self, split: str, row: int, fetch: bool = True) -> list[bytes | None] | None:
        """The row's PNGs (None: could not be had); fetched first if `fetch`."""
        ...

    def thumbs(self, split: str, row: int) -> list[bytes | None] | None:
        """The row's filmstrip thumbnails; None when not fetched yet."""
        ...

    def fetch_path(self, split: str, row: int) -> str:
        """How the row's screenshots were obtained, for the technical detail."""
        ...
