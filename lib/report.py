"""`python -m lib.report [--data SOURCE] [--predictions FILE]... [--cluster task|site]
[--format json|markdown]`.

The pages' numbers, headless. Each analysis module contributes one key through a
`report_records(bench, boot)` function (dicts or small dataclasses), the same code path its
page uses.
`--cluster task|site` (default task) is what every interval of every section resamples:
tasks, or websites (om2w) / task families (internal); the JSON header says it (`cluster`)
and each record's bootstrap settings name the unit.
Undefined values are `null` in JSON (`lib.metrics.to_jsonable`, the one JSON cleaner).

`--predictions FILE` (repeatable) loads your verifier outputs exactly as the "Your
verifier" page does (`lib.predictions`): their verdict rows are added to the bench the
sections see, so your verifiers appear in `agreement`, `judge_pairs`, ... like any other;
the key `predictions` says per file what was used and dropped (dropped rows are also
printed to stderr), and `your_verifier` compares each with the Universal Verifier
(`lib.compare`). A file rejected as a whole stops the report with exit code 2.

In a notebook, the same numbers as pandas DataFrames, one per section (`tables`):

    >>> from lib import report                                      # doctest: +SKIP
    >>> t = report.tables("microsoft/CUAVerifierBench")  # or a mirror folder, or "demo"
    >>> t["agreement"].query("dimension == 'outcome'")[["split", "verifier", "kappa",
    ...                                                 "kappa_ci_low", "kappa_ci_high"]]
    >>> t["agreement"].attrs["source"], t["agreement"].attrs["cluster"]

Columns are the JSON keys; an interval `x_ci` becomes `x_ci_low` and `x_ci_high`; a
nested object becomes dotted columns (`a.b`); undefined values are NaN. `attrs` says
what the numbers were computed on (source, revision, cluster unit).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from lib import agreement, compare, judges, predictions, shifts, slices
from lib.clusters import CLUSTER_MODES, DEFAULT_CLUSTER_MODE
from lib.data import Bench, load_bench
from lib.metrics import to_jsonable
from lib.source import ENV_VAR, SourceError, resolve
from lib.vocab import BOOTSTRAP, Bootstrap

#: Each section is ``report_records(bench, boot)``: ``boot.unit`` is ``task`` or ``site``.
SECTIONS: dict[str, Callable[[Bench, Bootstrap], Sequence[Any]]] = {
    "agreement": agreement.report_records,
    "judge_pairs": judges.report_records,
    "shifts": shifts.report_records,
    "slices": slices.report_records,
}


def load_predictions(bench: Bench, paths: Sequence[str | Path]) -> list[predictions.Upload]:
    """Parse each predictions file against the bench (names kept distinct across files).

    Raises PredictionsError (the message names the file) when a file is rejected whole.
    """
    uploads: list[predictions.Upload] = []
    taken: set[str] = set()
    for path in map(Path, paths):
        try:
            predictions.check_size(path.stat().st_size, path.name)  # before reading it
            data = path.read_bytes()
        except OSError as exc:
            raise predictions.PredictionsError(f"cannot read `{path}`: {exc}") from exc
        upload = predictions.parse_predictions(data, path.name, bench.tasks, taken)
        taken.update(upload.raters)
        uploads.append(upload)
    return uploads


def with_uploads(bench: Bench, uploads: Sequence[predictions.Upload]) -> Bench:
    """A copy of the bench whose verdict table also holds the uploaded verifiers' rows."""
    if not uploads:
        return bench
    table = predictions.with_uploaded(bench.verdicts, [u.verdicts for u in uploads])
    return replace(bench, verdicts=table)


MAX_DROPPED_SHOWN = 20
"""Dropped rows listed one by one (stderr warnings and the report's `dropped` list); the
rest are counted. A 50,000-row bad file must give a report of bounded size."""
MAX_UNKNOWN_SHOWN = 100
"""Unknown task ids listed in the report at most (the rest are counted)."""


def _upload_record(upload: predictions.Upload) -> dict[str, Any]:
    """One uploaded file in the report; long lists are cut (`*_not_listed` counts the rest)."""
    dropped = upload.dropped.head(MAX_DROPPED_SHOWN)
    unknown = upload.unknown_task_ids[:MAX_UNKNOWN_SHOWN]
    return {
        "file": upload.filename,
        "format": upload.file_format,
        "verifiers": upload.raters,
        "n_rows": upload.n_rows,
        "n_used": upload.n_used,
        "n_dropped": len(upload.dropped),
        "dropped": dropped.to_dict("records"),
        "dropped_not_listed": len(upload.dropped) - len(dropped),
        "unknown_task_ids": unknown,
        "unknown_task_ids_not_listed": len(upload.unknown_task_ids) - len(unknown),
        "coverage": upload.coverage.to_dict("records"),
        "notes": upload.notes,
    }


def build_report(
    bench: Bench,
    uploads: Sequence[predictions.Upload] = (),
    boot: Bootstrap = BOOTSTRAP,
) -> dict[str, Any]:
    """Every available section's records, plus where they were computed.

    ``boot`` is the bootstrap of every interval (``boot.unit``, ``task`` / ``site``, is
    the header's ``cluster``).

    With `uploads`, the sections run on a bench whose verdicts include the uploaded rows,
    and the keys `predictions` and `your_verifier` are added.
    """
    bench = with_uploads(bench, uploads)
    report: dict[str, Any] = {
        "source": bench.source.describe(),
        "synthetic_demo": bench.source.is_demo,
        "revision": None
        if bench.revision is None
        else {"sha": bench.revision.sha, "date": bench.revision.date},
        "n_tasks": {s: int(n) for s, n in bench.tasks.groupby("split").size().items()},
        "cluster": boot.unit,
    }
    for key, records in SECTIONS.items():
        report[key] = records(bench, boot)
    if uploads:
        report["predictions"] = [_upload_record(u) for u in uploads]
        report["your_verifier"] = [
            record
            for upload in uploads
            for rater in upload.raters
            for dimension in compare.dimensions(upload.verdicts, rater)
            for record in compare.records(bench.verdicts, rater, dimension, boot=boot)
        ]
    return to_jsonable(report)


