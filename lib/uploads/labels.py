"""A visitor's own labels: the re-labels made on the Audit page, their CSV file, and the
"your labels" human reference built from them.

The file (`docs/uploads.md`): CSV with the header ``task_id,dimension,label,note``; one row
per task and dimension; ``label`` is ``success``, ``failure`` or ``unsure``; ``note`` is
optional free text. "Download my labels" writes exactly this (through
`lib.csv_export`, so a note or label that starts like a formula is exported with a
leading ``'``, inert in a spreadsheet); `read_labels` reads it back in a fresh session.

Bounds (checked before the per-row work): `MAX_BYTES`, `MAX_ROWS` data rows (a file with
more is refused whole, with a message), `MAX_COLUMNS` header cells, `MAX_NOTE_CHARS` per
note (longer notes are cut and said so). A bad row is dropped and listed with its reason,
as for predictions: unknown task, a dimension other than outcome/process, a label other
than the three (a formula such as ``=cmd|' /C calc'!A0`` is one), an empty task id; of
two rows for the same task and dimension the last one is kept.

The reference (`with_your_labels`): for each dimension a task-level reference rater
(`lib.table.verdicts.YOUR_LABELS`) whose label is yours where you gave one and the final
(adjudicated) label elsewhere; ``unsure`` makes the task's label missing (raw
``unsure``), so every comparison excludes it, and `reference_counts` counts it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import pandas as pd

from lib.csv_export import FORMULA_START
from lib.table.verdicts import YOUR_LABELS
from lib.vocab import DIMENSIONS, HUMAN_REFERENCE

SUCCESS, FAILURE, UNSURE = "success", "failure", "unsure"
LABELS: tuple[str, ...] = (SUCCESS, FAILURE, UNSURE)
"""The three labels a visitor can give a task and dimension."""
LABEL_VALUE: dict[str, int | None] = {SUCCESS: 1, FAILURE: 0, UNSURE: None}
COLUMNS: tuple[str, ...] = ("task_id", "dimension", "label", "note")
"""The file's columns, in order (``note`` may be absent on upload)."""

MAX_BYTES = 5 * 1024 * 1024
"""Largest accepted labels file (260 tasks x 2 dimensions need a few KB; 50,000 rows with
short notes fit)."""
MAX_ROWS = 50_000
"""Most data rows; a file with more is refused whole (counted while reading)."""
MAX_COLUMNS = 16
"""Most header cells."""
MAX_NOTE_CHARS = 500
"""A note is cut to this many characters (the form's limit too)."""
MAX_ID_CHARS = 200
"""A task id longer than this cannot be the dataset's; the row is dropped unread."""
MAX_DROPPED_LISTED = 200
"""Dropped rows listed one by one at most (the rest are counted)."""

_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"%PDF", b"PK\x03\x04", b"\x1f\x8b")


class LabelsError(ValueError):
    """The file is refused as a whole; the message is shown as is (through ui.safe_text)."""


@dataclass(frozen=True)
class LabelsUpload:
    """What a labels file gave: ``labels`` (split, task_id, dimension, label, note), the
    rows ``dropped`` (row, task_id, reason), and ``cut_notes`` (notes shortened)."""

    labels: pd.DataFrame
    dropped: pd.DataFrame
    n_dropped: int
    cut_notes: int


def _quoted(value: str, limit: int = 40) -> str:
    text = value if len(value) <= limit else value[: limit - 1] + "…"
    return '"' + text + '"'


def _unquote(text: str) -> str:
    """Undo `lib.csv_export.neutralise`: our own export puts ``'`` before a formula-like
    cell; the cell read back is the text itself."""
    if text.startswith("'") and text[1:2] and text[1:].startswith(FORMULA_START):
        return text[1:]
    return text


def empty_labels() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="string") for c in ("split", *COLUMNS)})


