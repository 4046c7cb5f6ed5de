"""Screenshots on demand: a trajectory's PNGs, fetched by the page, cached one file each.

Why: the PNGs are ~99% of the data and a trajectory is opened one at a time. So an open
fetches only that trajectory's bytes and the cache keeps exactly what is shown: one entry
file per trajectory (`<shard>.g<group>.r<row>.shots`) plus its filmstrip thumbnails
(`.thumbs`, made in the fetch worker), under `<cache>/shots/<sha or local key>/`.

The fetch path, tried in order and logged (`FetchJob.path`, shown under the viewer's
technical detail):
1. **page index** (`lib.data.parquet.shot_pages.PageReader` over `lib.data.parquet.page_index`): the
   row's data pages from the offset index, one range request (plus the chunk's dictionary
   page, cached per group, in the `dict` layout). 6-12 MB per trajectory on the real data.
2. **row group** (no page index, e.g. the `v4.0` layout, and the group's screenshot chunk
   under `group_limit()`): the chunk is downloaded once and every row of it is written
   as its own entry (the bytes were paid for).
3. **whole shard** (a group above the limit: the old one-group-per-shard files, 414-626 MB
   on the real data): downloaded once, every row written as an entry, the shard deleted.
A local folder reads the same page range in place, or (no page index) the row group in
place: nothing is copied but the entry. Thumbnails are made by the worker right after
the job is marked done (the screenshot does not wait for them), or on first demand.

Healing (the disk side is `lib.data.shots.disk.ShotDisk`): an entry is checked (magic,
lengths, file size) before it is trusted; a bad one
is deleted and fetched again. A write that fails (full or read-only disk) is logged and
skipped, and a download that cannot be written says the local disk failed, not the Hub.
Eviction (byte cap `CUAVB_SHOT_CACHE_MB`, default 2048) makes room before a download
from its known size, counts in-flight temp files, deletes only regular files inside our
own screenshot folders (named by a 40-hex sha or a local key), never a file being read,
and tolerates files another thread or process just deleted. Temp files of dead processes
are removed at start.

Concurrency: one fetch per trajectory at a time (job registry), one download per row
group or shard (unit locks), so two sessions opening the same trajectory share one fetch.
Progress and errors live in a `FetchJob` the Streamlit script thread polls. `prefetch`
fetches the next/previous trajectory in one background thread, one at a time, page path
only (bounded by the page range), and drops what was asked before when asked again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from lib.data.parquet import PageReader, Shard, row_from_group, rows_of_group
from lib.data.parquet import page_index as pix
from lib.data.remote import ByteSource, HubError, LocalDiskError, RevisionGone
from lib.data.shots.disk import ShotDisk, encode_entry
from lib.data.shots.prefetch import MAX_QUEUED, Prefetcher
from lib.data.shots.protocol import FetchJob

log = logging.getLogger(__name__)

GROUP_LIMIT_ENV = "CUAVB_GROUP_LIMIT_MB"  # tests lower it to exercise the shard fallback
MEMORY_CAP = 64 * 1024 * 1024  # decoded PNG lists kept in RAM (bytes)
THUMB_WIDTH = 200
THUMBS_IN_MEMORY = 8  # trajectories whose thumbnails (~0.5 MB each) are kept in RAM


def group_limit() -> int:
    """Bytes above which a row group is not fetched alone (default 160 MB, see above)."""
    return int(float(os.environ.get(GROUP_LIMIT_ENV, "160")) * 1024 * 1024)


# -- entries ------------------------------------------------------------------------------


@dataclass
class Location:
    """Where a row's screenshots are: shard, row group, row inside the group."""

    shard: Shard
    group: int
    row_in_group: int


