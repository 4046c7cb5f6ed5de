"""Shared uploads: a session's validated verifier rows stored on the server under their
content hash, so a link (`?mine=<hash>`) shows them to whoever opens it.

Uploads otherwise live only in the browser session that made them. Sharing writes the
rows (already validated by `lib.uploads.predictions`) as one parquet file named by the SHA-256
of its bytes in `<CUAVB_CACHE_DIR>/shared-uploads/`. Nothing lists the files: a hash is
only known to whoever got the link. A name is a path only after it is checked to be 64
hex digits.

**A link must survive other visitors** (issue 31: 250 one-row shares by one stranger
erased 50 colleagues' links). Who shares is a *visitor*: the caller's id for it
(`ui.state.visitor_id`: one per browser, from the browser's XSRF cookie, else one per
browser session). The rules, in the order `share` applies them:

- a rate limit: a visitor shares at most `VISITOR_RATE` new links per `VISITOR_WINDOW_S`,
  the whole server at most `SERVER_RATE` per `SERVER_WINDOW_S` (a refused share is a
  `ShareError` that says so, decided before the rows are serialised; re-sharing rows
  already stored is not counted);
- a quota per visitor: `VISITOR_FILES` links and `VISITOR_BYTES`; a visitor over it loses
  *its own* oldest links first, and is told it reached its quota (`Shared.notice`);
- every file is charged at least `MIN_CHARGE` bytes, so a one-row share is not free;
- when the store is over `MAX_FILES` or `MAX_TOTAL_BYTES`, the sharer's own links go
  first, then the links of whoever holds the most, least recently opened first, and
  only links not opened for `PROTECT_S`: a link opened in the last 7 days is never
  evicted by another visitor's share; when nothing may go, the share is refused.

So one visitor (or one per tab) cannot erase another's link; the worst it can do is fill
the store and have new shares refused for a while. A link is dropped when it was not
opened for `MAX_AGE_S`, when its own visitor shares past its quota, or when the app's
disk is cleared (a restart on Streamlit Community Cloud clears it). The owners and the
rate history are kept in memory (a restart that keeps the disk forgets them: every
file then counts as its own visitor's, so it is evicted only as the oldest unprotected).

**A link is bounded like an upload** (issue 26): sharing refuses more verifiers than one
session may hold (`MAX_VERIFIERS`), and `load_capped` re-validates a stored file (size,
hash, declared row count and sizes before decoding, then every cell) and keeps at most
the verifiers a session may still take, saying how many it left out. A file that cannot
be read, whose bytes do not hash to its name, or whose rows are not uploaded-verifier rows
is a miss (and removed): the store heals itself.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import threading
import time
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from lib.data.remote import cache_root
from lib.table.verdicts import COLUMNS, UPLOAD_PREFIX
from lib.uploads.predictions.validate import MAX_VERIFIERS_PER_SESSION
from lib.vocab import SPLITS

HASH_RE = re.compile(r"[0-9a-f]{64}")
MAX_BYTES = 8 * 2**20
"""One shared upload's parquet at most (50,000 rows of verdicts take about 1 MB)."""
MAX_ROWS = 200_000
MAX_VERIFIERS = MAX_VERIFIERS_PER_SESSION
"""Verifiers in one shared upload at most: what one session may hold."""
MAX_DECODED_BYTES = 64 * 2**20
"""The declared uncompressed size of a stored file's columns at most (checked before
decoding; what our writer makes of `MAX_ROWS` rows is far smaller)."""
MAX_CELL_CHARS = 1_000
"""Characters of one stored text cell at most (the upload reader's own cell cap)."""
MAX_FILES = 1_000
MAX_TOTAL_BYTES = 256 * 2**20
MIN_CHARGE = 64 * 2**10
"""Bytes a file counts for at least in the quotas and the totals (a one-row share is
about 3 KB: uncharged, 256 MB would hold 80,000 of them)."""
MAX_AGE_S = 30 * 24 * 3600
"""A shared upload not opened for 30 days is dropped."""
PROTECT_S = 7 * 24 * 3600
"""A link opened (or shared) in the last 7 days is never evicted by another visitor."""
VISITOR_FILES = 10
VISITOR_BYTES = 32 * 2**20
VISITOR_RATE, VISITOR_WINDOW_S = 10, 600.0
SERVER_RATE, SERVER_WINDOW_S = 120, 3600.0
MAX_VISITORS = 10_000
"""Visitors whose share times are kept before the idle ones are forgotten (memory)."""
ANONYMOUS = "anonymous"
"""The visitor of a caller that names none (the report, the tests)."""
SUFFIX = ".parquet"
TEXT_COLUMNS = ["split", "task_id", "rater", "kind", "annotator", "stage", "dimension", "raw"]
DIMENSIONS = ("outcome", "process")


