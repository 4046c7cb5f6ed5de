"""Label normalisation: every variant DATASET.md lists, and unknown values kept visible."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from lib.table.gpt_eval import om2w_judge_label, parse_gpt_eval
from lib.table.labels import (
    AGREE,
    DISAGREE,
    NOT_GIVEN,
    informed_label,
    parse_agreement,
    parse_label,
    threshold_verdict,
)


@pytest.mark.parametrize(
    ("value", "label", "raw"),
    [
        ("Correct", 1, None),
        (" correct ", 1, None),
        ("INCORRECT", 0, None),
        ("Incorrect\n", 0, None),
        (1, 1, None),
        (0, 0, None),
        (1.0, 1, None),
        (True, 1, None),
        (False, 0, None),
        (None, None, None),
        (float("nan"), None, None),
        (pd.NA, None, None),
        ("", None, None),
        ("   ", None, None),
        ("partial", None, "partial"),
        (" Partially correct ", None, "Partially correct"),
        (2, None, "2"),
        (-1, None, "-1"),
    ],
)
def test_parse_label(value: object, label: int | None, raw: str | None) -> None:
    parsed = parse_label(value)
    assert parsed.label == label
    assert parsed.raw == raw


@pytest.mark.parametrize(
    ("value", "category"),
    [
        ("agree", AGREE),
        ("Agree ", AGREE),
        ("DISAGREE", DISAGREE),
        ("disagree", DISAGREE),
        ("", NOT_GIVEN),
        (None, NOT_GIVEN),
        (float("nan"), NOT_GIVEN),
        ("Partially agree", "Partially agree"),
        ("  unsure ", "unsure"),
    ],
)
def test_parse_agreement(value: object, category: str) -> None:
    assert parse_agreement(value) == category


@pytest.mark.parametrize(
    ("agreement", "shown", "expected"),
    [
        (AGREE, 1, 1),
        (AGREE, 0, 0),
        (DISAGREE, 1, 0),
        (DISAGREE, 0, 1),
        (NOT_GIVEN, 1, None),
        ("Partially agree", 1, None),
        (AGREE, None, None),
        (DISAGREE, None, None),
    ],
)
def test_informed_label(agreement: str, shown: int | None, expected: int | None) -> None:
    assert informed_label(agreement, shown) == expected


def test_threshold_verdict_boundaries() -> None:
    assert threshold_verdict(0.8) == 1
    assert threshold_verdict(0.7999) == 0
    assert threshold_verdict(0.5, threshold=0.5) == 1
    assert threshold_verdict(None) is None
    assert threshold_verdict(math.nan) is None
    assert threshold_verdict("x") is None


def test_gpt_eval_om2w_forms() -> None:
    text = 'The page shows the result.\nStatus: "success"'
    parsed = parse_gpt_eval(json.dumps({"score": 1, "gpt_response_text": text}))
    assert parsed.score == 1.0 and parsed.status == "success"
    assert om2w_judge_label(parsed) == 1
    not_evaluated = parse_gpt_eval('{"score": -1, "gpt_response_text": ""}')
    assert not_evaluated.score is None and om2w_judge_label(not_evaluated) is None
    assert om2w_judge_label(parse_gpt_eval("")) is None
    status_only = parse_gpt_eval('{"score": 0.7, "gpt_response_text": "Status: failure"}')
    assert om2w_judge_label(status_only) == 0
    broken = parse_gpt_eval("{not json")
    assert broken.problem and om2w_judge_label(broken) is None


def test_gpt_eval_internal_rubric() -> None:
    item = {"criterion": "a", "max_points": 2, "earned_points": 1.5}
    inner = json.dumps({"rubric_items": [item], "outcome_success": 1})

    parsed = parse_gpt_eval(json.dumps({"score": 0.75, "gpt_response_text": inner}))
    assert parsed.rubric["outcome_success"] == 1
    assert parsed.rubric["rubric_items"][0]["earned_points"] == 1.5
    assert parse_gpt_eval(json.dumps({"score": 1, "gpt_response_text": "{bad"})).problem
