"""Read only what the first page needs from a parquet shard: footer, light columns, counts.

Why: the trajectories shards are ~1.5 GB, almost all inline PNGs, but the pages need
only the other columns (~2 MB on the real data) and each row's number of screenshots.
The same reader serves a Hub file (HTTP range requests) and a local file (seek + read),
so a local mirror's cold start has no 1.4 GB Arrow rebuild either.

How: one request for the last 64 KiB (the footer; a second only if it is longer), then
the byte ranges of every column chunk except the screenshot PNG bytes, coalesced (two
runs per row group: the columns before the screenshots, and from the screenshot `path`
leaf to the end of the group). pyarrow then decodes them from a `SparseFile` that holds
just those ranges. The screenshot counts come from the `screenshots.list.element.path`
leaf: it is tiny (mostly null) but carries the list's repetition levels, so its list
lengths are the real numbers of stored screenshots, without one PNG byte read.

Strategies measured with `python -m bench.hub_strategies MIRROR` against the local Hub
(every trajectories shard's light columns + counts, fresh process and cache; requests
include repo info and huggingface_hub's own registry lookup):

| strategy | full mirror (1.5 GB, ~100 MB groups): requests, bytes | 12-row groups |
|---|---|---|
| own range reads (this module) | 26, 804,312 | 26, 447,205 |
| HfFileSystem, `cache_type="none"` | 29, 860,142 | 29, 450,015 |
| HfFileSystem, default readahead cache | 29, 90,148,755 | 15, 18,124,314 |
| `datasets` streaming with `columns=` | 40, 90,279,883 | 26, 18,256,526 |

Readahead and streaming pull whole blocks / row groups of PNGs (90 MB for 804 KB of
use). HfFileSystem without a cache is as lean but costs paths-info/tree calls and one
request per pyarrow read; our own range reads are the fewest bytes and requests, and
they let the screenshot fetcher reuse the same footer, so they were chosen.
"""

from __future__ import annotations

import io
import json
import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

log = logging.getLogger(__name__)

SCREENSHOTS = "screenshots"
PATH_LEAF = "screenshots.list.element.path"
BYTES_LEAF = "screenshots.list.element.bytes"
COUNT_COLUMN = "__n_screenshots_stored"
FOOTER_GUESS = 64 * 1024
GAP = 64 * 1024  # ranges closer than this are fetched in one request


class ShardError(Exception):
    """A shard that cannot be read; the message names the file and says why."""


class Ranges(Protocol):
    """Random access to one file: its name (for messages), size, and byte ranges."""

    name: str

    def size(self) -> int: ...

    def read(self, start: int, length: int) -> bytes: ...


class LocalRanges:
    """A local file read by seek + read (no memory map: the reads are small)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.name = self.path.name

    def size(self) -> int:
        return self.path.stat().st_size

    def read(self, start: int, length: int) -> bytes:
        with open(self.path, "rb") as f:
            f.seek(start)
            return f.read(length)


class SparseFile(io.RawIOBase):
    """A file of known size of which only some byte ranges are present (in memory or on disk).

    pyarrow reads a parquet file through `seek`/`read`; as long as it only touches the
    footer and the column chunks we fetched, it cannot tell the difference.
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self._size = size
        self._pos = 0
        self._pieces: list[tuple[int, int, bytes | Path]] = []  # (start, length, data)

    def add(self, start: int, data: bytes | Path, length: int | None = None) -> None:
        n = len(data) if isinstance(data, bytes) else int(length or Path(data).stat().st_size)
        self._pieces.append((start, n, data))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = base + offset
        return self._pos

    def size(self) -> int:
        return self._size

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self._size - self._pos
        n = min(n, self._size - self._pos)
        out = bytearray()
        while n > 0:
            for start, length, data in self._pieces:
                if start <= self._pos < start + length:
                    take = min(n, start + length - self._pos)
                    if isinstance(data, bytes):
                        out += data[self._pos - start : self._pos - start + take]
                    else:
                        with open(data, "rb") as f:
                            f.seek(self._pos - start)
                            out += f.read(take)
                    self._pos += take
                    n -= take
                    break
            else:
                raise OSError(f"byte {self._pos} was not fetched")
        return bytes(out)

    def readinto(self, buffer) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


@dataclass
class Group:
    """One row group: its rows and where its screenshot bytes + path chunks lie."""

    rows: int
    shot_start: int = 0
    shot_end: int = 0  # exclusive; 0 when the shard has no screenshots

    @property
    def shot_bytes(self) -> int:
        return self.shot_end - self.shot_start


@dataclass
class Shard:
    """What the screenshot fetcher needs to know about one trajectories shard."""

    path: str  # repo path (Hub) or file path (local)
    size: int
    footer_start: int
    footer: bytes
    groups: list[Group] = field(default_factory=list)

    def sparse(self) -> SparseFile:
        file = SparseFile(self.size)
        file.add(self.footer_start, self.footer)
        return file


def _chunk_range(column: pq.ColumnChunkMetaData) -> tuple[int, int]:
    start = column.data_page_offset
    if column.has_dictionary_page and column.dictionary_page_offset:
        start = min(start, column.dictionary_page_offset)
    return start, start + column.total_compressed_size


