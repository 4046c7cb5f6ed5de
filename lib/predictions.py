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
- **Bounded work**: over `MAX_ROWS` data rows rejects the file while reading it (the CSV
  reader stops after `MAX_ROWS + 1` rows, JSON Lines after as many objects, parquet by its
  footer), and every message has a bounded length (a duplicate names its count and at
  most `MAX_LISTED_ROWS` row numbers), so the work is linear in the file.
- **Text encodings**: UTF-8 (with or without BOM) and UTF-16 with a BOM (what spreadsheet
  "Unicode text" exports write) are decoded; a UTF-16 export with tabs is read as TSV.

Messages (the PredictionsError text, `dropped.reason`, `notes`) are plain text that quotes
values from the file: show them with `ui.safe_text` (`inert`/`plain`), never as Markdown.

Verdict rows have the columns and dtypes of `lib.verdicts.COLUMNS`, `kind = "verifier"`
and rater id `mine:<name>` (the prefix keeps them apart from the dataset's raters; a name
already taken in the session gets a ` (2)` suffix). The score goes on the process rows
when the verifier has process labels, else on the outcome rows.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import pandas as pd

from lib.labels import parse_label
from lib.schema import SPLIT_SHORT, SPLITS
from lib.verdicts import COLUMNS, UPLOAD_PREFIX

MAX_BYTES = 20 * 1024 * 1024
"""Largest accepted file (20 MB; the app's upload limit is 50 MB). 260 tasks x a few
verifiers is a few hundred kilobytes, so anything near this is not a predictions file."""

MAX_ROWS = 50_000
"""Most data rows accepted (checked while reading, before any per-row work). The dataset
has 260 tasks, so even 100 verifiers in one file stay far below; a file above it is not a
predictions file, and refusing it keeps a session's memory and time bounded."""

MAX_LISTED_ROWS = 5
"""Row numbers named in one duplicate message; the count says how many there are."""

PREFIX = UPLOAD_PREFIX
"""Rater ids of uploaded verifiers start with this, so they never collide with the data's."""

FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
EXTENSIONS: tuple[str, ...] = tuple(ext.lstrip(".") for ext in FORMATS)

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "task_id": ("task_id", "task"),
    "outcome": ("outcome", "outcome_label", "label", "prediction", "is_success"),
    "process": ("process", "process_label"),
    "score": ("score", "process_score", "rubric_score"),
    "split": ("split",),
    "verifier": ("verifier", "verifier_name"),
}
REQUIRED = ("task_id", "outcome")
MAX_NAME = 60
DROPPED_COLUMNS = ["row", "verifier", "task_id", "reason"]

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or an Excel workbook: save it as CSV)"),
    (b"\x1f\x8b", "a gzip archive (upload it uncompressed)"),
)


class PredictionsError(ValueError):
    """The file is rejected as a whole; the message is shown to the user as is.

    `dropped` lists the rows and their problems when the file was rejected because no
    row was usable (same columns as `Upload.dropped`), else it is None.
    """

    def __init__(self, message: str, dropped: pd.DataFrame | None = None) -> None:
        super().__init__(message)
        self.dropped = dropped


@dataclass(frozen=True)
class Upload:
    """A parsed predictions file: clean verdict rows plus exactly what was left out.

    `verdicts`: rows of the verdict table (see the module docstring).
    `dropped`: one row per dropped data row: `row` (1-based), `verifier`, `task_id`,
    `reason` (every problem of the row, joined by "; ").
    `unknown_task_ids`: the distinct unknown ids, sorted.
    `coverage`: per (verifier, split): tasks in the split, tasks with an outcome / process
    verdict, and the outcome share.
    `raters`: rater ids in file order. `notes`: things worth saying that dropped nothing.
    """

    filename: str
    file_format: str
    n_rows: int
    verdicts: pd.DataFrame
    dropped: pd.DataFrame
    unknown_task_ids: list[str]
    coverage: pd.DataFrame
    raters: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def n_used(self) -> int:
        """Data rows that became verdicts."""
        return self.n_rows - len(self.dropped)


