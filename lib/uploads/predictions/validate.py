"""Validating the cells of an uploaded file against the loaded tasks -> verdict rows.

Policy ("nothing half-loaded"): file-level problems reject the whole file (see
`lib.uploads.predictions.read` for the bounds, plus the verifier caps below and "no valid row at
all"); row-level problems drop that row, listed with every reason. A task id that occurs
more than once for the same verifier is ambiguous: all its rows are dropped. A valid row
yields all its verdicts (outcome, and process when the file has process labels) or none.
Row numbers count data rows from 1 in file order (row 1 is line 2 of a CSV).

Verifier caps (`MAX_VERIFIERS_PER_FILE`, `MAX_VERIFIERS_PER_SESSION`): every page pairs
each verifier with the references and each other, so the analysis cost grows with their
number (issue 18: 960 uploaded verifiers made one Agreement view cost 106 s of CPU). The
names are counted right after reading, before any per-row work.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import pandas as pd

from lib.table.labels import NEGATIVE_WORDS, POSITIVE_WORDS, parse_label
from lib.table.verdicts import COLUMNS, UPLOAD_PREFIX
from lib.uploads.predictions import read
from lib.uploads.predictions.read import PredictionsError, quoted, read_table
from lib.vocab import SPLIT_SHORT, SPLITS, short_split

MAX_VERIFIERS_PER_FILE = 10
"""Most distinct verifier names in one file."""

MAX_VERIFIERS_PER_SESSION = 20
"""Most uploaded verifiers a browser session (or one report run) holds at once."""

MAX_VERSIONS_PER_VERIFIER = 50
"""Most distinct `version` values of one verifier (a file with `version` / `run` columns)."""

MAX_RUNS_PER_VERSION = 5
"""Most distinct `run` values of one version of one verifier."""

MAX_VERSION_RUNS_PER_SESSION = 200
"""Most (verifier, version, run) triples a session holds. A verifier with versions counts
once towards `MAX_VERIFIERS_PER_SESSION`: only its last version (its lowest run) is a rater
of the verdict table the other pages pair; its whole history is read by the Iterations
section alone (`lib.analysis.iterations`), whose cost grows with the version-runs, so they
have their own cap: 20 verifiers x 10, or one verifier's 50 versions x 4 runs."""

MAX_RUN = 999
"""Largest `run` number (runs are small integers: 1, 2, 3)."""

DEFAULT_VERSION = "1"
"""The version of every row of a file with a `run` column but no `version` column."""

HISTORY_COLUMNS = ["rater", "version", "order", "run", "split", "task_id", "dimension", "label"]
"""`Upload.history`: one row per (verifier, version, run, task, dimension); `order` is the
version's rank (1 = first seen in the file)."""


def row_cap(n_tasks: int) -> int:
    """The most data rows a file may have on data of ``n_tasks`` tasks: one row per task
    for each of `MAX_VERIFIERS_PER_FILE` verifiers, and never fewer than `MAX_ROWS`
    (50,000). On the real data (260 tasks) that is 50,000; at 26,000 tasks 260,000, so a
    file can still hold 10 verifiers. Every other bound still applies (20 MB, cells, the
    parse-memory estimate), so the memory of a parse stays bounded.

    >>> row_cap(260), row_cap(26_000)
    (50000, 260000)
    """
    return max(read.MAX_ROWS, MAX_VERIFIERS_PER_FILE * max(int(n_tasks), 0))


MAX_LISTED_ROWS = 5
"""Row numbers named in one duplicate message; the count says how many there are."""

PREFIX = UPLOAD_PREFIX
"""Rater ids of uploaded verifiers start with this, so they never collide with the data's."""

MAX_NAME = 60
DROPPED_COLUMNS = ["row", "verifier", "task_id", "reason"]

LABEL_SPELLINGS = (
    " / ".join([*sorted(POSITIVE_WORDS - {"1"}), "1", "1.0"]),
    " / ".join([*sorted(NEGATIVE_WORDS - {"0"}), "0", "0.0"]),
)
"""The accepted spellings of success and of failure (any case), for the page and messages."""