class ShareError(Exception):
    """The rows cannot be shared (too large, not uploaded-verifier rows, a limit reached)."""


@dataclass(frozen=True)
class Shared:
    """A stored share: its hash, and what the sharer must be told (its quota reached)."""

    digest: str
    notice: str = ""


@dataclass(frozen=True)
class Loaded:
    """A shared upload as loaded: at most the verifiers a session may still take."""

    rows: pd.DataFrame
    verifiers: int  # in the stored file
    left_out: int  # of them not loaded (over the per-session cap)


@dataclass
class _Ledger:
    """Who shared what, and when (one per store folder, in memory)."""

    owners: dict[str, str] = field(default_factory=dict)  # digest -> visitor
    recent: dict[str, deque[float]] = field(default_factory=dict)  # visitor -> share times
    server: deque[float] = field(default_factory=deque)


_LEDGERS: dict[str, _Ledger] = {}
_LOCK = threading.Lock()
"""Sharing is serialised: the quota and eviction decisions read the whole folder."""


def store_dir() -> Path:
    return cache_root() / "shared-uploads"


def valid_hash(text: object) -> bool:
    """True for exactly 64 lowercase hex digits (the only names ever turned into a path)."""
    return isinstance(text, str) and HASH_RE.fullmatch(text) is not None


def _check_rows(rows: pd.DataFrame, max_verifiers: int | None = MAX_VERIFIERS) -> None:
    """Uploaded-verifier rows within the caps (``max_verifiers=None``: any number, for a
    stored file that `load_capped` then cuts to the cap)."""
    if list(rows.columns) != COLUMNS:
        raise ShareError("not a verdict table")
    if not 0 < len(rows) <= MAX_ROWS:
        raise ShareError(f"{len(rows):,} rows: between 1 and {MAX_ROWS:,} can be shared")
    raters = rows["rater"].astype(str)
    if not raters.str.startswith(UPLOAD_PREFIX).all() or not (rows["kind"] == "verifier").all():
        raise ShareError("only uploaded verifiers' rows can be shared")
    n = raters.nunique()
    if max_verifiers is not None and n > max_verifiers:
        raise ShareError(
            f"{n:,} verifiers: a link holds at most {max_verifiers} (what one session may hold)"
        )


def _check_cells(rows: pd.DataFrame) -> None:
    """Every cell is what `lib.uploads.predictions` makes (a stored file is re-validated)."""
    if not rows["split"].isin(SPLITS).all() or not rows["dimension"].isin(DIMENSIONS).all():
        raise ShareError("unknown split or dimension")
    labels = pd.to_numeric(rows["label"], errors="coerce")
    if not (labels.isna() | labels.isin([0, 1])).all():
        raise ShareError("a label other than 0 or 1")
    for column in TEXT_COLUMNS:
        lengths = rows[column].astype("string").str.len()
        if (lengths.fillna(0) > MAX_CELL_CHARS).any():
            raise ShareError(f"a {column} cell over {MAX_CELL_CHARS:,} characters")


