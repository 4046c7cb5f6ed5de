"""Screenshots on demand: one trajectory's row group, fetched once, kept in a bounded disk cache.

Why: the PNGs are ~99% of the data. A trajectory is opened one at a time, so the
smallest unit the parquet file allows is fetched when it is opened: the screenshot
column chunk (PNG bytes + path leaf, one contiguous byte range) of the row group that
holds the row. It goes to `<cache>/shots/<sha>/...` via tmp + rename (a dropped
connection never leaves a corrupt entry), the cache is capped in bytes (oldest files
evicted, `CUAVB_SHOT_CACHE_MB`, default 2048) and a restart reuses it.

A row group larger than `group_limit()` (old one-row-group-per-shard layout: 414-626 MB on
the real data) is not worth fetching for one trajectory: the whole shard is downloaded
once instead (same bytes, but every later trajectory of that shard is then free).
160 MB is above the ~100 MB row groups `datasets` >= 4.1 writes, below the old shards.

Concurrency: one fetch per key at a time (a job registry with a lock), so two sessions
opening the same trajectory share one download. Progress and errors live in a
`FetchJob` that the Streamlit script thread polls (no Streamlit call from a worker).
Local folders need none of this: the row group is read straight from the file.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from lib.hub import HubError, HubFiles, cache_root
from lib.lazy_parquet import Shard, read_screenshots

GROUP_LIMIT_ENV = "CUAVB_GROUP_LIMIT_MB"  # tests lower it to exercise the shard fallback
CAP_ENV = "CUAVB_SHOT_CACHE_MB"


def group_limit() -> int:
    """Bytes above which a row group is not fetched alone (default 160 MB, see above)."""
    return int(float(os.environ.get(GROUP_LIMIT_ENV, "160")) * 1024 * 1024)


MEMORY_CAP = 64 * 1024 * 1024  # decoded PNG lists kept in RAM (bytes)


@dataclass
class Location:
    """Where a row's screenshots are: shard, row group, row inside the group."""

    shard: Shard
    group: int
    row_in_group: int


@dataclass
class FetchJob:
    """A screenshot fetch shared by every session that asked for it; polled, never pushed."""

    key: str
    what: str
    done_bytes: int = 0
    total_bytes: int = 0
    finished: bool = False
    error: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def fraction(self) -> float:
        with self.lock:
            return self.done_bytes / self.total_bytes if self.total_bytes else 0.0

    def report(self, done: int, total: int) -> None:
        with self.lock:
            self.done_bytes, self.total_bytes = done, total


