"""lib.analysis.agreement: hand-worked cases, scikit-learn/statsmodels on the mirror, the report."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, fields

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
    roc_auc_score,
)
from statsmodels.stats.inter_rater import cohens_kappa

from lib import metrics as M
from lib.analysis import agreement as A
from lib.table.verdicts import COLUMNS, with_uv_threshold
from lib.vocab import Bootstrap
from ui import agreement as agreement_view

OM2W = "fara7b_om2w_browserbase"
INTERNAL = "internal"


# ---------------------------------------------------------------------------------------
# A hand-built verdict table
# ---------------------------------------------------------------------------------------


def _verdicts(rows: list[tuple]) -> pd.DataFrame:
    """Rows (split, task, rater, kind, dimension, label[, score]) -> a verdict table."""
    records = []
    for row in rows:
        split, task, rater, kind, dimension, label, *rest = row
        human = kind == "human"
        records.append(
            {
                "split": split,
                "task_id": task,
                "rater": rater,
                "kind": kind,
                "annotator": rater if human else None,
                "stage": "blind" if human else None,
                "dimension": dimension,
                "label": label,
                "score": rest[0] if rest else None,
                "raw": None,
            }
        )
    table = pd.DataFrame(records, columns=COLUMNS)
    table["label"] = table["label"].astype("Int8")
    table["score"] = table["score"].astype("float64")
    for column in ("split", "task_id", "rater", "kind", "annotator", "stage", "dimension", "raw"):
        table[column] = table[column].astype("string")
    return table


def _tiny() -> pd.DataFrame:
    """Six om2w tasks and two internal tasks, worked by hand below.

    om2w, uv_outcome_success vs final: t1 (1,1) TP, t2 (1,0) FP, t3 (0,0) TN, t4 (0,0) TN,
    t5 (1,1) TP, t6 verifier missing -> tp 2, fp 1, fn 0, tn 2, n 5, 1 missing.
    Reviewer J1 labelled t1-t4 all success (one class); J2 labelled t1-t3.
    """
    uv = [1, 1, 0, 0, 1, None]
    final = [1, 0, 0, 0, 1, 1]
    rows: list[tuple] = []
    for i, (v, f) in enumerate(zip(uv, final, strict=True), start=1):
        task = f"Shop--{i:08d}"
        rows.append((OM2W, task, "uv_outcome_success", "verifier", "outcome", v))
        rows.append((OM2W, task, "final_human_outcome_label", "reference", "outcome", f))
        rows.append((OM2W, task, "om2w_judge", "verifier", "outcome", 1))
    for i in (1, 2, 3, 4):
        rows.append((OM2W, f"Shop--{i:08d}", "J1", "human", "outcome", 1))
    for i, label in ((1, 1), (2, 0), (3, 0)):
        rows.append((OM2W, f"Shop--{i:08d}", "J2", "human", "outcome", label))
    for task, v, f in (("fam_find_1", 1, 1), ("fam_find_2", 0, 1)):
        rows.append((INTERNAL, task, "uv_outcome_success", "verifier", "outcome", v))
        rows.append((INTERNAL, task, "final_human_outcome_label", "reference", "outcome", f))
    return _verdicts(rows)


def _find(
    records: list[A.AgreementRecord], split: str, verifier: str, reference: str
) -> A.AgreementRecord:
    hits = [
        r for r in records if (r.split, r.verifier, r.reference) == (split, verifier, reference)
    ]
    assert len(hits) == 1, (split, verifier, reference, len(hits))
    return hits[0]


def test_hand_worked_record() -> None:
    records = A.agreement_records(_tiny(), boot=Bootstrap(200))
    r = _find(records, OM2W, "uv_outcome_success", "final_human_outcome_label")
    assert (r.tp, r.fp, r.fn, r.tn) == (2, 1, 0, 2)
    assert (r.n, r.n_tasks, r.n_missing_verifier, r.n_missing_reference) == (5, 5, 1, 0)
    # p_o = 4/5; p_pred = 3/5, p_ref = 2/5; p_e = .6 * .4 + .4 * .6 = .48
    expected = {
        "verifier_positive_rate": 3 / 5,
        "reference_positive_rate": 2 / 5,
        "accuracy": 4 / 5,
        "precision": 2 / 3,
        "recall": 1.0,
        "specificity": 2 / 3,
        "f1": 4 / 5,
        "fpr": 1 / 3,
        "fnr": 0.0,
        "kappa": (0.8 - 0.48) / (1 - 0.48),
        "ac1": (0.8 - 0.5) / (1 - 0.5),  # pi = (.6 + .4) / 2 = .5, p_e = 2 pi (1 - pi) = .5
        "mcc": (2 * 2 - 1 * 0) / math.sqrt(3 * 2 * 3 * 2),
    }
    for key, value in expected.items():
        assert r.estimates[key].value == pytest.approx(value), key
    assert A.reasons(r) == {}
    assert r.uv_threshold == 0.8 and r.dimension == "outcome"
    low, high = r.estimates["kappa"].ci.bounds
    assert low <= r.estimates["kappa"].value <= high
    assert r.bootstrap == Bootstrap(n_resamples=200, seed=0, level=0.95, unit="task")
    assert r.n_clusters == 5  # five tasks with both labels (one is missing a verdict)
    assert M.to_jsonable(r.bootstrap) == {  # the report's keys stay as they were
        "n_resamples": 200,
        "seed": 0,
        "level": 0.95,
        "unit": "task",
    }
    assert "n_clusters" not in M.to_jsonable(r)


def test_pooled_split_adds_both_splits() -> None:
    records = A.agreement_records(_tiny(), boot=Bootstrap(200))
    pooled = _find(records, "all", "uv_outcome_success", "final_human_outcome_label")
    # om2w (2, 1, 0, 2) + internal: (1,1) TP, (0,1) FN
    assert (pooled.tp, pooled.fp, pooled.fn, pooled.tn) == (3, 1, 1, 2)
    assert pooled.n_tasks == 7
    assert {r.split for r in records} == {OM2W, INTERNAL, "all"}


def test_degenerate_cases_are_none_with_a_reason() -> None:
    records = A.agreement_records(_tiny(), boot=Bootstrap(200))
    # A reviewer who only says success: with no reference failure, FPR, specificity and
    # MCC are undefined (kappa is defined: the verifier uses both classes).
    one_class = _find(records, OM2W, "uv_outcome_success", "J1")
    assert one_class.n == 4
    for key in ("fpr", "specificity", "mcc"):
        assert one_class.estimates[key].value is None
        assert A.reasons(one_class)[key]
    assert "no negative" in A.reasons(one_class)["fpr"]
    assert one_class.estimates["fpr"].ci.bounds is None and "fpr_ci" in A.reasons(one_class)
    # om2w_judge has no verdict on internal: a record with n = 0 and every metric None
    empty = _find(records, INTERNAL, "om2w_judge", "final_human_outcome_label")
    assert (empty.n, empty.n_missing_verifier) == (0, 2)
    for key in A.value_keys():
        assert empty.estimates[key].value is None
        assert A.reasons(empty)[key].startswith("n = 0")
    for name in A.ci_keys():
        assert empty.estimates[name].ci.bounds is None
        assert A.reasons(empty)[f"{name}_ci"] == "n = 0"
    # A reviewer is a reference only where they reviewed: J1 has no internal record
    assert not [r for r in records if r.split == INTERNAL and r.reference == "J1"]
    assert json.dumps([asdict(r) for r in records], allow_nan=False)  # no NaN anywhere


def test_kappa_misleads_flag_when_one_class_dominates() -> None:
    rows: list[tuple] = []
    for i in range(20):  # the reference says success on 19 of 20 tasks
        task = f"Shop--{i:08d}"
        rows.append((OM2W, task, "uv_outcome_success", "verifier", "outcome", int(i != 1)))
        rows.append((OM2W, task, "final_human_outcome_label", "reference", "outcome", int(i > 0)))
    (r,) = A.agreement_records(_verdicts(rows), boot=Bootstrap(200))
    assert r.kappa_misleads is True
    assert r.estimates["accuracy"].value == pytest.approx(18 / 20)
    assert (
        r.estimates["kappa"].value < r.estimates["ac1"].value
    )  # the kappa paradox: high raw agreement, low kappa
    note = agreement_view.kappa_note(r, lambda v, iv: v.fmt(2, "undefined"))
    assert "raw agreement 0.90" in note and "AC1" in note and "kappa" in note


def test_uploaded_verifier_is_treated_by_dimension() -> None:
    table = _tiny()
    upload = _verdicts(
        [
            (OM2W, "Shop--00000001", "my_judge", "verifier", "outcome", 1),
            (OM2W, "Shop--00000002", "my_judge", "verifier", "outcome", 0),
            (OM2W, "Shop--00000001", "my_judge", "verifier", "process", 1),
        ]
    )
    records = A.agreement_records(pd.concat([table, upload]), boot=Bootstrap(200))
    mine = [r for r in records if r.verifier == "my_judge"]
    assert {r.dimension for r in mine} == {"outcome"}  # no process reference in _tiny
    r = _find(records, OM2W, "my_judge", "final_human_outcome_label")
    assert (r.tp, r.tn, r.n, r.n_missing_verifier) == (1, 1, 2, 4)


def test_reviewer_band_pools_pairs_in_both_orders() -> None:
    table = _verdicts(
        [
            (OM2W, "t1", "A", "human", "outcome", 1),
            (OM2W, "t1", "B", "human", "outcome", 1),
            (OM2W, "t2", "A", "human", "outcome", 0),
            (OM2W, "t2", "B", "human", "outcome", 1),
            (OM2W, "t3", "A", "human", "outcome", 0),
            (OM2W, "t3", "B", "human", "outcome", 0),
            (OM2W, "t3", "C", "human", "outcome", 0),
            (OM2W, "t4", "C", "human", "outcome", 1),  # alone: no pair
        ]
    )
    band = A.reviewer_band(table, boot=Bootstrap(200))
    # unordered pairs: t1 AB agree(1,1); t2 AB disagree; t3 AB, AC, BC agree (0,0)
    assert band.n_pairs == 5 and band.n == 10 and band.n_tasks == 3
    assert band.fp == band.fn == 1
    # pooled symmetric table: tp 2, fp 1, fn 1, tn 6 -> p_o = .8, p = .3, p_e = .58
    assert band.estimates["kappa"].value == pytest.approx((0.8 - 0.58) / (1 - 0.58))
    assert band.n_reviewers == 3 and band.verifier == A.REVIEWER_PAIRS


# ---------------------------------------------------------------------------------------
# The mirror against scikit-learn and statsmodels
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mirror_records(bench) -> list[A.AgreementRecord]:
    return A.agreement_records(bench.verdicts, threshold=0.65)


def _group(split: str) -> list[str]:
    return [OM2W, INTERNAL] if split == "all" else [split]


def test_mirror_records_cover_every_comparison(bench, mirror_records) -> None:
    verifiers = {r.verifier for r in mirror_records}
    assert verifiers == {
        "uv_outcome_success",
        "uv_process",
        "mm_is_success",
        "verifier_is_success",
        "om2w_judge",
    }
    assert {r.split for r in mirror_records} == {OM2W, INTERNAL, "all"}
    outcome_refs = {r.reference for r in mirror_records if r.dimension == "outcome"}
    assert {"final_human_outcome_label", "majority_human_outcome_vote"} <= outcome_refs
    assert any(ref.startswith("Judge") for ref in outcome_refs)
    process = [r for r in mirror_records if r.verifier == "uv_process"]
    assert {r.reference for r in process} == {"final_human_process_label"}
    assert all(r.uv_threshold == 0.65 for r in mirror_records)


def test_mirror_metrics_match_sklearn_and_statsmodels(bench, mirror_records) -> None:
    table = with_uv_threshold(bench.verdicts, 0.65)
    checked = 0
    for r in mirror_records:
        pairs = A.paired_labels(table, r.verifier, r.reference, _group(r.split), r.dimension)
        both = pairs.dropna(subset=["verifier", "reference"])
        pred, ref = both["verifier"].astype(int), both["reference"].astype(int)
        assert r.n == len(both)
        assert r.n_missing_verifier == int(pairs["verifier"].isna().sum())
        assert r.n_missing_reference == int(pairs["reference"].isna().sum())
        if r.n == 0:
            assert r.estimates["kappa"].value is None and r.estimates["accuracy"].value is None
            continue
        tn, fp, fn, tp = confusion_matrix(ref, pred, labels=[0, 1]).ravel()
        assert (r.tp, r.fp, r.fn, r.tn) == (tp, fp, fn, tn)
        assert r.estimates["accuracy"].value == pytest.approx(accuracy_score(ref, pred))
        if tp + fp:
            assert r.estimates["precision"].value == pytest.approx(precision_score(ref, pred))
        else:
            assert r.estimates["precision"].value is None
        if tp + fn:
            assert r.estimates["recall"].value == pytest.approx(recall_score(ref, pred))
            assert r.estimates["fnr"].value == pytest.approx(1 - recall_score(ref, pred))
        if fp + tn:
            assert r.estimates["fpr"].value == pytest.approx(fp / (fp + tn))
            assert r.estimates["specificity"].value == pytest.approx(
                recall_score(ref, pred, pos_label=0)
            )
        else:
            assert r.estimates["fpr"].value is None and r.estimates["specificity"].value is None
        if 2 * tp + fp + fn:
            assert r.estimates["f1"].value == pytest.approx(f1_score(ref, pred))
        one_class = len(set(pred)) < 2 or len(set(ref)) < 2
        if one_class:
            assert r.estimates["mcc"].value is None
        else:
            assert r.estimates["mcc"].value == pytest.approx(matthews_corrcoef(ref, pred))
        sk_kappa = cohen_kappa_score(ref, pred)
        if math.isnan(sk_kappa):
            assert r.estimates["kappa"].value is None
        else:
            assert r.estimates["kappa"].value == pytest.approx(sk_kappa)
            table2x2 = np.array([[tp, fn], [fp, tn]])
            assert r.estimates["kappa"].value == pytest.approx(cohens_kappa(table2x2).kappa)
        # Gwet's AC1 (no library): p_a and pi from the table, p_e = 2 pi (1 - pi)
        p_a = (tp + tn) / r.n
        pi = (2 * tp + fp + fn) / (2 * r.n)
        assert r.estimates["ac1"].value == pytest.approx(
            (p_a - 2 * pi * (1 - pi)) / (1 - 2 * pi * (1 - pi))
        )
        checked += 1
    assert checked > 60


def test_mirror_intervals_equal_binary_report(bench, mirror_records) -> None:
    """The batched bootstrap gives exactly `lib.metrics.binary_report`'s intervals."""
    table = with_uv_threshold(bench.verdicts, 0.65)
    sample = mirror_records[::4] + [r for r in mirror_records if r.split == "all"][:6]
    for r in sample:
        pairs = A.paired_labels(table, r.verifier, r.reference, _group(r.split), r.dimension)
        report = M.binary_report(pairs["verifier"], pairs["reference"], pairs["task_id"])
        assert report["counts"]["n_clusters"] == r.n_tasks
        for name in A.ci_keys():
            expected = M.to_jsonable(report["ci"][name])
            if expected is None:
                assert r.estimates[name].ci.bounds is None
            else:
                assert r.estimates[name].ci.bounds == pytest.approx(expected, abs=1e-12), (r, name)


