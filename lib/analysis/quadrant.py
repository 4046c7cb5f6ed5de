"""Process against outcome: the 2x2 of a rater's process verdict x its outcome verdict.

The paper's second principle: process and outcome are judged apart because they diverge
(a sound process the environment blocked fails its outcome; a lucky outcome can hide a
bad process). Judges pairs raters within one dimension only, so the cross is drawn here,
for two raters:

- the Universal Verifier: process ``uv_rubric_score >= t`` (``t`` the page's threshold,
  `lib.table.verdicts.with_uv_threshold`), outcome its own boolean `uv_outcome_success`;
- the humans: the final process label x the final (adjudicated) outcome label.

Each cell counts the tasks with both of that rater's verdicts (a task missing either is
excluded and counted), lists them, and gives the verifier's agreement with the humans
inside the cell: on process, on outcome and on both, each a share of the cell's tasks
where the humans (or the verifier) have the labels compared, with the app's Clopper-Pearson
interval on the clusters' effective n (`lib.analysis.shares`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lib.analysis.agreement import table_splits
from lib.analysis.shares import Share, share
from lib.table.clusters import cluster_ids
from lib.table.verdicts import with_uv_threshold
from lib.vocab import BOOTSTRAP, UV_THRESHOLD, Bootstrap

UV, HUMANS = "uv", "humans"
RATERS: dict[str, tuple[str, str]] = {
    UV: ("uv_process", "uv_outcome_success"),
    HUMANS: ("final_human_process_label", "final_human_outcome_label"),
}
"""Quadrant -> (process rater, outcome rater) of the verdict table."""
TITLES = {UV: "Universal Verifier", HUMANS: "Humans (final labels)"}
SHORT = {UV: "verifier", HUMANS: "humans"}
CELLS: tuple[tuple[int, int], ...] = ((1, 1), (1, 0), (0, 1), (0, 0))
"""(process, outcome) of each cell, in the order shown."""
CELL_WORDS = {
    (1, 1): "sound process, success",
    (1, 0): "sound process, failure",
    (0, 1): "flawed process, success",
    (0, 0): "flawed process, failure",
}
AGREEMENTS: tuple[str, ...] = ("process", "outcome", "both")
"""What the verifier's agreement with the humans is measured on inside a cell."""
COLUMNS = ["split", "task_id", "uv_score", "uv_process", "uv_outcome"]
COLUMNS += ["human_process", "human_outcome"]


def verdict_frame(
    table: pd.DataFrame,
    splits: Sequence[str],
    threshold: float = UV_THRESHOLD,
    own_labels: bool = False,
) -> pd.DataFrame:
    """One row per task of ``splits`` in the verdict table: the verifier's rubric score
    and both raters' process and outcome labels (Int8, missing kept), ``uv_process`` at
    ``threshold`` (exactly ``score >= threshold``).

    ``own_labels``: the verifier in the Universal Verifier's place is one uploaded as score
    files (`lib.uploads.score_files.in_uv_slots`), whose process verdict is its file's
    `rubric_is_success`, else its score >= the default threshold (issue 41): at the default
    threshold its labels are kept as they are; at another, its scored tasks are re-labelled
    `score >= threshold` and a task without a score keeps its label."""
    # the dataset's verifier is always re-labelled from the score, even at the default: the
    # cells are `score >= t` whatever labels the table was handed with
    rows = table.loc[table["split"].isin(list(splits))]
    if not own_labels:
        rows = with_uv_threshold(rows, threshold)
    elif threshold != UV_THRESHOLD:
        moved = with_uv_threshold(rows, threshold)
        keep = (rows["rater"] == "uv_process") & rows["score"].isna()
        rows = moved.assign(label=moved["label"].where(~keep, rows["label"]))
    keys = rows[["split", "task_id"]].drop_duplicates().sort_values(["split", "task_id"])
    index = pd.MultiIndex.from_frame(keys)
    frame = keys.reset_index(drop=True)

    def column(rater: str, field: str = "label") -> np.ndarray:
        one = rows.loc[rows["rater"] == rater].drop_duplicates(["split", "task_id"])
        return one.set_index(["split", "task_id"])[field].reindex(index).to_numpy()

    frame["uv_score"] = pd.to_numeric(column("uv_process", "score"), errors="coerce")
    for name, rater in zip(COLUMNS[3:], [*RATERS[UV], *RATERS[HUMANS]], strict=True):
        frame[name] = pd.array(column(rater), dtype="Int8")
    return frame


