"""Reading an uploaded predictions file into a small frame of raw cells, within bounds.

Every dimension a visitor controls is bounded before the work it drives (issue 18: a
0.36 MB JSON Lines file whose records each carried their own keys took the server to
2.4 GB, a parquet file of 1,000 null columns to 2.9 GB):

- bytes: `MAX_BYTES`, checked before anything is read;
- columns: `MAX_COLUMNS`, counted from the CSV header, the parquet footer or the distinct
  keys of the JSON records, before any frame is built; then only the columns a role needs
  (`COLUMN_ALIASES`) are read (`usecols` for CSV, `columns=` for parquet, the wanted keys
  of each JSON record), so an ignored column costs nothing but its name;
- rows: `MAX_ROWS` (more on larger data: `validate.row_cap`), while reading (CSV
  `nrows`, JSON record count, parquet footer);
- cells: `MAX_CELL_CHARS` per kept cell;
- JSON nesting depth (`MAX_DEPTH`) and length of a number (`MAX_NUMBER_CHARS`), checked by
  a linear scan before the parser runs, so deep nesting or a 5,000-digit integer gives a
  clear message instead of `RecursionError` / `ValueError` inside `json`;
- memory: `estimate_parse_bytes` estimates a parse from sizes known before it runs (the
  text, the row count, the parquet column chunks' uncompressed sizes) and a file whose
  estimate exceeds `MAX_PARSE_BYTES` is rejected unread;
- decompression (parquet, the one compressed format; gzip and ZIP are refused by their
  signature): the footer's sizes are the file's word, so every page header of the columns
  read is walked first (`_decompressed_bytes`, with a running budget and `MAX_PAGES`): a
  page header's size is exactly the buffer pyarrow decompresses into, so their sum bounds
  what the decompressor may produce (issue 26: a 39 KB file whose footer declared small
  chunks held 12 pages of 100 MB and took the server to 2.6 GB). Strings are read
  dictionary-encoded and their Python size (`_python_cell_bytes`, one object per row) is
  checked before `to_pylist`.

Messages quote values from the file in double quotes (never backticks: they are shown
through `ui.safe_text.inert`, which would show a backtick literally).
"""

from __future__ import annotations

import csv
import io
import json
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from lib.data.parquet import thrift_compact as tc

MAX_BYTES = 20 * 1024 * 1024
"""Largest accepted file (20 MB; `.streamlit/config.toml` `server.maxUploadSize` matches, so
a larger file is refused by the browser before it is sent)."""

MAX_ROWS = 50_000
"""Most data rows accepted (checked while reading, before any per-row work), at least: on
larger data the cap is `lib.uploads.predictions.validate.row_cap` (one row per verifier and
task for a file at the verifier cap), always with the parse-memory estimate below."""

MAX_COLUMNS = 32
"""Most columns (CSV header cells, parquet columns, distinct JSON keys) a file may have. A
predictions file needs at most eight; a file with more is rejected before a frame is built."""

MAX_CELL_CHARS = 1_000
"""Longest kept cell (a task id, a label, a verifier name) in characters."""

MAX_DEPTH = 16
"""Deepest JSON nesting accepted (a record is depth 1 in JSON Lines, 2 in an array)."""

MAX_NUMBER_CHARS = 100
"""Longest run of digits accepted in JSON (Python refuses ints above 4,300 digits)."""

MAX_PARSE_BYTES = 256 * 1024 * 1024
"""Largest estimated memory of one parse (`estimate_parse_bytes`)."""

MAX_FOOTER_BYTES = 1024 * 1024
"""Largest parquet footer read (32 columns in a few row groups is a few kilobytes)."""

CELL_OVERHEAD = 120
"""Bytes a kept cell costs as a Python object in an object column (str header + slot)."""

FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
EXTENSIONS: tuple[str, ...] = tuple(ext.lstrip(".") for ext in FORMATS)

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "task_id": ("task_id", "task"),
    "outcome": ("outcome", "outcome_label", "label", "prediction", "is_success"),
    "process": ("process", "process_label"),
    "score": ("score", "process_score", "rubric_score"),
    "split": ("split",),
    "verifier": ("verifier", "verifier_name"),
    "version": ("version", "verifier_version"),
    "run": ("run", "repeat"),
}
REQUIRED = ("task_id", "outcome")
WANTED: frozenset[str] = frozenset(a for aliases in COLUMN_ALIASES.values() for a in aliases)
"""Column names (lower case, trimmed) that some role reads; every other column is ignored."""

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or an Excel workbook: save it as CSV)"),
    (b"\x1f\x8b", "a gzip archive (upload it uncompressed)"),
)
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class PredictionsError(ValueError):
    """The file is rejected as a whole; the message is shown to the user as is.

    `dropped` lists the rows and their problems when the file was rejected because no
    row was usable (same columns as `Upload.dropped`), else it is None. Keep the message
    and `dropped`, never this object (its traceback holds the parser's frames).
    """

    def __init__(self, message: str, dropped: pd.DataFrame | None = None) -> None:
        super().__init__(message)
        self.dropped = dropped


@dataclass(frozen=True)
class Table:
    """The cells a role reads: `frame` has one object column per role found (named by
    role), `n_rows` data rows, `ignored` the file's other column names (at most
    `MAX_COLUMNS`)."""

    frame: pd.DataFrame
    file_format: str
    ignored: list[str] = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return len(self.frame)


def quoted(value: Any, limit: int = 40) -> str:
    """A value from the file for a message: in double quotes, at most `limit` characters."""
    text = str(value)
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


def _mb(n: float) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def _size(n: float) -> str:
    """Bytes in words: kilobytes under a megabyte (a lying footer's "0.0 MB" says nothing)."""
    return f"{n / 1024:.1f} KB" if n < 1024 * 1024 else _mb(n)


def check_size(n_bytes: int, filename: str) -> None:
    """Raise PredictionsError when a file of `n_bytes` is over `MAX_BYTES` (before reading it)."""
    if n_bytes > MAX_BYTES:
        raise PredictionsError(
            f"{quoted(filename, 200)} is {_mb(n_bytes)}; the limit is {_mb(MAX_BYTES)}. "
            "A predictions file for this data is a few hundred kilobytes: nothing was loaded."
        )


def too_many_rows(filename: str, limit: int | None = None) -> PredictionsError:
    """The error for a file over its row cap (`MAX_ROWS` unless the caller says)."""
    limit = MAX_ROWS if limit is None else limit
    return PredictionsError(
        f"{quoted(filename, 200)} has more than {limit:,} data rows; the limit is "
        f"{limit:,}. A predictions file has one row per (verifier, task): nothing was loaded."
    )


def too_many_columns(filename: str, n: int | str) -> PredictionsError:
    """The error for a file over `MAX_COLUMNS` columns (or distinct JSON keys)."""
    return PredictionsError(
        f"{quoted(filename, 200)} has {n} columns; the limit is {MAX_COLUMNS}. A predictions "
        "file needs task_id and outcome (and optionally process, score, split, verifier): "
        "drop the other columns. Nothing was loaded."
    )


def _too_big(filename: str, estimate: int) -> PredictionsError:
    return PredictionsError(
        f"Reading {quoted(filename, 200)} would take about {_mb(estimate)} of memory; the "
        f"limit is {_mb(MAX_PARSE_BYTES)}. Keep only the columns task_id, outcome, process, "
        "score, split, verifier. Nothing was loaded."
    )


def estimate_parse_bytes(n_bytes: int, n_rows: int, n_cells_per_row: int, widest: int) -> int:
    """Memory a parse needs, from sizes known before it runs.

    `n_bytes`: the decoded data the parser holds at once (the text, or the parquet column
    chunks uncompressed); `n_rows` x `n_cells_per_row` kept cells at `CELL_OVERHEAD`
    each; `widest`: the largest unit parsed at once (a JSON line), about 10 x its bytes as
    Python objects.
    """
    return n_bytes + n_rows * n_cells_per_row * CELL_OVERHEAD + 10 * widest


