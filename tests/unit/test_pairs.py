"""lib.table.pairs: the one join of two raters, and the self-join of co-raters of a task."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from lib.table.pairs import PAIR_COLUMNS, co_raters, pair


def _table(rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["split", "task_id", "rater", "dimension", "label"])
    frame["label"] = frame["label"].astype("Int8")
    frame["score"] = [0.5 if r == "v" else None for r in frame["rater"]]
    return frame


TABLE = _table(
    [
        ("s1", "t1", "v", "outcome", 1),
        ("s1", "t1", "h", "outcome", 0),
        ("s1", "t2", "v", "outcome", None),  # judged, no label
        ("s1", "t2", "h", "outcome", 1),
        ("s1", "t3", "h", "outcome", 1),  # v did not judge t3
        ("s2", "t4", "v", "outcome", 0),  # h did not judge t4
        ("s2", "t4", "v", "process", 1),  # other dimension: never mixed in
    ]
)


@pytest.mark.parametrize(
    ("how", "tasks"),
    [
        ("outer", ["t1", "t2", "t3", "t4"]),
        ("inner", ["t1", "t2"]),
        ("left", ["t1", "t2", "t4"]),
        ("right", ["t1", "t2", "t3"]),
    ],
)
def test_pair_rows_follow_how(how: str, tasks: list[str]) -> None:
    out = pair(TABLE, "v", "h", "outcome", how=how)
    assert list(out.columns) == PAIR_COLUMNS
    assert out["task_id"].tolist() == tasks


def test_pair_keeps_judged_without_label_apart_from_not_judged() -> None:
    out = pair(TABLE, "v", "h", "outcome").set_index("task_id")
    assert out.loc["t2", "judged_a"] and pd.isna(out.loc["t2", "label_a"])  # judged, no label
    assert not out.loc["t3", "judged_a"] and pd.isna(out.loc["t3", "label_a"])  # not judged
    assert out.loc["t1", "label_a"] == 1 and out.loc["t1", "label_b"] == 0
    assert str(out["label_a"].dtype) == "Int8"
    assert out.loc["t1", "score_a"] == 0.5 and pd.isna(out.loc["t1", "score_b"])


def test_pair_filters_splits_and_dimension() -> None:
    out = pair(TABLE, "v", "h", "process", splits=["s2"])
    assert out["task_id"].tolist() == ["t4"] and out["label_a"].tolist() == [1]
    assert pair(TABLE, "v", "h", "outcome", splits=["s1"])["split"].unique().tolist() == ["s1"]


def test_co_raters_gives_each_unordered_pair_in_both_orders() -> None:
    rows = pd.DataFrame(
        {
            "task_id": ["a", "a", "a", "b", "b", "c"],
            "who": ["J1", "J2", "J3", "J1", "J2", "J1"],
            "label": [1, 0, 1, 0, 0, 1],
        }
    )
    out = co_raters(rows, "who", on=["task_id"])
    # a plain loop: every ordered pair of distinct raters of the same task
    expected = sorted(
        (t, x, y, lx, ly)
        for t, g in rows.groupby("task_id")
        for (x, lx), (y, ly) in itertools.permutations(zip(g["who"], g["label"], strict=True), 2)
    )
    got = list(out[["task_id", "a", "b", "label_a", "label_b"]].itertuples(index=False))
    assert [tuple(r) for r in got] == expected
    assert len(out) == 3 * 2 + 1 * 2  # task a: 3 unordered pairs; task b: 1; task c: none
