"""One row's screenshots from the parquet offset index: the byte range of its pages only.

Why: files written by `datasets` >= 4.1 carry an offset index (where each data page of a
column chunk starts, and its first row), and with content-defined chunking a row's
screenshot list is one data page or a few (pages break on record boundaries; a row is
larger than the 1 MiB chunk maximum). So a trajectory costs one range request of about
its own size (6-12 MB on the real data) instead of its whole row group (90-630 MB).

How: `footer_meta` decodes the footer (`lib.data.parquet.thrift_compact`); `pages_for_row` finds the
pages of a row in the PNG-bytes leaf from the offset index (which lies in the footer's
64 KiB tail on `datasets` files, so it is already fetched); the caller fetches that range
(plus the chunk's dictionary page, when there is one); `decode_row` builds a small
one-row-group parquet file from those pages and a rewritten footer and lets pyarrow
decode it, so the PNG bytes come out exactly as a plain pyarrow read gives them.
pyarrow 26 cannot read by page itself (it only reports that an offset index exists).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from lib.data.parquet import thrift_compact as tc

BYTES_LEAF = "screenshots.list.element.bytes"
MAX_SHOTS = 400
"""Screenshots kept per trajectory: the real maximum is about 40 (40 actions + 1). A row
with more entries is cut to this many (a hostile row of 3,000,000 empty entries costs a
view object each), and the caller says so."""


MAX_PAGES = 20_000
"""Pages of one column chunk's offset index at most. A row's pages break on record
boundaries and are at least the 256 KiB content-defined-chunking minimum on `datasets`
files, so a 630 MB row group (the largest real one) has about 2,500; more is refused
(the caller falls back to the row group) before a Python object is built per page."""
MAX_INDEX_BYTES = MAX_PAGES * 64
"""Bytes of one offset index at most: a page location takes at most ~40 (three varints,
their field headers, an unencoded-size entry)."""
_INDEX_ITEMS = 6 * MAX_PAGES + 16
"""Thrift values of an offset index at most: per page a struct, three fields and one
unencoded-size entry."""
MAX_PAGE_HEADERS = MAX_PAGES + 1
"""Page headers walked in one fetched run at most (its data pages and a dictionary)."""
_HEADER_ITEMS = 4_096
"""Thrift values of one page header at most (a real one holds about 15)."""


class PageIndexError(ValueError):
    """No usable page index (absent, encrypted, or malformed): fall back to the row group."""


@dataclass(frozen=True)
class Page:
    offset: int
    size: int
    first_row: int


@dataclass(frozen=True)
class RowPages:
    """The byte range holding one row's pages, and what the mini file needs to decode it."""

    group: int
    start: int  # first byte of the first page
    end: int  # one past the last page
    first_row: int  # row (in the group) of the first page
    num_rows: int  # rows covered by these pages
    dict_start: int = 0  # the chunk's dictionary page, when it has one
    dict_end: int = 0

    @property
    def nbytes(self) -> int:
        return self.end - self.start + self.dict_end - self.dict_start


def footer_meta(tail: bytes) -> tc.Struct:
    """The FileMetaData of a parquet file from its tail (which ends with len + `PAR1`)."""
    if len(tail) < 12 or tail[-4:] != b"PAR1":
        raise PageIndexError("not a parquet footer")
    meta_len = struct.unpack("<I", tail[-8:-4])[0]
    if meta_len + 8 > len(tail):
        raise PageIndexError("footer longer than the bytes given")
    try:
        meta, _ = tc.read_struct(tail[len(tail) - 8 - meta_len : len(tail) - 8])
    except tc.ThriftError as exc:
        raise PageIndexError(f"unreadable footer: {exc}") from exc
    return meta


def _groups(meta: tc.Struct) -> list[tc.Struct]:
    groups = meta.get(4)
    if not isinstance(groups, tc.TList):
        raise PageIndexError("footer without row groups")
    return groups.values


def _columns(group: tc.Struct) -> list[tc.Struct]:
    columns = group.get(1)
    if not isinstance(columns, tc.TList):
        raise PageIndexError("row group without columns")
    return columns.values


def leaf_column(meta: tc.Struct, leaf: str = BYTES_LEAF) -> int:
    """The position of a leaf column (dotted path) in every row group."""
    for group in _groups(meta)[:1]:
        for i, chunk in enumerate(_columns(group)):
            cmd = chunk.get(3)
            path = cmd.get(3) if isinstance(cmd, tc.Struct) else None
            if isinstance(path, tc.TList) and b".".join(path.values).decode() == leaf:
                return i
    raise PageIndexError(f"no column {leaf}")


