"""A verifier's own score files as an upload: the same verdict rows a predictions table gives.

A researcher who re-runs the Universal Verifier (microsoft/fara's
`webeval/scripts/verify_trajectories.py`) gets one JSON score file per task, in the format of
the internal split's `gpt_eval_json`. Accepted:

- a `.zip` of JSON score files, one per task: the task id is the file's `task_id` field
  (the wrapper's or the inner object's), else the file name without `.json` (else the
  folder's name, when only that is a task of the loaded data);
- a JSON Lines file of `{"task_id": ..., "score_file": {...}}` (the score file may also be
  given as its JSON text);
- one or several `.json` score files.

Each file is read by `lib.table.score_file` (the reader the dataset's `gpt_eval_json` uses:
both shapes, the same bounds and point checks) and gives the verdicts outcome, process and
score (see that module and `docs/uploads.md`). They are written as a predictions table
(`task_id, outcome, process, score, verifier`) and validated by
`lib.uploads.predictions.parse_predictions`, so the rows, names, caps and checks against the
loaded tasks are exactly the CSV upload's, and the rest of the app needs no change.

Zips are bounded **before extraction** (`check_archive`): the end-of-central-directory
record's entry count and directory size (read before `zipfile` builds an object per entry),
at most `MAX_ENTRIES` entries, `MAX_TOTAL_BYTES` uncompressed in all, at most `MAX_RATIO`
uncompressed / compressed for every entry past `RATIO_FROM` bytes; no ZIP64. Any of those
refuses the whole archive (`ScoreFilesError`). Then each entry on its own: a path outside
the archive (absolute, `..`, a drive), an archive inside the archive, an encrypted entry,
a file that is not `.json`, more than `score_file.MAX_CHARS` bytes, or a file the reader
refuses is **listed with its reason and not used**; the others are used ("nothing half
loaded"). An entry is read with a cap of its declared size, whatever its header says.

Messages quote names from the file in double quotes: show them with `ui.safe_text`.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
import zlib
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

import pandas as pd

from lib.table import score_file as sf
from lib.uploads import predictions
from lib.uploads.predictions import (
    DROPPED_COLUMNS,
    MAX_BYTES,
    PredictionsError,
    Upload,
    check_size,
    default_verifier_name,
)
from lib.uploads.predictions.read import quoted
from lib.vocab import UV_THRESHOLD

MAX_ENTRIES = 5_000
"""Entries of one archive (or lines, or files) at most: one per task."""
MAX_TOTAL_BYTES = 100 * 1024 * 1024
"""Uncompressed bytes of all entries of one archive at most (as its directory declares)."""
MAX_RATIO = 100
"""Uncompressed / compressed of one entry at most (JSON compresses about 5-15 times)."""
RATIO_FROM = 1024 * 1024
"""Entries smaller than this are not held to `MAX_RATIO` (a small file can compress well)."""
MAX_DIRECTORY_BYTES_PER_ENTRY = 400
"""Central-directory bytes per declared entry at most (46 + a name and extra fields)."""
MAX_KEPT_CHARS = 16_000_000
"""Characters of score files kept for the session after their verdicts are taken (the rubric
cards of the uploaded verifier); past it the later tasks keep their verdicts only."""
MAX_LISTED = 200
"""Bad files listed at most (the count says how many there are)."""
EXTENSIONS = ("zip", "jsonl", "ndjson", "json")
"""The file types the uploader accepts for score files (JSON types are shared with the
predictions table; `is_score_upload` tells them apart by content)."""

_ARCHIVE_SUFFIXES = (".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar", ".zst")
_ARCHIVE_MAGIC = (b"PK\x03\x04", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf", b"Rar!")
_EOCD = b"PK\x05\x06"
_OFFICE = (".xlsx", ".xlsm", ".xls", ".ods", ".docx")
_ZIP64_LOCATOR = b"PK\x06\x07"
_SCORE_KEYS = (b'"score_file"', b'"rubric_items"', b'"gpt_response_text"',
               b'"rubric_outcome_verification"', b'"rubric_is_success"')  # fmt: skip
SKIPPED_PREFIXES = ("__MACOSX/",)


class ScoreFilesError(PredictionsError):
    """The upload is refused as a whole; the message is shown as is (plain text)."""


@dataclass(frozen=True)
class Entry:
    """One score file found in the upload: where it came from and its task id hint."""

    source: str
    task_hint: str | None
    text: str | None = None
    value: Any = None
    problem: str | None = None


@dataclass(frozen=True)
class ScoreUpload:
    """What a score-file upload gave: `upload` (the predictions path's result, whose
    `dropped` also lists the files not used, with their reasons) and per used task the
    bad criteria, if any."""

    upload: Upload
    bad_criteria: dict[str, str] = field(default_factory=dict)
    n_files: int = 0
    cells: dict[str, str] = field(default_factory=dict)
    """Per used task, its score file as a dataset cell (`{"score", "gpt_response_text"}`,
    the checked inner object): what the Trajectory page's rubric card reads with
    `parse_gpt_eval`, the one reader. At most `MAX_KEPT_CHARS` in all."""


# ---------------------------------------------------------------------------------------
# Which uploads are score files


def is_score_upload(data: bytes, filename: str) -> bool:
    """A zip archive, or JSON whose head names a score file's keys (else: a predictions
    table, handled by `lib.uploads.predictions`)."""
    if data.startswith(b"PK\x03\x04") or data.startswith(_EOCD):
        return not filename.lower().endswith(_OFFICE)  # a workbook: "save it as CSV"
    head = data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return False
    return any(key in head for key in _SCORE_KEYS)


# ---------------------------------------------------------------------------------------
# Archives, bounded before extraction


def _mb(n: float) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def check_archive(data: bytes, filename: str) -> None:
    """Refuse an archive past a bound, from its end record alone (before `zipfile` reads
    the central directory into one object per entry)."""
    name = quoted(filename, 200)
    at = data.rfind(_EOCD, max(0, len(data) - 65_557))
    if at < 0 or len(data) - at < 22:
        raise ScoreFilesError(f"{name} is not a readable zip archive (no end record).")
    _, _, _, _, n_entries, dir_size, dir_offset, _ = struct.unpack("<4s4H2LH", data[at : at + 22])
    locator = data.rfind(_ZIP64_LOCATOR, max(0, at - 20), at)
    if locator >= 0 or n_entries == 0xFFFF or 0xFFFFFFFF in (dir_size, dir_offset):
        n_entries, dir_size = _zip64_counts(data, locator, n_entries, dir_size)
        if n_entries <= MAX_ENTRIES and dir_size <= MAX_ENTRIES * MAX_DIRECTORY_BYTES_PER_ENTRY:
            raise ScoreFilesError(
                f"{name} is a ZIP64 archive; score files of a benchmark fit an ordinary zip. "
                "Nothing was extracted."
            )
    if n_entries > MAX_ENTRIES or dir_size > MAX_ENTRIES * MAX_DIRECTORY_BYTES_PER_ENTRY:
        raise ScoreFilesError(
            f"{name} has {n_entries:,} entries ({dir_size:,} bytes of directory); the limit is "
            f"{MAX_ENTRIES:,} entries, one score file per task. Nothing was extracted."
        )


def _zip64_counts(data: bytes, locator: int, n: int, size: int) -> tuple[int, int]:
    """The entry count and directory size of a ZIP64 end record (the plain record's own
    values when it cannot be read)."""
    if locator < 0:
        return n, size
    (offset,) = struct.unpack("<Q", data[locator + 8 : locator + 16])
    record = data[offset : offset + 56]
    if len(record) < 56 or not record.startswith(b"PK\x06\x06"):
        return n, size
    _, _, _, _, _, _, _, n64, size64, _ = struct.unpack("<4sQ2H2L4Q", record)
    return max(n64, n if n != 0xFFFF else 0), max(size64, size if size != 0xFFFFFFFF else 0)


def _entry_problem(info: zipfile.ZipInfo) -> str | None:
    """Why one entry is not read (its name and flags only), or None."""
    raw = info.filename
    path = PurePosixPath(raw.replace("\\", "/"))
    if raw.startswith(("/", "\\")) or ".." in path.parts or (len(raw) > 1 and raw[1] == ":"):
        return "its path leads outside the archive: not extracted"
    if raw.lower().endswith(_ARCHIVE_SUFFIXES):
        return "an archive inside the archive: nested archives are not opened"
    if info.flag_bits & 0x1:
        return "encrypted: not read"
    if not raw.lower().endswith(".json"):
        return "not a .json file"
    if info.file_size > sf.MAX_CHARS:
        return f"{_mb(info.file_size)}; a score file is read up to {_mb(sf.MAX_CHARS)}"
    return None


def _stem_hint(name: str) -> str | None:
    path = PurePosixPath(name.replace("\\", "/"))
    stem = path.name[: -len(".json")] if path.name.lower().endswith(".json") else path.stem
    return stem or None


def _parent(name: str) -> str | None:
    parent = PurePosixPath(name.replace("\\", "/")).parent.name
    return parent or None


def _decode_bytes(raw: bytes) -> tuple[str | None, str | None]:
    if any(raw.startswith(m) for m in _ARCHIVE_MAGIC):
        return None, "an archive inside the archive: nested archives are not opened"
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte {exc.start})"


def zip_entries(data: bytes, filename: str) -> Iterator[Entry]:
    """The score files of a zip archive, one at a time (the archive checked first)."""
    check_archive(data, filename)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise ScoreFilesError(
            f"{quoted(filename, 200)} is not a readable zip archive ({str(exc)[:120]})."
        ) from None
    if len(infos) > MAX_ENTRIES:
        raise ScoreFilesError(
            f"{quoted(filename, 200)} has {len(infos):,} entries; the limit is {MAX_ENTRIES:,}. "
            "Nothing was extracted."
        )
    total = sum(max(i.file_size, 0) for i in infos)
    if total > MAX_TOTAL_BYTES:
        raise ScoreFilesError(
            f"{quoted(filename, 200)} would expand to {_mb(total)}; the limit is "
            f"{_mb(MAX_TOTAL_BYTES)} (a zip bomb, or far more than score files). "
            "Nothing was extracted."
        )
    for info in infos:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= RATIO_FROM and ratio > MAX_RATIO:
            raise ScoreFilesError(
                f"{quoted(filename, 200)}: entry {quoted(info.filename, 80)} expands "
                f"{ratio:,.0f} times ({_mb(info.file_size)} from {info.compress_size:,} bytes); "
                f"the limit is {MAX_RATIO} (a zip bomb). Nothing was extracted."
            )
    with archive:
        for info in infos:
            name = info.filename
            if info.is_dir() or name.startswith(SKIPPED_PREFIXES):
                continue
            if PurePosixPath(name).name.startswith("._") or name.endswith(".DS_Store"):
                continue
            hint = _stem_hint(name)
            problem = _entry_problem(info)
            if problem:
                yield Entry(name, hint, problem=problem)
                continue
            try:
                with archive.open(info) as handle:
                    raw = handle.read(sf.MAX_CHARS + 1)
            except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError,
                    ValueError, OSError, EOFError) as exc:  # fmt: skip
                yield Entry(name, hint, problem=f"cannot be extracted ({str(exc)[:80]})")
                continue
            if len(raw) > sf.MAX_CHARS:
                yield Entry(name, hint, problem=f"more than {_mb(sf.MAX_CHARS)}: not read")
                continue
            text, problem = _decode_bytes(raw)
            del raw
            yield Entry(name, hint, text=text, problem=problem)


def jsonl_entries(data: bytes, filename: str) -> Iterator[Entry]:
    """One entry per line `{"task_id": ..., "score_file": {...} or "<JSON text>"}`."""
    text, problem = _decode_bytes(data)
    if problem:
        raise ScoreFilesError(f"{quoted(filename, 200)}: {problem}.")
    n = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        n += 1
        if n > MAX_ENTRIES:
            raise ScoreFilesError(
                f"{quoted(filename, 200)} has more than {MAX_ENTRIES:,} lines; the limit is "
                f"{MAX_ENTRIES:,}, one score file per task. Nothing was loaded."
            )
        source = f"line {number}"
        value, why = sf.decode(line)
        if why:
            yield Entry(source, None, problem=why)
            continue
        if not isinstance(value, dict):
            yield Entry(source, None, problem="not a JSON object")
            continue
        task = value.get("task_id")
        hint = str(task).strip() if isinstance(task, str | int) and str(task).strip() else None
        if "score_file" not in value:
            yield Entry(source, hint, problem='no "score_file" field')
        elif isinstance(value["score_file"], str):
            yield Entry(source, hint, text=value["score_file"])
        else:
            yield Entry(source, hint, value=value["score_file"])


def json_entries(files: Sequence[tuple[str, bytes]]) -> Iterator[Entry]:
    """One entry per uploaded `.json` score file (the task id from its name or field)."""
    for name, data in files:
        if len(data) > sf.MAX_CHARS:
            yield Entry(name, _stem_hint(name), problem=f"more than {_mb(sf.MAX_CHARS)}")
            continue
        text, problem = _decode_bytes(data)
        yield Entry(name, _stem_hint(name), text=text, problem=problem)


# ---------------------------------------------------------------------------------------
# Entries -> a predictions table -> verdict rows


def _read(entry: Entry) -> sf.ScoreFile:
    if entry.problem:
        return sf.ScoreFile(problem=entry.problem)
    if entry.text is not None:
        return sf.read_score_file(entry.text)
    return sf.read_score_object(entry.value)


def _task_id(entry: Entry, parsed: sf.ScoreFile, known: Collection[str]) -> str | None:
    if parsed.task_id:
        return parsed.task_id
    if entry.task_hint in known or entry.text is None:
        return entry.task_hint
    parent = _parent(entry.source)
    return parent if parent in known and entry.task_hint not in known else entry.task_hint


def entries_for(files: Sequence[tuple[str, bytes]]) -> tuple[str, Iterator[Entry]]:
    """The upload's name and its entries, by file type (each file checked for size first)."""
    if not files:
        raise ScoreFilesError("No file was given.")
    for name, data in files:
        check_size(len(data), name)
    if len(files) > MAX_ENTRIES:
        raise ScoreFilesError(f"{len(files):,} files; the limit is {MAX_ENTRIES:,}.")
    if len(files) == 1:
        name, data = files[0]
        if data.startswith(b"PK\x03\x04") or data.startswith(_EOCD):
            return name, zip_entries(data, name)
        head = data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
        first_line = head.split(b"\n", 1)[0]
        if b'"score_file"' in first_line:
            return name, jsonl_entries(data, name)
        return name, json_entries(files)
    for name, data in files:
        if data.startswith(b"PK\x03\x04"):
            raise ScoreFilesError(
                f"{quoted(name, 200)} is a zip archive: upload one archive on its own, or "
                "the JSON score files themselves. Nothing was loaded."
            )
    return "score_files", json_entries(files)


