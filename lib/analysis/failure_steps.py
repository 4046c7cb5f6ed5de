"""Where verifiers say the agent went wrong: `first_failure_step` of uploaded score files.

The released Universal Verifier's newer output carries
`error_taxonomy.first_point_of_failure.first_failure_step` (a step, counted from 0 as the
dataset's steps are) and `error_taxonomy.task_verification.is_ambiguous` / `is_invalid`
(`lib.table.score_file.failure_step`, `task_flags`). From the score files kept per uploaded
verifier (rater id -> task id -> the file as a dataset cell):

- per verifier (`record: "verifier"`): tasks with a score file, tasks with a failure step,
  ambiguous and invalid tasks;
- per pair of verifiers that both give steps (`record: "pair"`): over the tasks **both
  fail** (outcome verdict 0 of both, in the verdict table) and both give a step: how many
  (`n`), the share with the same step (`exact`), within one step (`within_1`), and the
  mean absolute distance in steps. With `exclude_flagged`, ambiguous or invalid tasks (by
  either verifier) are left out and counted (`n_excluded_flagged`).

No Streamlit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from lib.table import score_file as sf
from lib.table.gpt_eval import parse_gpt_eval


def steps_frame(cells_by_rater: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """One row per (rater, task): `step` (nullable), `ambiguous`, `invalid`."""
    rows = []
    for rater, cells in cells_by_rater.items():
        for task_id, cell in cells.items():
            rubric = parse_gpt_eval(cell).rubric
            ambiguous, invalid = sf.task_flags(rubric)
            step = sf.failure_step(rubric)
            rows.append({"rater": rater, "task_id": task_id, "step": step,
                         "ambiguous": ambiguous, "invalid": invalid})  # fmt: skip
    frame = pd.DataFrame(rows, columns=["rater", "task_id", "step", "ambiguous", "invalid"])
    frame["step"] = frame["step"].astype("Int64")
    return frame


def _failed(verdicts: pd.DataFrame, rater: str) -> set[str]:
    rows = verdicts[(verdicts["rater"] == rater) & (verdicts["dimension"] == "outcome")]
    return set(rows.loc[rows["label"] == 0, "task_id"].astype(str))


def failure_step_records(
    cells_by_rater: Mapping[str, Mapping[str, str]],
    verdicts: pd.DataFrame,
    exclude_flagged: bool = False,
) -> list[dict[str, Any]]:
    """The report's `failure_steps` records (see the module docstring)."""
    frame = steps_frame(cells_by_rater)
    records: list[dict[str, Any]] = []
    for rater, rows in frame.groupby("rater", sort=False):
        records.append(
            {
                "record": "verifier",
                "verifier": rater,
                "n_tasks": len(rows),
                "n_with_step": int(rows["step"].notna().sum()),
                "n_ambiguous": int(rows["ambiguous"].sum()),
                "n_invalid": int(rows["invalid"].sum()),
            }
        )
    with_steps = [
        r for r in frame["rater"].unique() if frame.loc[frame.rater == r, "step"].notna().any()
    ]
    for a, b in combinations(with_steps, 2):
        left = frame[frame.rater == a].set_index("task_id")
        right = frame[frame.rater == b].set_index("task_id")
        both = sorted(
            (_failed(verdicts, a) & _failed(verdicts, b)) & set(left.index) & set(right.index)
        )
        both = [t for t in both if pd.notna(left.at[t, "step"]) and pd.notna(right.at[t, "step"])]
        flagged = [
            t for t in both
            if left.at[t, "ambiguous"] or left.at[t, "invalid"]
            or right.at[t, "ambiguous"] or right.at[t, "invalid"]
        ]  # fmt: skip
        if exclude_flagged:
            both = [t for t in both if t not in set(flagged)]
        distance = np.abs(
            np.array([int(left.at[t, "step"]) for t in both], dtype=float)
            - np.array([int(right.at[t, "step"]) for t in both], dtype=float)
        )
        n = len(both)
        records.append(
            {
                "record": "pair",
                "verifier": a,
                "other": b,
                "n": n,
                "exact": float(np.mean(distance == 0)) if n else None,
                "within_1": float(np.mean(distance <= 1)) if n else None,
                "mean_abs_distance": float(distance.mean()) if n else None,
                "n_excluded_flagged": len(flagged) if exclude_flagged else 0,
                "n_flagged": len(flagged),
            }
        )
    return records


def steps_by_task(cells: Mapping[str, str]) -> dict[str, int]:
    """Task id -> `first_failure_step`, for the tasks whose score file gives one (what a
    link carries: `lib.uploads.link_codec.FAILURE_STEPS`)."""
    out = {}
    for task_id, cell in cells.items():
        step = sf.failure_step(parse_gpt_eval(cell).rubric)
        if step is not None:
            out[str(task_id)] = int(step)
    return out


MARK_NAME_MAX = 80
"""Characters of a verifier's name on a filmstrip mark."""


def failure_marks(
    cells_by_rater: Mapping[str, Mapping[str, str]],
    task_id: str,
    n_steps: int,
    names: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The stepper's failure-step marks for one task: `[{"name", "step"}]`, one per
    uploaded verifier whose score file gives a `first_failure_step` within the trajectory's
    `n_steps` shown steps (`names`: rater id -> the name to show)."""
    steps = {}
    for rater, cells in cells_by_rater.items():
        cell = cells.get(task_id)
        step = None if cell is None else sf.failure_step(parse_gpt_eval(cell).rubric)
        if step is not None:
            steps[rater] = {task_id: step}
    return marks_from_steps(steps, task_id, n_steps, names)


def marks_from_steps(
    steps_by_rater: Mapping[str, Mapping[str, int]],
    task_id: str,
    n_steps: int,
    names: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """As `failure_marks`, from rater id -> task id -> step (`steps_by_task`, or a link's
    failure-steps section: no score file needed)."""
    marks = []
    for rater, steps in steps_by_rater.items():
        step = steps.get(task_id)
        if step is None or not 0 <= step < n_steps:
            continue
        name = str((names or {}).get(rater, rater))[:MARK_NAME_MAX]
        marks.append({"name": name, "step": int(step)})
    return marks


def flagged_tasks(cells_by_rater: Mapping[str, Mapping[str, str]]) -> dict[str, set[str]]:
    """Per uploaded verifier, the tasks its own score files flag as ambiguous or invalid
    (`error_taxonomy.task_verification.is_ambiguous` / `is_invalid`)."""
    return {
        rater: {t for t, cell in cells.items() if any(sf.task_flags(parse_gpt_eval(cell).rubric))}
        for rater, cells in cells_by_rater.items()
    }


def without_flagged(
    table: pd.DataFrame, flagged: Mapping[str, Collection[str]]
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The verdict table without each verifier's rows on the tasks **it** flags (the humans'
    and the other verifiers' rows stay), and per verifier how many tasks were excluded (tasks
    of the table, any split, counted once)."""
    drop = np.zeros(len(table), dtype=bool)
    counts: dict[str, int] = {}
    for rater, tasks in flagged.items():
        if not tasks:
            continue
        hit = ((table["rater"] == rater) & table["task_id"].astype(str).isin(set(tasks))).to_numpy()
        counts[rater] = int(table.loc[hit, "task_id"].nunique())
        drop |= hit
    return (table[~drop] if drop.any() else table), counts
