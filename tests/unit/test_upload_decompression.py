"""Bounded decompression (issue 26): a parquet upload is refused before its pages are
decompressed when they would pass the parse-memory bound, whatever its footer declares.

The bomb (`tests.helpers.hostile_uploads.parquet_lying_footer`): a ~50 KB file whose `task_id`
column has 12 column chunks of 100 MB of zstd-compressed strings while the footer declares
each a few hundred bytes. Read naively it took the report's reader from 179 to 2,582 MB.
Memory is measured in a fresh process (`tests/helpers/decompression_probe.py`); the control reads
one such chunk with pyarrow alone, so the same measure is seen to fail by far.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lib.uploads.predictions import read as R
from tests.helpers import hostile_uploads as H

ROOT = Path(__file__).resolve().parents[2]
PEAK_MB = 100
"""The issue's bound on the parse's peak RSS rise."""


def probe(path: Path, mode: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tests.helpers.decompression_probe", str(path), mode],
        cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_lying_footer_bomb_is_refused_before_decompression(tmp_path: Path) -> None:
    bomb = tmp_path / "lying_footer.parquet"
    bomb.write_bytes(H.parquet_lying_footer())
    assert bomb.stat().st_size < 100_000  # 12 x 100 MB behind a small file
    out = probe(bomb, "parse")
    assert "decompress to more than" in out["message"], out
    assert "Nothing was loaded: no page was decompressed" in out["message"], out
    assert "`" not in out["message"] and "Error" not in out["message"], out
    assert out["peak_rise_mb"] < PEAK_MB and out["held_mb"] < 8, out

    one = tmp_path / "one_chunk.parquet"  # the control: pyarrow alone decompresses it
    one.write_bytes(H.parquet_lying_footer(n_chunks=1))
    control = probe(one, "control")
    assert control["peak_rise_mb"] > PEAK_MB, control


def test_the_footer_is_small_and_the_pages_are_large() -> None:
    """The bomb is what it says: small declared sizes, 100 MB page headers."""
    import io

    import pyarrow.parquet as pq

    data = H.parquet_lying_footer(n_chunks=3)
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    declared = sum(meta.row_group(g).column(0).total_uncompressed_size for g in range(3))
    assert declared < 10_000
    chunk = meta.row_group(0).column(0)
    sizes = list(R._page_sizes(data, chunk.data_page_offset, chunk.total_compressed_size))
    assert sizes[0] == 100 * 2**20, sizes


def test_a_page_header_that_lies_small_fails_inside_its_buffer() -> None:
    """A page that says 1 KB and holds 100 MB: zstd stops at the buffer the header sized."""
    with pytest.raises(R.PredictionsError) as info:
        R.read_table(H.parquet_lying_footer(n_chunks=2, page_says=1_000), "small.parquet")
    assert "is not a readable parquet file" in str(info.value)


def test_an_honest_file_of_the_same_shape_still_loads() -> None:
    data = H.parquet_lying_footer(n_chunks=2, chunk_bytes=100 * 400, values_per_chunk=100)
    table = R.read_table(data, "honest.parquet")  # 100-byte cells, true sizes
    assert table.n_rows == 200 and set(table.frame["task_id"].str.len()) == {396}


def test_a_repeated_dictionary_string_counts_once_per_row() -> None:
    """Dictionary pages are tiny, data pages are indices: the Python strings are not."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 50_000
    long = "x" * 4_000  # at the cell limit in bytes
    table = pa.table({"task_id": [long] * n, "verifier": [long] * n,
                      "outcome": [1] * n})  # fmt: skip
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", store_schema=False)
    data = buffer.getvalue()
    assert len(data) < 200_000
    with pytest.raises(R.PredictionsError) as info:
        R.read_table(data, "dict.parquet")
    assert "would take about 39" in str(info.value)  # 2 x 50,000 x 4 KB + cells


def test_too_many_pages_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(R, "MAX_PAGES", 5)
    data = H.parquet_lying_footer(n_chunks=6, chunk_bytes=100 * 400, values_per_chunk=100)
    with pytest.raises(R.PredictionsError) as info:
        R.read_table(data, "pages.parquet")
    assert "more than 5 data pages" in str(info.value)