def detect_format(data: bytes, filename: str) -> str:
    """`csv`, `tsv`, `jsonl`, `json` or `parquet`, from the content first, then the name.

    Raises PredictionsError for known non-table formats (images, archives, PDF) and for a
    parquet name on a file without the parquet signature.
    """
    for magic, what in _MAGIC:
        if data.startswith(magic):
            raise PredictionsError(
                f"Wrong format: {quoted(filename, 200)} is {what}, not a predictions table. "
                "Upload CSV, JSON Lines or parquet."
            )
    if data.startswith(b"PAR1"):
        return "parquet"
    suffix = PurePath(filename).suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt == "parquet":
        raise PredictionsError(
            f"Wrong format: {quoted(filename, 200)} is named like a parquet file but is not "
            "one (no parquet signature)."
        )
    if fmt is not None:
        return fmt
    codec = "utf-16" if data.startswith(_UTF16_BOMS) else "utf-8-sig"
    head = data[:4096].decode(codec, errors="ignore").lstrip("\ufeff \t\r\n")[:1]
    if head == "{":
        return "jsonl"
    if head == "[":
        return "json"
    return "csv"


def _text(data: bytes, filename: str) -> str:
    """The file as text: UTF-16 with a BOM, else UTF-8 (a UTF-8 BOM is dropped)."""
    if data.startswith(_UTF16_BOMS):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise PredictionsError(
                f"Wrong format: {quoted(filename, 200)} starts like UTF-16 text but byte "
                f"{exc.start} cannot be read."
            ) from None
    if b"\x00" in data[:65536]:
        raise PredictionsError(f"Wrong format: {quoted(filename, 200)} is a binary file, not text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PredictionsError(
            f"Wrong format: {quoted(filename, 200)} is not UTF-8 text (byte {exc.start} "
            "cannot be read)."
        ) from None


def resolve_roles(names: list[str], filename: str) -> tuple[dict[str, int], list[str]]:
    """Map each role (task_id, outcome, ...) to the position of its column; list the others."""
    by_lower: dict[str, int] = {}
    for i, name in enumerate(names):
        by_lower.setdefault(str(name).strip().lower(), i)
    roles: dict[str, int] = {}
    for role, aliases in COLUMN_ALIASES.items():
        found = [by_lower[a] for a in aliases if a in by_lower]
        if len(found) > 1:
            shown = ", ".join(quoted(names[f]) for f in found)
            raise PredictionsError(
                f"{quoted(filename, 200)} has several columns for {role} ({shown}): keep only one."
            )
        if found:
            roles[role] = found[0]
    missing = [r for r in REQUIRED if r not in roles]
    if missing:
        present = ", ".join(quoted(c) for c in names) or "none"
        wanted = " and ".join(quoted(m) for m in missing)
        raise PredictionsError(
            f"{quoted(filename, 200)} has no {wanted} column (columns found: {present}). "
            "Required: task_id and outcome."
        )
    used = set(roles.values())
    return roles, [str(n) for i, n in enumerate(names) if i not in used]


def _check_cells(frame: pd.DataFrame, filename: str) -> None:
    """Reject a kept text cell over `MAX_CELL_CHARS` (its row and column named)."""
    for column in frame.columns:
        for i, value in enumerate(frame[column].tolist()):
            if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
                raise PredictionsError(
                    f"{quoted(filename, 200)}: the {column} cell of row {i + 1} has "
                    f"{len(value):,} characters; the limit is {MAX_CELL_CHARS:,}. "
                    "Nothing was loaded."
                )


# ---------------------------------------------------------------------------------------
# CSV / TSV
# ---------------------------------------------------------------------------------------


