"""Small hostile predictions files (issue 18), generated on demand, never stored.

Each is well under a megabyte but, read naively, drove the shared server to gigabytes
or crashed the parser. `honest_csv` is a valid file for the same tasks.
"""

from __future__ import annotations

import io

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def jsonl_own_keys(n_records: int = 3_000, keys: int = 10) -> bytes:
    """JSON Lines whose records each carry their own keys (a union of 30,000 columns)."""
    lines = []
    for r in range(n_records):
        extra = ", ".join(f'"k{r}_{k}": 1' for k in range(keys))
        lines.append(f'{{"task_id": "t{r}", "outcome": 1, {extra}}}')
    return ("\n".join(lines) + "\n").encode()


def parquet_null_columns(n_columns: int = 1_000, n_rows: int = 200) -> bytes:
    """Parquet with many all-null columns (a few hundred kilobytes)."""
    arrays = {"task_id": pa.array(["t"] * n_rows), "outcome": pa.array([1] * n_rows)}
    arrays |= {f"c{i}": pa.nulls(n_rows, pa.string()) for i in range(n_columns)}
    buffer = io.BytesIO()
    pq.write_table(pa.table(arrays), buffer)
    return buffer.getvalue()


def parquet_compressible(n_rows: int = 2_000, cell_chars: int = 200_000) -> bytes:
    """Parquet whose task_id cells are long runs of one letter: tiny on disk, 400 MB read."""
    column = pa.array(["a" * cell_chars] * n_rows)
    table = pa.table({"task_id": column, "outcome": pa.array([1] * n_rows)})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", use_dictionary=False)
    return buffer.getvalue()


def _zstd_stream(pieces: int, piece: bytes) -> bytes:
    """One zstd frame of `piece` repeated `pieces` times, compressed as it is written (the
    decompressed bytes are never held: one piece at a time)."""
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        for _ in range(pieces):
            out.write(piece)
    return sink.getvalue().to_pybytes()


def parquet_lying_footer(
    n_chunks: int = 12,
    chunk_bytes: int = 100 * 2**20,
    values_per_chunk: int = 100,
    page_says: int | None = None,
) -> bytes:
    """Issue 26's bomb: a ~40 KB parquet file whose `task_id` column has `n_chunks` column
    chunks (one per row group) of `chunk_bytes` each once decompressed, while its footer
    declares each chunk as small as an honest one.

    Built cheaply: pyarrow writes a small honest file of the same shape (PLAIN strings,
    zstd, one page per chunk); each `task_id` page is then replaced by one zstd frame of
    `values_per_chunk` strings of `chunk_bytes / values_per_chunk` bytes (written piece by
    piece: nothing near 100 MB is ever held), and the footer is re-encoded with the new
    offsets and compressed sizes but the old `total_uncompressed_size`. Each new page
    header says its true uncompressed size, or `page_says` (a page header that lies too).
    """
    from lib.data.parquet import thrift_compact as tc

    rows = values_per_chunk
    table = pa.table(
        {
            "task_id": pa.array(["x"] * (rows * n_chunks), pa.string()),
            "outcome": pa.array([1] * (rows * n_chunks), pa.int8()),
        },
        schema=pa.schema(
            [
                pa.field("task_id", pa.string(), nullable=False),
                pa.field("outcome", pa.int8(), nullable=False),
            ]
        ),
    )
    buffer = io.BytesIO()
    pq.write_table(
        table, buffer, row_group_size=rows, compression="zstd", use_dictionary=False,
        write_statistics=False, data_page_version="1.0", store_schema=False,
    )  # fmt: skip
    small = buffer.getvalue()
    footer_len = int.from_bytes(small[-8:-4], "little")
    footer, _ = tc.read_struct(small[-8 - footer_len : -8])

    width = chunk_bytes // values_per_chunk - 4
    value = width.to_bytes(4, "little") + b"a" * width
    per_piece = min(values_per_chunk, max(1, 2**20 // len(value)))  # about 1 MB a write
    while values_per_chunk % per_piece:
        per_piece -= 1
    body = _zstd_stream(values_per_chunk // per_piece, value * per_piece)
    true_size = len(value) * values_per_chunk

    out = bytearray(b"PAR1")
    for group in footer.get(4).values:  # FileMetaData.row_groups
        group_start = len(out)
        for chunk in group.get(1).values:  # RowGroup.columns
            meta = chunk.get(3)  # ColumnChunk.meta_data
            start, length = meta.get(9), meta.get(7)  # data_page_offset, total_compressed
            old = small[start : start + length]
            new_start = len(out)
            if meta.get(3).values == [b"task_id"]:  # path_in_schema
                header, _ = tc.read_struct(old)
                header.set(2, tc.I32, true_size if page_says is None else page_says)
                header.set(3, tc.I32, len(body))
                out += tc.write_struct(header) + body
            else:
                out += old
            meta.set(9, tc.I64, new_start)
            meta.set(7, tc.I64, len(out) - new_start)  # total_uncompressed_size (6) is kept
            chunk.set(2, tc.I64, new_start)  # ColumnChunk.file_offset
        group.set(5, tc.I64, group_start)  # RowGroup.file_offset
        group.set(6, tc.I64, len(out) - group_start)  # RowGroup.total_compressed_size
    encoded = tc.write_struct(footer)
    out += encoded + len(encoded).to_bytes(4, "little") + b"PAR1"
    return bytes(out)


def csv_wide(n_columns: int = 200_000) -> bytes:
    """A CSV with a 200,000-column header and one data row."""
    header = "task_id,outcome," + ",".join(f"c{i}" for i in range(n_columns))
    row = "t,1" + ",x" * n_columns
    return (header + "\n" + row + "\n").encode()


def json_deep(depth: int = 100_000, lines: bool = True) -> bytes:
    """JSON nested `depth` levels deep inside one record (RecursionError in `json`)."""
    value = "[" * depth + "]" * depth
    record = '{"task_id": "t", "outcome": 1, "x": ' + value + "}"
    return (record + "\n").encode() if lines else ("[" + record + "]").encode()


def json_long_int(digits: int = 5_000) -> bytes:
    """One record whose outcome is a 5,000-digit integer (ValueError in `json`)."""
    return ('{"task_id": "t", "outcome": ' + "7" * digits + "}\n").encode()


def csv_many_verifiers(tasks: list[str], n_verifiers: int) -> bytes:
    """A valid file naming `n_verifiers` verifiers."""
    rows = [(f"v{v}", t, v % 2) for v in range(n_verifiers) for t in tasks]
    return (
        pd.DataFrame(rows, columns=["verifier", "task_id", "outcome"]).to_csv(index=False).encode()
    )


ALL = {
    "jsonl_own_keys.jsonl": jsonl_own_keys,
    "null_columns.parquet": parquet_null_columns,
    "compressible.parquet": parquet_compressible,
    "lying_footer.parquet": parquet_lying_footer,
    "wide.csv": csv_wide,
    "deep.jsonl": json_deep,
    "long_int.jsonl": json_long_int,
}
"""File name -> generator, for the load test's hostile sessions."""