# ---------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------


def is_uploaded(rater: str) -> bool:
    """True for the rater id of an uploaded verifier."""
    return str(rater).startswith(PREFIX)


def display_name(rater: str) -> str:
    """The name the researcher gave (`mine:v1` -> `v1`)."""
    return str(rater).removeprefix(PREFIX)


def clean_name(name: Any) -> str:
    """A verifier name safe as a rater id: trimmed, single spaces, no `@`, at most 60 chars.

    `@` is reserved (`Judge9@informed` marks a reviewer's informed stage).
    """
    text = re.sub(r"\s+", " ", str(name)).strip().replace("@", "_")
    return text[:MAX_NAME].strip()


def _unique_rater(name: str, taken: set[str]) -> str:
    rater = PREFIX + name
    k = 2
    while rater in taken:
        rater = f"{PREFIX}{name} ({k})"
        k += 1
    return rater


# ---------------------------------------------------------------------------------------
# Reading the file into a frame of raw cells
# ---------------------------------------------------------------------------------------


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def detect_format(data: bytes, filename: str) -> str:
    """`csv`, `tsv`, `jsonl`, `json` or `parquet`, from the content first, then the name.

    Raises PredictionsError for known non-table formats (images, archives, PDF) and for a
    parquet name on a file without the parquet signature.
    """
    for magic, what in _MAGIC:
        if data.startswith(magic):
            raise PredictionsError(
                f"Wrong format: `{filename}` is {what}, not a predictions table. "
                f"Upload CSV, JSON Lines or parquet."
            )
    if data.startswith(b"PAR1"):
        return "parquet"
    suffix = PurePath(filename).suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt == "parquet":
        raise PredictionsError(
            f"Wrong format: `{filename}` is named like a parquet file but is not one "
            "(no parquet signature)."
        )
    if fmt is not None:
        return fmt
    codec = "utf-16" if data.startswith(_UTF16_BOMS) else "utf-8-sig"
    head = data[:4096].decode(codec, errors="ignore").lstrip("\ufeff \t\r\n")[:1]
    if head == "{":
        return "jsonl"
    if head == "[":
        return "json"
    return "csv"


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _text(data: bytes, filename: str) -> str:
    """The file as text: UTF-16 with a BOM, else UTF-8 (a UTF-8 BOM is dropped)."""
    if data.startswith(_UTF16_BOMS):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise PredictionsError(
                f"Wrong format: `{filename}` starts like UTF-16 text but byte {exc.start} "
                "cannot be read."
            ) from exc
    if b"\x00" in data[:65536]:
        raise PredictionsError(f"Wrong format: `{filename}` is a binary file, not text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PredictionsError(
            f"Wrong format: `{filename}` is not UTF-8 text (byte {exc.start} cannot be read)."
        ) from exc


def too_many_rows(filename: str) -> PredictionsError:
    """The error for a file over `MAX_ROWS` data rows."""
    return PredictionsError(
        f"`{filename}` has more than {MAX_ROWS:,} data rows; the limit is {MAX_ROWS:,}. "
        "This dataset has 260 tasks, so a predictions file is far smaller: nothing was loaded."
    )