def _chunk(meta: tc.Struct, group: int, column: int) -> tc.Struct:
    groups = _groups(meta)
    if not 0 <= group < len(groups):
        raise PageIndexError(f"no row group {group}")
    columns = _columns(groups[group])
    if not 0 <= column < len(columns):
        raise PageIndexError(f"no column {column}")
    return columns[column]


def offset_index_range(meta: tc.Struct, group: int, column: int) -> tuple[int, int]:
    """(start, end) of a column chunk's offset index; PageIndexError when it has none."""
    chunk = _chunk(meta, group, column)
    start, length = chunk.get(4), chunk.get(5)
    if not isinstance(start, int) or not isinstance(length, int) or start < 0 or length <= 0:
        raise PageIndexError("no offset index")
    return start, start + length


def read_offset_index(data: bytes) -> list[Page]:
    """The page locations of one column chunk's offset index.

    Bounded in work, not only in bytes: at most MAX_INDEX_BYTES, and the decoder's budget
    (`_INDEX_ITEMS` values) refuses an index of 16 MiB of empty structs as soon as its
    list declares more than that, before building any."""
    if len(data) > MAX_INDEX_BYTES:
        raise PageIndexError(
            f"an offset index of {len(data):,} bytes (at most {MAX_INDEX_BYTES:,})"
        )
    try:
        index, _ = tc.read_struct(data, max_items=_INDEX_ITEMS)
    except tc.ThriftError as exc:
        raise PageIndexError(f"unreadable offset index: {exc}") from exc
    locations = index.get(1)
    if not isinstance(locations, tc.TList) or not locations.values:
        raise PageIndexError("empty offset index")
    if len(locations.values) > MAX_PAGES:
        raise PageIndexError(f"{len(locations.values):,} pages (at most {MAX_PAGES:,})")
    pages = []
    for loc in locations.values:
        offset, size, first = loc.get(1), loc.get(2), loc.get(3)
        if not all(isinstance(v, int) and v >= 0 for v in (offset, size, first)):
            raise PageIndexError("malformed page location")
        pages.append(Page(offset, size, first))  # type: ignore[arg-type]
    return pages


def group_rows(meta: tc.Struct, group: int) -> int:
    rows = _groups(meta)[group].get(3)
    if not isinstance(rows, int) or rows < 0:
        raise PageIndexError("row group without a row count")
    return rows


def pages_for_row(
    meta: tc.Struct, group: int, column: int, pages: list[Page], row: int
) -> RowPages:
    """The contiguous pages holding `row` of `group` (pages start on record boundaries
    when a page index is written, so no other page holds a part of it)."""
    n = group_rows(meta, group)
    if not 0 <= row < n:
        raise PageIndexError(f"row {row} outside the group's {n} rows")
    firsts = [p.first_row for p in pages]
    if firsts != sorted(firsts) or firsts[0] != 0:
        raise PageIndexError("page first rows out of order")
    i0 = max(i for i, f in enumerate(firsts) if f <= row)
    i0 = min(i for i, f in enumerate(firsts) if f == firsts[i0])  # empty pages of the same row
    i1 = next((i for i, f in enumerate(firsts) if f > row), len(pages))
    first, stop = firsts[i0], firsts[i1] if i1 < len(pages) else n
    chunk = _chunk(meta, group, column)
    cmd = chunk.get(3)
    dict_start = dict_end = 0
    if isinstance(cmd, tc.Struct) and isinstance(cmd.get(11), int) and cmd.get(11):
        dict_start = int(cmd.get(11))  # type: ignore[arg-type]
        dict_end = pages[0].offset  # the dictionary page ends where the first data page starts
        if not 0 < dict_end - dict_start <= 64 << 20:
            raise PageIndexError("implausible dictionary page")
    start, end = pages[i0].offset, pages[i1 - 1].offset + pages[i1 - 1].size
    if end <= start:
        raise PageIndexError("empty page range")
    return RowPages(group, start, end, first, stop - first, dict_start, dict_end)


