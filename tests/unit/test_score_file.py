"""The bounded score-file reader (`lib.table.score_file`): both shapes, every bound, the
point checks, the verdicts; and the dataset's `gpt_eval_json` path that shares it."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from lib.analysis.two_pass import INCOMPLETE, rubric_passes
from lib.table import score_file as sf
from lib.table.gpt_eval import parse_gpt_eval
from lib.viewer.cards import parse_rubric


def _item(name: str, mx: float, first: float, post: float | None = None) -> dict:
    item = {"criterion": name, "max_points": mx, "earned_points": first}
    if post is not None:
        item["post_image_earned_points"] = post
    return item


INNER = {
    "rubric_items": [_item("a", 2, 2, 1), _item("b", 3, 1, 3)],
    "rubric_total_max_points": 5,
    "rubric_total_earned_points": 4,
    "rubric_is_success": True,
    "outcome_success": False,
    "rubric_outcome_verification": {"output_success": True},
}


def _wrap(inner: dict, score: float = 0.8) -> str:
    return json.dumps({"score": score, "gpt_response_text": json.dumps(inner)})


def test_both_shapes_give_the_same_rubric_and_verdicts() -> None:
    bare = sf.read_score_file(json.dumps(INNER))
    wrapped = sf.read_score_file(_wrap(INNER))
    assert bare.ok and wrapped.ok and bare.rubric == wrapped.rubric == INNER
    assert wrapped.wrapper_score == 0.8 and bare.wrapper_score is None
    for f in (bare, wrapped):
        assert f.score == pytest.approx(4 / 5)  # post-image points: 1 + 3 over 2 + 3
        assert f.outcome == 1  # output_success wins over outcome_success
        assert f.process() == 1  # rubric_is_success


def test_verdict_fallbacks_by_hand() -> None:
    inner = {"rubric_items": [_item("a", 4, 3), _item("b", 6, 4)], "outcome_success": False}
    f = sf.read_score_object(inner)
    assert f.score == pytest.approx(7 / 10)  # no post-image field: earned_points
    assert f.outcome == 0  # no verification object: outcome_success
    assert f.process(0.8) == 0 and f.process(0.7) == 1  # score >= threshold
    assert sf.read_score_object({"rubric_items": [_item("a", 0, 0)]}).score is None  # max 0


@pytest.mark.parametrize(
    ("points", "reason"),
    [
        ({"post_image_earned_points": float("nan")}, "not a finite number"),
        ({"post_image_earned_points": float("inf")}, "not a finite number"),
        ({"earned_points": 1e308, "max_points": 1e308}, "outside"),
        ({"post_image_earned_points": -1}, "negative"),
        ({"post_image_earned_points": 4}, "more than max_points"),
        ({"max_points": True}, "not a finite number"),
        ({"earned_points": "2"}, "not a finite number"),
    ],
)
def test_bad_points_are_listed_and_never_summed(points: dict, reason: str) -> None:
    items = [{**_item("hostile", 3, 1, 1), **points}, _item("fine", 2, 2, 2)]
    inner = {"rubric_items": items, "rubric_total_earned_points": 1e308}
    text = _wrap(inner)  # json.dumps writes NaN and Infinity, which json.loads reads
    f = sf.read_score_file(text)
    assert f.problem is None and len(f.bad_criteria) == 1
    assert f.bad_criteria[0].index == 0 and reason in f.bad_criteria[0].reason
    assert "criterion 0" in f.bad_text() and '"hostile"' in f.bad_text()
    assert f.score is None and f.rubric["rubric_total_earned_points"] is None
    # The dataset path: the same check, so no sum is infinite anywhere.
    gpt = parse_gpt_eval(text)
    assert gpt.bad_criteria == f.bad_criteria and "points not used" in gpt.problem
    view = parse_rubric(gpt)
    assert view.items[0].points is None and view.total_earned is None
    assert view.shown_total is None or math.isfinite(view.shown_total)
    assert rubric_passes(text)["status"] == INCOMPLETE


def test_hostile_dataset_cell_no_longer_gives_infinite_sums() -> None:
    items = [_item("a", 1e308, 1e308, 1e308), _item("b", 1e308, 1e308, 1e308)]
    cell = _wrap({"rubric_items": items})
    passes = rubric_passes(cell)
    assert passes["max_points"] is None and passes["grounded_points"] is None
    tasks = pd.DataFrame({"split": ["internal"], "task_id": ["t"], "gpt_eval_json": [cell]})
    from lib.viewer.cards import two_pass_frame

    frame = two_pass_frame(tasks)
    assert frame["shown_total"].isna().all()
    assert parse_gpt_eval(json.dumps({"score": 1e308 * 10, "gpt_response_text": ""})).score is None


def test_bounds_refuse_the_file_with_a_reason() -> None:
    deep = '{"rubric_items": ' + "[" * 64 + "]" * 64 + "}"
    assert "nested too deeply" in sf.read_score_file(deep).problem
    many = json.dumps({"rubric_items": [_item("x", 1, 1)] * (sf.MAX_CRITERIA + 1)})
    assert "criteria" in sf.read_score_file(many).problem
    values = json.dumps({"rubric_items": [], "pad": [0] * (sf.MAX_VALUES + 1)})
    assert "too many values" in sf.read_score_file(values).problem
    huge = " " * (sf.MAX_CHARS + 1)
    assert "too long" in sf.read_score_file(huge).problem
    assert "not JSON" in sf.read_score_file("{nope").problem
    assert "not a score file" in sf.read_score_file('{"a": 1}').problem
    assert sf.read_score_file("[1]").problem == "not a JSON object"
    assert "gpt_response_text" in sf.read_score_file('{"gpt_response_text": "Status: ok"}').problem


def test_a_sparse_10000_by_10000_relevance_matrix_is_refused() -> None:
    rows = {f"screenshot_{k}": {"0": 1, "9999": 1, "screenshot_idx": k} for k in range(10_000)}
    inner = {"rubric_items": [], STEPS: {"step2_relevance_scores": rows}}
    got = sf.read_score_file(json.dumps(inner))
    assert "10,000 screenshots x 10,000 criteria" in got.problem
    assert "relevance matrix" in parse_gpt_eval(_wrap(inner)).problem


STEPS = sf.STEPS_KEY


def test_the_example_relevance_matrix_is_within_bounds() -> None:
    rows = {f"screenshot_{k}": {"0": 1, "1": 2, "screenshot_idx": k} for k in range(4)}
    got = sf.read_score_object({"rubric_items": [], STEPS: {"step2_relevance_scores": rows}})
    assert got.problem is None
