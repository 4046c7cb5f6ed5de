"""Table 13 (lib.analysis.shifts.verifier_errors, report key `uv_blind_informed`): the Universal
Verifier's FPR, FNR and kappa against the reviewers' blind and informed labels, equal to a
pandas recomputation straight from the annotation and trajectory rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from lib.analysis import shifts

OM2W = "fara7b_om2w_browserbase"


def _by_hand(bench, dimension: str) -> pd.DataFrame:
    """One row per om2w review: the verdict shown, the blind and the informed label."""
    ann = bench.annotations[bench.annotations["split"] == OM2W]
    tasks = bench.tasks[bench.tasks["split"] == OM2W].set_index("task_id")
    if dimension == "outcome":
        shown = tasks["uv_outcome_success"]
    else:
        score = tasks["uv_rubric_score"].astype(float)
        shown = (score >= 0.8).astype(float).where(score.notna())
    word = ann[f"human_judgement_{dimension}"].astype("string").str.strip().str.lower()
    blind = word.map({"correct": 1.0, "incorrect": 0.0})
    answer = ann[f"informed_{dimension}_agreement"].astype("string").str.strip().str.lower()
    s = ann["task_id"].map(shown).astype(float)
    informed = np.where(answer == "agree", s, np.where(answer == "disagree", 1 - s, np.nan))
    frame = pd.DataFrame(
        {"task_id": ann["task_id"], "shown": s, "blind": blind.astype(float), "informed": informed}
    )
    return frame.dropna().reset_index(drop=True)


def _rates(pred: pd.Series, ref: pd.Series) -> dict[str, float]:
    fp = ((pred == 1) & (ref == 0)).sum()
    fn = ((pred == 0) & (ref == 1)).sum()
    return {
        "fpr": fp / (ref == 0).sum(),
        "fnr": fn / (ref == 1).sum(),
        "kappa": cohen_kappa_score(pred, ref),
    }


@pytest.mark.parametrize("dimension", ["outcome", "process"])
def test_table13_equals_a_pandas_recomputation(bench, report_json: str, dimension: str) -> None:
    rows = _by_hand(bench, dimension)
    blind, informed = _rates(rows["shown"], rows["blind"]), _rates(rows["shown"], rows["informed"])
    paired = shifts.paired_reviews(bench.verdicts, bench.annotations, [OM2W])
    result = shifts.verifier_errors(paired, dimension)
    (record,) = [
        r for r in json.loads(report_json)["uv_blind_informed"] if r["dimension"] == dimension
    ]
    assert record["n"] == len(rows) and record["n_tasks"] == rows["task_id"].nunique()
    for name in shifts.TABLE13_METRICS:
        m = result.metrics[name]
        assert m.blind.value == pytest.approx(blind[name])
        assert m.informed.value == pytest.approx(informed[name])
        assert m.diff.value == pytest.approx(informed[name] - blind[name])
        assert m.n == len(rows)  # the same reviews in both stages
        low, high = m.diff.ci.bounds
        assert low <= m.diff.value <= high
        assert record[f"{name}_blind"] == pytest.approx(blind[name])
        assert record[f"{name}_informed"] == pytest.approx(informed[name])
        assert record[f"{name}_diff_ci"] == pytest.approx([low, high])
    assert "paired percentile bootstrap over tasks" in record["ci_method"]
