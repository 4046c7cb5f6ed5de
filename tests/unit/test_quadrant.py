"""lib.analysis.quadrant: process x outcome cells equal a pandas crosstab (hand-built
tables and the demo's own columns), the threshold moves tasks exactly as `score >= t`,
and the agreement inside a cell is worked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from lib.analysis import quadrant as Q
from lib.table.verdicts import COLUMNS
from lib.vocab import Bootstrap

FAST = Bootstrap(n_resamples=200)
INTERNAL, OM2W = "internal", "fara7b_om2w_browserbase"
RATER_DIM = {
    "uv_process": "process",
    "uv_outcome_success": "outcome",
    "final_human_process_label": "process",
    "final_human_outcome_label": "outcome",
}


def _table(labels: pd.DataFrame) -> pd.DataFrame:
    """A verdict table from one row per task: split, task_id, score and the four raters'
    labels (None = missing)."""
    rows = []
    for task in labels.itertuples(index=False):
        for rater, dim in RATER_DIM.items():
            score = task.score if rater == "uv_process" else np.nan
            kind = "verifier" if rater.startswith("uv") else "reference"
            label = getattr(task, rater)
            rows.append(
                (task.split, task.task_id, rater, kind, None, None, dim, label, score, None)
            )
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["label"] = table["label"].astype("Int8")
    return table


def _random_labels(seed: int, n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "split": rng.choice([INTERNAL, OM2W], n),
            "task_id": [f"site{i % 7}--{i:04d}" for i in range(n)],
            "score": np.round(rng.random(n), 2),
        }
    )
    frame.loc[rng.random(n) < 0.05, "score"] = np.nan
    for rater in RATER_DIM:
        values = rng.integers(0, 2, n).astype(object)
        values[rng.random(n) < 0.08] = None
        frame[rater] = values
    return frame


def _uv_process(frame: pd.DataFrame, t: float) -> pd.Series:
    return pd.Series(np.where(frame["score"].isna(), None, frame["score"] >= t), index=frame.index)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threshold", [0.3, 0.8])
def test_cells_equal_a_pandas_crosstab(seed: int, threshold: float) -> None:
    labels = _random_labels(seed)
    result = Q.quadrants(_table(labels), [INTERNAL, OM2W], threshold, FAST)
    independent = {
        Q.UV: (_uv_process(labels, threshold), labels["uv_outcome_success"]),
        Q.HUMANS: (labels["final_human_process_label"], labels["final_human_outcome_label"]),
    }
    for rater, (process, outcome) in independent.items():
        known = process.notna() & outcome.notna()
        cross = pd.crosstab(process[known].astype(int), outcome[known].astype(int))
        q = result.quadrant(rater)
        for cell in q.cells:
            assert cell.n == cross.loc[cell.process, cell.outcome], (
                rater,
                cell.process,
                cell.outcome,
            )
            inside = labels.loc[known & (process == cell.process) & (outcome == cell.outcome)]
            assert sorted(cell.task_ids) == sorted(inside["task_id"])
        assert q.n == int(known.sum()) and q.n_excluded == int((~known).sum())


def test_one_split_only() -> None:
    labels = _random_labels(3)
    result = Q.quadrants(_table(labels), [OM2W], 0.8, FAST)
    assert set(result.frame["split"]) == {OM2W}
    assert result.quadrant(Q.HUMANS).n + result.quadrant(Q.HUMANS).n_excluded == int(
        (labels["split"] == OM2W).sum()
    )


def test_moving_the_threshold_moves_tasks_exactly_as_score_at_least_t() -> None:
    labels = _random_labels(4, 200)
    table = _table(labels)
    scores = labels.set_index("task_id")["score"]
    previous, uv0 = None, None
    for t in (0.0, 0.25, 0.5, 0.51, 0.8, 0.99, 1.0):
        uv = Q.quadrants(table, [INTERNAL, OM2W], t, FAST).quadrant(Q.UV)
        sound = {task for c in uv.cells if c.process == 1 for task in c.task_ids}
        flawed = {task for c in uv.cells if c.process == 0 for task in c.task_ids}
        assert all(scores[task] >= t for task in sound)
        assert all(scores[task] < t for task in flawed)
        if previous is not None and uv0 is not None:
            t0, sound0 = previous
            moved = sound0 - sound
            assert moved == {x for x in sound0 if t0 <= scores[x] < t}
            assert not sound - sound0  # a higher threshold never adds a sound process
            outcome = {task: c.outcome for c in uv.cells for task in c.task_ids}
            before = {task: c.outcome for c in uv0.cells for task in c.task_ids}
            assert all(outcome[x] == before[x] for x in moved)  # same outcome column
        previous, uv0 = (t, sound), uv


def test_the_humans_quadrant_ignores_the_threshold() -> None:
    table = _table(_random_labels(5))
    a = Q.quadrants(table, [INTERNAL, OM2W], 0.2, FAST).quadrant(Q.HUMANS)
    b = Q.quadrants(table, [INTERNAL, OM2W], 0.9, FAST).quadrant(Q.HUMANS)
    assert [c.task_ids for c in a.cells] == [c.task_ids for c in b.cells]


def test_agreement_inside_a_cell_by_hand() -> None:
    rows = [  # task, score, uv outcome, human process, human outcome
        ("a", 0.9, 1, 1, 1),  # UV (1, 1): agrees on both
        ("b", 0.9, 1, 0, 1),  # UV (1, 1): process wrong, outcome right
        ("c", 0.85, 1, 1, 0),  # UV (1, 1): process right, outcome wrong
        ("d", 0.95, 1, None, 1),  # UV (1, 1): human process missing
        ("e", 0.1, 0, 0, 0),  # UV (0, 0)
    ]
    labels = pd.DataFrame(
        rows,
        columns=["task_id", "score", "uv_outcome_success", "final_human_process_label",
                 "final_human_outcome_label"],
    )  # fmt: skip
    labels.insert(0, "split", INTERNAL)
    labels.insert(3, "uv_process", None)  # overwritten from the score by the threshold
    result = Q.quadrants(_table(labels), [INTERNAL], 0.8, FAST)
    cell = result.quadrant(Q.UV).cell(1, 1)
    assert cell.n == 4
    process, outcome, both = (cell.agreement[k] for k in Q.AGREEMENTS)
    assert (process.x, process.n, process.n_missing) == (2, 3, 1)  # a, c of a b c
    assert (outcome.x, outcome.n) == (3, 4)  # a b d
    assert (both.x, both.n) == (1, 3)  # a
    want = proportion_confint(2, 3, alpha=0.05, method="beta")
    assert (process.estimate.ci.low, process.estimate.ci.high) == pytest.approx(want)
    humans = result.quadrant(Q.HUMANS)
    assert humans.n == 4 and humans.n_excluded == 1  # d lacks the human process label
    assert humans.cell(0, 1).task_ids == ("b",) and humans.cell(0, 1).agreement["process"].x == 0
    empty = result.quadrant(Q.UV).cell(0, 1)
    assert empty.n == 0 and empty.agreement["both"].estimate.reason == "n = 0"


def test_the_demo_cells_equal_its_own_columns(bench) -> None:
    """Independent of the verdict table: the trajectories' own columns, crossed by pandas."""
    tasks = bench.tasks
    for result in Q.report_records(bench, FAST):
        (split,) = result.splits
        rows = tasks.loc[tasks["split"] == split]
        score = pd.to_numeric(rows["uv_rubric_score"])
        for t in (0.5, 0.8):
            process = (score >= t).where(score.notna())
            uv = Q.quadrants(bench.verdicts, [split], t, FAST).quadrant(Q.UV)
            outcome = pd.to_numeric(rows["uv_outcome_success"])
            known = process.notna() & outcome.notna()
            cross = pd.crosstab(process[known].astype(int), outcome[known].astype(int))
            for cell in uv.cells:
                want = cross.loc[cell.process, cell.outcome] if cell.process in cross.index else 0
                assert cell.n == want, (split, t, cell.process, cell.outcome)
