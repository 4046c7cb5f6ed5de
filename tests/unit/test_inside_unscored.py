"""Inside the verifier with an uploaded verifier in the Universal Verifier's place (issue 41
item 3): its process verdict is its score file's `rubric_is_success`, else its score >= the
threshold; a file without a score keeps `rubric_is_success` at any threshold."""

from __future__ import annotations

import json

import pytest

from lib.analysis import quadrant as Q
from lib.uploads import predictions, score_files


def _line(task_id: str, inner: dict) -> str:
    return json.dumps({"task_id": task_id, "score_file": inner})


@pytest.mark.parametrize("threshold", [0.8, 0.3])
def test_a_file_without_a_score_keeps_rubric_is_success(bench, threshold: float) -> None:
    internal = bench.tasks[bench.tasks["split"] == "internal"]["task_id"].astype(str).tolist()
    a, b = internal[:2]
    unscored = {"rubric_is_success": True, "rubric_outcome_verification": {"output_success": 1}}
    scored = {  # 0.5 of the points and rubric_is_success: false (its own verdict)
        "rubric_items": [
            {"criterion": "c", "max_points": 2, "earned_points": 1, "post_image_earned_points": 1}
        ],
        "rubric_is_success": False,
        "rubric_outcome_verification": {"output_success": 0},
    }
    data = "\n".join([_line(a, unscored), _line(b, scored)]).encode()
    read = score_files.parse_score_files([("mine.jsonl", data)], bench.tasks)
    (rater,) = read.upload.raters
    table = predictions.with_uploaded(bench.verdicts, [read.upload.verdicts])
    crossed = score_files.in_uv_slots(table, rater)
    frame = Q.quadrants(crossed, ["internal"], threshold, own_labels=True).frame
    got = frame.set_index("task_id")
    assert pd_na(got.at[a, "uv_score"]) and got.at[a, "uv_process"] == 1
    assert got.at[b, "uv_score"] == pytest.approx(0.5)
    # the default: its own verdict (rubric_is_success); another threshold: score >= t
    assert got.at[b, "uv_process"] == (0 if threshold == 0.8 else 1)  # 0.5 >= 0.3
    assert got.at[b, "uv_outcome"] == 0


def pd_na(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))
