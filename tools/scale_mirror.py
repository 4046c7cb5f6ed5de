"""`python -m tools.scale_mirror SRC DST --scale K`: a K-times larger, light-only mirror.

For measuring how the dashboard's work grows with the data (bench/scale.py): every task of
the mirror SRC is written K times, copy k > 0 with the id `<task_id>_<k>` (the website of
`Site--hex_k` and the family of `family_23_k` stay those of the original, so site clusters
grow too), with its annotations. Screenshots are dropped: each screenshot list keeps its
length (the counts the pages show) but every element is null, so a 100x mirror of the
260-task default mirror is a few hundred megabytes. The README front matter and layout
are SRC's, so `CUAVB_DATA=DST` loads it like any mirror. Shards are written one copy at a
time (memory: one source shard).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SCREENSHOTS = "screenshots"


def _renamed(table: pa.Table, k: int) -> pa.Table:
    """Copy k of a shard: task ids suffixed `_k` (copy 0 keeps the original ids)."""
    if k == 0:
        return table
    i = table.schema.get_field_index("task_id")
    ids = pc.binary_join_element_wise(table.column(i), pa.scalar(f"_{k}"), "")
    return table.set_column(i, "task_id", ids)


def _light(table: pa.Table) -> pa.Table:
    """The shard without screenshot bytes: each list keeps its length, elements null."""
    i = table.schema.get_field_index(SCREENSHOTS)
    if i < 0:
        return table
    column = table.column(i).combine_chunks()
    kind = column.type
    lengths = pc.fill_null(pc.list_value_length(column), 0)
    offsets = pa.array([0, *pc.cumulative_sum(lengths).to_pylist()], pa.int32())
    values = pa.nulls(int(pc.sum(lengths).as_py() or 0), kind.value_type)
    light = pa.ListArray.from_arrays(offsets, values, type=kind, mask=column.is_null())
    return table.set_column(i, table.schema.field(i), light)


def scale_mirror(src: Path, dst: Path, scale: int) -> dict[str, int]:
    """Write the K-times mirror; return rows written per config."""
    if scale < 1:
        raise ValueError("scale must be >= 1")
    dst.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    for shard in sorted(src.glob("*/*.parquet")):
        source = pq.ParquetFile(shard)
        table = _light(source.read())
        out = dst / shard.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        with pq.ParquetWriter(out, table.schema) as writer:
            for k in range(scale):
                writer.write_table(_renamed(table, k), row_group_size=50_000)
        written[shard.parent.name] = written.get(shard.parent.name, 0) + scale * len(table)
    for name in ("README.md",):
        if (src / name).is_file():
            shutil.copy2(src / name, dst / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("--scale", type=int, default=10)
    args = parser.parse_args(argv)
    if not (args.src / "README.md").is_file() and not list(args.src.glob("*/*.parquet")):
        print(f"error: {args.src} is not a mirror folder", file=sys.stderr)
        return 2
    rows = scale_mirror(args.src, args.dst, args.scale)
    print(f"{args.dst}: x{args.scale}: " + ", ".join(f"{k} {v:,} rows" for k, v in rows.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