def _read_delimited(text: str, sep: str, filename: str) -> pd.DataFrame:
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            dtype=str,
            keep_default_na=False,
            skipinitialspace=True,
            nrows=MAX_ROWS + 1,
        )
    except pd.errors.EmptyDataError as exc:
        raise PredictionsError(f"`{filename}` is empty.") from exc
    except (pd.errors.ParserError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PredictionsError(f"Wrong format: `{filename}` is not valid CSV ({first}).") from exc
    if len(frame) > MAX_ROWS:
        raise too_many_rows(filename)
    return frame


def _records_frame(records: list[dict]) -> pd.DataFrame:
    return pd.DataFrame.from_records(records).astype(object)


def _read_jsonl(text: str, filename: str) -> pd.DataFrame:
    records, bad = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            bad.append(number)
            continue
        if not isinstance(value, dict):
            bad.append(number)
            continue
        records.append(value)
        if len(records) > MAX_ROWS:
            raise too_many_rows(filename)
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (" …" if len(bad) > 10 else "")
        raise PredictionsError(
            f"Wrong format: `{filename}` is not valid JSON Lines: {len(bad)} line(s) are not "
            f"a JSON object (line {shown}). Each line must be one object such as "
            '`{"task_id": "...", "outcome": 1}`. Nothing was loaded.'
        )
    return _records_frame(records)


def _read_json(text: str, filename: str) -> pd.DataFrame:
    if not text.lstrip().startswith("["):
        return _read_jsonl(text, filename)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PredictionsError(
            f"Wrong format: `{filename}` is not valid JSON (line {exc.lineno}: {exc.msg})."
        ) from exc
    if isinstance(value, list) and len(value) > MAX_ROWS:
        raise too_many_rows(filename)
    if not all(isinstance(v, dict) for v in value):
        raise PredictionsError(
            f"Wrong format: `{filename}` must be a JSON array of objects (or JSON Lines)."
        )
    return _records_frame(value)


def _read_parquet(data: bytes, filename: str) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        n_rows = pq.ParquetFile(io.BytesIO(data)).metadata.num_rows  # the footer only
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise PredictionsError(
            f"Wrong format: `{filename}` is not a readable parquet file ({exc})."
        ) from exc
    if n_rows > MAX_ROWS:
        raise too_many_rows(filename)
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise PredictionsError(
            f"Wrong format: `{filename}` is not a readable parquet file ({exc})."
        ) from exc
    return pd.DataFrame({c: pd.Series(frame[c].tolist(), dtype=object) for c in frame.columns})


def check_size(n_bytes: int, filename: str) -> None:
    """Raise PredictionsError when a file of `n_bytes` is over `MAX_BYTES` (before reading it)."""
    if n_bytes > MAX_BYTES:
        raise PredictionsError(
            f"`{filename}` is {_mb(n_bytes)}; the limit is {_mb(MAX_BYTES)}. "
            "A predictions file for this dataset is far smaller: check that it is the right file."
        )


def _tab_separated(text: str) -> bool:
    """A header line with tabs and no comma: a spreadsheet's tab-separated text export."""
    header = text.lstrip("\ufeff").split("\n", 1)[0]
    return "\t" in header and "," not in header


def read_table(data: bytes, filename: str) -> tuple[pd.DataFrame, str]:
    """The file's rows as a frame of raw cells (object dtype), and the format's name.

    Raises PredictionsError for a file-level problem (size, empty, wrong format).
    """
    check_size(len(data), filename)
    if not data.strip():
        raise PredictionsError(f"`{filename}` is empty.")
    fmt = detect_format(data, filename)
    if fmt == "parquet":
        frame = _read_parquet(data, filename)
    else:
        text = _text(data, filename)
        if fmt == "csv" and _tab_separated(text):
            fmt = "tsv"
        if fmt in ("csv", "tsv"):
            frame = _read_delimited(text, "\t" if fmt == "tsv" else ",", filename)
        elif fmt == "jsonl":
            frame = _read_jsonl(text, filename)
        else:
            frame = _read_json(text, filename)
    if len(frame) == 0:
        raise PredictionsError(f"`{filename}` has no data rows (only a header, or nothing).")
    return frame, fmt


def _resolve_columns(frame: pd.DataFrame, filename: str) -> tuple[dict[str, str], list[str]]:
    """Map each role (task_id, outcome, ...) to a column of the file; list the ignored ones."""
    by_lower: dict[str, str] = {}
    for column in frame.columns:
        by_lower.setdefault(str(column).strip().lower(), column)
    roles: dict[str, str] = {}
    for role, aliases in COLUMN_ALIASES.items():
        found = [by_lower[a] for a in aliases if a in by_lower]
        if len(found) > 1:
            names = ", ".join(f"`{f}`" for f in found)
            raise PredictionsError(
                f"`{filename}` has several columns for {role} ({names}): keep only one."
            )
        if found:
            roles[role] = found[0]
    missing = [r for r in REQUIRED if r not in roles]
    if missing:
        present = ", ".join(f"`{c}`" for c in frame.columns) or "none"
        wanted = " and ".join(f"`{m}`" for m in missing)
        raise PredictionsError(
            f"`{filename}` has no {wanted} column (columns found: {present}). "
            "Required: `task_id` and `outcome`."
        )
    used = set(roles.values())
    ignored = [str(c) for c in frame.columns if c not in used]
    return roles, ignored


# ---------------------------------------------------------------------------------------
# Cells -> values, with a reason when they cannot be used
# ---------------------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _shown(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "…"


def parse_binary(value: Any) -> tuple[int | None, str | None]:
    """`(label, problem)`: label 1/0, or None when empty (problem None) or unparseable.

    Accepts what `lib.labels.parse_label` accepts (1/0, true/false, success/failure,
    correct/incorrect, yes/no, pass/fail; any case, trimmed) plus `1.0` / `0.0`.
    """
    if _missing(value):
        return None, None
    if isinstance(value, list | dict | tuple):
        return None, f"`{_shown(value)}` is not a label"
    parsed = parse_label(value)
    if parsed.label is not None:
        return parsed.label, None
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if number in (0.0, 1.0):
        return int(number), None
    return None, f"`{_shown(value)}` is not a label (use 1/0, true/false, success/failure)"


def parse_score(value: Any) -> tuple[float | None, str | None]:
    """`(score, problem)`: a float in [0, 1], None when empty, or a problem."""
    if _missing(value):
        return None, None
    if isinstance(value, bool | list | dict | tuple):
        return None, f"score `{_shown(value)}` is not a number"
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        return None, f"score `{_shown(value)}` is not a number"
    if math.isnan(number):
        return None, None
    if not 0.0 <= number <= 1.0:
        return None, f"score {_shown(value)} is outside [0, 1]"
    return number, None


_SPLIT_NAMES = {s.lower(): s for s in SPLITS} | {
    short.lower(): split for split, short in SPLIT_SHORT.items()
}


def _task_split(task_id: str, cell: Any, known: list[str]) -> tuple[str | None, str | None]:
    """`(split, problem)` of a row: the file's split cell checked against the task's splits."""
    if _missing(cell):
        if len(known) > 1:
            return None, f"task `{task_id}` is in several splits: add a `split` column"
        return (known[0] if known else None), None
    split = _SPLIT_NAMES.get(str(cell).strip().lower())
    if split is None:
        return None, f"unknown split `{_shown(cell)}` (known: {', '.join(SPLITS)})"
    if known and split not in known:
        return None, f"split is `{split}` but task `{task_id}` is in `{known[0]}`"
    return split, None


def _duplicates(names: list[str], ids: list[str], splits: list[str | None]) -> dict[int, str]:
    """Row index -> problem, for every row whose (verifier, split, task_id) occurs twice or more.

    A row whose split is unresolved counts with split "" (task ids are unique across the
    dataset's splits, so in practice this is (verifier, task_id)).
    """
    rows: dict[tuple[str, str, str], list[int]] = {}
    for i, (name, split, task_id) in enumerate(zip(names, splits, ids, strict=True)):
        if name and task_id:
            rows.setdefault((name, split or "", task_id), []).append(i)
    out = {}
    for (name, _split, task_id), where in rows.items():
        if len(where) > 1:
            # One bounded message per group, shared by its rows: the work stays linear
            # (listing every row of the group on every row was quadratic).
            numbers = ", ".join(str(i + 1) for i in where[:MAX_LISTED_ROWS])
            if len(where) > MAX_LISTED_ROWS:
                numbers += f", … ({len(where) - MAX_LISTED_ROWS:,} more)"
            message = (
                f"task_id `{_shown(task_id)}` appears {len(where):,} times for verifier "
                f"`{_shown(name)}` (rows {numbers}): ambiguous, all dropped"
            )
            for i in where:
                out[i] = message
    return out


# ---------------------------------------------------------------------------------------
# The whole file
# ---------------------------------------------------------------------------------------


def _empty_verdicts() -> pd.DataFrame:
    return typed_verdicts(pd.DataFrame(columns=COLUMNS))


def typed_verdicts(rows: pd.DataFrame) -> pd.DataFrame:
    """The verdict table's dtypes: label Int8, score float64, the rest pandas strings."""
    out = rows.reindex(columns=COLUMNS)
    out["label"] = pd.array(out["label"].tolist(), dtype="Int8")
    out["score"] = pd.to_numeric(out["score"], errors="coerce").astype("float64")
    for column in COLUMNS:
        if column not in ("label", "score"):
            out[column] = out[column].astype("string")
    return out.reset_index(drop=True)


def default_verifier_name(filename: str) -> str:
    """The name of a one-verifier file without a `verifier` column: its file stem."""
    return clean_name(PurePath(filename).stem) or "my_verifier"


def parse_predictions(
    data: bytes, filename: str, tasks: pd.DataFrame, taken: Collection[str] = ()
) -> Upload:
    """Parse and validate an uploaded file against the loaded tasks (`split`, `task_id`).

    `taken`: rater ids already in use (the session's uploaded verifiers); a verifier name
    whose id is taken is renamed `name (2)`, and a note says so. Raises PredictionsError
    when the file is rejected as a whole (see the module docstring); otherwise every data
    row is either in `verdicts` or in `dropped`, never half-used.
    """
    frame, fmt = read_table(data, filename)
    roles, ignored = _resolve_columns(frame, filename)
    n = len(frame)
    task_splits: dict[str, list[str]] = {}
    for split, task_id in zip(tasks["split"], tasks["task_id"], strict=True):
        task_splits.setdefault(str(task_id), []).append(str(split))

    def column(role: str) -> list[Any]:
        return frame[roles[role]].tolist() if role in roles else [None] * n

    ids = ["" if _missing(v) else str(v).strip() for v in column("task_id")]
    fallback = default_verifier_name(filename)
    if "verifier" in roles:
        names = ["" if _missing(v) else clean_name(v) for v in column("verifier")]
    else:
        names = [fallback] * n
    outcomes = [parse_binary(v) for v in column("outcome")]
    processes = [parse_binary(v) for v in column("process")]
    scores = [parse_score(v) for v in column("score")]
    split_cells = column("split")

    reasons: list[list[str]] = [[] for _ in range(n)]
    splits: list[str | None] = [None] * n
    unknown: set[str] = set()
    for i in range(n):
        why = reasons[i]
        if not names[i]:
            why.append("verifier name is empty")
        known = task_splits.get(ids[i], [])
        if not ids[i]:
            why.append("task_id is empty")
        elif not known:
            why.append(f"unknown task_id `{_shown(ids[i])}`")
            unknown.add(ids[i])
        splits[i], problem = _task_split(ids[i], split_cells[i], known)
        why += [problem] if problem else []
        label, problem = outcomes[i]
        if problem:
            why.append(f"outcome {problem}")
        elif label is None:
            why.append("outcome is empty")
        if processes[i][1]:
            why.append(f"process {processes[i][1]}")
        if scores[i][1]:
            why.append(scores[i][1])
    for i, problem in _duplicates(names, ids, splits).items():
        reasons[i].append(problem)

    dropped = pd.DataFrame(
        [
            {"row": i + 1, "verifier": names[i], "task_id": ids[i], "reason": "; ".join(r)}
            for i, r in enumerate(reasons)
            if r
        ],
        columns=DROPPED_COLUMNS,
    )
    good = [i for i in range(n) if not reasons[i]]
    if not good:
        first = "; ".join(f"row {r.row}: {r.reason}" for r in dropped.head(3).itertuples())
        raise PredictionsError(
            f"No usable row in `{filename}`: all {n} rows have a problem, so nothing was "
            f"loaded. First problems: {first}",
            dropped=dropped,
        )

    notes: list[str] = []
    if ignored:
        notes.append("Ignored columns: " + ", ".join(f"`{c}`" for c in ignored) + ".")
    taken_ids = set(taken)
    raters: dict[str, str] = {}
    for i in good:
        if names[i] not in raters:
            rater = _unique_rater(names[i], taken_ids)
            taken_ids.add(rater)
            raters[names[i]] = rater
            if rater != PREFIX + names[i]:
                notes.append(
                    f"A verifier named `{names[i]}` is already loaded in this session: "
                    f"this one is called `{display_name(rater)}`."
                )
    with_process = {names[i] for i in good if processes[i][0] is not None}

    rows: list[dict] = []
    empty_process = 0
    for i in good:
        base = {"split": splits[i], "task_id": ids[i], "rater": raters[names[i]]}
        base |= {"kind": "verifier", "annotator": None, "stage": None, "raw": None}
        score = scores[i][0]
        has_process = names[i] in with_process
        rows.append(
            base
            | {"dimension": "outcome", "label": outcomes[i][0]}
            | {"score": None if has_process else score}
        )
        if has_process:
            if processes[i][0] is None:
                empty_process += 1
            rows.append(base | {"dimension": "process", "label": processes[i][0], "score": score})
    if empty_process:
        notes.append(
            f"{empty_process} row(s) have no process label: those tasks have a missing "
            "process verdict (counted as missing, never as 0)."
        )

    verdicts = typed_verdicts(pd.DataFrame(rows)) if rows else _empty_verdicts()
    return Upload(
        filename=filename,
        file_format=fmt,
        n_rows=n,
        verdicts=verdicts,
        dropped=dropped,
        unknown_task_ids=sorted(unknown),
        coverage=coverage(verdicts, tasks),
        raters=list(raters.values()),
        notes=notes,
    )


def coverage(verdicts: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """Per (verifier, split): tasks in the split and how many have an outcome/process label."""
    totals = tasks.groupby("split").size()
    rows = []
    for rater in dict.fromkeys(verdicts["rater"].tolist()):
        mine = verdicts[verdicts["rater"] == rater]
        for split in SPLITS:
            here = mine[mine["split"] == split]
            n_tasks = int(totals.get(split, 0))
            outcome = int(here.loc[here["dimension"] == "outcome", "label"].notna().sum())
            process = int(here.loc[here["dimension"] == "process", "label"].notna().sum())
            rows.append(
                {
                    "verifier": display_name(rater),
                    "split": SPLIT_SHORT.get(split, split),
                    "tasks in split": n_tasks,
                    "outcome labels": outcome,
                    "process labels": process,
                    "outcome coverage": outcome / n_tasks if n_tasks else 0.0,
                }
            )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# The session's uploaded rows
# ---------------------------------------------------------------------------------------


def add_upload(existing: pd.DataFrame | None, upload: Upload) -> pd.DataFrame:
    """The session's uploaded rows with this upload's rows appended (dtypes kept)."""
    if existing is None or len(existing) == 0:
        return upload.verdicts.copy()
    return typed_verdicts(pd.concat([existing, upload.verdicts], ignore_index=True))


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
        return _empty_verdicts()
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
        splits = sorted({SPLIT_SHORT.get(s, s) for s in group["split"].dropna()})
        rows.append(
            {
                "verifier": display_name(str(rater)),
                "outcome verdicts": int(per_dim.get("outcome", 0)),
                "process verdicts": int(per_dim.get("process", 0)),
                "splits": " + ".join(splits),
            }
        )
    return pd.DataFrame(rows, columns=columns)
