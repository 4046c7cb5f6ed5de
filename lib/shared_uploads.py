"""Shared uploads: a session's validated verifier rows stored on the server under their
content hash, so a link (`?mine=<hash>`) shows them to whoever opens it.

Uploads otherwise live only in the browser session that made them. Sharing writes the
rows (already validated by `lib.predictions`) as one parquet file named by the SHA-256
of its bytes in `<CUAVB_CACHE_DIR>/shared-uploads/`. Bounded in every dimension a
visitor controls: bytes per file (`MAX_BYTES`), files (`MAX_FILES`), total bytes
(`MAX_TOTAL_BYTES`) and age (`MAX_AGE_S`); the least recently used go first (a load
touches its file). Nothing lists the files: a hash is only known to whoever got the link.

A name is a path only after it is checked to be 64 hex digits. A file that cannot be
read, whose bytes do not hash to its name, or whose rows are not uploaded-verifier rows
is a miss (and removed): the cache heals itself. The store lasts as long as the app's
disk: a Community Cloud restart clears it.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import time
from pathlib import Path

import pandas as pd

from lib.hub import cache_root
from lib.verdicts import COLUMNS, UPLOAD_PREFIX

HASH_RE = re.compile(r"[0-9a-f]{64}")
MAX_BYTES = 8 * 2**20
"""One shared upload's parquet at most (50,000 rows of verdicts take about 1 MB)."""
MAX_ROWS = 200_000
MAX_FILES = 200
MAX_TOTAL_BYTES = 256 * 2**20
MAX_AGE_S = 30 * 24 * 3600
"""A shared upload not opened for 30 days is dropped."""
SUFFIX = ".parquet"


class ShareError(Exception):
    """The rows cannot be shared (too large, not uploaded-verifier rows)."""


def store_dir() -> Path:
    return cache_root() / "shared-uploads"


def valid_hash(text: object) -> bool:
    """True for exactly 64 lowercase hex digits (the only names ever turned into a path)."""
    return isinstance(text, str) and HASH_RE.fullmatch(text) is not None


def _check_rows(rows: pd.DataFrame) -> None:
    if list(rows.columns) != COLUMNS:
        raise ShareError("not a verdict table")
    if not 0 < len(rows) <= MAX_ROWS:
        raise ShareError(f"{len(rows):,} rows: between 1 and {MAX_ROWS:,} can be shared")
    raters = rows["rater"].astype(str)
    if not raters.str.startswith(UPLOAD_PREFIX).all() or not (rows["kind"] == "verifier").all():
        raise ShareError("only uploaded verifiers' rows can be shared")


def _to_bytes(rows: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    rows.reset_index(drop=True).to_parquet(buffer, index=False)
    return buffer.getvalue()


def save(rows: pd.DataFrame, root: Path | None = None) -> str:
    """Store the uploaded-verifier rows; return their hash (the same rows, the same hash).

    Raises ShareError when they are not uploaded-verifier rows or too large. Evicts
    expired files, then the least recently used, to stay within the bounds.
    """
    _check_rows(rows)
    data = _to_bytes(rows)
    if len(data) > MAX_BYTES:
        raise ShareError(f"{len(data) / 2**20:.1f} MB: at most {MAX_BYTES // 2**20} MB is shared")
    digest = hashlib.sha256(data).hexdigest()
    folder = root or store_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{digest}{SUFFIX}"
    if not path.exists():
        tmp = folder / f".{digest}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)  # atomic: a reader sees the whole file or none
    os.utime(path)
    evict(folder, keep=path)
    return digest


def load(digest: str, root: Path | None = None) -> pd.DataFrame | None:
    """The stored rows of ``digest``, or None (unknown, expired or damaged: a miss)."""
    if not valid_hash(digest):
        return None
    path = (root or store_dir()) / f"{digest}{SUFFIX}"
    try:
        info = path.stat()
        if info.st_size > MAX_BYTES or time.time() - info.st_mtime > MAX_AGE_S:
            raise ShareError("too large or expired")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise ShareError("damaged")
        rows = pd.read_parquet(io.BytesIO(data))
        _check_rows(rows)
    except FileNotFoundError:
        return None
    except Exception:  # damaged, truncated, tampered with: a miss, and gone
        path.unlink(missing_ok=True)
        return None
    os.utime(path)  # recently used
    return rows


def evict(folder: Path, keep: Path | None = None, now: float | None = None) -> None:
    """Drop expired files, then the least recently used until within the count and bytes."""
    now = time.time() if now is None else now
    files = []
    for path in folder.glob(f"*{SUFFIX}"):
        try:
            info = path.stat()
        except OSError:
            continue
        if now - info.st_mtime > MAX_AGE_S and path != keep:
            path.unlink(missing_ok=True)
            continue
        files.append((info.st_mtime, info.st_size, path))
    files.sort(key=lambda f: f[0])
    total = sum(size for _, size, _ in files)
    for _, size, path in files:
        if len(files) <= MAX_FILES and total <= MAX_TOTAL_BYTES:
            break
        if path == keep:
            continue
        path.unlink(missing_ok=True)
        files = [f for f in files if f[2] != path]
        total -= size
