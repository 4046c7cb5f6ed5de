"""Copy a mirror folder with its parquet shards re-laid-out into row groups of N rows.

Why: the generated test mirror has one row group per shard (the old `datasets` layout),
while `datasets` >= 4.1 writes ~100 MB row groups. Tests and benchmarks need both, with
row groups small enough to tell apart in a request log. `rows_per_group=None` writes one
row group per shard. The page index is written either way (as `datasets` does).

Run: `python -m tools.relayout SRC DST [--rows N]`.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pyarrow.parquet as pq


def relayout(src: Path, dst: Path, rows_per_group: int | None) -> Path:
    """Copy `src` to `dst`, rewriting every `*.parquet` with the given row-group size."""
    src, dst = Path(src), Path(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.parquet"), dirs_exist_ok=True)
    for shard in sorted(src.rglob("*.parquet")):
        table = pq.read_table(shard)  # keeps the `huggingface` schema metadata
        target = dst / shard.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        size = rows_per_group or max(table.num_rows, 1)
        pq.write_table(table, target, row_group_size=size, write_page_index=True)
    return dst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("--rows", type=int, default=None, help="rows per row group")
    args = parser.parse_args()
    relayout(args.src, args.dst, args.rows)


if __name__ == "__main__":
    main()