def _to_bytes(rows: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    rows.reset_index(drop=True).to_parquet(buffer, index=False)
    return buffer.getvalue()


def _ledger(folder: Path) -> _Ledger:
    return _LEDGERS.setdefault(str(folder.resolve()), _Ledger())


def _minutes(seconds: float) -> str:
    return f"{max(1, round(seconds / 60))} min"


def _rate_check(ledger: _Ledger, visitor: str, now: float) -> None:
    """Refuse a new share over the visitor's or the server's rate (nothing is stored)."""
    if len(ledger.recent) > MAX_VISITORS:  # forget visitors with no share in the window
        for who in [w for w, t in ledger.recent.items() if not t or now - t[-1] > VISITOR_WINDOW_S]:
            del ledger.recent[who]
    mine = ledger.recent.setdefault(visitor, deque())
    while mine and now - mine[0] > VISITOR_WINDOW_S:
        mine.popleft()
    while ledger.server and now - ledger.server[0] > SERVER_WINDOW_S:
        ledger.server.popleft()
    if len(mine) >= VISITOR_RATE:
        raise ShareError(
            f"you reached your quota of {VISITOR_RATE} new shared links per "
            f"{_minutes(VISITOR_WINDOW_S)}; try again in "
            f"{_minutes(VISITOR_WINDOW_S - (now - mine[0]))} (your links so far still open)"
        )
    if len(ledger.server) >= SERVER_RATE:
        raise ShareError(
            f"this server takes at most {SERVER_RATE} new shared links per "
            f"{_minutes(SERVER_WINDOW_S)} from all visitors together; try again in "
            f"{_minutes(SERVER_WINDOW_S - (now - ledger.server[0]))}"
        )


def charge(size: int) -> int:
    """The bytes a file of ``size`` bytes counts for in quotas and totals."""
    return max(int(size), MIN_CHARGE)


def save(
    rows: pd.DataFrame,
    root: Path | None = None,
    *,
    visitor: str = ANONYMOUS,
    now: float | None = None,
) -> str:
    """`share`, returning only the hash (the same rows, the same hash)."""
    return share(rows, visitor, root, now=now).digest


def share(
    rows: pd.DataFrame, visitor: str, root: Path | None = None, *, now: float | None = None
) -> Shared:
    """Store the uploaded-verifier rows of ``visitor``; return their hash and a notice.

    Raises ShareError when they are not uploaded-verifier rows, too large, over a rate
    limit, or when the store is full of other visitors' recently opened links. Applies
    the quotas and eviction of the module docstring.
    """
    folder = root or store_dir()
    now = time.time() if now is None else now
    with _LOCK:  # a refused share costs no serialisation (the flood is cheap to refuse)
        _rate_check(_ledger(folder), visitor, now)
    _check_rows(rows)
    data = _to_bytes(rows)
    if len(data) > MAX_BYTES:
        raise ShareError(f"{len(data) / 2**20:.1f} MB: at most {MAX_BYTES // 2**20} MB is shared")
    digest = hashlib.sha256(data).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{digest}{SUFFIX}"
    with _LOCK:
        ledger = _ledger(folder)
        if path.exists():  # the same rows again: nothing new is stored, nothing counted
            os.utime(path, (now, now))
            ledger.owners.setdefault(digest, visitor)
            return Shared(digest)
        _rate_check(ledger, visitor, now)  # again: another thread may have shared meanwhile
        tmp = folder / f".{digest}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)  # atomic: a reader sees the whole file or none
        os.utime(path, (now, now))
        ledger.owners[digest] = visitor
        try:
            dropped = _evict(folder, ledger, visitor, path, now)
        except ShareError:
            path.unlink(missing_ok=True)
            ledger.owners.pop(digest, None)
            raise
        ledger.recent.setdefault(visitor, deque()).append(now)
        ledger.server.append(now)
    notice = ""
    if dropped:
        notice = (
            f"You reached your quota of {VISITOR_FILES} shared links "
            f"({VISITOR_BYTES // 2**20} MB) on this server: your {dropped} oldest "
            f"link{'s' if dropped > 1 else ''} no longer open{'' if dropped > 1 else 's'}."
        )
    return Shared(digest, notice)


def _evict(folder: Path, ledger: _Ledger, visitor: str, keep: Path, now: float) -> int:
    """Drop expired files, then the visitor's own oldest over its quota, then (over the
    store's bounds) own first, then the largest holder's unprotected least recently
    opened. Returns how many of the visitor's own links went for its quota."""
    files: list[tuple[float, int, Path, str]] = []  # mtime, charged bytes, path, owner
    for path in folder.glob(f"*{SUFFIX}"):
        try:
            info = path.stat()
        except OSError:
            continue
        name = path.name.removesuffix(SUFFIX)
        if now - info.st_mtime > MAX_AGE_S and path != keep:
            path.unlink(missing_ok=True)
            ledger.owners.pop(name, None)
            continue
        owner = ledger.owners.get(name, f"?{name}")  # unknown: its own visitor
        files.append((info.st_mtime, charge(info.st_size), path, owner))
    files.sort(key=lambda f: f[0])

    def drop(item: tuple[float, int, Path, str]) -> None:
        item[2].unlink(missing_ok=True)
        ledger.owners.pop(item[2].name.removesuffix(SUFFIX), None)
        files.remove(item)

    own_dropped = 0
    while True:
        own = [f for f in files if f[3] == visitor]
        if len(own) <= VISITOR_FILES and sum(f[1] for f in own) <= VISITOR_BYTES:
            break
        oldest = next((f for f in own if f[2] != keep), None)
        if oldest is None:
            break
        drop(oldest)
        own_dropped += 1
    while len(files) > MAX_FILES or sum(f[1] for f in files) > MAX_TOTAL_BYTES:
        holdings: dict[str, int] = {}
        for f in files:
            holdings[f[3]] = holdings.get(f[3], 0) + 1
        candidates = [
            f for f in files if f[2] != keep and (f[3] == visitor or now - f[0] > PROTECT_S)
        ]
        if not candidates:
            if len(files) > 1:
                raise ShareError(
                    "the shared-link store is full of links opened in the last "
                    f"{PROTECT_S // 86400} days, which are kept for their owners; try "
                    "again later, or send the file itself"
                )
            break  # only the new file: kept whatever its size
        candidates.sort(key=lambda f: (f[3] != visitor, -holdings[f[3]], f[0]))
        drop(candidates[0])
    return own_dropped


def _read(digest: str, folder: Path) -> pd.DataFrame | None:
    """The stored rows, re-validated (see the module docstring), or None (a miss)."""
    path = folder / f"{digest}{SUFFIX}"
    try:
        info = path.stat()
        if info.st_size > MAX_BYTES or time.time() - info.st_mtime > MAX_AGE_S:
            raise ShareError("too large or expired")
        data = path.read_bytes()
        if len(data) > MAX_BYTES or hashlib.sha256(data).hexdigest() != digest:
            raise ShareError("damaged")
        file = pq.ParquetFile(io.BytesIO(data))
        meta = file.metadata
        if meta.num_rows > MAX_ROWS or file.schema_arrow.names != COLUMNS:
            raise ShareError("not a verdict table within the bounds")
        declared = sum(
            meta.row_group(g).column(c).total_uncompressed_size
            for g in range(meta.num_row_groups)
            for c in range(meta.num_columns)
        )
        if declared > MAX_DECODED_BYTES:
            raise ShareError("declares too much data")
        rows = file.read().to_pandas()
        if len(rows) != meta.num_rows:
            raise ShareError("row count differs from the footer")
        _check_rows(rows, max_verifiers=None)
        _check_cells(rows)
    except FileNotFoundError:
        return None
    except Exception:  # damaged, truncated, tampered with: a miss, and gone
        path.unlink(missing_ok=True)
        return None
    os.utime(path)  # recently used
    return rows


def load(digest: str, root: Path | None = None) -> pd.DataFrame | None:
    """The stored rows of ``digest`` (at most `MAX_VERIFIERS` verifiers), or None
    (unknown, expired or damaged: a miss)."""
    loaded = load_capped(digest, root)
    return None if loaded is None else loaded.rows


def load_capped(
    digest: str,
    root: Path | None = None,
    room: int = MAX_VERIFIERS,
    taken: Collection[str] = (),
) -> Loaded | None:
    """The stored rows of ``digest`` cut to ``room`` verifiers (those already in the
    session, ``taken``, are not counted twice and not loaded again), in the file's order;
    None for a miss. Bounded like an upload whatever the file holds (issue 26: a link
    chained 38 times held 760 verifiers)."""
    if not valid_hash(digest):
        return None
    rows = _read(digest, root or store_dir())
    if rows is None:
        return None
    raters = list(dict.fromkeys(rows["rater"].astype(str)))
    new = [r for r in raters if r not in set(taken)]
    kept = new[: max(int(room), 0)]
    rows = rows[rows["rater"].astype(str).isin(set(kept))].reset_index(drop=True)
    return Loaded(rows, len(raters), len(new) - len(kept))