def _read_delimited(text: str, sep: str, filename: str, max_rows: int) -> Table:
    try:
        header = next(csv.reader(io.StringIO(text), delimiter=sep, skipinitialspace=True), None)
    except csv.Error as exc:
        raise PredictionsError(
            f"Wrong format: {quoted(filename, 200)} is not valid CSV ({str(exc)[:200]})."
        ) from None
    if not header or not any(h.strip() for h in header):
        raise PredictionsError(f"{quoted(filename, 200)} is empty.")
    if len(header) > MAX_COLUMNS:
        raise too_many_columns(filename, f"{len(header):,}")
    roles, ignored = resolve_roles(header, filename)
    n_lines = text.count("\n") + 1
    estimate = estimate_parse_bytes(2 * len(text), min(n_lines, max_rows + 1), len(roles), 0)
    if estimate > MAX_PARSE_BYTES:
        raise _too_big(filename, estimate)
    positions = sorted(roles.values())
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            dtype=str,
            keep_default_na=False,
            skipinitialspace=True,
            nrows=max_rows + 1,
            usecols=positions,
        )
    except pd.errors.EmptyDataError:
        raise PredictionsError(f"{quoted(filename, 200)} is empty.") from None
    except (pd.errors.ParserError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise PredictionsError(
            f"Wrong format: {quoted(filename, 200)} is not valid CSV ({first})."
        ) from None
    if len(frame) > max_rows:
        raise too_many_rows(filename, max_rows)
    by_position = {p: role for role, p in roles.items()}
    frame.columns = [by_position[p] for p in positions]
    return Table(frame.astype(object), "tsv" if sep == "\t" else "csv", ignored)


# ---------------------------------------------------------------------------------------
# JSON Lines / JSON array
# ---------------------------------------------------------------------------------------

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LONG_NUMBER = re.compile(rf"[0-9]{{{MAX_NUMBER_CHARS + 1},}}")
_SCAN_CHUNK = 1 << 20


@dataclass(frozen=True)
class JsonShape:
    """What a linear scan of JSON text finds without parsing it."""

    depth: int
    """Deepest nesting of `[` / `{` outside strings."""
    records: int
    """Objects opened at the record depth (1 in JSON Lines, 2 in an array)."""


def scan_json(text: str, record_depth: int) -> JsonShape:
    """Nesting depth and record count of JSON text, in C-speed passes (regex + numpy).

    Strings are blanked first (brackets inside them do not count); depth is the running
    sum of +1 for `[`/`{` and -1 for `]`/`}`, chunk by chunk so memory stays bounded.
    """
    stripped = _STRING.sub('""', text).encode("utf-8", "replace")
    depth, base, records = 0, 0, 0
    for start in range(0, len(stripped), _SCAN_CHUNK):
        b = np.frombuffer(stripped, dtype=np.uint8, count=min(_SCAN_CHUNK, len(stripped) - start),
                          offset=start)  # fmt: skip
        opens = (b == ord("[")) | (b == ord("{"))
        delta = opens.astype(np.int32) - ((b == ord("]")) | (b == ord("}")))
        running = np.cumsum(delta, dtype=np.int64) + base
        if len(running):
            depth = max(depth, int(running.max()))
            records += int(np.count_nonzero((b == ord("{")) & (running == record_depth)))
            base = int(running[-1])
    return JsonShape(depth, records)


def _check_json_text(text: str, filename: str, record_depth: int) -> JsonShape:
    """Reject too deep nesting or too long numbers before `json` parses anything."""
    shape = scan_json(text, record_depth)
    if shape.depth > MAX_DEPTH:
        raise PredictionsError(
            f"{quoted(filename, 200)} nests JSON {shape.depth:,} levels deep; the limit is "
            f"{MAX_DEPTH}. A predictions record is a flat object such as "
            '{"task_id": "...", "outcome": 1}. Nothing was loaded.'
        )
    long = _LONG_NUMBER.search(_STRING.sub('""', text))
    if long is not None:
        raise PredictionsError(
            f"{quoted(filename, 200)} has a number of {len(long.group()):,} digits; the limit "
            f"is {MAX_NUMBER_CHARS}. Nothing was loaded."
        )
    return shape


class _Records:
    """Collects the wanted keys of each record and counts the distinct keys of all."""

    def __init__(self, filename: str, max_rows: int) -> None:
        self.filename = filename
        self.max_rows = max_rows
        self.rows: list[dict[str, Any]] = []
        self.keys: dict[str, None] = {}

    def add(self, record: dict) -> None:
        for key in record:
            if key not in self.keys:
                self.keys[key] = None
                if len(self.keys) > MAX_COLUMNS:
                    raise too_many_columns(self.filename, f"more than {MAX_COLUMNS}")
        self.rows.append({k: v for k, v in record.items() if k.strip().lower() in WANTED})
        if len(self.rows) > self.max_rows:
            raise too_many_rows(self.filename, self.max_rows)

    def table(self, fmt: str) -> Table:
        names = list(self.keys)
        roles, ignored = resolve_roles(names, self.filename)
        frame = pd.DataFrame(
            {
                role: pd.Series([r.get(names[i]) for r in self.rows], dtype=object)
                for role, i in sorted(roles.items(), key=lambda item: item[1])
            }
        )
        return Table(frame, fmt, ignored)


def _json_lines(text: str, filename: str, fmt: str, max_rows: int) -> Table:
    shape = _check_json_text(text, filename, record_depth=1)
    widest = max((len(line) for line in text.splitlines()), default=0)
    estimate = estimate_parse_bytes(len(text), shape.records, len(COLUMN_ALIASES), widest)
    if estimate > MAX_PARSE_BYTES:
        raise _too_big(filename, estimate)
    records, bad = _Records(filename, max_rows), []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (json.JSONDecodeError, RecursionError, ValueError):
            bad.append(number)
            continue
        if not isinstance(value, dict):
            bad.append(number)
            continue
        records.add(value)
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (" …" if len(bad) > 10 else "")
        raise PredictionsError(
            f"Wrong format: {quoted(filename, 200)} is not valid JSON Lines: {len(bad)} line(s) "
            f"are not a JSON object (line {shown}). Each line must be one object such as "
            '{"task_id": "...", "outcome": 1}. Nothing was loaded.'
        )
    return records.table(fmt)


def _array_items(text: str) -> Iterator[Any]:
    """The elements of a JSON array, decoded one at a time (never the whole array at once)."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    i = ws.match(text, 0).end()
    if text[i : i + 1] != "[":
        raise json.JSONDecodeError("expected [", text, i)
    i = ws.match(text, i + 1).end()
    if text[i : i + 1] == "]":
        i = ws.match(text, i + 1).end()
        if i != len(text):
            raise json.JSONDecodeError("extra data", text, i)
        return
    while True:
        value, i = decoder.raw_decode(text, i)
        yield value
        i = ws.match(text, i).end()
        if text[i : i + 1] == ",":
            i = ws.match(text, i + 1).end()
            continue
        if text[i : i + 1] == "]":
            i = ws.match(text, i + 1).end()
            if i != len(text):
                raise json.JSONDecodeError("extra data", text, i)
            return
        raise json.JSONDecodeError("expected , or ]", text, i)


def _json_array(text: str, filename: str, max_rows: int) -> Table:
    shape = _check_json_text(text, filename, record_depth=2)
    if shape.records > max_rows:
        raise too_many_rows(filename, max_rows)
    estimate = estimate_parse_bytes(len(text), shape.records, len(COLUMN_ALIASES), 0)
    if estimate > MAX_PARSE_BYTES:
        raise _too_big(filename, estimate)
    records = _Records(filename, max_rows)
    try:
        for value in _array_items(text):
            if not isinstance(value, dict):
                raise PredictionsError(
                    f"Wrong format: {quoted(filename, 200)} must be a JSON array of objects "
                    "(or JSON Lines)."
                )
            records.add(value)
    except PredictionsError:
        raise
    except json.JSONDecodeError as exc:
        raise PredictionsError(
            f"Wrong format: {quoted(filename, 200)} is not valid JSON (line {exc.lineno}: "
            f"{exc.msg})."
        ) from None
    except (RecursionError, ValueError) as exc:  # defence in depth: the scan bounds both
        raise PredictionsError(
            f"Wrong format: {quoted(filename, 200)} is not valid JSON ({type(exc).__name__})."
        ) from None
    return records.table("json")


# ---------------------------------------------------------------------------------------
# Parquet
# ---------------------------------------------------------------------------------------


def _unreadable_parquet(filename: str, exc: BaseException) -> PredictionsError:
    return PredictionsError(
        f"Wrong format: {quoted(filename, 200)} is not a readable parquet file "
        f"({str(exc)[:200] or type(exc).__name__})."
    )


def _check_arrow_cells(table: Any, filename: str) -> None:
    """Bound the cells before they become Python objects.

    The footer's sizes do not bound what `to_pylist` builds: a dictionary-encoded column
    stores a long string once and expands it on every row, and a nested column makes an
    object per element. So: role columns must hold one scalar per row, and no string may
    exceed `MAX_CELL_CHARS` (checked in bytes, on the dictionary when there is one).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    for name, column in zip(table.column_names, table.columns, strict=True):
        kind = column.type
        values = kind.value_type if pa.types.is_dictionary(kind) else kind
        if pa.types.is_nested(values):
            raise PredictionsError(
                f"{quoted(filename, 200)}: column {quoted(name)} holds lists or structures; "
                "a predictions column holds one value per row. Nothing was loaded."
            )
        if not (pa.types.is_string(values) or pa.types.is_large_string(values)
                or pa.types.is_binary(values) or pa.types.is_large_binary(values)):  # fmt: skip
            continue
        for chunk in column.chunks:
            cells = chunk.dictionary if pa.types.is_dictionary(kind) else chunk
            longest = pc.max(pc.binary_length(cells)).as_py() if len(cells) else 0
            if longest is not None and longest > 4 * MAX_CELL_CHARS:
                raise PredictionsError(
                    f"{quoted(filename, 200)}: a cell of column {quoted(name)} has {longest:,} "
                    f"bytes; the limit is {MAX_CELL_CHARS:,} characters. Nothing was loaded."
                )


MAX_PAGES = 10_000
"""Most pages in the column chunks a parquet read decodes (an honest predictions file has a
few per column: pyarrow, pandas and polars write pages of about 1 MB)."""

MAX_PAGE_HEADER_BYTES = 32 * 1024
"""Largest parquet page header decoded (a header holds sizes and small statistics)."""

_CHUNK_PADDING = 100
"""Bytes past a column chunk's declared end that pyarrow still reads for files of old
parquet-mr versions (PARQUET-816, `kMaxDictHeaderSize`): pages starting there count too."""


def _page_sizes(data: bytes, start: int, length: int) -> Iterator[int]:
    """The declared uncompressed size of every page of one column chunk, in file order.

    Each page header (Thrift compact, field 2 `uncompressed_page_size`, field 3
    `compressed_page_size`) is read where pyarrow reads it: from the chunk's first page,
    every next one right after the previous page's compressed bytes. The declared size is
    the whole budget of the page's decompressor: parquet-cpp allocates that many bytes and
    refuses a page that decompresses to more or fewer ("didn't decompress to expected
    size"), so the sum of these sizes bounds what decompression can produce, whatever the
    footer's `total_uncompressed_size` says. Raises ThriftError for a header that cannot
    be read inside the chunk (pyarrow would fail there too).
    """
    end = min(start + max(length, 0), len(data))
    padded = min(end + _CHUNK_PADDING, len(data))
    pos = start
    while 0 <= pos < padded:
        window = memoryview(data)[pos : pos + MAX_PAGE_HEADER_BYTES]
        try:
            header, used = tc.read_struct(window)
        except tc.ThriftError:
            if pos < end:
                raise
            return  # the padding past the declared end: nothing pyarrow would read
        uncompressed, compressed = header.get(2), header.get(3)
        if not isinstance(uncompressed, int) or not isinstance(compressed, int):
            if pos < end:
                raise tc.ThriftError("a page header without its sizes")
            return
        if uncompressed < 0 or compressed < 0:
            raise tc.ThriftError("a negative page size")
        yield uncompressed
        pos += used + compressed


def _decompresses_to_much(filename: str, total: int, declared: int) -> PredictionsError:
    return PredictionsError(
        f"{quoted(filename, 200)} is refused: its task_id, outcome, process, score, split "
        f"and verifier columns decompress to more than {_mb(total)} (its footer declares "
        f"{_size(declared)}): reading them would take more than {_mb(2 * total)} of memory; "
        f"the limit is {_mb(MAX_PARSE_BYTES)}. Nothing was loaded: no page was decompressed."
    )


def _decompressed_bytes(
    data: bytes, meta: Any, wanted: set[str], filename: str, declared: int
) -> int:
    """Bytes the pages of the wanted columns decompress to (their page headers' sum).

    Walked before anything is decompressed, with a running budget: the walk stops at the
    first page that takes the total past what `MAX_PARSE_BYTES` allows (issue 26: a 39 KB
    file whose footer declared small column chunks held 12 pages of 100 MB each)."""
    budget = MAX_PARSE_BYTES // 2
    total = pages = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            if chunk.path_in_schema.split(".")[0] not in wanted:
                continue
            start = chunk.data_page_offset
            dictionary = chunk.dictionary_page_offset if chunk.has_dictionary_page else None
            if dictionary is not None and 0 < dictionary < start:
                start = dictionary
            try:
                for size in _page_sizes(data, start, chunk.total_compressed_size):
                    total, pages = total + size, pages + 1
                    if total > budget:
                        raise _decompresses_to_much(filename, total, declared)
                    if pages > MAX_PAGES:
                        raise PredictionsError(
                            f"{quoted(filename, 200)} has more than {MAX_PAGES:,} data pages "
                            "in its task_id, outcome, process, score, split and verifier "
                            "columns; write it again with pandas or pyarrow (pages of about "
                            "1 MB). Nothing was loaded."
                        )
            except tc.ThriftError as exc:
                raise _unreadable_parquet(filename, exc) from None
    return total


def _python_cell_bytes(table: Any) -> int:
    """Bytes the cells of `table` take once they are Python strings or bytes.

    A dictionary-encoded column stores each distinct string once but `to_pylist` makes
    one object per row: the sum is over rows (the dictionary's lengths taken by index,
    no string materialised)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    total = 0
    for column in table.columns:
        kind = column.type
        values = kind.value_type if pa.types.is_dictionary(kind) else kind
        if pa.types.is_fixed_size_binary(values):
            total += values.byte_width * len(column)
            continue
        if not (pa.types.is_string(values) or pa.types.is_large_string(values)
                or pa.types.is_binary(values) or pa.types.is_large_binary(values)):  # fmt: skip
            continue
        for chunk in column.chunks:
            if pa.types.is_dictionary(kind):
                lengths = pc.take(pc.binary_length(chunk.dictionary), chunk.indices)
            else:
                lengths = pc.binary_length(chunk)
            total += int(pc.sum(lengths).as_py() or 0)
    return total


def _read_parquet(data: bytes, filename: str, max_rows: int) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    footer = struct.unpack("<I", data[-8:-4])[0] if len(data) >= 12 else 0
    if not data.endswith(b"PAR1") or footer > MAX_FOOTER_BYTES:
        what = "no parquet end marker" if not data.endswith(b"PAR1") else "footer too large"
        raise PredictionsError(
            f"Wrong format: {quoted(filename, 200)} is not a readable parquet file ({what})."
        )
    try:  # the footer only; zero-copy over the bytes, no read-ahead threads
        file = pq.ParquetFile(pa.BufferReader(data), pre_buffer=False)
        meta = file.metadata
        schema = file.schema_arrow
        names = list(schema.names)
        n_rows = max(meta.num_rows, sum(meta.row_group(g).num_rows
                                         for g in range(meta.num_row_groups)))  # fmt: skip
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise _unreadable_parquet(filename, exc) from None
    if max(len(names), meta.num_columns) > MAX_COLUMNS:
        raise too_many_columns(filename, f"{max(len(names), meta.num_columns):,}")
    if n_rows > max_rows:
        raise too_many_rows(filename, max_rows)
    roles, ignored = resolve_roles(names, filename)
    wanted = {names[i] for i in roles.values()}
    for name in sorted(wanted):  # levels of a nested column decode to any number of values
        kind = schema.field(name).type
        if pa.types.is_nested(kind.value_type if pa.types.is_dictionary(kind) else kind):
            raise PredictionsError(
                f"{quoted(filename, 200)}: column {quoted(name)} holds lists or structures; "
                "a predictions column holds one value per row. Nothing was loaded."
            )
    declared = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            if chunk.path_in_schema.split(".")[0] in wanted:
                declared += max(chunk.total_uncompressed_size, 0)
    estimate = estimate_parse_bytes(2 * declared, n_rows, len(roles), 0)
    if estimate > MAX_PARSE_BYTES:
        raise _too_big(filename, estimate)
    # The footer's sizes are the file's word: the page headers bound what is decompressed.
    actual = _decompressed_bytes(data, meta, wanted, filename, declared)
    estimate = estimate_parse_bytes(2 * max(declared, actual), n_rows, len(roles), 0)
    if estimate > MAX_PARSE_BYTES:
        raise _too_big(filename, estimate)
    columns = [names[i] for i in sorted(roles.values())]
    try:  # strings stay dictionary-encoded: a long string repeated on every row is held once
        file = pq.ParquetFile(pa.BufferReader(data), pre_buffer=False, read_dictionary=columns)
        table = file.read(columns=columns, use_threads=False)
    except Exception as exc:
        raise _unreadable_parquet(filename, exc) from None
    if table.num_rows > max_rows:
        raise too_many_rows(filename, max_rows)
    _check_arrow_cells(table, filename)
    estimate = _python_cell_bytes(table) + estimate_parse_bytes(0, n_rows, len(roles), 0)
    if estimate > MAX_PARSE_BYTES:
        raise _too_big(filename, estimate)
    by_position = sorted(roles.items(), key=lambda item: item[1])
    frame = pd.DataFrame(
        {
            role: pd.Series(table.column(k).to_pylist(), dtype=object)
            for k, (role, _) in enumerate(by_position)
        }
    )
    return Table(frame, "parquet", ignored)


# ---------------------------------------------------------------------------------------
# The whole file
# ---------------------------------------------------------------------------------------


def _tab_separated(text: str) -> bool:
    """A header line with tabs and no comma: a spreadsheet's tab-separated text export."""
    header = text.lstrip("\ufeff").split("\n", 1)[0]
    return "\t" in header and "," not in header


def read_table(data: bytes, filename: str, max_rows: int | None = None) -> Table:
    """The role columns of an uploaded file, within every bound of the module docstring.

    ``max_rows``: the row cap (default `MAX_ROWS`; `parse_predictions` passes
    `lib.uploads.predictions.validate.row_cap` of the loaded tasks).

    Raises PredictionsError (the file is rejected as a whole) for: over `MAX_BYTES`, an
    unsupported format, over `MAX_COLUMNS` columns, no task_id or outcome column, over
    `MAX_ROWS` rows, too deep or too long JSON, a parse estimated over
    `MAX_PARSE_BYTES`, a kept cell over `MAX_CELL_CHARS`, or no data row.
    """
    max_rows = MAX_ROWS if max_rows is None else max_rows
    check_size(len(data), filename)
    if not data.strip():
        raise PredictionsError(f"{quoted(filename, 200)} is empty.")
    fmt = detect_format(data, filename)
    if fmt == "parquet":
        table = _read_parquet(data, filename, max_rows)
    else:
        text = _text(data, filename)
        if not text.strip():
            raise PredictionsError(f"{quoted(filename, 200)} is empty.")
        if fmt == "csv" and _tab_separated(text):
            fmt = "tsv"
        if fmt in ("csv", "tsv"):
            table = _read_delimited(text, "\t" if fmt == "tsv" else ",", filename, max_rows)
        elif fmt == "jsonl" or not text.lstrip().startswith("["):
            table = _json_lines(text, filename, fmt, max_rows)
        else:
            table = _json_array(text, filename, max_rows)
    if table.n_rows == 0:
        raise PredictionsError(
            f"{quoted(filename, 200)} has no data rows (only a header, or nothing)."
        )
    _check_cells(table.frame, filename)
    return table