def parse_score_files(
    files: Sequence[tuple[str, bytes]],
    tasks: pd.DataFrame,
    taken: Collection[str] = (),
    threshold: float = UV_THRESHOLD,
    verifier: str | None = None,
    held: int = 0,
) -> ScoreUpload:
    """Read every score file of the upload and validate its verdicts as a predictions table.

    `files`: (name, bytes) of each uploaded file (one zip, one JSON Lines file, or one or
    more `.json` files). Raises `ScoreFilesError` (a `PredictionsError`) when the upload is
    refused as a whole (a bound of the archive, or no usable file); otherwise every file is
    used or listed in `upload.dropped` with its reason.
    """
    name, entries = entries_for(files)
    known = set(map(str, tasks["task_id"]))
    verifier = verifier or default_verifier_name(name)
    rows: list[dict[str, Any]] = []
    sources: list[str] = []
    numbers: list[int] = []  # the file number of each generated row
    bad_files: list[dict[str, Any]] = []
    bad_criteria: dict[str, str] = {}
    cells: dict[str, str] = {}
    flagged = [0, 0]  # files whose task_verification says ambiguous / invalid
    kept_chars = 0
    n_files = 0
    for entry in entries:
        n_files += 1
        parsed = _read(entry)
        task = _task_id(entry, parsed, known)
        if parsed.problem:
            if len(bad_files) < MAX_LISTED:
                reason = f"file {quoted(entry.source, 120)}: {parsed.problem}"
                bad_files.append({"row": n_files, "verifier": verifier, "task_id": task or "",
                                  "reason": reason})  # fmt: skip
            else:
                bad_files.append({})
            continue
        score = parsed.score
        rows.append(
            {
                "task_id": task or "",
                "outcome": parsed.outcome,
                "process": parsed.process(threshold),
                "score": score,
                "verifier": verifier,
            }
        )
        sources.append(entry.source)
        numbers.append(n_files)
        if parsed.bad_criteria and task:
            bad_criteria[task] = parsed.bad_text()
        ambiguous, invalid = sf.task_flags(parsed.rubric)
        flagged[0] += ambiguous
        flagged[1] += invalid
        if task and kept_chars <= MAX_KEPT_CHARS:
            cell = json.dumps({"score": score, "gpt_response_text": json.dumps(parsed.rubric)})
            kept_chars += len(cell)
            if kept_chars <= MAX_KEPT_CHARS:
                cells[task] = cell
        del parsed
    listed = pd.DataFrame([b for b in bad_files if b], columns=DROPPED_COLUMNS)
    if not rows:
        first = "; ".join(listed["reason"].head(3)) or "no score file found"
        raise ScoreFilesError(
            f"No usable score file in {quoted(name, 200)}: all {n_files:,} files have a "
            f"problem, so nothing was loaded. First problems: {first}",
            dropped=listed,
        )
    table = "\n".join(json.dumps(r) for r in rows).encode()  # the predictions table
    try:
        upload = predictions.parse_predictions(table, name, tasks, taken, held)
    except PredictionsError as exc:
        dropped = _files_named(exc.dropped, sources, numbers)
        raise ScoreFilesError(str(exc), dropped=pd.concat([listed, dropped])) from None
    dropped = _files_named(upload.dropped, sources, numbers)
    notes = list(upload.notes)
    if bad_criteria:
        shown = "; ".join(f"{quoted(t)}: {why}" for t, why in list(bad_criteria.items())[:5])
        more = f" (and {len(bad_criteria) - 5} more tasks)" if len(bad_criteria) > 5 else ""
        notes.append(
            f"{len(bad_criteria)} score file(s) have criteria whose points are not finite or not "
            f"within [0, max]: those points are not used, so those tasks have no score "
            f"(process from rubric_is_success where given). {shown}{more}."
        )
    if any(flagged):
        notes.append(
            f"The verifier flags {flagged[0]} task(s) as ambiguous and {flagged[1]} as invalid "
            "(error_taxonomy.task_verification); they are counted here, not excluded."
        )
    if len(bad_files) > MAX_LISTED:
        notes.append(f"{len(bad_files):,} files were not used; the first {MAX_LISTED} are listed.")
    kept = replace(
        upload,
        file_format="score files",
        n_rows=upload.n_rows + len(listed),
        dropped=pd.concat([listed, dropped], ignore_index=True)
        if len(listed)
        else dropped.reset_index(drop=True),
        notes=notes,
    )
    used = set(kept.verdicts["task_id"].astype(str))
    if kept_chars > MAX_KEPT_CHARS:
        kept.notes.append(
            f"The score files hold more than {MAX_KEPT_CHARS // 1_000_000} million characters: "
            f"the rubric of {len(used - set(cells))} task(s) is not kept for the Trajectory "
            "page (their verdicts are)."
        )
    return ScoreUpload(kept, bad_criteria, n_files, {t: c for t, c in cells.items() if t in used})


