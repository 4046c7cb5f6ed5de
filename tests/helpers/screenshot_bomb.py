"""A mirror with one trajectory whose screenshot list holds millions of (null) entries.

`build_bomb_mirror(src, dst, n)` copies `src` and rewrites the first internal trajectories
shard so that its first row (an internal task whose declared `n_screenshots` is small)
stores `n` null screenshots: a few MB on disk, the shape of issue 26's 3-million-entry
list. Used by tests/app/test_screenshot_cap.py and bench/dataset_bombs.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SHARD = "trajectories/internal-00000-of-00002.parquet"


def build_bomb_mirror(src: Path, dst: Path, n: int = 3_000_000) -> str:
    """Write the mirror; return the task id of the row that holds `n` null screenshots."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    path = dst / SHARD
    table = pq.read_table(path)
    i = table.schema.get_field_index("screenshots")
    column = table.column(i).combine_chunks()
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy().astype(np.int64)
    first = int(lengths[0])
    lengths[0] = n
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]), pa.int32())
    values = pa.concat_arrays([pa.nulls(n, column.type.value_type), column.flatten().slice(first)])
    bomb = pa.ListArray.from_arrays(offsets, values, type=column.type)
    table = table.set_column(i, table.schema.field(i), bomb)
    pq.write_table(table, path, row_group_size=24, write_page_index=True)
    return str(table.column("task_id")[0])