def to_markdown(report: dict[str, Any]) -> str:
    """One Markdown table per section."""
    lines = [f"Source: {report['source']}", ""]
    for key in (*SECTIONS, "predictions", "your_verifier"):
        records = report.get(key)
        if not records:
            continue
        names = dict.fromkeys(c for r in records for c in r)  # each column checked once
        columns = [c for c in names if _tabular(c, records)]
        lines += [f"## {key}", "", "| " + " | ".join(columns) + " |"]
        lines.append("|" + "---|" * len(columns))
        for record in records:
            cells = [_cell(record[c]) if c in record else "" for c in columns]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _tabular(column: str, records: list[dict[str, Any]]) -> bool:
    """Scalars and [low, high] intervals fit a table cell; nested objects do not."""
    return all(
        not isinstance(r.get(column), dict)
        and (not isinstance(r.get(column), list) or column.endswith("_ci"))
        for r in records
    )


def _cell(value: Any) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list) and len(value) == 2:
        return f"[{_cell(value[0])}, {_cell(value[1])}]"
    return str(value).replace("|", "\\|")


def warn_dropped(upload: predictions.Upload, limit: int = MAX_DROPPED_SHOWN) -> None:
    """One stderr line per dropped row, for the first `limit` rows; then one line for the
    rest. Each line is cut at 300 characters (a reason quotes the row's values)."""
    for row in upload.dropped.head(limit).itertuples():
        line = f"warning: {upload.filename} row {row.row} dropped: {row.reason}"
        print(line[:300], file=sys.stderr)
    rest = len(upload.dropped) - limit
    if rest > 0:
        print(f"warning: {upload.filename}: and {rest:,} more dropped rows", file=sys.stderr)


def dataframes(report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """One DataFrame per list section of a `build_report` dict (see the module docstring).

    Every frame's `attrs` carries the header: source, synthetic_demo, revision, cluster.
    """
    header = {k: report.get(k) for k in ("source", "synthetic_demo", "revision", "cluster")}
    out: dict[str, pd.DataFrame] = {}
    for key, records in report.items():
        if not isinstance(records, list):
            continue
        frame = pd.json_normalize(records) if records else pd.DataFrame()
        for column in [c for c in frame.columns if _is_interval(frame[c])]:
            bounds = [v if isinstance(v, list) else [None, None] for v in frame[column]]
            at = frame.columns.get_loc(column)
            frame.insert(at + 1, f"{column}_low", pd.to_numeric([b[0] for b in bounds]))
            frame.insert(at + 2, f"{column}_high", pd.to_numeric([b[1] for b in bounds]))
            frame = frame.drop(columns=column)
        frame.attrs.update(header)
        out[key] = frame
    return out


def _is_interval(column: pd.Series) -> bool:
    """An `x_ci` column of [low, high] pairs (or nulls where undefined)."""
    return str(column.name).endswith("_ci") and all(
        v is None or (isinstance(v, list) and len(v) == 2) for v in column
    )


def tables(
    data: str | None = None,
    predictions_files: Sequence[str | Path] = (),
    cluster: str = DEFAULT_CLUSTER_MODE,
) -> dict[str, pd.DataFrame]:
    """The report as DataFrames, for a notebook: `data` is a source as in `CUAVB_DATA`
    (Hub id, mirror folder or "demo"; default: that variable, else the Hub),
    `predictions_files` your verifier outputs, `cluster` the bootstrap unit."""
    spec = data if data is not None else os.environ.get(ENV_VAR, "")
    bench = load_bench(resolve(spec))
    uploads = load_predictions(bench, predictions_files)
    return dataframes(build_report(bench, uploads, Bootstrap(unit=cluster)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lib.report", description=__doc__)
    parser.add_argument("--data", help=f"source as in {ENV_VAR}: Hub id, folder or 'demo'")
    parser.add_argument(
        "--predictions",
        action="append",
        default=[],
        metavar="FILE",
        help="your verifier outputs (CSV, JSON Lines or parquet; see the README); repeatable",
    )
    parser.add_argument(
        "--cluster",
        choices=CLUSTER_MODES,
        default=DEFAULT_CLUSTER_MODE,
        help="what every bootstrap interval resamples: tasks, or websites/task families",
    )
    parser.add_argument("--format", choices=("json", "markdown"), default="json")
    args = parser.parse_args(argv)
    spec = args.data if args.data is not None else os.environ.get(ENV_VAR, "")
    try:
        bench = load_bench(resolve(spec))
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        uploads = load_predictions(bench, args.predictions)
    except predictions.PredictionsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (Exception, MemoryError) as exc:  # never a traceback for a bad file: one line
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(f"error: cannot load predictions ({type(exc).__name__}: {first})", file=sys.stderr)
        return 2
    for upload in uploads:
        warn_dropped(upload)
    report = build_report(bench, uploads, Bootstrap(unit=args.cluster))
    if args.format == "json":
        print(json.dumps(report, indent=2, allow_nan=False))
    else:
        print(to_markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