def test_bootstrap_is_seeded(bench) -> None:
    a = A.agreement_records(bench.verdicts, splits=[OM2W], boot=Bootstrap(300))
    b = A.agreement_records(bench.verdicts, splits=[OM2W], boot=Bootstrap(300))
    c = A.agreement_records(bench.verdicts, splits=[OM2W], boot=Bootstrap(300, 1))
    assert [r.estimates["kappa"].ci.bounds for r in a] == [
        r.estimates["kappa"].ci.bounds for r in b
    ]
    assert [r.estimates["kappa"].ci.bounds for r in a] != [
        r.estimates["kappa"].ci.bounds for r in c
    ]
    assert {r.split for r in a} == {OM2W}  # one split: no pooled records


def test_threshold_moves_only_the_process_verdict(bench) -> None:
    low = A.agreement_records(bench.verdicts, threshold=0.3, splits=[OM2W], boot=Bootstrap(100))
    high = A.agreement_records(bench.verdicts, threshold=0.9, splits=[OM2W], boot=Bootstrap(100))
    for a, b in zip(low, high, strict=True):
        if a.verifier == "uv_process":
            assert (
                a.estimates["verifier_positive_rate"].value
                > b.estimates["verifier_positive_rate"].value
            )
        else:
            assert a.estimates["kappa"].value == b.estimates["kappa"].value