@dataclass(frozen=True)
class Upload:
    """A parsed predictions file: clean verdict rows plus exactly what was left out.

    `verdicts`: rows of the verdict table (see `lib.uploads.predictions`).
    `dropped`: one row per dropped data row: `row` (1-based), `verifier`, `task_id`,
    `reason` (every problem of the row, joined by "; ").
    `unknown_task_ids`: the distinct unknown ids, sorted.
    `coverage`: per (verifier, split): tasks in the split, tasks with an outcome / process
    verdict, and the outcome share.
    `raters`: rater ids in file order. `notes`: things worth saying that dropped nothing.
    `history`: with `version` / `run` columns, every version-run's verdicts
    (`HISTORY_COLUMNS`), else None.
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
    history: pd.DataFrame | None = None

    @property
    def n_used(self) -> int:
        """Data rows that became verdicts."""
        return self.n_rows - len(self.dropped)


# ---------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------


def display_name(rater: str) -> str:
    """The name the researcher gave (`mine:v1` -> `v1`)."""
    return str(rater).removeprefix(PREFIX)


def clean_name(name: Any) -> str:
    """A verifier name safe as a rater id: trimmed, single spaces, no `@`, at most 60 chars.

    `@` is reserved (`Judge9@informed` marks a reviewer's informed stage).
    """
    text = " ".join(str(name).split()).replace("@", "_")
    return text[:MAX_NAME].strip()


def _unique_rater(name: str, taken: set[str]) -> str:
    rater = PREFIX + name
    k = 2
    while rater in taken:
        rater = f"{PREFIX}{name} ({k})"
        k += 1
    return rater


def default_verifier_name(filename: str) -> str:
    """The name of a one-verifier file without a `verifier` column: its file stem."""
    return clean_name(PurePath(filename).stem) or "my_verifier"


# ---------------------------------------------------------------------------------------
# Cells -> values, with a reason when they cannot be used
# ---------------------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _each(parse: Callable[[Any], Any], values: list[Any]) -> list[Any]:
    """`[parse(v) for v in values]`, each distinct cell parsed once: a history file repeats
    the same few names, versions, runs and labels on every row (39,000 rows of 50 versions x
    3 runs parsed 0.25 s faster). Keyed by type and value (``True == 1`` but a run of
    ``True`` is refused); an unhashable cell (a JSON list) is parsed where it stands."""
    seen: dict[tuple[type, Any], Any] = {}
    out = []
    for value in values:
        try:
            key = (type(value), value)
            hit = seen.get(key, seen)
        except TypeError:
            out.append(parse(value))
            continue
        if hit is seen:
            hit = seen[key] = parse(value)
        out.append(hit)
    return out


def parse_binary(value: Any) -> tuple[int | None, str | None]:
    """`(label, problem)`: label 1/0, or None when empty (problem None) or unparseable.

    Accepts what `lib.table.labels.parse_label` accepts (1/0, true/false, success/failure,
    correct/incorrect, yes/no, pass/fail; any case, trimmed) plus `1.0` / `0.0`.
    """
    if _missing(value):
        return None, None
    if isinstance(value, list | dict | tuple):
        return None, f"{quoted(value)} is not a label"
    parsed = parse_label(value)
    if parsed.label is not None:
        return parsed.label, None
    try:
        number = float(str(value).strip())
    except (ValueError, OverflowError):
        number = math.nan
    if number in (0.0, 1.0):
        return int(number), None
    return None, (
        f"{quoted(value)} is not a label (success: {LABEL_SPELLINGS[0]}; "
        f"failure: {LABEL_SPELLINGS[1]}; any case)"
    )


def parse_score(value: Any) -> tuple[float | None, str | None]:
    """`(score, problem)`: a float in [0, 1], None when empty, or a problem."""
    if _missing(value):
        return None, None
    if isinstance(value, bool | list | dict | tuple):
        return None, f"score {quoted(value)} is not a number"
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        return None, f"score {quoted(value)} is not a number"
    if math.isnan(number):
        return None, None
    if not 0.0 <= number <= 1.0:
        return None, f"score {quoted(value)} is outside [0, 1]"
    return number, None


def parse_run(value: Any) -> tuple[int | None, str | None]:
    """`(run, problem)`: an integer in [1, `MAX_RUN`], None when empty (then run 1).

    >>> parse_run("2"), parse_run(3.0), parse_run(""), parse_run("x")[1]
    ((2, None), (3, None), (None, None), 'run "x" is not a whole number from 1 to 999')
    """
    if _missing(value):
        return None, None
    problem = f"run {quoted(value)} is not a whole number from 1 to {MAX_RUN}"
    if isinstance(value, bool | list | dict | tuple):
        return None, problem
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        return None, problem
    if not math.isfinite(number) or number != int(number) or not 1 <= number <= MAX_RUN:
        return None, problem
    return int(number), None


_SPLIT_NAMES = {s.lower(): s for s in SPLITS} | {
    short.lower(): split for split, short in SPLIT_SHORT.items()
}


def _task_split(task_id: str, cell: Any, known: list[str]) -> tuple[str | None, str | None]:
    """`(split, problem)` of a row: the file's split cell checked against the task's splits."""
    if _missing(cell):
        if len(known) > 1:
            return None, f"task {quoted(task_id)} is in several splits: add a split column"
        return (known[0] if known else None), None
    split = _SPLIT_NAMES.get(str(cell).strip().lower())
    if split is None:
        return None, f"unknown split {quoted(cell)} (known: {', '.join(SPLITS)})"
    if known and split not in known:
        return None, f'split is "{split}" but task {quoted(task_id)} is in "{known[0]}"'
    return split, None


def _duplicates(
    names: list[str],
    ids: list[str],
    splits: list[str | None],
    versions: list[str] | None = None,
    runs: list[int] | None = None,
) -> dict[int, str]:
    """Row index -> problem, for every row whose (verifier, split, task_id) occurs twice or more
    (with `version` / `run` columns: the same verifier, version, run, split and task).

    A row whose split is unresolved counts with split "" (task ids are unique across the
    dataset's splits, so in practice this is (verifier, task_id)).
    """
    rows: dict[tuple[str, str, str, str], list[int]] = {}
    for i, (name, split, task_id) in enumerate(zip(names, splits, ids, strict=True)):
        if name and task_id:
            extra = "" if versions is None or runs is None else f"{versions[i]}\x00{runs[i]}"
            rows.setdefault((name, extra, split or "", task_id), []).append(i)
    out = {}
    for (name, extra, _split, task_id), where in rows.items():
        if len(where) > 1:
            # One bounded message per group, shared by its rows: the work stays linear.
            numbers = ", ".join(str(i + 1) for i in where[:MAX_LISTED_ROWS])
            if len(where) > MAX_LISTED_ROWS:
                numbers += f", … ({len(where) - MAX_LISTED_ROWS:,} more)"
            which = f"verifier {quoted(name)}"
            if extra:
                version, run = extra.split("\x00")
                which += f", version {quoted(version)}, run {run}"
            message = (
                f"task_id {quoted(task_id)} appears {len(where):,} times for {which} "
                f"(rows {numbers}): ambiguous, all dropped"
            )
            for i in where:
                out[i] = message
    return out


def check_verifier_caps(names: list[str], taken: Collection[str], filename: str) -> None:
    """Reject a file naming over `MAX_VERIFIERS_PER_FILE` verifiers, or one that would take
    the session over `MAX_VERIFIERS_PER_SESSION` (counted before any per-row work)."""
    distinct = {n for n in names if n}
    if len(distinct) > MAX_VERIFIERS_PER_FILE:
        raise PredictionsError(
            f"{quoted(filename, 200)} names {len(distinct):,} verifiers; the limit is "
            f"{MAX_VERIFIERS_PER_FILE} per file. Split it into several files. Nothing was loaded."
        )
    held = len(set(taken))
    if held + len(distinct) > MAX_VERIFIERS_PER_SESSION:
        raise PredictionsError(
            f"{quoted(filename, 200)} adds {len(distinct)} verifier(s) to the {held} already "
            f"loaded; the limit is {MAX_VERIFIERS_PER_SESSION} per session. Remove some "
            "first. Nothing was loaded."
        )


def check_history_caps(
    names: list[str],
    versions: list[str],
    runs: list[int | None],
    held_version_runs: int,
    filename: str,
) -> int:
    """Reject a file over `MAX_VERSIONS_PER_VERIFIER`, `MAX_RUNS_PER_VERSION` or one that would
    take the session over `MAX_VERSION_RUNS_PER_SESSION` (counted before any per-row work).
    Returns the file's (verifier, version, run) count."""
    triples = {(n, v, r or 1) for n, v, r in zip(names, versions, runs, strict=True) if n and v}
    per_verifier: dict[str, set[str]] = {}
    per_version: dict[tuple[str, str], set[int]] = {}
    for name, version, run in triples:
        per_verifier.setdefault(name, set()).add(version)
        per_version.setdefault((name, version), set()).add(run)
    for name, held in per_verifier.items():
        if len(held) > MAX_VERSIONS_PER_VERIFIER:
            raise PredictionsError(
                f"{quoted(filename, 200)} has {len(held):,} versions of verifier "
                f"{quoted(name, MAX_NAME)}; the limit is {MAX_VERSIONS_PER_VERIFIER} per "
                "verifier. Nothing was loaded."
            )
    for (name, version), held in per_version.items():
        if len(held) > MAX_RUNS_PER_VERSION:
            raise PredictionsError(
                f"{quoted(filename, 200)} has {len(held):,} runs of version "
                f"{quoted(version, MAX_NAME)} of verifier {quoted(name, MAX_NAME)}; the limit "
                f"is {MAX_RUNS_PER_VERSION} per version. Nothing was loaded."
            )
    if held_version_runs + len(triples) > MAX_VERSION_RUNS_PER_SESSION:
        raise PredictionsError(
            f"{quoted(filename, 200)} adds {len(triples):,} version-runs to the "
            f"{held_version_runs} already loaded; the limit is {MAX_VERSION_RUNS_PER_SESSION} "
            "per session. Remove some verifiers first. Nothing was loaded."
        )
    return len(triples)


# ---------------------------------------------------------------------------------------
# The whole file
# ---------------------------------------------------------------------------------------


def empty_verdicts() -> pd.DataFrame:
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


def parse_predictions(
    data: bytes,
    filename: str,
    tasks: pd.DataFrame,
    taken: Collection[str] = (),
    held_version_runs: int = 0,
) -> Upload:
    """Parse and validate an uploaded file against the loaded tasks (`split`, `task_id`).

    `taken`: rater ids already in use (the session's uploaded verifiers); a verifier name
    whose id is taken is renamed `name (2)`, and a note says so. Raises PredictionsError
    when the file is rejected as a whole (see the module docstrings); otherwise every data
    row is either in `verdicts` or in `dropped`, never half-used.

    A file with a `version` and/or `run` column is a verifier's history: versions are
    ordered as they first appear in the file, runs are integers (empty = 1). `verdicts` then
    holds each verifier's last version (its lowest run), the verifier every other page
    pairs, and `history` every (version, run)'s verdicts (`HISTORY_COLUMNS`).
    `held_version_runs`: version-runs the session already holds (`MAX_VERSION_RUNS_PER_SESSION`).
    A file without these columns gives exactly the rows it gave before, and `history` None.
    """
    table = read_table(data, filename, row_cap(len(tasks)))
    frame, fmt, ignored, n = table.frame, table.file_format, table.ignored, table.n_rows

    def column(role: str) -> list[Any]:
        return frame[role].tolist() if role in frame.columns else [None] * n

    fallback = default_verifier_name(filename)
    if "verifier" in frame.columns:
        names = _each(lambda v: "" if _missing(v) else clean_name(v), column("verifier"))
    else:
        names = [fallback] * n
    check_verifier_caps(names, taken, filename)
    has_history = "version" in frame.columns or "run" in frame.columns
    if "version" in frame.columns:
        versions = _each(lambda v: "" if _missing(v) else clean_name(v), column("version"))
    else:
        versions = [DEFAULT_VERSION] * n
    run_cells = _each(parse_run, column("run"))
    runs_or_none = [r for r, _ in run_cells]
    if has_history:
        check_history_caps(names, versions, runs_or_none, held_version_runs, filename)
    runs = [r or 1 for r in runs_or_none]
    task_splits: dict[str, list[str]] = {}
    for split, task_id in zip(tasks["split"], tasks["task_id"], strict=True):
        task_splits.setdefault(str(task_id), []).append(str(split))

    ids = ["" if _missing(v) else str(v).strip() for v in column("task_id")]
    outcomes = _each(parse_binary, column("outcome"))
    processes = _each(parse_binary, column("process"))
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
            why.append(f"unknown task_id {quoted(ids[i])}")
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
        if has_history and not versions[i]:
            why.append("version is empty")
        if run_cells[i][1]:
            why.append(str(run_cells[i][1]))
    keys = (versions, runs) if has_history else (None, None)
    for i, problem in _duplicates(names, ids, splits, *keys).items():
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
            f"No usable row in {quoted(filename, 200)}: all {n} rows have a problem, so nothing "
            f"was loaded. First problems: {first}",
            dropped=dropped,
        )

    notes: list[str] = []
    if ignored:
        notes.append("Ignored columns: " + ", ".join(quoted(c) for c in ignored) + ".")
    taken_ids = set(taken)
    raters: dict[str, str] = {}
    for i in good:
        if names[i] not in raters:
            rater = _unique_rater(names[i], taken_ids)
            taken_ids.add(rater)
            raters[names[i]] = rater
            if rater != PREFIX + names[i]:
                notes.append(
                    f"A verifier named {quoted(names[i], MAX_NAME)} is already loaded in this "
                    f"session: this one is called {quoted(display_name(rater), MAX_NAME + 6)}."
                )
    with_process = {names[i] for i in good if processes[i][0] is not None}

    history = None
    if has_history:
        rater_of = [raters.get(name, "") for name in names]
        history = _history(good, rater_of, versions, runs, splits, ids, outcomes, processes)
        current = current_versions(history)
        notes += _history_notes(history, current)
        good = [i for i in good if current[rater_of[i]] == (versions[i], runs[i])]

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

    verdicts = typed_verdicts(pd.DataFrame(rows)) if rows else empty_verdicts()
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
        history=history,
    )


