"""lib.analysis.slice_values: every slice dimension's assignment on hand-made frames,
and on the mirror
against the dataset's own columns."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lib.analysis import slice_values as V
from lib.table.verdicts import COLUMNS
from lib.vocab import HUMAN_REFERENCE

OM2W, INTERNAL = "fara7b_om2w_browserbase", "internal"


def _log(n_actions: int, bad_lines: int = 0) -> str:
    lines = [
        json.dumps({"action": "left_click", "arguments": {"action": "left_click"}})
        for _ in range(n_actions)
    ]
    lines += ["not json {"] * bad_lines
    return "\n".join(lines)


def _tasks(rows: list[dict]) -> pd.DataFrame:
    defaults = {
        "split": INTERNAL,
        "web_surfer_log": "",
        "n_screenshots": 0,
        "n_screenshots_stored": 0,
        "final_answer": "done",
        "is_aborted": False,
        "uv_rubric_score": np.nan,
    }
    return pd.DataFrame([{**defaults, **r} for r in rows])


def _verdicts(rows: list[tuple]) -> pd.DataFrame:
    """(split, task_id, rater, kind, annotator, stage, dimension, label) tuples."""
    frame = pd.DataFrame(rows, columns=COLUMNS[:8])
    frame["label"] = frame["label"].astype("Int8")
    frame["score"], frame["raw"] = np.nan, None
    return frame


def _blind(task: str, judge: str, label: int | None, dim: str = "outcome", split: str = OM2W):
    return (split, task, judge, "human", judge, "blind", dim, label)


def _final(task: str, label: int | None, dim: str = "outcome", split: str = OM2W):
    rater = HUMAN_REFERENCE[dim]
    return (split, task, rater, "reference", None, None, dim, label)


# ---------------------------------------------------------------------------------------
# Task facts
# ---------------------------------------------------------------------------------------


def test_task_lengths_sources() -> None:
    tasks = _tasks(
        [
            {"task_id": "a_1", "web_surfer_log": _log(7), "n_screenshots": 3},  # log wins
            {"task_id": "a_2", "web_surfer_log": "", "n_screenshots": 5},  # 5 - 1
            {"task_id": "a_3", "web_surfer_log": _log(0, bad_lines=3), "n_screenshots": 2},
            {"task_id": "a_4", "web_surfer_log": None, "n_screenshots": 0},  # unknown
            {"task_id": "a_5", "web_surfer_log": "", "n_screenshots": None},  # unknown
            {"task_id": "a_6", "web_surfer_log": _log(2, bad_lines=1), "n_screenshots": 9},
        ]
    )
    out = V.task_lengths(tasks)
    assert out["n_actions"].tolist() == [7, 4, 1, pd.NA, pd.NA, 2]
    assert out["length_source"].tolist() == [
        "log",
        "screenshots",
        "screenshots",
        V.UNKNOWN,
        V.UNKNOWN,
        "log",
    ]


@pytest.mark.parametrize(
    ("counts", "expected_order", "expected"),
    [
        # 1..8: percentiles 2.75, 4.5, 6.25 -> upper bounds 2, 4, 6
        (
            [1, 2, 3, 4, 5, 6, 7, 8],
            ("1-2 actions", "3-4 actions", "5-6 actions", "7-8 actions"),
            ["1-2 actions"] * 2 + ["3-4 actions"] * 2 + ["5-6 actions"] * 2 + ["7-8 actions"] * 2,
        ),
        # all equal: one bin, singular/plural by count
        ([5, 5, 5], ("5 actions",), ["5 actions"] * 3),
        ([1, 1], ("1 action",), ["1 action"] * 2),
        # many equal counts: repeated quartiles collapse into fewer bins; missing = unknown
        (
            [3, 3, 3, 3, 3, 10, None],
            ("3 actions", "4-10 actions", V.UNKNOWN),
            ["3 actions"] * 5 + ["4-10 actions", V.UNKNOWN],
        ),
        ([None, None], (V.UNKNOWN,), [V.UNKNOWN, V.UNKNOWN]),
        ([], (), []),
    ],
)
def test_length_bins(counts: list, expected_order: tuple, expected: list) -> None:
    labels, order = V.length_bins(pd.Series(counts, dtype="Int64"))
    assert order == expected_order
    assert labels.tolist() == expected


def test_length_bins_are_quartiles_of_known_counts() -> None:
    rng = np.random.default_rng(3)
    counts = pd.Series(rng.integers(1, 60, size=260))
    labels, order = V.length_bins(counts)
    assert len(order) == 4
    shares = labels.value_counts(normalize=True)
    assert all(0.15 < shares[v] < 0.35 for v in order)
    # every count lies inside the range its label names, and ranges tile the counts
    for count, label in zip(counts, labels, strict=True):
        lo, hi = (int(x) for x in label.split(" ")[0].split("-"))
        assert lo <= count <= hi
    assert int(order[0].split("-")[0]) == counts.min()
    assert int(order[-1].split("-")[1].split(" ")[0]) == counts.max()


def test_task_dimensions() -> None:
    tasks = _tasks(
        [
            {"task_id": "t1", "final_answer": "The price is $5", "n_screenshots_stored": 4},
            {"task_id": "t2", "final_answer": "<no_answer>", "is_aborted": True},
            {"task_id": "t3", "final_answer": " <NO_ANSWER> ", "is_aborted": False},
            {"task_id": "t4", "final_answer": "", "is_aborted": False},
            {"task_id": "t5", "final_answer": None, "is_aborted": None},
            {"task_id": "t6", "n_screenshots_stored": None},
        ]
    )
    table = V.slice_table(tasks, _verdicts([])).frame.set_index("task_id")
    assert table["run_end"].tolist() == [
        "final answer",
        "aborted",
        "no answer",
        V.UNKNOWN,
        V.UNKNOWN,
        "final answer",
    ]
    assert table["screenshots"].tolist() == ["screenshots"] + ["no screenshots"] * 4 + [V.UNKNOWN]


@pytest.mark.parametrize(
    ("score", "band"),
    [
        (0.0, "[0, 0.2)"),
        (0.19999, "[0, 0.2)"),
        (0.2, "[0.2, 0.5)"),
        (0.5, "[0.5, 0.8)"),
        (0.7999, "[0.5, 0.8)"),
        (0.8, "[0.8, 1]"),
        (np.float32(0.8), "[0.8, 1]"),
        (1.0, "[0.8, 1]"),
        (1.5, V.UV_OUT_OF_RANGE),
        (-0.1, V.UV_OUT_OF_RANGE),
        (np.nan, V.UNKNOWN),
        (None, V.UNKNOWN),
    ],
)
def test_uv_band(score: float | None, band: str) -> None:
    tasks = _tasks([{"task_id": "x_1", "uv_rubric_score": score}])
    assert V.slice_table(tasks, _verdicts([])).frame["uv_band"].tolist() == [band]


# ---------------------------------------------------------------------------------------
# How the humans stood
# ---------------------------------------------------------------------------------------


def _human_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = ["tie", "adj", "single", "none", "partial", "nofinal", "agree3"]
    tasks = _tasks([{"task_id": t, "split": OM2W} for t in ids])
    verdicts = _verdicts(
        [
            # tie: 1 vs 0; final 1
            _blind("tie", "J1", 1),
            _blind("tie", "J2", 0),
            _final("tie", 1),
            # adj: 2 of 3 say success, final says failure
            _blind("adj", "J1", 1),
            _blind("adj", "J2", 1),
            _blind("adj", "J3", 0),
            _final("adj", 0),
            # single: one reviewer, final equals it
            _blind("single", "J1", 1),
            _final("single", 1),
            # none: no review, a final label
            _final("none", 0),
            # partial: two reviewers, one label missing ("partial"): 1 known label
            _blind("partial", "J1", None),
            _blind("partial", "J2", 0),
            _final("partial", 0),
            # nofinal: reviews but no final label
            _blind("nofinal", "J1", 1),
            _blind("nofinal", "J2", 1),
            _final("nofinal", None),
            # agree3: three agree; the process labels disagree (a process tie)
            _blind("agree3", "J1", 0),
            _blind("agree3", "J2", 0),
            _blind("agree3", "J3", 0),
            _final("agree3", 0),
            _blind("agree3", "J1", 1, "process"),
            _blind("agree3", "J2", 0, "process"),
            _final("agree3", 1, "process"),
        ]
    )
    return tasks, verdicts


def test_human_dimensions_outcome() -> None:
    tasks, verdicts = _human_case()
    frame = V.slice_table(tasks, verdicts, "outcome").frame.set_index("task_id")
    expected = {
        "tie": ("2 reviewers", "tie", "tie (no majority)"),
        "adj": ("3 reviewers", "no tie", "adjudicated"),
        "single": ("1 reviewer", "no tie", "not adjudicated"),
        "none": ("no reviewer", V.UNKNOWN, V.UNKNOWN),
        "partial": ("2 reviewers", "no tie", "not adjudicated"),
        "nofinal": ("2 reviewers", "no tie", V.UNKNOWN),
        "agree3": ("3 reviewers", "no tie", "not adjudicated"),
    }
    for task, (reviewers, tie, adjudicated) in expected.items():
        row = frame.loc[task]
        assert (row["reviewers"], row["blind_tie"], row["adjudicated"]) == (
            reviewers,
            tie,
            adjudicated,
        ), task


def test_human_dimensions_follow_the_studied_dimension() -> None:
    tasks, verdicts = _human_case()
    frame = V.slice_table(tasks, verdicts, "process").frame.set_index("task_id")
    # only agree3 has process reviews: a 1:1 tie there
    assert frame.loc["agree3", "blind_tie"] == "tie"
    assert frame.loc["agree3", "adjudicated"] == "tie (no majority)"
    assert frame.loc["agree3", "reviewers"] == "2 reviewers"
    assert frame.loc["adj", "reviewers"] == "no reviewer"
    assert frame.loc["adj", "blind_tie"] == V.UNKNOWN


def test_human_standing_counts() -> None:
    _, verdicts = _human_case()
    standing = V.human_standing(verdicts, "outcome").set_index("task_id")
    assert standing.loc["adj", ["n_reviewers", "n_blind", "n_blind_success"]].tolist() == [3, 3, 2]
    assert standing.loc["adj", "majority"] == 1
    assert pd.isna(standing.loc["tie", "majority"])
    assert standing.loc["partial", ["n_reviewers", "n_blind"]].tolist() == [2, 1]


# ---------------------------------------------------------------------------------------
# The table as a whole
# ---------------------------------------------------------------------------------------


def test_every_task_one_value_per_dimension_and_orders() -> None:
    tasks, verdicts = _human_case()
    table = V.slice_table(tasks, verdicts)
    assert len(table.frame) == len(tasks)
    assert set(V.SLICE_DIMS) <= set(table.frame.columns)
    for dim in V.SLICE_DIMS:
        values = table.frame[dim]
        assert values.notna().all(), dim
        assert set(values) == set(table.orders[dim]), dim
        if V.UNKNOWN in table.orders[dim]:
            assert table.orders[dim][-1] == V.UNKNOWN
    assert table.orders["reviewers"] == ("no reviewer", "1 reviewer", "2 reviewers", "3 reviewers")
    assert table.orders["adjudicated"] == (
        "not adjudicated",
        "adjudicated",
        "tie (no majority)",
        V.UNKNOWN,
    )


def test_odd_frames_do_not_crash() -> None:
    # a source without the optional columns, odd ids, an empty frame
    bare = pd.DataFrame({"split": [INTERNAL, INTERNAL, OM2W], "task_id": ["", None, "名前--ab"]})
    table = V.slice_table(bare, _verdicts([]))
    frame = table.frame
    for dim in ("length", "screenshots", "run_end", "uv_band", "blind_tie", "adjudicated"):
        assert frame[dim].tolist() == [V.UNKNOWN] * 3, dim
    assert frame["reviewers"].tolist() == ["no reviewer"] * 3
    assert frame["site"].tolist()[2] == "名前"
    empty = V.slice_table(bare.iloc[:0], _verdicts([]))
    assert empty.frame.empty and all(empty.orders[d] == () for d in V.SLICE_DIMS)


# ---------------------------------------------------------------------------------------
# On the mirror, against the dataset's own columns
# ---------------------------------------------------------------------------------------


def test_mirror_against_dataset_columns(bench) -> None:
    tasks, verdicts = bench.tasks, bench.verdicts
    table = V.slice_table(tasks, verdicts).frame
    merged = table.merge(tasks, on=["split", "task_id"])
    assert len(merged) == len(tasks)
    # ties: the verdict table marks them where the dataset stored a tie as 0
    marked = verdicts[verdicts["raw"] == "tie (stored as 0)"]
    assert set(marked["task_id"]) == set(table.loc[table["blind_tie"] == "tie", "task_id"])
    # adjudicated (non-tie tasks): final label differs from the dataset's majority column
    clear = merged[merged["blind_tie"] == "no tie"]
    differs = clear["final_human_outcome_label"] != clear["majority_human_outcome_vote"]
    assert (clear["adjudicated"] == "adjudicated").tolist() == differs.tolist()
    # internal: one reviewer per task, final = majority
    internal = merged[merged["split"] == INTERNAL]
    assert set(internal["reviewers"]) == {"1 reviewer"}
    assert set(internal["adjudicated"]) == {"not adjudicated"}
    # the top rubric band is exactly the Universal Verifier's process verdict 1
    uv = verdicts[verdicts["rater"] == "uv_process"].merge(table, on=["split", "task_id"])
    known = uv["label"].notna()
    assert ((uv.loc[known, "uv_band"] == "[0.8, 1]") == (uv.loc[known, "label"] == 1)).all()
    assert (uv.loc[~known, "uv_band"] == V.UNKNOWN).all()
    # aborted runs are exactly is_aborted; screenshots follow the stored count
    assert ((merged["run_end"] == "aborted") == merged["is_aborted"]).all()
    assert ((merged["screenshots"] == "screenshots") == (merged["n_screenshots_stored"] > 0)).all()


# ---------------------------------------------------------------------------------------
# The declarations: a slice says which verifiers' own score defines it
# ---------------------------------------------------------------------------------------


def test_a_slice_cannot_be_declared_without_saying_whose_score_defines_it() -> None:
    from lib.analysis.slice_values import Slice

    with pytest.raises(TypeError, match="own_score_of"):
        Slice("new", "A new slice")  # type: ignore[call-arg]


def test_the_declarations_name_known_verifiers_and_keep_the_order() -> None:
    from lib.table.verdicts import VERIFIERS

    assert V.SLICE_DIMS == (
        "site",
        "length",
        "screenshots",
        "run_end",
        "reviewers",
        "blind_tie",
        "adjudicated",
        "uv_band",
    )  # the report's slices come in this order
    for declared in V.SLICES:
        assert set(declared.own_score_of) <= set(VERIFIERS), declared.name
        assert V.SLICE_TITLES[declared.name] == declared.title
    assert V.slice_of("uv_band").own_score_of == ("uv_outcome_success", "uv_process")
    assert [s.name for s in V.SLICES if s.own_score_of] == ["uv_band"]
    with pytest.raises(KeyError, match="known"):
        V.slice_of("nope")


def test_a_slice_declared_as_a_verifiers_own_score_is_not_ranked_for_it(bench, monkeypatch) -> None:
    from dataclasses import replace

    from lib.analysis import slices as S
    from lib.vocab import Bootstrap

    site = V.slice_of("site")
    monkeypatch.setattr(
        V,
        "SLICES",
        tuple(replace(s, own_score_of=("mm_is_success",)) if s is site else s for s in V.SLICES),
    )

    def records(verifier: str) -> list:
        return S.slice_records(
            bench.verdicts, bench.tasks, verifier, "final_human_outcome_label", "outcome",
            slice_dims=["site", "run_end"], boot=Bootstrap(50), sort_by=None, min_n=1,
        )  # fmt: skip

    mine = records("mm_is_success")
    assert {r.slice_dim for r in mine if r.own_score} == {"site"}
    assert all(r.own_score for r in mine if r.slice_dim == "site")
    big = [r for r in mine if r.slice_dim == "site" and not r.small_n]
    assert big and all(
        S.not_ranked(r, "kappa") == "defined by this verifier's own score" for r in big
    )
    ranked = S.rank_slices(mine, "kappa")
    first_unranked = next(i for i, r in enumerate(ranked) if S.not_ranked(r, "kappa"))
    assert all(r.slice_dim == "run_end" for r in ranked[:first_unranked])
    assert not any(r.own_score for r in records("verifier_is_success"))
