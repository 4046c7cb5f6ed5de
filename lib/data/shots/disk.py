"""The screenshot cache on disk: one checked entry file per trajectory, within a byte cap.

Why its own class: the fetch (`lib.data.shots.store.ShotStore`: where the bytes come from,
jobs, prefetch) and the disk (what may be written, kept, trusted and deleted) change for
different reasons. Entries are `<magic><stored><n><n lengths><bytes>` files checked
before they are trusted (a bad one is deleted: a miss); every write and download first
claims its bytes under the cap (`claim`), so the cache never exceeds it on disk, temp
files included; eviction deletes only regular files inside our own folders (named by a
40-hex sha or a local key), never a file being read; temp files of dead processes are
removed at start.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
import struct
import threading
import time
from pathlib import Path

from lib.data.parquet import page_index as pix
from lib.data.remote import cache_root, valid_sha

log = logging.getLogger(__name__)

CAP_ENV = "CUAVB_SHOT_CACHE_MB"
ENTRY_MAGIC = b"CUAVBSH1"
MAX_ENTRY_ITEMS = pix.MAX_SHOTS
_LOCAL_KEY = re.compile(r"^local-[0-9a-f]{16}$")
_ENTRY_SUFFIXES = (".shots", ".thumbs", ".dict", ".bin", ".parquet")
_EVICT_LOCK = threading.Lock()
_RESERVED = [0]
"""Bytes promised to writes and downloads in flight in this process (under _EVICT_LOCK):
counted with what is on disk, so two threads that each made room cannot both fill it."""


def valid_key(key: str) -> bool:
    """A cache folder name we made: a commit sha or `local-<16 hex>`."""
    return valid_sha(key) or bool(_LOCAL_KEY.fullmatch(key))


def encode_entry(items: list[bytes | None], stored: int) -> bytes:
    """magic, stored count, n, n lengths (-1 = no image), then the bytes."""
    head = ENTRY_MAGIC + struct.pack("<II", stored, len(items))
    lengths = struct.pack(f"<{len(items)}q", *[-1 if b is None else len(b) for b in items])
    return b"".join([head, lengths, *[b for b in items if b]])


def decode_entry(data: bytes) -> tuple[list[bytes | None], int]:
    """The inverse of `encode_entry`; ValueError when the file is damaged or truncated."""
    if len(data) < 16 or data[:8] != ENTRY_MAGIC:
        raise ValueError("not a screenshot cache entry")
    stored, n = struct.unpack("<II", data[8:16])
    if n > MAX_ENTRY_ITEMS or 16 + 8 * n > len(data):
        raise ValueError("damaged entry header")
    lengths = struct.unpack(f"<{n}q", data[16 : 16 + 8 * n])
    pos = 16 + 8 * n
    if pos + sum(max(x, 0) for x in lengths) != len(data):
        raise ValueError(f"entry size {len(data)} does not match its header (truncated?)")
    out: list[bytes | None] = []
    for length in lengths:
        if length < 0:
            out.append(None)
        else:
            out.append(data[pos : pos + length])
            pos += length
    return out, stored


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class ShotDisk:
    """The cache folder of one source (`<cache>/shots/<key>/`) and the shared cap."""

    def __init__(self, key: str) -> None:
        if not valid_key(key):
            raise ValueError(f"not a cache key: {key[:80]!r}")
        self.root = cache_root() / "shots"
        self.dir = self.root / key
        self.cap = int(float(os.environ.get(CAP_ENV, "2048")) * 1024 * 1024)
        self.reading: set[Path] = set()
        """Entries being read now: never evicted."""

    def write(self, path: Path, data: bytes) -> bool:
        """Atomic write within the cap (`claim`); a failing disk or a full cap is logged and
        skipped (the bytes are still shown, from memory)."""
        if not self.claim(len(data)):
            log.info("screenshot cache at its cap: %s (%d bytes) not written", path.name, len(data))
            return False
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
            os.replace(tmp, path)
            return True
        except OSError as exc:
            log.warning("screenshot cache write skipped (%s): %s", path.name, exc)
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            return False
        finally:
            self.release(len(data))

    def read_entry(self, path: Path) -> tuple[list[bytes | None], int] | None:
        """A checked entry, or None (missing, or damaged: then deleted, a miss)."""
        self.reading.add(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("screenshot cache entry unreadable (%s): %s", path.name, exc)
            return None
        finally:
            self.reading.discard(path)
        try:
            result = decode_entry(data)
        except ValueError as exc:
            log.warning("damaged screenshot cache entry %s (%s): fetched again", path.name, exc)
            self.unlink_ours(path)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        return result

    def unlink_ours(self, path: Path) -> None:
        """Delete a regular file inside our own screenshot folders; anything else is left."""
        try:
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and self.ours(path):
                path.unlink()
        except OSError:
            pass

    def ours(self, path: Path) -> bool:
        parent = path.parent
        return parent.parent == self.root and valid_key(parent.name)

    def folders(self) -> list[Path]:
        try:
            return [
                p
                for p in self.root.iterdir()
                if valid_key(p.name) and stat.S_ISDIR(os.lstat(p).st_mode)
            ]
        except OSError:
            return []

    def clean_temp_files(self) -> int:
        """Remove temp files of dead processes (and our own older than a day) from our
        screenshot folders; returns how many."""
        removed = 0
        for folder in self.folders():
            try:
                names = list(os.scandir(folder))
            except OSError:
                continue
            for item in names:
                match = re.fullmatch(r"\..+\.(\d+)\.\d+\.tmp", item.name)
                stale_download = item.name.endswith(".download")
                if not match and not stale_download:
                    continue
                try:
                    info = item.stat(follow_symlinks=False)
                    if not stat.S_ISREG(info.st_mode):
                        continue
                    dead = match is not None and not _pid_alive(int(match[1]))
                    old = time.time() - info.st_mtime > 86400
                    if dead or old or (stale_download and time.time() - info.st_mtime > 3600):
                        os.unlink(item.path)
                        removed += 1
                except OSError:
                    continue
        return removed

    def evict(self, incoming: int = 0) -> bool:
        """Delete the oldest entries until the cache, the bytes reserved by writes in flight
        and `incoming` bytes fit the cap; True when they do.

        Temp files count (they are disk in use) but are never deleted here; files being
        read are skipped; a file gone meanwhile (another thread or process) is fine.
        """
        with _EVICT_LOCK:
            return self.make_room(incoming + _RESERVED[0])

    def claim(self, nbytes: int) -> bool:
        """Reserve `nbytes` of the cap for a write or download (room made first); False when
        the cap cannot hold them: the caller then writes nothing (the cache never exceeds its
        cap on disk, temp files included). A claim is given back with `release`."""
        with _EVICT_LOCK:
            if not self.make_room(nbytes + _RESERVED[0]):
                return False
            _RESERVED[0] += nbytes
            return True

    @staticmethod
    def release(nbytes: int) -> None:
        with _EVICT_LOCK:
            _RESERVED[0] = max(_RESERVED[0] - nbytes, 0)

    def make_room(self, incoming: int) -> bool:
        """`evict`'s work, with _EVICT_LOCK held."""
        files: list[tuple[float, int, Path]] = []
        total = 0
        for folder in self.folders():
            try:
                items = list(os.scandir(folder))
            except OSError:
                continue
            for item in items:
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(info.st_mode):
                    continue
                total += info.st_size
                if item.name.startswith(".") or not item.name.endswith(_ENTRY_SUFFIXES):
                    continue
                files.append((info.st_mtime, info.st_size, Path(item.path)))
        files.sort()
        for _mtime, size, path in files:
            if total + incoming <= self.cap:
                break
            if path in self.reading:
                continue
            try:
                path.unlink()
                total -= size
            except FileNotFoundError:
                total -= size
            except OSError as exc:
                log.warning("could not evict %s: %s", path.name, exc)
        return total + incoming <= self.cap