def _history(
    good: list[int],
    raters: list[str],
    versions: list[str],
    runs: list[int],
    splits: list[str | None],
    ids: list[str],
    outcomes: list[tuple[int | None, str | None]],
    processes: list[tuple[int | None, str | None]],
) -> pd.DataFrame:
    """Every good row's verdicts as `HISTORY_COLUMNS` rows; `order` ranks each verifier's
    versions as they first appear (1 = first). Process rows only for a verifier that gives
    a process label somewhere (as the verdict rows)."""
    order: dict[str, dict[str, int]] = {}
    for i in good:
        seen = order.setdefault(raters[i], {})
        seen.setdefault(versions[i], len(seen) + 1)
    with_process = {raters[i] for i in good if processes[i][0] is not None}
    rows: list[tuple] = []
    for i in good:
        base = (raters[i], versions[i], order[raters[i]][versions[i]], runs[i], splits[i], ids[i])
        rows.append((*base, "outcome", outcomes[i][0]))
        if raters[i] in with_process:
            rows.append((*base, "process", processes[i][0]))
    frame = pd.DataFrame(rows, columns=HISTORY_COLUMNS)
    frame["label"] = pd.array(frame["label"].tolist(), dtype="Int8")
    frame["order"] = frame["order"].astype("int64")
    frame["run"] = frame["run"].astype("int64")
    return frame