def read_footer(src: Ranges) -> tuple[int, int, bytes]:
    """(file size, tail start, tail bytes): the footer and the bytes before it, 1-2 reads.

    The tail is at least the last 64 KiB, because pyarrow opens a file by reading that much.
    """
    size = src.size()
    if size < 12:
        raise ShardError(f"`{src.name}` is not a parquet file (only {size} bytes: truncated?).")
    tail_len = min(size, FOOTER_GUESS)
    tail = src.read(size - tail_len, tail_len)
    if tail[-4:] != b"PAR1":
        raise ShardError(f"`{src.name}` is not a readable parquet file (truncated or corrupt).")
    meta_len = struct.unpack("<I", tail[-8:-4])[0]
    need = meta_len + 8
    if need > size - 4:
        raise ShardError(f"`{src.name}` has a corrupt parquet footer.")
    if need > len(tail):
        tail = src.read(size - need, need)
    return size, size - len(tail), tail


def _coalesce(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for start, end in sorted(ranges):
        if out and start - out[-1][1] <= GAP:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


@dataclass
class Light:
    """A shard's light table (every column but the PNG bytes, plus the counts) and layout."""

    table: pa.Table
    features: object  # datasets.Features (imported late: see declared_features)
    shard: Shard


def declared_features(schema: pa.Schema):
    """The features `datasets` would use: those declared in the `huggingface` schema
    metadata when present (a column declared there but absent is filled with nulls, as
    the builder does), else the plain Arrow types. `datasets` is imported here, not at
    module level, so importing this module stays light."""
    import datasets

    raw = (schema.metadata or {}).get(b"huggingface")
    if raw:
        try:
            return datasets.Features.from_dict(json.loads(raw)["info"]["features"])
        except Exception:  # foreign or broken metadata: the Arrow types are the truth
            pass
    return datasets.Features.from_arrow_schema(schema.remove_metadata())


def read_light(src: Ranges, path: str, fetch_many: Callable | None = None) -> Light:
    """Read a shard's footer, light columns and screenshot counts; see the module docstring.

    `fetch_many(list of (start, length)) -> list[bytes]` lets the Hub reader run the
    range requests concurrently; by default they run one after another.
    """
    size, footer_start, footer = read_footer(src)
    sparse = SparseFile(size)
    sparse.add(footer_start, footer)
    read = len(footer)
    try:
        meta = pq.ParquetFile(sparse).metadata
        schema = meta.schema.to_arrow_schema()
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for a bad footer
        raise ShardError(f"`{src.name}` has an unreadable parquet footer: {exc}") from exc
    wanted: list[tuple[int, int]] = []
    groups: list[Group] = []
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        group = Group(rg.num_rows)
        shot: list[tuple[int, int]] = []
        for j in range(rg.num_columns):
            column = rg.column(j)
            start, end = _chunk_range(column)
            if column.path_in_schema.startswith(SCREENSHOTS + "."):
                shot.append((start, end))
            if column.path_in_schema != BYTES_LEAF:
                wanted.append((start, end))
        if shot:
            group.shot_start, group.shot_end = min(s for s, _ in shot), max(e for _, e in shot)
        groups.append(group)
    runs = _coalesce(wanted)
    meta_start = size - 8 - struct.unpack("<I", footer[-8:-4])[0]
    if any(end > meta_start for _, end in runs):
        raise ShardError(f"`{src.name}` is truncated (a column chunk lies past the footer).")
    jobs = [(a, min(b, footer_start) - a) for a, b in runs if a < footer_start]
    blobs = fetch_many(jobs) if fetch_many else [src.read(a, n) for a, n in jobs]
    for (a, n), blob in zip(jobs, blobs, strict=True):
        if len(blob) != n:
            raise ShardError(f"`{src.name}` is truncated ({len(blob)} of {n} bytes at {a}).")
        sparse.add(a, blob)
        read += n
    names = [n for n in schema.names if n != SCREENSHOTS]
    has_shots = SCREENSHOTS in schema.names
    try:
        table = pq.ParquetFile(sparse).read(columns=names + ([PATH_LEAF] if has_shots else []))
    except Exception as exc:
        raise ShardError(f"`{src.name}` cannot be decoded: {type(exc).__name__}: {exc}") from exc
    if has_shots:
        counts = pc.fill_null(pc.list_value_length(table.column(SCREENSHOTS)), 0)
        table = table.drop_columns([SCREENSHOTS])
    else:
        counts = pa.array([0] * table.num_rows, pa.int32())
    table = table.append_column(COUNT_COLUMN, counts.cast(pa.int64()))
    features = declared_features(schema)
    shard = Shard(path, size, footer_start, footer, groups)
    biggest = max((g.shot_bytes for g in groups), default=0)
    log.info(
        "%s: %d rows in %d row group(s) (%s), largest screenshot chunk %.1f MB; read %d bytes",
        src.name,
        meta.num_rows,
        len(groups),
        "one row group per shard" if len(groups) == 1 else "several row groups",
        biggest / 1e6,
        read,
    )
    return Light(table, features, shard)
