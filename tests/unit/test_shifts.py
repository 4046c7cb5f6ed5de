"""lib.analysis.shifts on a hand-worked example (every branch of the derivation)
and on the mirror."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from lib.analysis import shifts
from lib.table import labels, verdicts
from lib.vocab import Bootstrap
from ui import shifts as ui_shifts

OM2W = "fara7b_om2w_browserbase"
T1, T2, T3, T4 = (f"Shop--0000000{i}" for i in range(1, 5))
J9, J11 = "Judge9", "Judge11"


def _tasks() -> pd.DataFrame:
    """Verdicts shown: T1 1/1 (rubric exactly 0.8), T2 0/0 (0.7999), T3 missing, T4 1/1."""
    return pd.DataFrame(
        {
            "split": [OM2W] * 4 + ["internal"],
            "task_id": [T1, T2, T3, T4, "fam_find_1"],
            "uv_outcome_success": [1.0, 0.0, None, 1.0, 1.0],
            "uv_rubric_score": [0.8, 0.7999, None, 0.95, 0.9],
            "mm_is_success": [None] * 5,
            "verifier_is_success": [None] * 5,
            "gpt_eval_json": [""] * 5,
            "final_human_outcome_label": [1.0, 0.0, 0.0, 1.0, 1.0],
            "majority_human_outcome_vote": [1.0, 0.0, 0.0, 1.0, 1.0],
            "final_human_process_label": [1.0, 0.0, 0.0, 1.0, 1.0],
            "median_human_rubric_score_agnostic": [None] * 5,
        }
    )


# (task, reviewer): blind outcome, outcome agreement, blind process, process agreement
REVIEWS = [
    (T1, J9, "Incorrect", "agree", "Correct", "Disagree "),  # F->S toward; S->F against
    (T1, J11, "Correct", "agree", "Incorrect", ""),  # stays; process not given
    (T2, J9, "Correct", "AGREE", "Correct", "agree"),  # S->F toward; S->F toward
    (T2, J11, "Correct", "disagree", "Incorrect", "Partially agree"),  # stays; other value
    (T3, J9, "Incorrect", "agree", "Correct", "disagree"),  # no verdict shown: excluded
    (T3, J11, "partial", "agree", "", None),  # blind missing; process not given
    (T4, J9, "Incorrect", "disagree", "Incorrect", "agree"),  # stays; F->S toward
    (T4, J11, "Correct", "disagree", "Correct", "agree"),  # S->F against; stays
]


def _annotations() -> pd.DataFrame:
    rows = [
        {
            "split": OM2W,
            "task_id": task,
            "annotator": who,
            "human_judgement_outcome": bo,
            "human_judgement_process": bp,
            "human_process_score": None,
            "outcome_comment": f"blind outcome {task} {who}",
            "process_comment": f"blind process {task} {who}",
            "informed_outcome_agreement": ao,
            "informed_process_agreement": ap,
            "informed_outcome_comment": f"informed outcome {task} {who}",
            "informed_process_comment": f"informed process {task} {who}",
        }
        for task, who, bo, ao, bp, ap in REVIEWS
    ]
    rows.append(
        {
            "split": "internal",
            "task_id": "fam_find_1",
            "annotator": "Judge3",
            "human_judgement_outcome": "Correct",
            "human_judgement_process": "Correct",
            "human_process_score": None,
            "outcome_comment": "fine",
            "process_comment": "",
            "informed_outcome_agreement": "",
            "informed_process_agreement": "",
            "informed_outcome_comment": "",
            "informed_process_comment": "",
        }
    )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return verdicts.build(_tasks(), _annotations())


@pytest.fixture(scope="module")
def paired(table: pd.DataFrame) -> pd.DataFrame:
    return shifts.paired_reviews(table, _annotations())


def _row(paired: pd.DataFrame, task: str, who: str, dimension: str) -> pd.Series:
    hit = paired[
        (paired.task_id == task) & (paired.annotator == who) & (paired.dimension == dimension)
    ]
    assert len(hit) == 1, (task, who, dimension)
    return hit.iloc[0]


def _int(value: object) -> int | None:
    return None if pd.isna(value) else int(value)


# --- the derivation, branch by branch ---------------------------------------------------


@pytest.mark.parametrize(
    ("task", "who", "dimension", "category", "shown", "informed", "reason"),
    [
        (T1, J9, "outcome", "agree", 1, 1, None),  # agree with 1 -> 1
        (T2, J9, "outcome", "agree", 0, 0, None),  # `AGREE` with 0 -> 0 (case-insensitive)
        (T2, J11, "outcome", "disagree", 0, 1, None),  # disagree with 0 -> 1
        (T4, J11, "outcome", "disagree", 1, 0, None),  # disagree with 1 -> 0
        (T1, J9, "process", "disagree", 1, 0, None),  # `Disagree ` trimmed; 0.8 -> shown 1
        (T2, J9, "process", "agree", 0, 0, None),  # rubric 0.7999 -> shown 0
        (T1, J11, "process", "not given", 1, None, shifts.NO_INFORMED_ANSWER),  # ""
        (T3, J11, "process", "not given", None, None, shifts.BLIND_MISSING),  # null value
        (T2, J11, "process", "Partially agree", 0, None, shifts.OTHER_ANSWER),  # own category
        (T3, J9, "outcome", "agree", None, None, shifts.VERDICT_MISSING),  # nothing shown
        (T3, J9, "process", "disagree", None, None, shifts.VERDICT_MISSING),
        (T3, J11, "outcome", "agree", None, None, shifts.BLIND_MISSING),  # blind `partial`
    ],
)
def test_every_branch_of_the_derivation(
    paired: pd.DataFrame,
    task: str,
    who: str,
    dimension: str,
    category: str,
    shown: int | None,
    informed: int | None,
    reason: str | None,
) -> None:
    row = _row(paired, task, who, dimension)
    assert row["agreement"] == category
    assert _int(row["shown"]) == shown
    assert _int(row["informed"]) == informed
    assert (None if pd.isna(row["excluded_because"]) else row["excluded_because"]) == reason
    assert bool(row["eligible"]) == (reason is None)


def test_raw_values_and_comments_are_kept(paired: pd.DataFrame) -> None:
    row = _row(paired, T1, J9, "process")
    assert row["agreement_value"] == "Disagree "  # as stored
    assert row["blind_comment"] == f"blind process {T1} {J9}"
    assert row["informed_comment"] == f"informed process {T1} {J9}"
    assert _row(paired, T3, J11, "process")["agreement_value"] == ""  # null shown as ""
    assert _row(paired, T3, J11, "outcome")["blind_raw"] == "partial"


def test_process_verdict_shown_ignores_another_threshold(table: pd.DataFrame) -> None:
    moved = verdicts.with_uv_threshold(table, 0.5)  # another page's slider, on a copy
    again = shifts.paired_reviews(moved, _annotations())
    row = _row(again, T2, J9, "process")  # rubric 0.7999: 1 at 0.5, but 0 was shown
    assert _int(row["shown"]) == 0 and _int(row["informed"]) == 0
    assert verdicts.shown_verdict(_tasks().iloc[0], "process") == 1  # exactly 0.8
    assert verdicts.shown_verdict(_tasks().iloc[1], "process") == 0  # just below
    assert verdicts.shown_verdict(_tasks().iloc[2], "process") is None
    assert verdicts.shown_verdict(_tasks().iloc[2], "outcome") is None
    with pytest.raises(ValueError, match="dimension"):
        verdicts.shown_verdict(_tasks().iloc[0], "speed")


def test_numpy_scalars_from_a_row_lookup() -> None:
    """`bench.tasks.loc[...]` yields numpy float32 scores: a NaN must stay missing, not 0.

    This was a bug in lib.table.labels (`_is_missing` / `parse_label` checked Python floats
    only), found by `test_mirror_informed_labels_match_the_shown_verdicts`.
    """
    assert labels.threshold_verdict(np.float32("nan")) is None
    assert labels.parse_label(np.float32("nan")) == labels.Parsed(None)
    assert labels.parse_label(np.float32(1.0)) == labels.Parsed(1)
    assert labels.parse_label(np.float64(0.0)) == labels.Parsed(0)
    task = pd.Series({"uv_outcome_success": np.float32("nan"), "uv_rubric_score": np.float32(0.9)})
    assert verdicts.shown_verdict(task, "outcome") is None
    assert verdicts.shown_verdict(task, "process") == 1
    task = pd.Series({"uv_outcome_success": np.float32(1.0), "uv_rubric_score": np.float32("nan")})
    assert verdicts.shown_verdict(task, "outcome") == 1
    assert verdicts.shown_verdict(task, "process") is None


def test_only_splits_with_an_informed_stage(table: pd.DataFrame, paired: pd.DataFrame) -> None:
    assert set(paired["split"]) == {OM2W}
    assert shifts.informed_splits(table) == [OM2W]
    assert shifts.informed_splits(table, ["internal"]) == []
    assert shifts.paired_reviews(table, _annotations(), ["internal"]).empty
    assert len(paired) == 2 * len(REVIEWS)


# --- flips --------------------------------------------------------------------------------


def test_outcome_flips_pooled(paired: pd.DataFrame) -> None:
    f = shifts.reviewer_shift(paired, "outcome").flips
    assert (f.reviews, f.eligible, f.flips) == (8, 6, 3)
    assert f.flip_rate.value == pytest.approx(0.5)
    assert (f.toward_verifier, f.against_verifier) == (2, 1)
    assert (f.success_to_failure, f.failure_to_success) == (2, 1)
    assert f.matrix == {
        "success → success": 2,
        "success → failure": 2,
        "failure → success": 1,
        "failure → failure": 1,
    }
    assert f.answers == {"agree": 5, "disagree": 3}
    assert f.values == {"agree": 4, "disagree": 3, "AGREE": 1}
    assert f.excluded == {shifts.VERDICT_MISSING: 1, shifts.BLIND_MISSING: 1}
    # McNemar: discordant 1 vs 2 -> p = 2 * P(X <= 1; 3, 1/2) = 1
    assert f.mcnemar_p.value == pytest.approx(1.0)


def test_process_flips_pooled(paired: pd.DataFrame) -> None:
    f = shifts.reviewer_shift(paired, "process").flips
    assert (f.reviews, f.eligible, f.flips) == (8, 4, 3)
    assert (f.toward_verifier, f.against_verifier) == (2, 1)
    assert (f.success_to_failure, f.failure_to_success) == (2, 1)
    assert f.answers == {"agree": 3, "disagree": 2, "not given": 2, "Partially agree": 1}
    assert f.excluded == {
        shifts.NO_INFORMED_ANSWER: 1,
        shifts.OTHER_ANSWER: 1,
        shifts.VERDICT_MISSING: 1,
        shifts.BLIND_MISSING: 1,
    }


def test_flips_per_reviewer(paired: pd.DataFrame) -> None:
    by = {s.annotator: s.flips for s in shifts.shift_summaries(paired, "outcome")}
    assert list(by) == ["all", J9, J11]  # natural order: Judge9 before Judge11
    assert (by[J9].eligible, by[J9].flips, by[J9].toward_verifier) == (3, 2, 2)
    assert (by[J11].eligible, by[J11].flips, by[J11].against_verifier) == (3, 1, 1)


def test_flipped_cases_side_by_side(paired: pd.DataFrame) -> None:
    rows = shifts.flipped_cases(paired, "outcome")
    assert len(rows) == 3 and rows["flipped"].all()
    assert shifts.flipped_cases(paired, "outcome", J11)["annotator"].tolist() == [J11]
    assert len(shifts.flipped_cases(paired)) == 6  # both dimensions
    cases = ui_shifts.flipped_display(rows)  # the page's wording
    first = cases.iloc[0]
    assert first["trajectory"] == f"Trajectory?split={OM2W}&task={T1}"
    assert (first["reviewer"], first["blind"], first["informed"]) == (J9, "failure", "success")
    assert first["blind comment"] == f"blind outcome {T1} {J9}"
    assert first["informed answer"] == "agree"
    assert first["verifier verdict shown"] == "success"
    assert first["flip"] == shifts.F2S and bool(first["toward verifier"])
    others = ui_shifts.other_answers_display(shifts.other_answers(paired))
    assert others["informed answer"].tolist() == ["Partially agree"]
    assert shifts.other_answers(paired, "outcome").empty


def test_no_eligible_review_is_undefined_not_zero() -> None:
    empty = pd.DataFrame(columns=shifts.PAIRED_COLUMNS)
    for column in ("blind", "informed", "shown"):
        empty[column] = empty[column].astype("Int8")
    for column in ("eligible", "flipped", "toward_verifier", "against_verifier"):
        empty[column] = empty[column].astype(bool)
    s = shifts.reviewer_shift(empty, "outcome", boot=Bootstrap(50))
    assert s.flips.flip_rate.value is None and s.flips.flip_rate.reason == "n = 0"
    assert s.flips.mcnemar_p.value is None
    assert s.kappa.blind.value is None and not s.kappa.diff.ci.defined


# --- kappas -------------------------------------------------------------------------------


def test_kappa_with_the_verifier_hand_worked(paired: pd.DataFrame) -> None:
    s = shifts.reviewer_shift(paired, "outcome", boot=Bootstrap(200))
    # eligible (blind, informed, shown): (0,1,1) (1,1,1) (1,0,0) (1,1,0) (0,0,1) (1,0,1)
    blind, informed, shown = [0, 1, 1, 1, 0, 1], [1, 1, 0, 1, 0, 0], [1, 1, 0, 0, 1, 1]
    assert s.kappa.blind.value == pytest.approx(-0.5)
    assert s.kappa.informed.value == pytest.approx(0.0)
    assert s.kappa.blind.value == pytest.approx(cohen_kappa_score(blind, shown))
    assert s.kappa.informed.value == pytest.approx(cohen_kappa_score(informed, shown))
    assert s.kappa.diff.value == pytest.approx(0.5)
    assert (s.kappa.n, s.kappa.n_tasks) == (6, 3)
    # informed agreement with the verdict shown = share of `agree` among eligible reviews
    assert s.agreement.informed.value == pytest.approx(3 / 6)
    assert s.agreement.blind.value == pytest.approx(2 / 6)


def test_inter_reviewer_kappa_hand_worked(paired: pd.DataFrame) -> None:
    pairs = shifts.reviewer_pairs(paired, "outcome")
    assert len(pairs) == 8  # 4 tasks x 2 orders
    r = shifts.inter_reviewer_shift(paired, "outcome", boot=Bootstrap(200))
    # complete pairs T1 (0,1)->(1,1), T2 (1,1)->(0,1), T4 (0,1)->(0,0)
    assert (r.n, r.n_tasks) == (3, 3)
    assert r.blind.value == pytest.approx(-0.5)
    assert r.informed.value == pytest.approx(1 / 3)
    both = pairs.dropna()
    assert r.blind.value == pytest.approx(cohen_kappa_score(both.blind_a, both.blind_b))
    assert r.informed.value == pytest.approx(cohen_kappa_score(both.informed_a, both.informed_b))


def test_reviewer_pairs_of_three_reviewers() -> None:
    paired = pd.DataFrame(
        {
            "split": [OM2W] * 3,
            "task_id": ["t"] * 3,
            "annotator": ["Judge1", "Judge2", "Judge3"],
            "dimension": ["outcome"] * 3,
            "blind": pd.array([1, 0, 1], dtype="Int8"),
            "informed": pd.array([1, 1, 1], dtype="Int8"),
        }
    )
    pairs = shifts.reviewer_pairs(paired, "outcome")
    assert len(pairs) == 6 and not (pairs.a == pairs.b).any()


def test_derivation_states_the_rules_the_code_applies() -> None:
    """Each rule the page states is checked against what the code does."""
    text = shifts.derivation_markdown()
    # "`agree` means the reviewer now holds the verdict they were shown"
    assert "`agree`" in text and "verdict they were shown" in text
    assert labels.informed_label(labels.AGREE, 1) == 1
    assert labels.informed_label(labels.AGREE, 0) == 0
    # "`disagree` means its opposite"
    assert "`disagree` means its opposite" in text
    assert labels.informed_label(labels.DISAGREE, 1) == 0
    assert labels.informed_label(labels.DISAGREE, 0) == 1
    # "Not given ... or a missing shown verdict give no label"
    assert "Not given" in text and "no label" in text
    assert labels.informed_label(labels.NOT_GIVEN, 1) is None
    assert labels.informed_label(labels.AGREE, None) is None
    # the process verdict shown is the rubric score against the threshold in force
    assert "0.8" in text and "uv_outcome_success" in text
    assert labels.threshold_verdict(0.8) == 1 and labels.threshold_verdict(0.79) == 0


# --- on the mirror ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mirror_paired(bench) -> pd.DataFrame:
    return shifts.paired_reviews(bench.verdicts, bench.annotations)


def test_mirror_informed_labels_match_the_shown_verdicts(bench, mirror_paired) -> None:
    """The verdict table's informed labels = informed_label(agreement, shown_verdict)."""
    tasks = bench.tasks.set_index("task_id")
    for _, row in mirror_paired.iterrows():
        shown = verdicts.shown_verdict(tasks.loc[row["task_id"]], row["dimension"])
        assert _int(row["shown"]) == shown
        expected = labels.informed_label(labels.parse_agreement(row["agreement_value"]), shown)
        assert _int(row["informed"]) == expected


