"""lib.report's `two_pass` and `process_outcome` keys: flat, JSON-clean records whose
numbers are the analyses' (checked against scikit-learn and pandas on hand-built rows),
and the notebook DataFrames (`lib.report.dataframes`) split their intervals."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from lib import report
from lib.analysis import two_pass as T
from lib.metrics import to_jsonable
from lib.vocab import Bootstrap
from tests.unit.test_two_pass import INTERNAL, _bench_frames

FAST = Bootstrap(n_resamples=300)


@pytest.fixture(scope="module")
def hand_bench() -> SimpleNamespace:
    tasks, table = _bench_frames()
    scores = {"t1": 0.8, "t2": 0.4, "t3": 1.0, "t4": 0.8, "t5": 1.0, "t6": 0.2, "t7": 0.6}
    uv = []
    for task, score in scores.items():
        uv.append((INTERNAL, task, "uv_process", "verifier", None, None, "process", None, score))
        outcome = int(score >= 0.7)
        uv.append(
            (INTERNAL, task, "uv_outcome_success", "verifier", None, None, "outcome", outcome, None)
        )
    extra = pd.DataFrame([(*row, None) for row in uv], columns=table.columns)
    table = pd.concat([table, extra], ignore_index=True)
    table["label"] = table["label"].astype("Int8")
    table["score"] = pd.to_numeric(table["score"])
    return SimpleNamespace(tasks=tasks, verdicts=table)


def test_two_pass_records_are_flat_and_equal_sklearn(hand_bench: SimpleNamespace) -> None:
    records = to_jsonable(report.SECTIONS["two_pass"](hand_bench, FAST))
    json.dumps(records, allow_nan=False)
    assert [r["reference"] for r in records] == [r for r, _ in T.REFERENCES]
    process = records[0]
    assert (
        process["split"] == INTERNAL and process["n"] == 7 and process["n_missing_reference"] == 1
    )
    frame = T.two_pass(hand_bench.tasks, hand_bench.verdicts, [INTERNAL], 0.8, FAST).tasks
    frame = frame.loc[frame[T.HUMAN_PROCESS].notna()]
    ref = frame[T.HUMAN_PROCESS].astype(int)
    want = cohen_kappa_score(ref, frame["grounded_verdict"].astype(int))
    assert process["kappa_grounded"] == pytest.approx(want)
    want -= cohen_kappa_score(ref, frame["action_verdict"].astype(int))
    assert process["kappa_diff"] == pytest.approx(want)
    low, high = process["kappa_diff_ci"]
    assert low <= process["kappa_diff"] <= high
    assert process["criteria_lowered"] == 4 and process["verdicts_pass_to_fail"] == 3
    assert process["n_one_pass_recorded"] == 1 and process["n_incomplete_rubric"] == 2
    assert process["lowered_tasks"] == 4 and process["lowered_human_process_failed_n"] == 3
    assert process["lowered_human_process_failed"] == pytest.approx(2 / 3)
    assert process["bootstrap"] == {"n_resamples": 300, "seed": 0, "unit": "task"}


def test_process_outcome_records_equal_a_crosstab(hand_bench: SimpleNamespace) -> None:
    records = to_jsonable(report.SECTIONS["process_outcome"](hand_bench, FAST))
    json.dumps(records, allow_nan=False)
    uv = {(r["process"], r["outcome"]): r for r in records if r["rater"] == "uv"}
    scores = pd.Series(
        {"t1": 0.8, "t2": 0.4, "t3": 1.0, "t4": 0.8, "t5": 1.0, "t6": 0.2, "t7": 0.6}
    )
    cross = pd.crosstab((scores >= 0.8).astype(int), (scores >= 0.7).astype(int))
    for (p, o), record in uv.items():
        want = cross.loc[p, o] if p in cross.index and o in cross.columns else 0
        assert record["n"] == want
        assert record["n_rater"] == 7 and record["process_verdict_threshold"] == 0.8
    assert (
        sum(r["n"] for r in records if r["rater"] == "humans") == 10
    )  # 12 tasks, 2 missing a label


def test_notebook_frames_split_the_intervals(hand_bench: SimpleNamespace) -> None:
    built = {
        k: to_jsonable(report.SECTIONS[k](hand_bench, FAST))
        for k in ("two_pass", "process_outcome")
    }
    frames = report.dataframes(built)
    assert {"kappa_diff_ci_low", "kappa_diff_ci_high"} <= set(frames["two_pass"].columns)
    assert {"agree_both_ci_low", "agree_both_ci_high"} <= set(frames["process_outcome"].columns)
    assert len(frames["process_outcome"]) == 8
