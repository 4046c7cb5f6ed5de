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
    "wide.csv": csv_wide,
    "deep.jsonl": json_deep,
    "long_int.jsonl": json_long_int,
}
"""File name -> generator, for the load test's hostile sessions."""
