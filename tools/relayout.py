"""Copy a mirror folder with its parquet shards re-laid-out into row groups of N rows.

Why: the generated test mirror has one row group per shard (the old `datasets` layout),
while `datasets` >= 4.1 writes ~100 MB row groups. Tests and benchmarks need both, with
row groups small enough to tell apart in a request log. `rows_per_group=None` writes one
row group per shard. The page index is written unless `page_index=False`.

Run: `python -m tools.relayout SRC DST [--rows N]`.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def relayout(src: Path, dst: Path, rows_per_group: int | None, page_index: bool = True) -> Path:
    """Copy `src` to `dst`, rewriting every `*.parquet` with the given row-group size
    (`page_index=False`: without an offset index, as `datasets` < 4.1 wrote)."""
    src, dst = Path(src), Path(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.parquet"), dirs_exist_ok=True)
    for shard in sorted(src.rglob("*.parquet")):
        table = pq.read_table(shard)  # keeps the `huggingface` schema metadata
        target = dst / shard.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        size = rows_per_group or max(table.num_rows, 1)
        pq.write_table(table, target, row_group_size=size, write_page_index=page_index)
    return dst


def relayout_as(src: Path, dst: Path, layout: str, rows_per_group: int | None = None) -> Path:
    """Copy `src` with its trajectories shards rewritten in a `lib.mirror` layout
    (`current`, `dict`, `v4.0`), row groups of `rows_per_group` rows (default: as
    `push_to_hub` sizes them over the whole split). No PNG is re-rendered."""
    import datasets
    from datasets import Dataset, Features

    from lib.mirror.hub import split_batch_size, write_shard

    datasets.utils.disable_progress_bars()
    src, dst = Path(src), Path(dst)
    shutil.copytree(src, dst, dirs_exist_ok=True)
    shards = sorted((src / "trajectories").glob("*.parquet"))
    splits = sorted({s.name.rsplit("-", 3)[0] for s in shards})
    for split in splits:
        mine = [s for s in shards if s.name.startswith(split + "-")]
        tables = [pq.read_table(s) for s in mine]
        features = Features.from_arrow_schema(tables[0].schema)
        whole = Dataset(pa.concat_tables(tables))
        size = rows_per_group or split_batch_size(whole)
        for shard, table in zip(mine, tables, strict=True):
            dataset = Dataset(table.cast(features.arrow_schema))
            write_shard(dataset, dst / "trajectories" / shard.name, layout, size)
    return dst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("--rows", type=int, default=None, help="rows per row group")
    parser.add_argument("--no-page-index", action="store_true", help="no offset index")
    args = parser.parse_args()
    relayout(args.src, args.dst, args.rows, not args.no_page_index)


if __name__ == "__main__":
    main()
