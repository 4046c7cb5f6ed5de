"""The long verdict table, on a hand-built two-task example and on the mirror."""

from __future__ import annotations

import pandas as pd
import pytest

from lib.table import verdicts

OM2W = "fara7b_om2w_browserbase"


def _tasks() -> pd.DataFrame:
    base = {
        "split": [OM2W, OM2W, "internal"],
        "task_id": ["Shop--aaaa1111", "Shop--bbbb2222", "fam_find_1"],
        "uv_outcome_success": [1.0, 0.0, None],
        "uv_rubric_score": [0.85, 0.5, None],
        "mm_is_success": [1.0, None, 0.0],
        "verifier_is_success": [0.0, 0.0, 1.0],
        "gpt_eval_json": [
            '{"score": 1, "gpt_response_text": "Status: \\"success\\""}',
            '{"score": -1, "gpt_response_text": ""}',
            "",
        ],
        "final_human_outcome_label": [1.0, 1.0, 0.0],
        "majority_human_outcome_vote": [1.0, 0.0, 0.0],
        "final_human_process_label": [1.0, None, 0.0],
        "median_human_rubric_score_agnostic": [0.9, 0.4, None],
    }
    return pd.DataFrame(base)


def _annotations() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "split": [OM2W, OM2W, OM2W, OM2W, "internal"],
            "task_id": [
                "Shop--aaaa1111",
                "Shop--aaaa1111",
                "Shop--bbbb2222",
                "Shop--bbbb2222",
                "fam_find_1",
            ],
            "annotator": ["Judge9", "Judge11", "Judge9", "Judge11", "Judge9"],
            "human_judgement_outcome": ["Correct", "correct", "Correct", "Incorrect", "partial"],
            "human_judgement_process": ["Correct", "Incorrect", "", "Incorrect", "Incorrect"],
            "human_process_score": [0.9, 0.2667, None, 0.3, None],
            "informed_outcome_agreement": ["agree", "Disagree", "agree", "", ""],
            "informed_process_agreement": ["agree", "Partially agree", "disagree", "agree", ""],
        }
    )


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return verdicts.build(_tasks(), _annotations())


def _label(table: pd.DataFrame, task: str, rater: str, dimension: str) -> object:
    row = table[(table.task_id == task) & (table.rater == rater) & (table.dimension == dimension)]
    assert len(row) == 1, (task, rater, dimension)
    value = row["label"].iloc[0]
    return None if pd.isna(value) else int(value)


def test_task_level_rows(table: pd.DataFrame) -> None:
    assert _label(table, "Shop--aaaa1111", "uv_outcome_success", "outcome") == 1
    assert _label(table, "Shop--aaaa1111", "uv_process", "process") == 1
    assert _label(table, "Shop--bbbb2222", "uv_process", "process") == 0
    assert _label(table, "fam_find_1", "uv_process", "process") is None
    assert _label(table, "fam_find_1", "uv_outcome_success", "outcome") is None
    assert _label(table, "Shop--bbbb2222", "mm_is_success", "outcome") is None
    assert _label(table, "Shop--aaaa1111", "om2w_judge", "outcome") == 1
    assert _label(table, "Shop--bbbb2222", "om2w_judge", "outcome") is None
    # om2w_judge exists only for the om2w split
    assert not ((table.task_id == "fam_find_1") & (table.rater == "om2w_judge")).any()
    assert _label(table, "Shop--bbbb2222", "final_human_process_label", "process") is None


def test_tie_keeps_zero_but_is_marked(table: pd.DataFrame) -> None:
    row = table[
        (table.task_id == "Shop--bbbb2222") & (table.rater == "majority_human_outcome_vote")
    ]
    assert int(row["label"].iloc[0]) == 0
    assert row["raw"].iloc[0] == "tie (stored as 0)"
    assert verdicts.blind_ties(_annotations()) == {"Shop--bbbb2222"}


def test_blind_rows(table: pd.DataFrame) -> None:
    assert _label(table, "Shop--aaaa1111", "Judge11", "outcome") == 1
    assert _label(table, "Shop--aaaa1111", "Judge11", "process") == 0
    assert _label(table, "Shop--bbbb2222", "Judge9", "process") is None
    partial = table[
        (table.task_id == "fam_find_1") & (table.rater == "Judge9") & (table.dimension == "outcome")
    ]
    assert pd.isna(partial["label"].iloc[0]) and partial["raw"].iloc[0] == "partial"
    score = table[
        (table.task_id == "Shop--aaaa1111")
        & (table.rater == "Judge11")
        & (table.dimension == "process")
    ]["score"].iloc[0]
    assert score == pytest.approx(0.2667)


