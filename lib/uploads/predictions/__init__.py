"""A researcher's own verifier outputs -> verdict rows scored like the Universal Verifier.

The upload is a table (CSV, TSV, JSON Lines, a JSON array of objects, or parquet) with one
row per (verifier, task):

| column | required | values |
|---|---|---|
| `task_id` | yes | a task id of the loaded data |
| `outcome` | yes | `1/0`, `true/false`, `success/failure`, `correct/incorrect` (any case) |
| `process` | no | the same spellings; empty = no process verdict for that task |
| `score` | no | a number in [0, 1] (e.g. a rubric score) |
| `split` | no | the task's split (`fara7b_om2w_browserbase` or `om2w`, `internal`) |
| `verifier` | no | the verifier's name, for several verifiers in one file; default: the file name |
| `version` | no | the verifier's version (any text); versions are ordered as they first appear |
| `run` | no | a repeated run of a version: an integer 1-999 (empty = 1) |

With `version` and/or `run` the file is a verifier's history (`Upload.history`): the other
pages pair each verifier's last version (its lowest run), the Iterations section
(`lib.analysis.iterations`) every version-run. Bounds: `MAX_VERSIONS_PER_VERIFIER` (50),
`MAX_RUNS_PER_VERSION` (5), `MAX_VERSION_RUNS_PER_SESSION` (200); a verifier with versions
counts once towards `MAX_VERIFIERS_PER_SESSION` (20). Without these columns a file gives
exactly the rows it gave before.

Policy ("nothing half-loaded"):

- **File-level problems reject the whole file** and nothing is added: over `MAX_BYTES`
  (checked before parsing), empty, not a readable table of a supported format (a PNG, a
  line that is not JSON, a broken parquet), no `task_id` or no outcome column, or no
  valid row at all.
- **Row-level problems drop that row**, and the row is listed with every reason: an
  unknown or empty task id, an empty or unparseable outcome, an unparseable process
  label, a score that is not a number or lies outside [0, 1], a split that is unknown or
  not the task's split, an empty verifier name. A task id that occurs more than once for
  the same verifier is ambiguous: **all** its rows are dropped. A valid row yields all
  its verdicts (outcome, and process when the file has process labels) or none.
- Row numbers count data rows from 1 in file order (row 1 is line 2 of a CSV).
- **Bounded work** (`lib.uploads.predictions.read`): bytes, columns (at most `MAX_COLUMNS`; only
  the columns a role needs are read), rows, cell length, JSON nesting depth and number
  length are each capped before the work they drive, and a parse whose estimated memory
  is over `MAX_PARSE_BYTES` is refused unread. At most `MAX_VERIFIERS_PER_FILE` verifiers
  per file and `MAX_VERIFIERS_PER_SESSION` per session. Every message has a bounded
  length (a duplicate names its count and at most `MAX_LISTED_ROWS` row numbers).
- **Text encodings**: UTF-8 (with or without BOM) and UTF-16 with a BOM (what spreadsheet
  "Unicode text" exports write) are decoded; a UTF-16 export with tabs is read as TSV.

Messages (the PredictionsError text, `dropped.reason`, `notes`) are plain text that quotes
values from the file in double quotes: show them with `ui.safe_text` (`inert`/`plain`),
never as Markdown. Keep a rejection's message and `dropped` table, never the exception.

Two modules behind this API: `read` (the file -> the role columns, within bounds) and
`validate` (cells -> verdict rows, the caps on verifiers).

Verdict rows have the columns and dtypes of `lib.table.verdicts.COLUMNS`, `kind = "verifier"`
and rater id `mine:<name>` (the prefix keeps them apart from the dataset's raters; a name
already taken in the session gets a ` (2)` suffix). The score goes on the process rows
when the verifier has process labels, else on the outcome rows.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from lib.uploads.predictions.read import (
    COLUMN_ALIASES,
    EXTENSIONS,
    FORMATS,
    MAX_BYTES,
    MAX_CELL_CHARS,
    MAX_COLUMNS,
    MAX_DEPTH,
    MAX_NUMBER_CHARS,
    MAX_PARSE_BYTES,
    MAX_ROWS,
    REQUIRED,
    PredictionsError,
    Table,
    check_size,
    detect_format,
    estimate_parse_bytes,
    read_table,
    too_many_rows,
)
from lib.uploads.predictions.validate import (
    DEFAULT_VERSION,
    DROPPED_COLUMNS,
    HISTORY_COLUMNS,
    LABEL_SPELLINGS,
    MAX_LISTED_ROWS,
    MAX_NAME,
    MAX_RUN,
    MAX_RUNS_PER_VERSION,
    MAX_VERIFIERS_PER_FILE,
    MAX_VERIFIERS_PER_SESSION,
    MAX_VERSION_RUNS_PER_SESSION,
    MAX_VERSIONS_PER_VERIFIER,
    PREFIX,
    Upload,
    clean_name,
    coverage,
    current_versions,
    default_verifier_name,
    display_name,
    empty_verdicts,
    parse_binary,
    parse_predictions,
    parse_run,
    parse_score,
    row_cap,
    typed_verdicts,
    version_runs,
)
from lib.vocab import short_split

__all__ = [
    "COLUMN_ALIASES",
    "DEFAULT_VERSION",
    "DROPPED_COLUMNS",
    "EXTENSIONS",
    "FORMATS",
    "HISTORY_COLUMNS",
    "LABEL_SPELLINGS",
    "MAX_BYTES",
    "MAX_CELL_CHARS",
    "MAX_COLUMNS",
    "MAX_DEPTH",
    "MAX_LISTED_ROWS",
    "MAX_NAME",
    "MAX_NUMBER_CHARS",
    "MAX_PARSE_BYTES",
    "MAX_ROWS",
    "MAX_RUN",
    "MAX_RUNS_PER_VERSION",
    "MAX_VERIFIERS_PER_FILE",
    "MAX_VERIFIERS_PER_SESSION",
    "MAX_VERSIONS_PER_VERIFIER",
    "MAX_VERSION_RUNS_PER_SESSION",
    "PREFIX",
    "REQUIRED",
    "PredictionsError",
    "Table",
    "Upload",
    "add_history",
    "add_upload",
    "check_size",
    "clean_name",
    "coverage",
    "current_versions",
    "default_verifier_name",
    "detect_format",
    "display_name",
    "empty_verdicts",
    "estimate_parse_bytes",
    "parse_binary",
    "parse_predictions",
    "parse_run",
    "parse_score",
    "read_table",
    "remove_raters",
    "row_cap",
    "too_many_rows",
    "typed_verdicts",
    "uploaded_summary",
    "version_runs",
    "with_uploaded",
]


# ---------------------------------------------------------------------------------------
# The session's uploaded rows
# ---------------------------------------------------------------------------------------


def add_upload(existing: pd.DataFrame | None, upload: Upload) -> pd.DataFrame:
    """The session's uploaded rows with this upload's rows appended (dtypes kept)."""
    if existing is None or len(existing) == 0:
        return upload.verdicts.copy()
    return typed_verdicts(pd.concat([existing, upload.verdicts], ignore_index=True))


def add_history(existing: pd.DataFrame | None, upload: Upload) -> pd.DataFrame | None:
    """The session's version histories with this upload's appended (None while none)."""
    if upload.history is None:
        return existing
    if existing is None or len(existing) == 0:
        return upload.history.copy()
    return pd.concat([existing, upload.history], ignore_index=True)


def with_uploaded(table: pd.DataFrame, uploaded: Iterable[pd.DataFrame | None]) -> pd.DataFrame:
    """The verdict table with uploaded verifiers' rows appended (the same object if none).

    The one place uploads join the dataset's verdicts: the pages (`ui.state.verdicts`) and
    `python -m lib.report --predictions` both call it, so both see the same table.
    """
    parts = [u for u in uploaded if u is not None and len(u)]
    return pd.concat([table, *parts], ignore_index=True) if parts else table


def remove_raters(existing: pd.DataFrame | None, raters: Iterable[str]) -> pd.DataFrame:
    """The session's uploaded rows without the given verifiers."""
    if existing is None:
        return empty_verdicts()
    drop = set(raters)
    return existing[~existing["rater"].isin(drop)].reset_index(drop=True)


def uploaded_summary(uploaded: pd.DataFrame | None) -> pd.DataFrame:
    """One row per uploaded verifier: its tasks per dimension."""
    columns = ["verifier", "outcome verdicts", "process verdicts", "splits"]
    if uploaded is None or len(uploaded) == 0:
        return pd.DataFrame(columns=columns)
    rows = []
    for rater, group in uploaded.groupby("rater", sort=False):
        per_dim = group.groupby("dimension")["label"].count()
        splits = sorted({short_split(s) for s in group["split"].dropna()})
        rows.append(
            {
                "verifier": display_name(str(rater)),
                "outcome verdicts": int(per_dim.get("outcome", 0)),
                "process verdicts": int(per_dim.get("process", 0)),
                "splits": " + ".join(splits),
            }
        )
    return pd.DataFrame(rows, columns=columns)
