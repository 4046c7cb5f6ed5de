"""How long the Agreement page takes to recompute everything, without Streamlit's cache.

    .venv/bin/python bench/agreement_speed.py [--data SOURCE] [--runs 7] [--resamples 2000]

"Everything" is what one page run computes when the threshold or the data change: every
verifier x reference x split record plus the pooled ``all`` records (2,000 task-bootstrap
resamples each), the human-human bands, the ROC curve with its AUC interval, the
disagreement list and the table frames. Without ``--data`` a default mirror is generated
into a temporary folder (``lib.mirror.write_mirror``, the same as the demo). Prints the
median of ``--runs`` timed runs after one warm-up run; the goal is under 0.5 s.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.common import compute_arguments, compute_bench  # noqa: E402
from lib.analysis import agreement as A  # noqa: E402
from lib.charts import agreement as charts  # noqa: E402
from lib.data.load import Bench  # noqa: E402
from lib.vocab import HUMAN_REFERENCE, Bootstrap  # noqa: E402
from ui import agreement as agreement_view  # noqa: E402
from ui.fmt import value_with_ci  # noqa: E402


def page_recompute(bench: Bench, threshold: float, n_resamples: int) -> int:
    """One page's worth of computation (both splits + pooled); returns the record count."""
    table = bench.verdicts
    splits = A.table_splits(table)
    records = A.agreement_records(table, threshold, boot=Bootstrap(n_resamples))
    bands = {
        d: A.reviewer_band(table, d, boot=Bootstrap(n_resamples)) for d in (A.OUTCOME, A.PROCESS)
    }
    groups = [name for name, _ in A.split_groups(splits)]
    shown = A.select(records, groups, HUMAN_REFERENCE[A.OUTCOME])
    agreement_view.display_frame(shown, value_with_ci)
    agreement_view.csv_frame(shown)
    charts.band_frame(bands, charts.forest_frame(shown, "kappa"))
    charts.forest_frame(shown, "fpr")
    A.roc_result(table, HUMAN_REFERENCE[A.PROCESS], splits, threshold, boot=Bootstrap(n_resamples))
    agreement_view.disagreements_display(
        A.disagreements(
            table,
            bench.tasks,
            "uv_outcome_success",
            HUMAN_REFERENCE[A.OUTCOME],
            splits,
            A.OUTCOME,
        )
    )
    return len(records)


def main(argv: list[str] | None = None) -> int:
    args = compute_arguments(__doc__.splitlines()[0], argv)
    with compute_bench(args.data) as bench:
        thresholds = [0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45]  # like moving the slider
        n_records = page_recompute(bench, 0.8, args.resamples)  # warm-up (imports, BLAS)
        page_times, record_times = [], []
        for i in range(args.runs):
            threshold = thresholds[i % len(thresholds)]
            start = time.perf_counter()
            A.agreement_records(bench.verdicts, threshold, boot=Bootstrap(args.resamples))
            record_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            page_recompute(bench, threshold, args.resamples)
            page_times.append(time.perf_counter() - start)
    print(f"source: {bench.source.describe()}")
    print(
        f"{n_records} agreement records (every verifier x reference x split + pooled), "
        f"{args.resamples:,} bootstrap resamples each, median of {args.runs} runs:"
    )
    print(f"  agreement records only:          {statistics.median(record_times):.3f} s")
    print(f"  everything on the page:          {statistics.median(page_times):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
