"""How long the slices of one verifier take to compute, without Streamlit's cache.

    .venv/bin/python bench/slices_speed.py [--data SOURCE] [--runs 7] [--resamples 2000]

Goal (issue 14): every slice dimension for one verifier within 0.5 s of compute on the
full-size data (260 tasks, the same task count as the default mirror). Without
``--data`` a default mirror is generated into a temporary folder (`lib.mirror`).

Prints, as the median of ``--runs`` timed runs after one warm-up (wall and CPU time of
this process; the machine may be shared, so wall time is an upper bound):
- ``slice_table``: the slice value of every task (parses every action log: the page
  caches it per data source and split);
- ``slice_records``: every dimension for the Universal Verifier's outcome verdict against
  the final human label, both splits pooled, resampling tasks and then websites;
- the same with as many website/family slices as the real data has (63 + 70: the mirror
  has fewer sites), to bound the real page;
- ``PAGE``: what the Slices page computes for one verifier and every dimension on a
  cache miss (both units, for the design-effect note, and a slice's rows): the issue's
  0.5 s target;
- ``paired_slice_records``: Universal Verifier vs the legacy multimodal verifier.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.common import compute_arguments, compute_bench  # noqa: E402
from lib.analysis import slices as S  # noqa: E402
from lib.analysis.slice_values import SliceTable, slice_table  # noqa: E402
from lib.vocab import Bootstrap  # noqa: E402

UV, MM, FINAL = "uv_outcome_success", "mm_is_success", "final_human_outcome_label"
REAL_SITES = {"fara7b_om2w_browserbase": 63, "internal": 70}  # DATASET.md


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``runs`` calls after one warm-up call; last result."""
    result = fn()
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), result


def with_real_site_count(table: SliceTable) -> SliceTable:
    """The same tasks spread over as many website/family values as the real data has."""
    frame = table.frame.copy()
    for split, k in REAL_SITES.items():
        rows = frame.index[frame["split"] == split]
        frame.loc[rows, "site"] = [f"{split[:4]}-site{i % k:02d}" for i in range(len(rows))]
    orders = dict(table.orders)
    orders["site"] = tuple(sorted(frame["site"].unique()))
    return replace(table, frame=frame, orders=orders)


def main(argv: list[str] | None = None) -> int:
    args = compute_arguments(__doc__.splitlines()[0], argv)
    with compute_bench(args.data) as bench:
        table, tasks = bench.verdicts, bench.tasks
    b, runs = args.resamples, args.runs

    w, c, slices = timed(lambda: slice_table(tasks, table, "outcome"), runs)
    print(f"source: {bench.source.describe()}; {len(tasks)} tasks")
    print(f"{b:,} resamples, seed 0, median of {runs} runs (wall; cpu):")
    print(f"  slice_table (every task's slice values, logs parsed): {w:.3f} s; {c:.3f} s")

    real = with_real_site_count(slices)
    cases = [
        ("task", slices, "resample tasks"),
        ("site", slices, "resample websites/families"),
        ("task", real, f"resample tasks, {len(real.orders['site'])} website/family slices"),
        ("site", real, f"resample websites, {len(real.orders['site'])} website/family slices"),
    ]
    for mode, st, label in cases:

        def run(mode: str = mode, st: SliceTable = st) -> list[S.SliceRecord]:
            return S.slice_records(
                table, tasks, UV, FINAL, "outcome", "all", slices=st, boot=Bootstrap(b, unit=mode)
            )

        w, c, records = timed(run, runs)
        print(f"  slice_records, {len(records)} slices, {label}: {w:.3f} s; {c:.3f} s")

    def page(st: SliceTable = real) -> int:
        """What the Slices page computes on a cache miss for one verifier, every dimension:
        the records in the chosen unit, the same in the other unit (for the design-effect
        note) and the rows of the slice whose tasks are listed."""
        n = 0
        for mode in ("task", "site"):
            boot = Bootstrap(b, unit=mode)
            n += len(
                S.slice_records(
                    table, tasks, UV, FINAL, "outcome", "all", slices=st, sort_by=None, boot=boot
                )
            )
        S.selection_rows(table, st, UV, FINAL, "outcome", "all", "task")
        return n

    w, c, n_records = timed(page, runs)
    print(
        f"  PAGE (every slice dimension, one verifier, task + site units, "
        f"{len(real.orders['site'])} website/family slices): {w:.3f} s; {c:.3f} s "
        f"for {n_records} slice records (target 0.5 s)"
    )

    w, c, paired = timed(
        lambda: S.paired_slice_records(
            table, tasks, UV, MM, FINAL, "outcome", "all", slices=slices, boot=Bootstrap(b)
        ),
        max(1, runs // 2),
    )
    print(f"  paired_slice_records (4 metrics), {len(paired)} slices: {w:.3f} s; {c:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