class ShotStore:
    """Screenshot bytes of one source: locates rows, fetches and caches them per trajectory."""

    def __init__(self, locations: dict[str, list[Location]], source: ByteSource, key: str):
        self.disk = ShotDisk(key)
        self.dir = self.disk.dir
        self.locations = locations
        self.source = source
        self._jobs: dict[str, FetchJob] = {}
        self._jobs_lock = threading.Lock()
        self._units: dict[str, threading.Lock] = {}
        self._memory: OrderedDict[tuple[str, int], list[bytes | None]] = OrderedDict()
        self._memory_lock = threading.Lock()
        self._thumbs: OrderedDict[str, list[bytes | None]] = OrderedDict()  # last few, by entry
        self.pages = PageReader(source, self.disk)
        self._paths: OrderedDict[tuple[str, int], str] = OrderedDict()
        self.prefetcher = Prefetcher(self._prefetch_one, "screenshot prefetch")
        self.gone = ""
        """Set (the plain reason) once a fetch found the commit gone from the Hub: every
        later fetch at this sha would fail too (`ui.fetch` re-resolves the branch)."""
        self.disk.clean_temp_files()

    # -- locating ---------------------------------------------------------------------
    def locate(self, split: str, row: int) -> Location | None:
        rows = self.locations.get(split, [])
        return rows[row] if 0 <= row < len(rows) else None

    def _name(self, loc: Location) -> str:
        return f"{loc.shard.path.replace('/', '--')}.g{loc.group}.r{loc.row_in_group}"

    def entry(self, loc: Location, kind: str = "shots") -> Path:
        return self.dir / f"{self._name(loc)}.{kind}"

    @staticmethod
    def _empty(loc: Location) -> bool:
        return loc.shard.groups[loc.group].shot_bytes == 0

    # -- state --------------------------------------------------------------------------
    def ready(self, split: str, row: int) -> bool:
        """True when the screenshots can be read without a network request."""
        loc = self.locate(split, row)
        if loc is None or self._empty(loc):
            return True
        with self._memory_lock:
            if (split, row) in self._memory:
                return True
        return self.entry(loc).is_file()

    def job(self, split: str, row: int) -> FetchJob | None:
        loc = self.locate(split, row)
        if loc is None:
            return None
        with self._jobs_lock:
            return self._jobs.get(self._name(loc))

    def fetch_path(self, split: str, row: int) -> str:
        """How this trajectory's screenshots were last obtained (for the technical detail)."""
        return self._paths.get((split, row), "")

    def _note_path(self, split: str, row: int, text: str) -> None:
        self._paths[(split, row)] = text
        while len(self._paths) > 512:
            self._paths.popitem(last=False)

    def start(self, split: str, row: int) -> FetchJob | None:
        """Start (or join) the fetch of a row's screenshots in a background thread.

        A finished job with an error is restarted: that is the Retry.
        """
        loc = self.locate(split, row)
        if loc is None or self.ready(split, row):
            return None
        key = self._name(loc)
        with self._jobs_lock:
            job = self._jobs.get(key)
            if job is not None and not (job.finished and (job.error or not self.ready(split, row))):
                return job
            job = FetchJob(
                key, f"row {loc.row_in_group + 1} of group {loc.group + 1} of {loc.shard.path}"
            )
            self._jobs[key] = job
        threading.Thread(target=self._run, args=(job, split, row, loc), daemon=True).start()
        return job

    def _run(self, job: FetchJob, split: str, row: int, loc: Location) -> None:
        try:
            self._fetch(job, loc, fallback=True)
            self._note_path(split, row, job.path)
        except LocalDiskError as exc:
            job.error = f"the local screenshot cache failed, not the Hub: {exc}"
            log.warning("screenshot fetch of %s: %s", job.what, job.error)  # the paths whole
        except HubError as exc:
            job.error = f"{exc.plain} ({exc})"
            if isinstance(exc, RevisionGone):
                job.gone = True
                self.gone = exc.plain
        except Exception as exc:  # a worker must never die silently: the page shows this
            log.exception("screenshot fetch failed")
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            job.finished = True
        if not job.error:
            self._ensure_thumbs(loc)  # after the job: the screenshot need not wait for them

    def _ensure_thumbs(self, loc: Location) -> None:
        """Make and cache a trajectory's thumbnails if they are not on disk yet."""
        self._loc_thumbs(loc, None)

    def _loc_thumbs(
        self, loc: Location, images: list[bytes | None] | None
    ) -> list[bytes | None] | None:
        """A location's thumbnails: from memory, else the disk, else made (from `images`, or
        the cached entry) and written. Made once: the fetch worker and a page that asks
        before the worker is done share one lock per entry, so the second waits for the
        first's thumbnails instead of decoding every PNG again (issue 39: they were made
        twice)."""
        path = self.entry(loc, "thumbs")
        with self._unit(path.name):
            with self._memory_lock:
                if path.name in self._thumbs:
                    self._thumbs.move_to_end(path.name)
                    return self._thumbs[path.name]
            cached = self.disk.read_entry(path)
            if cached is not None:
                thumbs = cached[0]
            else:
                if images is None:
                    entry = self.disk.read_entry(self.entry(loc))
                    if entry is None:
                        return None
                    images = entry[0]
                thumbs = make_thumbs(images)
                self.disk.write(path, encode_entry(thumbs, len(images)))
            with self._memory_lock:
                self._thumbs[path.name] = thumbs
                while len(self._thumbs) > THUMBS_IN_MEMORY:
                    self._thumbs.popitem(last=False)
            return thumbs

    def wait(self, split: str, row: int, timeout: float = 600.0) -> FetchJob | None:
        """Fetch synchronously (report, tests, the first screenshot without the UI)."""
        job = self.start(split, row)
        return None if job is None else job.wait_finished(timeout)

    # -- prefetch -----------------------------------------------------------------------
    def prefetch(self, split: str, rows: list[int]) -> None:
        """Fetch these rows (at most 2: the next and the previous) in the background, one at
        a time, by the page path only. A new call replaces what was queued before."""
        self.prefetcher.replace(
            (split, r)
            for r in rows[:MAX_QUEUED]
            if self.locate(split, r) and not self.ready(split, r)
        )

    def _prefetch_one(self, key: tuple[str, int]) -> None:
        split, row = key
        loc = self.locate(split, row)
        if loc is None or self.ready(split, row):
            return
        job = FetchJob(self._name(loc), "prefetch")
        try:
            self._fetch(job, loc, fallback=False)
        except RevisionGone as exc:  # every later fetch at this sha fails too
            self.gone = exc.plain
            raise
        self._note_path(split, row, f"prefetched: {job.path}")
        # no thumbnails here: they are made when the trajectory is opened (most prefetched
        # neighbours are never opened; decoding their PNGs was 2/3 of an open's CPU)

    # -- fetching -----------------------------------------------------------------------
    def _unit(self, key: str) -> threading.Lock:
        with self._jobs_lock:
            return self._units.setdefault(key, threading.Lock())

    def _fetch(self, job: FetchJob, loc: Location, fallback: bool) -> None:
        entry = self.entry(loc)
        with self._unit(entry.name):
            if self.disk.read_entry(entry) is not None:
                job.path = "disk cache"
                return
            try:
                self._fetch_pages(job, loc)
                return
            except pix.PageIndexError as exc:
                if not fallback:
                    raise
                reason = str(exc)
        group = loc.shard.groups[loc.group]
        local = self.source.local_file(loc.shard.path)
        if local is not None:
            with self._unit(entry.name):
                self._read_group_in_place(job, loc, local, reason)
            return
        if group.shot_bytes <= group_limit():
            unit, start, end = (
                f"{self._name(loc).rsplit('.r', 1)[0]}",
                group.shot_start,
                group.shot_end,
            )
            what = f"row group {loc.group + 1} (fallback: {reason})"
        else:
            unit, start, end = loc.shard.path.replace("/", "--"), 0, None
            what = f"whole shard (fallback: {reason}; row group above {group_limit() >> 20} MB)"
        with self._unit(unit):
            if self.disk.read_entry(entry) is not None:  # another worker exploded it meanwhile
                job.path = f"disk cache (after {what})"
                return
            self._download_and_explode(job, loc, unit, start, end, what)

    def _fetch_pages(self, job: FetchJob, loc: Location) -> None:
        shard = loc.shard
        t0 = time.perf_counter()
        limit = max(group_limit(), 64 << 20)
        got = self.pages.read_row(shard, loc.group, loc.row_in_group, job.report, limit)
        for i, (images, stored) in enumerate(got.rows):  # a page holding several rows: all kept
            other = Location(shard, loc.group, got.first_row + i)
            if other.row_in_group == loc.row_in_group or not self.entry(other).is_file():
                how = f"page index: read with row {loc.row_in_group + 1} of its group (same page)"
                self._store(
                    other, images, stored, "" if other.row_in_group == loc.row_in_group else how
                )
        extra = (
            f" + dictionary page {got.dictionary_bytes / 1e6:.2f} MB"
            if got.dictionary_bytes
            else ""
        )
        job.path = (
            f"page index: 1 range of {got.data_bytes / 1e6:.2f} MB{extra} "
            f"({time.perf_counter() - t0:.2f} s)"
        )
        log.info("%s: %s", self._name(loc), job.path)

    def _read_group_in_place(self, job: FetchJob, loc: Location, file: Path, reason: str) -> None:
        """A local shard without a usable page index: decode the row from the file itself."""
        images, stored = row_from_group(file, loc.group, loc.row_in_group)
        self._store(loc, images, stored)
        job.path = f"row group {loc.group + 1} read in place (local file; {reason})"

    def _download_and_explode(
        self, job: FetchJob, loc: Location, unit: str, start: int, end: int | None, what: str
    ) -> None:
        shard = loc.shard
        size = (end - start) if end is not None else shard.size
        job.report(0, size)
        if not self.disk.claim(size):  # the download is on our disk until exploded
            raise LocalDiskError(
                f"the screenshot cache (cap {self.disk.cap / 1e6:.0f} MB) cannot hold the "
                f"{size / 1e6:.0f} MB this trajectory's screenshots come in"
            )
        tmp = self.dir / f"{unit}.download"
        t0 = time.perf_counter()
        claimed = size
        try:
            self.source.download(shard.path, tmp, start, end, job.report, shard.size)
            self.disk.release(claimed)  # now on disk, where `_make_room` counts it
            claimed = 0
            if end is not None:
                file: object = shard.sparse()
                file.add(start, tmp, size)  # type: ignore[attr-defined]
                groups = [loc.group]
            else:
                file = tmp
                groups = list(range(len(shard.groups)))
            self.disk.reading.add(tmp)
            wanted: list[bytes | None] | None = None
            for g in groups:
                for r, (images, stored) in enumerate(rows_of_group(file, g)):
                    self._store(Location(shard, g, r), images, stored, what)
                    if (g, r) == (loc.group, loc.row_in_group):
                        wanted = images
            if wanted is not None:  # last in memory: shown even if the disk took nothing
                self._remember_loc(loc, wanted, what)
        finally:
            self.disk.reading.discard(tmp)
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            self.disk.release(claimed)
        job.path = f"{what}: {size / 1e6:.1f} MB in {time.perf_counter() - t0:.2f} s"
        log.info("%s: %s", self._name(loc), job.path)

    # -- cache files ----------------------------------------------------------------------

    def _store(self, loc: Location, images: list[bytes | None], stored: int, how: str = "") -> None:
        """Write a trajectory's entry (room made by `_write`); keep it in memory too
        (thumbnails come later)."""
        self.disk.write(self.entry(loc), encode_entry(images, stored))
        self._remember_loc(loc, images, how)

    def _remember_loc(self, loc: Location, images: list[bytes | None], how: str = "") -> None:
        for split, rows in self.locations.items():
            for row, other in enumerate(rows):
                if other is loc or (
                    other.shard.path == loc.shard.path
                    and other.group == loc.group
                    and other.row_in_group == loc.row_in_group
                ):
                    self._remember((split, row), images)
                    if how:
                        self._note_path(split, row, how)
                    return

    def _remember(self, key: tuple[str, int], images: list[bytes | None]) -> None:
        with self._memory_lock:
            self._memory[key] = images
            self._memory.move_to_end(key)
            while sum(len(b or b"") for v in self._memory.values() for b in v) > MEMORY_CAP:
                if len(self._memory) == 1:
                    break
                self._memory.popitem(last=False)

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
        if self._empty(loc):
            return []
        cached = self.disk.read_entry(self.entry(loc))
        if cached is None:
            job = self.job(split, row)
            if not fetch or (job is not None and job.finished and job.error):
                return None
            job = self.wait(split, row)
            if job is not None and job.error:
                return None
            with self._memory_lock:
                if (split, row) in self._memory:
                    return self._memory[(split, row)]
            cached = self.disk.read_entry(self.entry(loc))
            if cached is None:
                return None
        else:
            self._paths.setdefault((split, row), "disk cache")
        images = cached[0]
        self._remember((split, row), images)
        return images

    def thumbs(self, split: str, row: int) -> list[bytes | None] | None:
        """A row's filmstrip thumbnails (made in the fetch worker); None when not fetched."""
        loc = self.locate(split, row)
        if loc is None:
            return None
        if self._empty(loc):
            return []
        path = self.entry(loc, "thumbs")
        with self._memory_lock:
            if path.name in self._thumbs:
                self._thumbs.move_to_end(path.name)
                return self._thumbs[path.name]
        if not path.is_file() and not self.ready(split, row):
            return None  # not fetched
        images = None if path.is_file() else self.pngs(split, row, fetch=False)
        # made here when the worker has not made them yet (a prefetched trajectory, an old
        # or damaged thumbs entry), or read once from disk (then kept in memory)
        return self._loc_thumbs(loc, images)


def make_thumbs(images: list[bytes | None]) -> list[bytes | None]:
    """Filmstrip thumbnails (THUMB_WIDTH px wide PNGs); None for a missing or corrupt image.

    Equal screenshots (a step that changed nothing on screen) are decoded once."""
    from lib import images as pictures  # Pillow: imported when thumbnails are made

    out: list[bytes | None] = []
    made: dict[bytes, bytes | None] = {}
    for png in images:
        if not png:
            out.append(None)
            continue
        if png not in made:
            try:
                made[png] = pictures.thumbnail(png, THUMB_WIDTH)
            except Exception:  # corrupt or hostile image: the viewer draws its placeholder
                made[png] = None
        out.append(made[png])
    return out