def test_mirror_reviewer_band_matches_sklearn(bench) -> None:
    band = A.reviewer_band(bench.verdicts, "outcome")
    pairs = A.reviewer_pairs(bench.verdicts, "outcome")
    kappa = cohen_kappa_score(pairs["label_a"].astype(int), pairs["label_b"].astype(int))
    assert band.estimates["kappa"].value == pytest.approx(kappa)
    reviews = bench.annotations[bench.annotations["split"] == OM2W]
    per_task = reviews.groupby("task_id").size()
    assert band.n_pairs <= int((per_task * (per_task - 1) // 2).sum())
    assert band.n_tasks == int((per_task >= 2).sum())  # every om2w task has 2-3 reviewers
    low, high = band.estimates["kappa"].ci.bounds
    assert low < band.estimates["kappa"].value < high


def test_roc_matches_sklearn(bench) -> None:
    roc = A.roc_result(bench.verdicts, "final_human_process_label", [OM2W], threshold=0.6)
    pairs = A.paired_labels(bench.verdicts, "uv_process", "final_human_process_label", [OM2W])
    both = pairs.dropna(subset=["score", "reference"])
    assert roc.n == len(both)
    assert roc.auc.value == pytest.approx(roc_auc_score(both["reference"], both["score"]))
    assert roc.auc_ci.low < roc.auc.value < roc.auc_ci.high
    ref, passed = both["reference"], both["score"] >= 0.6
    point = roc.point.iloc[0]
    assert point["fpr"] == pytest.approx((passed & (ref == 0)).sum() / (ref == 0).sum())
    assert point["tpr"] == pytest.approx((passed & (ref == 1)).sum() / (ref == 1).sum())
    # the point lies on the curve (piecewise linear between the curve's vertices)
    on_curve = np.interp(point["fpr"], roc.curve["fpr"], roc.curve["tpr"])
    assert roc.curve["fpr"].is_monotonic_increasing
    assert point["tpr"] <= on_curve + 1e-9


def test_roc_against_a_reviewer_uses_the_outcome_label(bench) -> None:
    roc = A.roc_result(bench.verdicts, "Judge9", [OM2W, INTERNAL])
    judged = bench.verdicts[
        (bench.verdicts["rater"] == "Judge9") & (bench.verdicts["dimension"] == "outcome")
    ]
    assert 0 < roc.n <= len(judged)
    assert roc.auc.defined


def test_disagreements_are_the_false_positives_and_negatives(bench, mirror_records) -> None:
    r = _find(mirror_records, "all", "uv_outcome_success", "final_human_outcome_label")
    rows = A.disagreements(
        bench.verdicts,
        bench.tasks,
        "uv_outcome_success",
        "final_human_outcome_label",
        [OM2W, INTERNAL],
        "outcome",
    )
    assert (rows["verifier"] != rows["reference"]).all() and rows["verifier"].notna().all()
    assert int((rows["verifier"] == 1).sum()) == r.fp
    wrong = agreement_view.disagreements_display(rows)  # the page's wording
    counts = wrong["error"].value_counts()
    assert counts["false positive"] == r.fp and counts["false negative"] == r.fn
    assert wrong["error"].iloc[0] == "false positive"  # false positives first
    assert wrong["link"].str.match(r"Trajectory\?split=[a-z0-9_]+&task=").all()
    assert (wrong["instruction"].str.len() > 0).all()
    assert "score" not in wrong  # the outcome verdict has no score


def test_display_and_csv_frames_never_show_nan(mirror_records) -> None:
    from ui.fmt import value_with_ci

    shown = A.select(mirror_records, [OM2W, INTERNAL, "all"], "final_human_outcome_label")
    assert {r.reference for r in shown} == {
        "final_human_outcome_label",
        "final_human_process_label",
    }
    display = agreement_view.display_frame(shown, value_with_ci)
    text = display.astype(str).to_string()
    assert "nan" not in text.lower()
    assert "undefined (n = 0" in text  # om2w_judge on internal
    assert display.columns[:5].tolist() == ["split", "verifier", "reference", "n", "kappa"]
    csv = agreement_view.csv_frame(shown)
    assert {"kappa", "kappa_ci_low", "kappa_ci_high", "undefined", "ci_method"} <= set(csv)
    assert csv["ci_method"].str.contains("2000 resamples, seed 0").all()


# ---------------------------------------------------------------------------------------
# The headless report
# ---------------------------------------------------------------------------------------

REQUIRED = {"split", "verifier", "reference", "n", "accuracy", "precision", "recall", "f1"}
REQUIRED |= {"fpr", "fnr", "kappa", "kappa_ci", "ac1", "mcc"}


def test_report_json_round_trip(report_json: str, bench) -> None:
    def no_nan(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    from lib import report

    out = json.loads(report_json, parse_constant=no_nan)
    records = out["agreement"]
    assert all(set(r) >= REQUIRED for r in records)
    key = (INTERNAL, "om2w_judge", "final_human_outcome_label")
    (empty,) = [r for r in records if (r["split"], r["verifier"], r["reference"]) == key]
    assert empty["kappa"] is None and empty["kappa_ci"] is None and empty["n"] == 0
    assert empty["reasons"]["kappa"].startswith("n = 0")
    # the same numbers as the page's code path (the dataset's verdicts at 0.8)
    direct = A.agreement_records(bench.verdicts)
    flat = [report.agreement_json(r) for r in direct]
    assert records[: len(direct)] == json.loads(json.dumps(M.to_jsonable(flat)))
    bands = [r for r in records if r["verifier"] == A.REVIEWER_PAIRS]
    assert {b["dimension"] for b in bands} == {"outcome", "process"}
    assert all(b["split"] == OM2W for b in bands)
    # JSON happens once, in lib.report (`agreement_json`): the record's fields in order,
    # its estimates as values then intervals, then why undefined and the settings
    names = [f.name for f in fields(A.AgreementRecord)]
    counts = names[: names.index("estimates")]
    cis = [f"{n}_ci" for n in A.ci_keys()]
    keys = [*counts, *A.value_keys(), "kappa_misleads", *cis, "reasons", "bootstrap"]
    assert all(list(r) == keys for r in records[:-2])
    assert all(list(b) == [*keys, "n_pairs", "n_reviewers"] for b in bands)
    assert list(bands[0])[-2:] == ["n_pairs", "n_reviewers"]


def test_report_markdown(report_json: str) -> None:
    from lib import report

    out = report.to_markdown(json.loads(report_json))  # what --format markdown prints
    assert "## agreement" in out
    header = next(line for line in out.splitlines() if line.startswith("| split"))
    assert "verifier" in header and "kappa" in header
    assert "undefined" in out  # om2w_judge on internal
    assert "| nan" not in out.lower()
