"""The demo's screenshots while its mirror is still being drawn: drawn here, on demand.

`lib.data.demo.light` serves the demo's first page before the builder process
(`lib.data.demo.builder`) has drawn the screenshots. A trajectory opened in that window is drawn
in this process from the generated runs it already holds (`lib.mirror.hub.trajectory_pngs`:
the same bytes the mirror will store), in a worker thread with a `FetchJob` the viewer
polls, as it polls a Hub fetch (`ui.fetch`). Once the mirror's README is on disk, every
row not drawn yet is read from the mirror by a plain `ShotStore` (`open_real`), and the
generated runs are dropped.

It answers the `ShotStore` calls the app makes (ready, job, start, wait, prefetch, pngs,
thumbs, stored_count, fetch_path, gone). Drawn rows are kept in memory, bounded in
bytes (`MEMORY_CAP`, the oldest dropped first and drawn again if asked for).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lib.data.shots import MAX_QUEUED, MEMORY_CAP, FetchJob, Prefetcher, ShotStore, make_thumbs

if TYPE_CHECKING:
    from lib.mirror.build import SplitData

log = logging.getLogger(__name__)
DRAWN = "drawn on demand (the synthetic demo's screenshots were still being generated)"

Key = tuple[str, int]
Drawn = tuple[list[bytes | None], list[bytes | None]]  # (PNGs, thumbnails)


class DemoShots:
    """Screenshots of the demo before (and after) its mirror is written; see the module."""

    def __init__(
        self,
        folder: Path,
        splits: dict[str, SplitData],
        open_real: Callable[[], ShotStore],
    ) -> None:
        self.folder = folder
        self.gone = ""  # never a Hub revision
        self._splits: dict[str, SplitData] | None = splits
        self._open_real = open_real
        self._real: ShotStore | None = None
        self._lock = threading.Lock()
        self._drawn: OrderedDict[Key, Drawn] = OrderedDict()
        self._jobs: dict[Key, FetchJob] = {}
        self.prefetcher = Prefetcher(self._prefetch_one, "demo prefetch drawing")

    # -- which side answers ---------------------------------------------------------------
    def real(self) -> ShotStore | None:
        """The mirror's own store once the mirror is written (opened once), else None."""
        if self._real is None and (self.folder / "README.md").is_file():
            with self._lock:
                if self._real is None:
                    try:
                        self._real = self._open_real()
                    except Exception as exc:  # a half-readable mirror: keep drawing
                        log.warning("the demo mirror could not be opened yet: %s", exc)
                        return None
                    self._splits = None  # the runs are not needed any more
        return self._real

    def _rows(self, split: str) -> int:
        splits = self._splits
        return len(splits[split].frames) if splits and split in splits else 0

    def _has(self, key: Key) -> bool:
        with self._lock:
            return key in self._drawn

    # -- drawing ----------------------------------------------------------------------------
    def _draw(self, key: Key, job: FetchJob | None = None) -> Drawn | None:
        """Draw one trajectory (None: the row is unknown, or the runs are gone)."""
        from lib.mirror.hub import trajectory_pngs

        splits = self._splits
        split, row = key
        if splits is None or split not in splits or not 0 <= row < len(splits[split].frames):
            return None
        frames = splits[split].frames[row]
        if job is not None:
            job.report(0, len(frames))
        pngs: list[bytes | None] = list(trajectory_pngs(splits[split], row))
        drawn = (pngs, make_thumbs(pngs))
        if job is not None:
            job.report(len(frames), len(frames))
        with self._lock:
            self._drawn[key] = drawn
            self._drawn.move_to_end(key)
            while len(self._drawn) > 1 and _size(self._drawn) > MEMORY_CAP:
                self._drawn.popitem(last=False)
        return drawn

    def _run(self, key: Key, job: FetchJob) -> None:
        try:
            if self._draw(key, job) is None and self.real() is None:
                job.error = "this trajectory is not in the generated demo"
            job.path = DRAWN
        except Exception as exc:  # a worker must never die silently: the page shows this
            log.exception("drawing a demo trajectory failed")
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            job.finished = True

    # -- the ShotStore calls ------------------------------------------------------------------
    def ready(self, split: str, row: int) -> bool:
        real = self.real()
        return self._has((split, row)) or (real is not None and real.ready(split, row))

    def job(self, split: str, row: int) -> FetchJob | None:
        real = self.real()
        if real is not None and not self._has((split, row)):
            return real.job(split, row)
        with self._lock:
            return self._jobs.get((split, row))

    def start(self, split: str, row: int) -> FetchJob | None:
        """Start (or join) drawing a row; the mirror's own fetch once it is written."""
        key = (split, row)
        real = self.real()
        if self._has(key):
            return None
        if real is not None:
            return real.start(split, row)
        if not 0 <= row < self._rows(split):
            return None
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not (job.finished and job.error):
                return job
            job = FetchJob(f"demo-{split}-{row}", "drawing the synthetic demo's screenshots")
            job.counts_items = True
            self._jobs[key] = job
        threading.Thread(target=self._run, args=(key, job), daemon=True).start()
        return job

    def wait(self, split: str, row: int, timeout: float = 600.0) -> FetchJob | None:
        job = self.start(split, row)
        deadline = time.monotonic() + timeout
        while job is not None and not job.finished and time.monotonic() < deadline:
            time.sleep(0.01)
        return job

    def pngs(self, split: str, row: int, fetch: bool = True) -> list[bytes | None] | None:
        key = (split, row)
        with self._lock:
            if key in self._drawn:
                self._drawn.move_to_end(key)
                return self._drawn[key][0]
        real = self.real()
        if real is not None:
            return real.pngs(split, row, fetch)
        if not fetch:
            return None
        job = self.wait(split, row)
        if job is not None and job.error:
            return None
        with self._lock:
            hit = self._drawn.get(key)
        if hit is None:  # dropped from memory already, or the mirror took over meanwhile
            real = self.real()
            return real.pngs(split, row, fetch) if real is not None else None
        return hit[0]

    def thumbs(self, split: str, row: int) -> list[bytes | None] | None:
        with self._lock:
            hit = self._drawn.get((split, row))
        if hit is not None:
            return hit[1]
        real = self.real()
        return real.thumbs(split, row) if real is not None else None

    def stored_count(self, split: str, row: int) -> int | None:
        with self._lock:
            hit = self._drawn.get((split, row))
        if hit is not None:
            return len(hit[0])
        real = self.real()
        return real.stored_count(split, row) if real is not None else None

    def fetch_path(self, split: str, row: int) -> str:
        if self._has((split, row)):
            return DRAWN
        real = self.real()
        return real.fetch_path(split, row) if real is not None else ""

    def prefetch(self, split: str, rows: list[int]) -> None:
        """Draw the next and the previous trajectory in one background thread, one at a
        time (the mirror's own prefetch once it is written); a new call replaces the queue."""
        real = self.real()
        if real is not None:
            real.prefetch(split, rows)
            return
        with self._lock:
            drawn = set(self._drawn)
        self.prefetcher.replace(
            (split, r)
            for r in rows[:MAX_QUEUED]
            if 0 <= r < self._rows(split) and (split, r) not in drawn
        )

    def _prefetch_one(self, key: Key) -> None:
        if not self._has(key):
            self._draw(key)


def _size(drawn: OrderedDict[Key, Drawn]) -> int:
    return sum(len(b or b"") for pngs, thumbs in drawn.values() for b in (*pngs, *thumbs))
