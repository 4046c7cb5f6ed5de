"""The report's sections computed once per test run for one input, however many tests
print that report.

Several tests print a full report whose sections run on the same input: the default
report (`report_json`) and `lib.report.tables` on the mirror (test_report_frames); the
mirror's sample predictions as is (`report_with_predictions_json`), read as UTF-16, with
a row of an unknown task, with 20,000 dropped rows. Each used to bootstrap every section
again (10-15 s each). `memoised(monkeypatch, folder)` wraps `lib.report.SECTIONS` and
`lib.report.your_verifier_json` so that a call whose input is the same as an earlier
one returns the earlier records: the key is every input by value (the bench's tables by
their cells, its source, folder, warnings and revision, and the bootstrap), so two inputs
that differ in any cell never share records. Records are kept in this worker and, with
`folder` (the run's shared folder), as files the other workers read. What a test checks
about its files (exit codes, warnings, the `predictions` key, the bounds, the frames'
conversion) is computed for it every time: only the sections' records are reused.

Only for tests that do not change how a section computes (a test that registers a
metric or replaces a section must not use it): the memo lives as long as the run.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

_MEMO: dict[tuple, Any] = {}
CALLS = {"computed": 0, "reused": 0}
"""How many section calls were computed and how many were reused (for the test below)."""


def _digest(*parts: object) -> str:
    """A digest of `parts` by value: data frames by their cells, index, columns and dtypes
    (not by their pickle, which changes when pandas merges a frame's blocks in place)."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, pd.DataFrame):
            h.update(pickle.dumps((list(part.columns), [str(t) for t in part.dtypes])))
            h.update(_cells(part.index.to_series()))
            for _, column in part.items():
                h.update(_cells(column))
        else:
            h.update(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL))
    return h.hexdigest()


def _cells(column: pd.Series) -> bytes:
    try:
        return pd.util.hash_pandas_object(column, index=False).to_numpy().tobytes()
    except TypeError:  # unhashable cells (lists, arrays): their values
        return pickle.dumps(column.tolist(), protocol=pickle.HIGHEST_PROTOCOL)


def bench_key(bench: Any) -> str:
    """Every input of a section, by value (the screenshot store is not read by one)."""
    revision = None if bench.revision is None else (bench.revision.sha, bench.revision.date)
    return _digest(
        bench.source.describe(),
        str(bench.folder),
        bench.tasks,
        bench.annotations,
        bench.verdicts,
        list(bench.warnings),
        revision,
    )


def _remembered(key: tuple, compute: Callable[[], Any], folder: Path | None) -> Any:
    """The records of `key`, computed once; each caller gets its own copy."""
    path = None if folder is None else folder / f"{_digest(key)}.pickle"
    if key not in _MEMO and path is not None and path.exists():
        _MEMO[key] = path.read_bytes()
    if key not in _MEMO:
        _MEMO[key] = pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL)
        CALLS["computed"] += 1
        if path is not None:  # whole or absent: written aside, then renamed
            folder.mkdir(parents=True, exist_ok=True)
            part = path.with_name(f"{path.name}.{os.getpid()}.part")
            part.write_bytes(_MEMO[key])
            part.replace(path)
    else:
        CALLS["reused"] += 1
    return pickle.loads(_MEMO[key])


def memoised(monkeypatch: pytest.MonkeyPatch, folder: Path | None = None) -> None:
    """Reuse `lib.report`'s section records for inputs already computed in this worker or,
    with `folder`, by any worker that was given the same folder (undone with
    `monkeypatch`)."""
    from lib import report

    def section(name: str, records: Callable) -> Callable:
        @functools.wraps(records)
        def wrapped(bench: Any, boot: Any) -> Any:
            key = ("section", name, bench_key(bench), repr(boot))
            return _remembered(key, lambda: records(bench, boot), folder)

        return wrapped

    yours = report.your_verifier_json

    @functools.wraps(yours)
    def your_verifier_json(table: Any, rater: str, dimension: str, boot: Any = None) -> Any:
        boot = report.BOOTSTRAP if boot is None else boot
        key = ("your_verifier", _digest(table), rater, dimension, repr(boot))
        return _remembered(key, lambda: yours(table, rater, dimension, boot), folder)

    sections = {name: section(name, records) for name, records in report.SECTIONS.items()}
    monkeypatch.setattr(report, "SECTIONS", sections)
    monkeypatch.setattr(report, "your_verifier_json", your_verifier_json)