def parse_upload(
    files: Sequence[tuple[str, bytes]],
    tasks: pd.DataFrame,
    taken: Collection[str] = (),
    held: int = 0,
) -> Upload:
    """The dispatch by file type of the "Your verifier" uploader and of `lib.report`: one
    predictions table goes to `lib.uploads.predictions`, score files (a zip, a JSON Lines
    file of score files, one or more JSON score files) here. Raises PredictionsError."""
    return read_upload(files, tasks, taken, held).upload


def read_upload(
    files: Sequence[tuple[str, bytes]],
    tasks: pd.DataFrame,
    taken: Collection[str] = (),
    held: int = 0,
) -> ScoreUpload:
    """`parse_upload` with the score files kept (`ScoreUpload.cells`; none for a table).
    `held`: version-runs the session already holds (`predictions.version_runs`)."""
    if len(files) == 1 and not is_score_upload(files[0][1], files[0][0]):
        name, data = files[0]
        upload = predictions.parse_predictions(data, name, tasks, taken, held)  # late lookup
        return ScoreUpload(upload)
    return parse_score_files(files, tasks, taken, held=held)


def with_score_files(tasks: pd.DataFrame, cells: dict[str, str]) -> pd.DataFrame:
    """The tasks with `gpt_eval_json` replaced by one uploaded verifier's score files (""
    where it has none): what the two-pass analysis reads for that verifier."""
    ids = tasks["task_id"].astype(str)
    return tasks.assign(gpt_eval_json=[cells.get(t, "") for t in ids])