def test_mirror_mcnemar_and_kappas_match_reference_libraries(mirror_paired) -> None:
    for dimension in shifts.DIMENSIONS:
        rows = mirror_paired[(mirror_paired.dimension == dimension) & mirror_paired.eligible]
        b, i, v = (rows[c].astype(int).to_numpy() for c in ("blind", "informed", "shown"))
        s = shifts.reviewer_shift(mirror_paired, dimension, boot=Bootstrap(200))
        table = [[np.sum((b == x) & (i == y)) for y in (1, 0)] for x in (1, 0)]
        assert s.flips.mcnemar_p.value == pytest.approx(mcnemar(table, exact=True).pvalue)
        assert s.kappa.blind.value == pytest.approx(cohen_kappa_score(b, v))
        assert s.kappa.informed.value == pytest.approx(cohen_kappa_score(i, v))
        ci = s.kappa.diff.ci
        assert ci.low <= s.kappa.diff.value <= ci.high


def test_mirror_inter_reviewer_kappa_is_fleiss_on_two_reviewer_tasks(mirror_paired) -> None:
    rows = mirror_paired[mirror_paired.dimension == "outcome"]
    sizes = rows.groupby("task_id")["annotator"].transform("size")
    two = rows[sizes == 2]
    complete = two.groupby("task_id").filter(
        lambda g: g["blind"].notna().all() and g["informed"].notna().all()
    )
    r = shifts.inter_reviewer_shift(complete, "outcome", boot=Bootstrap(200))
    for stage, value in (("blind", r.blind.value), ("informed", r.informed.value)):
        wide = complete.pivot(index="task_id", columns="annotator", values=stage)
        per_task = np.sort(wide.to_numpy(dtype=float), axis=1)[:, :2].astype(int)
        counts, _ = aggregate_raters(per_task)
        assert value == pytest.approx(fleiss_kappa(counts, method="fleiss"))