class ShotStore:
    """Screenshot bytes of one source: locates rows, fetches and caches row groups."""

    def __init__(self, locations: dict[str, list[Location]], files: HubFiles | None, key: str):
        self.locations = locations
        self.files = files  # None: local files, read directly
        self.dir = cache_root() / "shots" / key
        self.cap = int(os.environ.get(CAP_ENV, "2048")) * 1024 * 1024
        self._jobs: dict[str, FetchJob] = {}
        self._jobs_lock = threading.Lock()
        self._memory: OrderedDict[tuple[str, int], list[bytes | None]] = OrderedDict()
        self._memory_lock = threading.Lock()

    # -- locating ---------------------------------------------------------------------
    def locate(self, split: str, row: int) -> Location | None:
        rows = self.locations.get(split, [])
        return rows[row] if 0 <= row < len(rows) else None

    def _target(self, loc: Location) -> tuple[str, Path, int, int | None]:
        """(job key, cache file, start, end) of what must be on disk for this location."""
        group = loc.shard.groups[loc.group]
        name = loc.shard.path.replace("/", "--")
        if group.shot_bytes > group_limit():
            return name, self.dir / name, 0, None
        key = f"{name}.rg{loc.group}"
        return key, self.dir / f"{key}.bin", group.shot_start, group.shot_end

    # -- state --------------------------------------------------------------------------
    def ready(self, split: str, row: int) -> bool:
        """True when the screenshots can be read without a network request."""
        loc = self.locate(split, row)
        if loc is None or self.files is None or loc.shard.groups[loc.group].shot_bytes == 0:
            return True
        return self._target(loc)[1].exists()

    def job(self, split: str, row: int) -> FetchJob | None:
        loc = self.locate(split, row)
        if loc is None or self.files is None:
            return None
        with self._jobs_lock:
            return self._jobs.get(self._target(loc)[0])

    def start(self, split: str, row: int) -> FetchJob | None:
        """Start (or join) the fetch of a row's screenshots in a background thread.

        A finished job with an error is restarted: that is the Retry.
        """
        loc = self.locate(split, row)
        if loc is None or self.files is None or self.ready(split, row):
            return None
        key, dest, start, end = self._target(loc)
        with self._jobs_lock:
            job = self._jobs.get(key)
            if job is not None and not (job.finished and (job.error or not dest.exists())):
                return job
            what = (
                f"row group {loc.group + 1} of {loc.shard.path}"
                if end is not None
                else f"the whole shard {loc.shard.path} (its single row group is too large "
                "to fetch per trajectory)"
            )
            job = FetchJob(key, what, total_bytes=(end or loc.shard.size) - start)
            self._jobs[key] = job
        threading.Thread(target=self._run, args=(job, loc, dest, start, end), daemon=True).start()
        return job

    def _run(self, job: FetchJob, loc: Location, dest: Path, start: int, end: int | None) -> None:
        try:
            assert self.files is not None
            self.files.download(loc.shard.path, dest, start, end, job.report)
            self._evict(keep=dest)
        except HubError as exc:
            job.error = f"{exc.plain} ({exc})"
        except Exception as exc:  # a worker must never die silently: the page shows this
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            job.finished = True

    def wait(self, split: str, row: int, timeout: float = 600.0) -> FetchJob | None:
        """Fetch synchronously (report, tests, the first screenshot without the UI)."""
        job = self.start(split, row)
        deadline = time.monotonic() + timeout
        while job is not None and not job.finished and time.monotonic() < deadline:
            time.sleep(0.02)
        return job

    def _evict(self, keep: Path) -> None:
        """Delete the oldest cache files until the cache is under its byte cap."""
        files = sorted(
            (p for p in self.dir.parent.rglob("*") if p.is_file() and not p.name.startswith(".")),
            key=lambda p: p.stat().st_mtime,
        )
        total = sum(p.stat().st_size for p in files)
        for path in files:
            if total <= self.cap:
                break
            if path != keep:
                total -= path.stat().st_size
                path.unlink(missing_ok=True)

    # -- reading --------------------------------------------------------------------------
    def pngs(self, split: str, row: int, fetch: bool = True) -> list[bytes | None] | None:
        """A row's screenshots (None = could not be fetched). Fetches if needed and allowed.

        A job that failed is not retried here (the viewer's Retry button does that), so a
        page with many thumbnails does not hammer a failing Hub.
        """
        loc = self.locate(split, row)
        if loc is None:
            return None
        with self._memory_lock:
            if (split, row) in self._memory:
                self._memory.move_to_end((split, row))
                return self._memory[(split, row)]
        group = loc.shard.groups[loc.group]
        if group.shot_bytes == 0:
            images: list[bytes | None] = []
        elif self.files is None:
            images = read_screenshots(loc.shard.path, loc.group, loc.row_in_group)
        else:
            _key, dest, start, end = self._target(loc)
            if not dest.exists():
                job = self.job(split, row)
                if not fetch or (job is not None and job.finished and job.error):
                    return None
                job = self.wait(split, row)
                if job is not None and job.error:
                    return None
            if end is None:
                images = read_screenshots(dest, loc.group, loc.row_in_group)
            else:
                sparse = loc.shard.sparse()
                sparse.add(start, dest, end - start)
                images = read_screenshots(sparse, loc.group, loc.row_in_group)
            os.utime(dest)  # recently used: evicted last
        with self._memory_lock:
            self._memory[(split, row)] = images
            while sum(len(b or b"") for v in self._memory.values() for b in v) > MEMORY_CAP:
                if len(self._memory) == 1:
                    break
                self._memory.popitem(last=False)
        return images