def current_versions(history: pd.DataFrame) -> dict[str, tuple[str, int]]:
    """Rater id -> (version, run) the other pages pair: its last version, lowest run."""
    out: dict[str, tuple[str, int]] = {}
    for rater, group in history.groupby("rater", sort=False):
        last = group[group["order"] == group["order"].max()]
        out[str(rater)] = (str(last["version"].iloc[0]), int(last["run"].min()))
    return out


def version_runs(history: pd.DataFrame | None) -> int:
    """How many (verifier, version, run) triples a history holds (the session cap)."""
    if history is None or len(history) == 0:
        return 0
    return int(history[["rater", "version", "run"]].drop_duplicates().shape[0])


def _history_notes(history: pd.DataFrame, current: dict[str, tuple[str, int]]) -> list[str]:
    notes = []
    for rater, (version, run) in current.items():
        rows = history[history["rater"] == rater]
        n_versions = rows["version"].nunique()
        n_runs = rows[["version", "run"]].drop_duplicates().shape[0]
        notes.append(
            f"Verifier {quoted(display_name(rater), MAX_NAME)} has {n_versions} version(s) and "
            f"{n_runs} version-run(s), versions ordered as they first appear in the file: the "
            f"other pages score its last version {quoted(version, MAX_NAME)} (run {run}); the "
            "Iterations section scores them all."
        )
    return notes


def coverage(verdicts: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """Per (verifier, split): tasks in the split and how many have an outcome/process label.

    One groupby over the verdicts (not a mask per verifier and split): linear in the rows.
    """
    totals = tasks.groupby("split").size()
    labelled = verdicts[verdicts["label"].notna()]
    counts = labelled.groupby(["rater", "split", "dimension"], observed=True).size().to_dict()
    rows = []
    for rater in dict.fromkeys(verdicts["rater"].tolist()):
        for split in SPLITS:
            n_tasks = int(totals.get(split, 0))
            outcome = int(counts.get((rater, split, "outcome"), 0))
            process = int(counts.get((rater, split, "process"), 0))
            rows.append(
                {
                    "verifier": display_name(rater),
                    "split": short_split(split),
                    "tasks in split": n_tasks,
                    "outcome labels": outcome,
                    "process labels": process,
                    "outcome coverage": outcome / n_tasks if n_tasks else 0.0,
                }
            )
    return pd.DataFrame(rows)
