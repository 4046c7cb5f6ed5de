"""`python -m tools.scale_mirror SRC DST --scale K [--way copies|same-sites]`: a K-times
larger, light-only mirror.

For measuring how the dashboard's work grows with the data (bench/scale.py): every task of
the mirror SRC is written K times, copy k > 0 with the id `<task_id>_<k>` (the website of
`Site--hex_k` and the family of `family_23_k` stay those of the original, so site clusters
grow too), with its annotations (the same reviewers). Two ways:

- `copies` (default): copy k is the original row byte for byte but its id. Equal strings
  are shared when pyarrow converts a column to pandas (`deduplicate_objects`), so the
  texts of a K-times mirror cost about what the original's do: it understates memory.
- `same-sites`: tasks grow K times within the same websites/families and reviewers, and
  every copy's texts are its own (what a real 100x dataset is like: 26,000 distinct
  instructions, logs, verifier outputs and comments, 63 websites, 6 reviewers). Free text
  gets ` (copy k)` appended; the JSON texts (`web_surfer_log`, `gpt_eval_json`) get k
  trailing spaces, so they parse exactly as before; the continuous scores move by
  k * 2**-20 (`SCORES`), so no two copies share a score either, on the same side of every
  threshold and band. Labels and the literal `<no_answer>` are untouched: every verdict is
  that of `copies` (the score-based figures, e.g. an AUC, differ only in ties).

Screenshots are dropped: each screenshot list keeps its
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
WAYS = ("copies", "same-sites")
FREE_TEXT = frozenset(
    {
        "instruction",
        "final_answer",
        "outcome_comment",
        "process_comment",
        "informed_outcome_comment",
        "informed_process_comment",
    }
)
"""Free-text columns: a copy's text is the original + ` (copy k)` (an empty text stays empty,
and `<no_answer>`, which the pages read as a fact, stays as it is)."""
SCORES = frozenset({"uv_rubric_score", "median_human_rubric_score_agnostic", "human_process_score"})
"""Continuous scores in [0, 1]: copy k's is the original + k * 2**-20 (- when that passes 1),
so that the copies' scores are distinct too (a real dataset's are), while every verdict,
threshold (0.8) and rubric band (closed below) stays on the same side."""
STEP = 2.0**-20
JSON_TEXT = frozenset({"web_surfer_log", "gpt_eval_json"})
"""JSON (Lines) texts: a copy gets k trailing spaces (still the same JSON; empty stays empty)."""
NO_ANSWER = "<no_answer>"


def _renamed(table: pa.Table, k: int) -> pa.Table:
    """Copy k of a shard: task ids suffixed `_k` (copy 0 keeps the original ids)."""
    if k == 0:
        return table
    i = table.schema.get_field_index("task_id")
    ids = pc.binary_join_element_wise(table.column(i), pa.scalar(f"_{k}"), "")
    return table.set_column(i, "task_id", ids)


def _own_texts(table: pa.Table, k: int) -> pa.Table:
    """Copy k (k > 0) of a shard with texts and scores of its own (`same-sites`; see the
    module docstring)."""
    for name in sorted((FREE_TEXT | JSON_TEXT) & set(table.column_names)):
        i = table.schema.get_field_index(name)
        column = table.column(i)
        if not pa.types.is_string(column.type):
            continue
        tail = " " * k if name in JSON_TEXT else f" (copy {k})"
        keep = pc.or_(pc.equal(column, ""), pc.equal(column, NO_ANSWER))
        marked = pc.binary_join_element_wise(column, pa.scalar(tail), "")
        table = table.set_column(i, table.schema.field(i), pc.if_else(keep, column, marked))
    for name in sorted(SCORES & set(table.column_names)):
        i = table.schema.get_field_index(name)
        column = table.column(i)
        if not pa.types.is_floating(column.type):
            continue
        up = pc.add(column.cast(pa.float64()), k * STEP)
        down = pc.subtract(column.cast(pa.float64()), k * STEP)
        moved = pc.if_else(pc.greater(up, 1.0), down, up).cast(column.type)
        table = table.set_column(i, table.schema.field(i), moved)
    return table


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


def scale_mirror(src: Path, dst: Path, scale: int, way: str = "copies") -> dict[str, int]:
    """Write the K-times mirror (`way`: `copies` or `same-sites`); return rows per config."""
    if scale < 1:
        raise ValueError("scale must be >= 1")
    if way not in WAYS:
        raise ValueError(f"way must be one of {WAYS}")
    dst.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    for shard in sorted(src.glob("*/*.parquet")):
        source = pq.ParquetFile(shard)
        table = _light(source.read())
        out = dst / shard.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        with pq.ParquetWriter(out, table.schema) as writer:
            for k in range(scale):
                copy = _renamed(table, k)
                if way == "same-sites" and k > 0:
                    copy = _own_texts(copy, k)
                writer.write_table(copy, row_group_size=50_000)
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
    parser.add_argument(
        "--way", choices=WAYS, default="copies", help="byte copies, or texts of their own"
    )
    args = parser.parse_args(argv)
    if not (args.src / "README.md").is_file() and not list(args.src.glob("*/*.parquet")):
        print(f"error: {args.src} is not a mirror folder", file=sys.stderr)
        return 2
    rows = scale_mirror(args.src, args.dst, args.scale, args.way)
    counts = ", ".join(f"{k} {v:,} rows" for k, v in rows.items())
    print(f"{args.dst}: x{args.scale} ({args.way}): {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