UV_SLOTS = {"process": "uv_process", "outcome": "uv_outcome_success"}
"""The Universal Verifier's rater ids per dimension, which `in_uv_slots` gives to another."""


def in_uv_slots(table: pd.DataFrame, rater: str) -> pd.DataFrame:
    """The verdict table with `rater`'s rows in the Universal Verifier's place (its rows
    dropped): an analysis written for the Universal Verifier (`lib.analysis.quadrant`)
    then runs on an uploaded verifier. Its process is re-labelled there from its score."""
    keep = table[~table["rater"].isin(list(UV_SLOTS.values()))]
    mine = table[(table["rater"] == rater) & table["dimension"].isin(list(UV_SLOTS))]
    mine = mine.assign(rater=mine["dimension"].map(UV_SLOTS))
    return pd.concat([keep, mine], ignore_index=True)


def cells_digest(cells: dict[str, str]) -> str:
    """A SHA-256 of one verifier's kept score files (a cache key part)."""
    h = hashlib.sha256()
    for task_id in sorted(cells):
        h.update(task_id.encode() + b"\0" + cells[task_id].encode() + b"\0")
    return h.hexdigest()


def _files_named(
    dropped: pd.DataFrame | None, sources: list[str], numbers: list[int]
) -> pd.DataFrame:
    """Dropped rows of the generated table, numbered and named by the file they came from."""
    if dropped is None or len(dropped) == 0:
        return pd.DataFrame(columns=DROPPED_COLUMNS)
    frame = dropped.copy()
    rows = [int(r) - 1 for r in frame["row"]]
    frame["reason"] = [
        f"file {quoted(sources[r], 120)}: {why}" if 0 <= r < len(sources) else why
        for r, why in zip(rows, frame["reason"], strict=True)
    ]
    frame["row"] = [numbers[r] if 0 <= r < len(numbers) else r + 1 for r in rows]
    return frame


__all__ = [
    "EXTENSIONS",
    "MAX_BYTES",
    "MAX_ENTRIES",
    "MAX_RATIO",
    "MAX_TOTAL_BYTES",
    "ScoreFilesError",
    "ScoreUpload",
    "check_archive",
    "is_score_upload",
    "parse_score_files",
    "parse_upload",
    "read_upload",
    "with_score_files",
]
