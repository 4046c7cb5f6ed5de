"""The parquet steps of a screenshot fetch: a trajectory's PNGs out of a shard's bytes.

Why apart from `lib.data.shots.store`: the store decides *which* path to take and where
the bytes go (jobs, locks, the disk cache, the memory cache); this module knows how the
bytes are laid out. Two ways, in the order the store tries them:

- `PageReader.read_row`: by the offset index (`lib.data.parquet.page_index`): the footer parsed
  once per shard, the row group's page locations parsed once (a rejected index is
  remembered as a message, so the next open goes straight to the fallback without
  fetching or parsing it again), the chunk's dictionary page cached on disk per group,
  then one range request for the row's data pages, decoded here. Every row of a page
  that holds several is returned (the bytes were paid for).
- `rows_of_group` / `row_from_group`: a whole row group read with pyarrow, one row at a
  time (a downloaded chunk or shard, or a local file without a page index).

No network or disk policy lives here: bytes come from the source the store hands in (the
footer tail already held is not read again), after its disk has made room for them
(`evict`), and dictionary pages are kept through that disk. Nothing here calls back into
the store: a fetch walks down store -> parquet -> source (`bench/fetch_walk.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pyarrow.parquet as pq

from lib.data.parquet import page_index as pix
from lib.data.parquet.lazy_parquet import Shard


class Source(Protocol):
    """Where a shard's bytes are (`lib.data.remote.ByteSource`)."""

    def read(self, name: str, start: int, end: int) -> bytes: ...


class Disk(Protocol):
    """The cache the bytes go to (`lib.data.shots.ShotDisk`): room made before a read,
    dictionary pages kept in its folder."""

    dir: Path

    def evict(self, incoming: int = 0) -> bool: ...

    def write(self, path: Path, data: bytes) -> bool: ...


Row = tuple[list[bytes | None], int]
"""One row's screenshots: the PNGs (None for a missing one) and the count stored in the row."""


@dataclass(frozen=True)
class PageRead:
    """What one page-index read returned: the rows of the pages read, from `first_row`."""

    rows: list[Row]
    first_row: int
    data_bytes: int
    dictionary_bytes: int


class PageReader:
    """A row's screenshots by the parquet offset index, with the per-shard parses cached.

    One reader per `ShotStore`, so per revision: a rejected index stays rejected for
    this revision only.
    """

    def __init__(self, source: Source, disk: Disk) -> None:
        self._source = source
        self._disk = disk
        self._meta: dict[str, object] = {}  # shard path -> parsed footer
        self._pages: dict[tuple[str, int], list[pix.Page]] = {}
        self._rejected: dict[tuple[str, int], str] = {}  # (shard, group) -> why (a message)

    @property
    def rejected(self) -> dict[tuple[str, int], str]:
        """(shard, group) -> why its offset index was refused (a copy)."""
        return dict(self._rejected)

    def read_row(
        self,
        shard: Shard,
        group: int,
        row: int,
        report: Callable[[int, int], None],
        max_range: int,
    ) -> PageRead:
        """The pages holding `row` of `group`, decoded (at most `max_range` bytes of them).
        Raises `PageIndexError` when the index is missing, rejected or implausible (the
        caller falls back)."""
        meta = self._footer(shard)
        column = pix.leaf_column(meta)  # type: ignore[arg-type]
        pages = self._offset_index(shard, meta, group, column)
        where = pix.pages_for_row(meta, group, column, pages, row)  # type: ignore[arg-type]
        if where.end - where.start > max_range:
            raise pix.PageIndexError("implausibly large page range")
        dictionary = self._dictionary(shard, group, where) if where.dict_end else b""
        report(0, where.end - where.start)
        data = self._read(shard, where.start, where.end)
        report(len(data), where.end - where.start)
        rows = list(pix.decode_rows(meta, column, where, data, dictionary))  # type: ignore[arg-type]
        return PageRead(rows, where.first_row, len(data), len(dictionary))

    def _read(self, shard: Shard, start: int, end: int) -> bytes:
        """Bytes [start, end) of a shard: from the footer tail held, else the source (room
        made in the cache first)."""
        if start >= shard.footer_start and end <= shard.footer_start + len(shard.footer):
            return shard.footer[start - shard.footer_start : end - shard.footer_start]
        self._disk.evict(end - start)
        return self._source.read(shard.path, start, end)

    def _footer(self, shard: Shard) -> object:
        meta = self._meta.get(shard.path)
        if meta is None:
            meta = pix.footer_meta(shard.footer)
            self._meta[shard.path] = meta
        return meta

    def _offset_index(self, shard: Shard, meta, group: int, column: int) -> list[pix.Page]:
        """A row group's page locations, parsed once; a rejection is remembered (a network
        error is not: it raises something else and is tried again next time)."""
        key = (shard.path, group)
        pages = self._pages.get(key)
        if pages is None:
            if key in self._rejected:
                raise pix.PageIndexError(f"{self._rejected[key]} (rejected before)")
            try:
                start, end = pix.offset_index_range(meta, group, column)
                if end - start > pix.MAX_INDEX_BYTES or end > shard.size:
                    raise pix.PageIndexError("implausible offset index")
                pages = pix.read_offset_index(self._read(shard, start, end))
            except pix.PageIndexError as exc:
                self._rejected[key] = str(exc)
                raise
            self._pages[key] = pages
        return pages

    def _dictionary(self, shard: Shard, group: int, where: pix.RowPages) -> bytes:
        """The chunk's dictionary page (the `dict` layout), cached on disk per group."""
        path = self._disk.dir / f"{shard.path.replace('/', '--')}.g{group}.dict"
        try:
            data = path.read_bytes()
            if len(data) == where.dict_end - where.dict_start:
                return data
        except OSError:
            pass
        data = self._read(shard, where.dict_start, where.dict_end)
        self._disk.write(path, data)
        return data


def rows_of_group(file: object, group: int) -> Iterator[Row]:
    """Every row of a row group as (PNG list, stored count), one row at a time (a file
    path, or a sparse file of the downloaded ranges)."""
    pf = pq.ParquetFile(file, buffer_size=1 << 20, pre_buffer=False)
    for batch in pf.iter_batches(batch_size=1, row_groups=[group], columns=[pix.BYTES_LEAF]):
        column = batch.column(0)
        for i in range(batch.num_rows):
            yield pix.row_pngs(column, i)


def row_from_group(file: Path | object, group: int, row: int) -> Row:
    """One row of a row group (read in place from a local file without a page index)."""
    for i, result in enumerate(rows_of_group(file, group)):
        if i == row:
            return result
    return [], 0