def _text(data: bytes, filename: str) -> str:
    if len(data) > MAX_BYTES:
        raise LabelsError(
            f"{_quoted(filename)} is {len(data) / 1024 / 1024:.1f} MB; a labels file may be "
            f"{MAX_BYTES // 1024 // 1024} MB at most."
        )
    if any(data.startswith(m) for m in _MAGIC):
        raise LabelsError(f"{_quoted(filename)} is not a CSV text file.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LabelsError(f"{_quoted(filename)} is not UTF-8 text.") from exc


def read_labels(data: bytes, filename: str, tasks: dict[str, str]) -> LabelsUpload:
    """Read a labels CSV (``tasks``: task id -> its split, the tasks one may label).

    Raises LabelsError for a file refused whole (too large, not text, no header with
    task_id/dimension/label, more than `MAX_ROWS` rows, no usable row)."""
    text = _text(data, filename)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as exc:
        raise LabelsError(f"{_quoted(filename)} has no header row.") from exc
    if len(header) > MAX_COLUMNS:
        raise LabelsError(
            f"{_quoted(filename)} has {len(header)} columns; a labels file has "
            f"{len(COLUMNS)} (task_id, dimension, label, note)."
        )
    names = [_unquote(h.strip()).lower() for h in header]
    where = {name: names.index(name) for name in COLUMNS if name in names}
    missing = [c for c in COLUMNS[:3] if c not in where]
    if missing:
        raise LabelsError(
            f"{_quoted(filename)} lacks the column(s) {', '.join(missing)}; the header must "
            "be task_id,dimension,label,note."
        )
    kept: dict[tuple[str, str], dict] = {}
    dropped: list[dict] = []
    n_dropped = cut = 0

    def drop(row: int, task: str, reason: str) -> None:
        nonlocal n_dropped
        n_dropped += 1
        if len(dropped) < MAX_DROPPED_LISTED:
            dropped.append({"row": row, "task_id": task[:MAX_ID_CHARS], "reason": reason})

    try:
        for n, cells in enumerate(reader, start=1):
            if n > MAX_ROWS:
                raise LabelsError(
                    f"{_quoted(filename)} has more than {MAX_ROWS:,} rows; a labels file "
                    f"holds one row per task and dimension. Nothing was read."
                )
            if not any(c.strip() for c in cells):
                continue

            def cell(name: str, cells: list[str] = cells) -> str:
                i = where.get(name)
                return "" if i is None or i >= len(cells) else _unquote(cells[i].strip())

            task = cell("task_id")
            if not task:
                drop(n, "", "empty task_id")
                continue
            if len(task) > MAX_ID_CHARS or task not in tasks:
                drop(n, task, f"unknown task {_quoted(task)}")
                continue
            dimension = cell("dimension").lower()
            if dimension not in DIMENSIONS:
                said = _quoted(cell("dimension"))
                drop(n, task, f"dimension {said} is not outcome or process")
                continue
            label = cell("label").lower()
            if label not in LABELS:
                said = _quoted(cell("label"))
                drop(n, task, f"label {said} is not success, failure or unsure")
                continue
            note = cell("note")
            if len(note) > MAX_NOTE_CHARS:
                note = note[:MAX_NOTE_CHARS]
                cut += 1
            key = (task, dimension)
            if key in kept:
                drop(kept[key]["_row"], task, f"a later row (row {n}) labels it again")
            kept[key] = {"_row": n, "split": tasks[task], "task_id": task}
            kept[key] |= {"dimension": dimension, "label": label, "note": note}
    except csv.Error as exc:
        raise LabelsError(f"{_quoted(filename)} is not a readable CSV file ({exc}).") from exc
    dropped_frame = pd.DataFrame(dropped, columns=["row", "task_id", "reason"])
    if not kept:
        raise LabelsError(f"No usable row in {_quoted(filename)} ({n_dropped} dropped).")
    frame = pd.DataFrame([{k: v for k, v in r.items() if k != "_row"} for r in kept.values()])
    return LabelsUpload(_typed(frame), dropped_frame, n_dropped, cut)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.reindex(columns=["split", *COLUMNS])
    return out.astype("string").reset_index(drop=True)


def merge(old: pd.DataFrame | None, new: pd.DataFrame) -> pd.DataFrame:
    """``old`` with ``new``'s labels added; a task and dimension in both takes ``new``'s."""
    if old is None or old.empty:
        return _typed(new)
    both = pd.concat([old, new], ignore_index=True)
    return _typed(both.drop_duplicates(["task_id", "dimension"], keep="last"))


def set_label(
    old: pd.DataFrame | None, split: str, task_id: str, dimension: str, label: str, note: str
) -> pd.DataFrame:
    """One re-label made on the Audit page (an unknown label or dimension raises)."""
    if label not in LABELS or dimension not in DIMENSIONS:
        raise ValueError(f"label {label!r} / dimension {dimension!r}")
    row = {"split": split, "task_id": task_id, "dimension": dimension}
    row |= {"label": label, "note": note[:MAX_NOTE_CHARS]}
    return merge(old, pd.DataFrame([row]))


def download_frame(labels: pd.DataFrame | None) -> pd.DataFrame:
    """The file's rows (`COLUMNS`), sorted; export it with `lib.csv_export.to_csv_bytes`."""
    if labels is None or labels.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    out = labels.sort_values(["task_id", "dimension"])[list(COLUMNS)]
    return out.reset_index(drop=True)


def with_your_labels(table: pd.DataFrame, labels: pd.DataFrame | None) -> pd.DataFrame:
    """The verdict table plus the `YOUR_LABELS` reference rows (the same object if no
    labels): per dimension, a copy of the final label's rows, with your label where you
    gave one (``unsure``: missing, raw ``unsure``)."""
    if labels is None or labels.empty:
        return table
    parts = [table]
    for dimension in DIMENSIONS:
        base = table[table["rater"] == HUMAN_REFERENCE[dimension]].copy()
        mine = labels[labels["dimension"] == dimension].set_index("task_id")["label"]
        given = base["task_id"].isin(mine.index)
        label = base["task_id"].map(mine)
        values = label.map(lambda v: LABEL_VALUE.get(v) if isinstance(v, str) else None)
        base.loc[given, "label"] = pd.array(values[given].tolist(), dtype="Int8")
        base.loc[given, "raw"] = label[given].where(label[given] == UNSURE, pd.NA)
        base.loc[given, "score"] = float("nan")
        base["rater"] = YOUR_LABELS[dimension]
        parts.append(base)
    out = pd.concat(parts, ignore_index=True)
    for column in ("rater", "raw"):
        out[column] = out[column].astype("string")
    out["label"] = out["label"].astype("Int8")
    return out


@dataclass(frozen=True)
class ReferenceCounts:
    """How the "your labels" reference of one dimension is made up, in the chosen splits."""

    tasks: int
    yours: int
    unsure: int
    final: int

    def sentence(self) -> str:
        return (
            f"Your labels: {self.yours:,} of {self.tasks:,} tasks are yours "
            f"({self.unsure:,} marked unsure, excluded); the other {self.final:,} use the "
            "final (adjudicated) label."
        )


def reference_counts(
    labels: pd.DataFrame | None, table: pd.DataFrame, dimension: str, splits: list[str]
) -> ReferenceCounts:
    """Tasks of the reference in ``splits``, how many carry your label, how many unsure."""
    base = table[(table["rater"] == HUMAN_REFERENCE[dimension]) & table["split"].isin(splits)]
    tasks = set(base["task_id"].astype(str))
    if labels is None or labels.empty:
        return ReferenceCounts(len(tasks), 0, 0, len(tasks))
    mine = labels[(labels["dimension"] == dimension) & labels["task_id"].isin(tasks)]
    yours = int(mine["task_id"].nunique())
    unsure = int((mine["label"] == UNSURE).sum())
    return ReferenceCounts(len(tasks), yours, unsure, len(tasks) - yours)