def _data_values(pages: bytes) -> int:
    """The number of values in a run of pages, summed from their headers."""
    pos, total, headers = 0, 0, 0
    while pos < len(pages):
        headers += 1
        if headers > MAX_PAGE_HEADERS:
            raise PageIndexError(f"more than {MAX_PAGE_HEADERS:,} pages in one range")
        try:
            header, pos = tc.read_struct(pages, pos, max_items=_HEADER_ITEMS)
        except tc.ThriftError as exc:
            raise PageIndexError(f"unreadable page header: {exc}") from exc
        size = header.get(3)
        if not isinstance(size, int) or size < 0 or pos + size > len(pages):
            raise PageIndexError("page runs past the fetched bytes")
        for fid in (5, 8):  # data page v1 / v2 header: field 1 is num_values
            sub = header.get(fid)
            if isinstance(sub, tc.Struct) and isinstance(sub.get(1), int):
                total += int(sub.get(1))  # type: ignore[arg-type]
        pos += size
    return total


def decode_row(
    meta: tc.Struct,
    column: int,
    where: RowPages,
    pages: bytes,
    dictionary: bytes = b"",
    row: int = 0,
) -> tuple[list[bytes | None], int]:
    """The PNG bytes of `row` (in the group) and the stored count, from its pages alone."""
    return decode_rows(meta, column, where, pages, dictionary)[row - where.first_row]


def decode_rows(
    meta: tc.Struct, column: int, where: RowPages, pages: bytes, dictionary: bytes = b""
) -> list[tuple[list[bytes | None], int]]:
    """Every row the pages hold (rows `where.first_row` ... + `num_rows`), decoded.

    A mini parquet file is built: `PAR1`, the dictionary page (if any), the row's pages,
    and the original footer with one row group whose PNG chunk points at them.
    """
    if len(pages) != where.end - where.start:
        raise PageIndexError(f"got {len(pages)} of {where.end - where.start} page bytes")
    num_values = _data_values(pages)
    chunk = _chunk(meta, where.group, column)
    group = _groups(meta)[where.group]
    new_meta = tc.Struct(dict(meta.fields))
    new_group = tc.Struct(dict(group.fields))
    new_chunk = tc.Struct(dict(chunk.fields))
    cmd = tc.Struct(dict(chunk.get(3).fields))  # type: ignore[union-attr]
    data_at = 4 + len(dictionary)
    cmd.set(9, tc.I64, data_at)
    cmd.set(5, tc.I64, num_values)
    cmd.set(7, tc.I64, len(dictionary) + len(pages))
    cmd.set(6, tc.I64, len(dictionary) + len(pages))
    cmd.drop(10, 12, 13, 14, 15, 16, 17)  # index page, statistics, bloom filter: not ours
    if dictionary:
        cmd.set(11, tc.I64, 4)
    else:
        cmd.drop(11)
    new_chunk.set(3, tc.STRUCT, cmd)
    new_chunk.set(2, tc.I64, 4)
    new_chunk.drop(4, 5, 6, 7)
    columns = list(_columns(group))
    columns[column] = new_chunk
    new_group.set(1, tc.LIST, tc.TList(tc.STRUCT, columns))
    new_group.set(3, tc.I64, where.num_rows)
    new_group.drop(4, 5, 6, 7)
    new_meta.set(3, tc.I64, where.num_rows)
    new_meta.set(4, tc.LIST, tc.TList(tc.STRUCT, [new_group]))
    footer = tc.write_struct(new_meta)
    mini = b"".join([b"PAR1", dictionary, pages, footer, struct.pack("<I", len(footer)), b"PAR1"])
    try:
        file = pq.ParquetFile(pa.BufferReader(mini))
        path = b".".join(cmd.get(3).values).decode()  # type: ignore[union-attr]
        table = file.read_row_group(0, columns=[path])
    except Exception as exc:  # pyarrow raises OSError/ArrowInvalid for a bad page
        raise PageIndexError(f"pyarrow could not decode the pages: {exc}") from exc
    column_data = table.column(0)
    if len(column_data) != where.num_rows:
        raise PageIndexError(f"decoded {len(column_data)} rows, expected {where.num_rows}")
    return [row_pngs(column_data, i) for i in range(where.num_rows)]


def row_pngs(column: pa.ChunkedArray | pa.Array, row: int) -> tuple[list[bytes | None], int]:
    """A row's PNG bytes (None = empty entry), at most MAX_SHOTS, and the stored count."""
    cell = column[row]
    if not cell.is_valid:
        return [], 0
    values = cell.values
    count = len(values)
    kept = values.slice(0, MAX_SHOTS)
    field = kept.field("bytes") if pa.types.is_struct(kept.type) else kept
    return [b or None for b in field.to_pylist()], count