@dataclass(frozen=True)
class Cell:
    """One cell of a quadrant: its tasks and the verifier's agreement with the humans."""

    process: int
    outcome: int
    task_ids: tuple[str, ...]
    splits: tuple[str, ...]  # each task's split, aligned with ``task_ids``
    agreement: dict[str, Share]  # by `AGREEMENTS`

    @property
    def n(self) -> int:
        return len(self.task_ids)


@dataclass(frozen=True)
class Quadrant:
    """One rater's 2x2 (`RATERS`): four cells, ``n`` tasks in them, ``n_excluded`` with a
    missing process or outcome verdict."""

    rater: str
    cells: tuple[Cell, ...]  # in `CELLS` order
    n_excluded: int

    @property
    def n(self) -> int:
        return sum(c.n for c in self.cells)

    def cell(self, process: int, outcome: int) -> Cell:
        return next(c for c in self.cells if (c.process, c.outcome) == (process, outcome))


@dataclass(frozen=True)
class QuadrantResult:
    """Both quadrants for ``splits`` at ``threshold`` (the Universal Verifier's process)."""

    splits: tuple[str, ...]
    threshold: float
    quadrants: tuple[Quadrant, ...]  # UV, then humans
    frame: pd.DataFrame  # `verdict_frame`
    bootstrap: Bootstrap
    n_clusters: int  # clusters of the tasks with any label

    def quadrant(self, rater: str) -> Quadrant:
        return next(q for q in self.quadrants if q.rater == rater)


def _agree(a: pd.Series, b: pd.Series) -> list[float]:
    """1 where the two labels are equal, 0 where they differ, NaN where either is missing."""
    return [
        np.nan if pd.isna(x) or pd.isna(y) else float(x == y) for x, y in zip(a, b, strict=True)
    ]


def _agreements(rows: pd.DataFrame, boot: Bootstrap) -> dict[str, Share]:
    ids = cluster_ids(rows["task_id"].tolist(), boot.unit)
    process = _agree(rows["uv_process"], rows["human_process"])
    outcome = _agree(rows["uv_outcome"], rows["human_outcome"])
    both = [
        np.nan if np.isnan(p) or np.isnan(o) else p * o
        for p, o in zip(process, outcome, strict=True)
    ]
    return {
        "process": share(process, ids, boot),
        "outcome": share(outcome, ids, boot),
        "both": share(both, ids, boot),
    }


def quadrant(frame: pd.DataFrame, rater: str, boot: Bootstrap = BOOTSTRAP) -> Quadrant:
    """The 2x2 of ``rater`` (`UV` or `HUMANS`) over a `verdict_frame`."""
    prefix = "uv" if rater == UV else "human"
    p, o = frame[f"{prefix}_process"], frame[f"{prefix}_outcome"]
    known = (p.notna() & o.notna()).to_numpy()
    cells = []
    for cp, co in CELLS:
        in_cell = (p == cp).fillna(False).to_numpy(bool) & (o == co).fillna(False).to_numpy(bool)
        rows = frame.loc[known & in_cell]
        cells.append(
            Cell(
                cp,
                co,
                tuple(rows["task_id"].astype(str)),
                tuple(rows["split"].astype(str)),
                _agreements(rows, boot),
            )
        )
    return Quadrant(rater, tuple(cells), int((~known).sum()))


def quadrants(
    table: pd.DataFrame,
    splits: Sequence[str],
    threshold: float = UV_THRESHOLD,
    boot: Bootstrap = BOOTSTRAP,
    own_labels: bool = False,
) -> QuadrantResult:
    """Both quadrants of the tasks in ``splits`` (see the module docstring; ``own_labels``:
    `verdict_frame`)."""
    frame = verdict_frame(table, splits, threshold, own_labels)
    labelled = frame[COLUMNS[3:]].notna().any(axis=1)
    ids = cluster_ids(frame.loc[labelled, "task_id"].tolist(), boot.unit)
    return QuadrantResult(
        tuple(splits),
        float(threshold),
        (quadrant(frame, UV, boot), quadrant(frame, HUMANS, boot)),
        frame,
        boot,
        len(set(ids)),
    )


def report_records(bench: Any, boot: Bootstrap = BOOTSTRAP) -> list[QuadrantResult]:
    """The ``process_outcome`` key of `python -m lib.report`: one result per split of the
    verdict table, at the default threshold."""
    splits = table_splits(bench.verdicts)
    return [quadrants(bench.verdicts, [s], UV_THRESHOLD, boot) for s in splits]