def test_report_key_shifts(report_json: str) -> None:
    records = json.loads(report_json)["shifts"]
    assert {r["split"] for r in records} == {OM2W}
    assert {r["dimension"] for r in records} == {"outcome", "process"}
    required = {
        "split",
        "dimension",
        "annotator",
        "eligible",
        "flips",
        "toward_verifier",
        "against_verifier",
        "success_to_failure",
        "failure_to_success",
        "kappa_blind",
        "kappa_informed",
        "n_agree",
        "n_disagree",
        "n_not_given",
        "n_other",
        "agreement_values",
    }
    for r in records:
        assert required <= set(r)
        assert r["flips"] == r["toward_verifier"] + r["against_verifier"]
        assert r["flips"] == r["success_to_failure"] + r["failure_to_success"]
        assert r["n_agree"] + r["n_disagree"] + r["n_not_given"] + r["n_other"] == r["reviews"]
        assert sum(r["agreement_values"].values()) == r["reviews"]
        assert r["eligible"] <= r["reviews"]
    pooled = [r for r in records if r["annotator"] == "all"]
    assert len(pooled) == 2 and all(r["inter_reviewer_kappa_n"] for r in pooled)
    outcome = [r for r in records if r["dimension"] == "outcome"]
    assert outcome[0]["annotator"] == "all"
    assert sum(r["eligible"] for r in outcome[1:]) == outcome[0]["eligible"]
    assert sum(r["reviews"] for r in outcome[1:]) == 215