def test_informed_rows_follow_the_shown_verdict(table: pd.DataFrame) -> None:
    # agree with UV outcome 1 -> 1; disagree with 1 -> 0; agree with 0 -> 0
    assert _label(table, "Shop--aaaa1111", "Judge9@informed", "outcome") == 1
    assert _label(table, "Shop--aaaa1111", "Judge11@informed", "outcome") == 0
    assert _label(table, "Shop--bbbb2222", "Judge9@informed", "outcome") == 0
    # not given -> missing
    assert _label(table, "Shop--bbbb2222", "Judge11@informed", "outcome") is None
    # process: shown verdict = rubric >= 0.8; 0.5 -> 0, disagree -> 1
    assert _label(table, "Shop--bbbb2222", "Judge9@informed", "process") == 1
    # an unknown category is kept as raw and gives no label
    other = table[
        (table.rater == "Judge11@informed")
        & (table.task_id == "Shop--aaaa1111")
        & (table.dimension == "process")
    ]
    assert pd.isna(other["label"].iloc[0]) and other["raw"].iloc[0] == "Partially agree"


def test_no_informed_rows_for_a_split_without_the_stage(table: pd.DataFrame) -> None:
    internal = table[table.split == "internal"]
    assert not (internal["stage"] == "informed").any()
    assert (internal["stage"] == "blind").sum() == 2


def test_shown_process_verdict_ignores_other_thresholds(table: pd.DataFrame) -> None:
    moved = verdicts.with_uv_threshold(table, 0.4)
    assert _label(moved, "Shop--bbbb2222", "uv_process", "process") == 1
    assert _label(moved, "fam_find_1", "uv_process", "process") is None
    # the informed labels still use 0.8
    assert _label(moved, "Shop--bbbb2222", "Judge9@informed", "process") == 1
    assert _label(table, "Shop--bbbb2222", "uv_process", "process") == 0  # original untouched


def test_pair_keeps_missing(table: pd.DataFrame) -> None:
    from lib.table.pairs import pair as pair_of

    pair = pair_of(table, "mm_is_success", "final_human_outcome_label", "outcome")
    assert len(pair) == 3
    assert pair["label_a"].isna().sum() == 1
    assert pair.loc[pair.task_id == "fam_find_1", "label_a"].iloc[0] == 0


def test_mirror_table_counts(bench) -> None:
    table = bench.verdicts
    human_blind = table[(table.kind == "human") & (table.stage == "blind")]
    assert len(human_blind) == 2 * len(bench.annotations)
    informed = table[table.stage == "informed"]
    assert set(informed["split"]) == {OM2W}
    assert len(informed) == 2 * (bench.annotations.split == OM2W).sum()
    ties = table[(table.rater == "majority_human_outcome_vote") & table["raw"].notna()]
    assert len(ties) == 21
    om2w_judge = table[table.rater == "om2w_judge"]
    assert set(om2w_judge["split"]) == {OM2W} and len(om2w_judge) == 106
    assert table["label"].dropna().isin([0, 1]).all()


def test_rater_titles() -> None:
    assert verdicts.rater_title("uv_outcome_success") == "Universal Verifier, outcome"
    assert verdicts.rater_title("Judge9@informed") == "Judge9 (informed)"
    assert verdicts.rater_title("mine:v2") == "v2 (yours)"
    assert verdicts.rater_title("Judge9") == "Judge9"
    assert verdicts.rater_title("uv_process", 0.75).endswith("(rubric score ≥ 0.75)")


def test_one_display_name_per_rater_everywhere(bench) -> None:
    """Issue 21: Agreement, Judges and Slices name a rater with the same words."""
    from lib.analysis import agreement as A
    from lib.analysis import judges as J

    raters = [str(r) for r in bench.verdicts["rater"].unique()] + ["mine:my-judge-v2"]
    labels = J.display_labels(raters)
    for rater in raters:
        title = verdicts.rater_title(rater)
        assert labels[rater] == title
        assert A.reference_title(rater) == title
        assert A.verifier_title(rater) == title
    assert labels["om2w_judge"] == "Online-Mind2Web judge (om2w only)"
    assert labels["mine:my-judge-v2"] == "my-judge-v2 (yours)"


def test_the_table_built_in_chunks_is_the_table_built_at_once(bench, monkeypatch) -> None:
    """Issue 26: the rows are built BUILD_CHUNK tasks (then reviews) at a time to bound the
    load's peak; chunks of 7 (every chunk boundary inside a split, one review chunk ending
    mid-task) give exactly the one-chunk table, dtypes and order included."""
    import pandas as pd

    from lib.table import verdicts

    monkeypatch.setattr(verdicts, "BUILD_CHUNK", 10**9)
    whole = verdicts.build(bench.tasks, bench.annotations)
    monkeypatch.setattr(verdicts, "BUILD_CHUNK", 7)
    chunked = verdicts.build(bench.tasks, bench.annotations)
    pd.testing.assert_frame_equal(chunked, whole)
    pd.testing.assert_frame_equal(whole, bench.verdicts)
    assert len(whole) > 7 * 100