@pytest.mark.parametrize("low", [0.12, -0.35, -0.9])
def test_kappa_dumbbell_axis_labels_are_distinct(low: float) -> None:
    """Issue 21: the kappa axis wrote "0.1 0.1 0.1 ... 0.3" (ticks finer than its format)."""
    import pandas as pd

    from lib.charts import shifts as charts

    frame = pd.DataFrame(
        {
            "reviewer": ["All reviewers", "All reviewers", "Judge1", "Judge1"],
            "pooled": [True, True, False, False],
            "stage": ["blind", "informed"] * 2,
            "value": [low, 0.3, 0.2, 0.25],
            "n": [40, 40, 12, 12],
            "diff": [0.1, 0.1, 0.05, 0.05],
            "ci_low": [0.0, 0.0, -0.1, -0.1],
            "ci_high": [0.2, 0.2, 0.2, 0.2],
            "note": [""] * 4,
        }
    )
    spec = charts.agreement_dumbbell(frame, "Cohen's kappa", percent=False).to_dict()
    ticks = spec["layer"][1]["encoding"]["x"]["axis"]["values"]
    labels = [f"{t:.1f}" for t in ticks]
    assert len(labels) == len(set(labels)) and labels[-1] == "1.0"
    domain = spec["layer"][1]["encoding"]["x"]["scale"]["domain"]
    assert domain[0] <= min(ticks) and max(ticks) <= domain[1] and domain[0] <= low
