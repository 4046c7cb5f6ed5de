"""Your verifier vs the Universal Verifier: a hand-worked table, then the mirror."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from lib import metrics
from lib.analysis import your_verifier as compare
from lib.table.verdicts import COLUMNS
from lib.uploads import predictions
from ui import your_verifier as ui_your_verifier

OM2W = "fara7b_om2w_browserbase"
NA = None
# task:        t1 t2 t3 t4 t5 t6 t7  t8
HUMAN = [1, 1, 1, 0, 0, 0, NA, 1]
UV = [1, 1, 0, 0, 0, 1, 0, NA]
YOURS = [1, 1, 1, 0, 0, 0, 1, 1]
TASKS = [f"Shop--t{i}" for i in range(1, 9)]


def _rows(rater: str, dimension: str, values: list, split: str = OM2W, tasks=TASKS) -> list[dict]:
    kind = "reference" if rater.startswith("final_") else "verifier"
    return [
        {"split": split, "task_id": t, "rater": rater, "kind": kind, "dimension": dimension}
        | {"label": v}
        for t, v in zip(tasks, values, strict=True)
    ]


def _table() -> pd.DataFrame:
    rows = _rows("final_human_outcome_label", "outcome", HUMAN)
    rows += _rows("uv_outcome_success", "outcome", UV)
    rows += _rows("mine:x", "outcome", YOURS)
    rows += _rows("final_human_process_label", "process", [1, 0, 1, 0, 0, 0, 1, 1])
    rows += _rows("uv_process", "process", [1, 1, 1, 0, 0, 0, 1, 1])
    rows += _rows("mine:x", "process", [1, 0, 1, 0, 0, 1, 1, NA])
    # internal: the UV and humans only; your verifier does not cover it
    rows += _rows("uv_outcome_success", "outcome", [1, 0], "internal", ["fam_1", "fam_2"])
    rows += _rows("final_human_outcome_label", "outcome", [1, 1], "internal", ["fam_1", "fam_2"])
    return predictions.typed_verdicts(pd.DataFrame(rows, columns=COLUMNS))


def test_hand_worked_paired_differences() -> None:
    (comp,) = compare.compare(_table(), "mine:x")  # internal is skipped: not covered
    assert comp.split == OM2W
    assert comp.n_yours == 8
    assert comp.n_paired == 6  # t7 has no human label, t8 no UV label
    assert comp.n_disagree == 3  # t3, t6, t7
    kappa, fpr, fnr = comp.diffs["kappa"], comp.diffs["fpr"], comp.diffs["fnr"]
    # UV on t1..t6: tp 2, fn 1, tn 2, fp 1 -> FPR = FNR = 1/3, kappa = (4/6 - 1/2) / (1/2)
    assert kappa.b.value == pytest.approx(1 / 3)
    assert kappa.b.value == pytest.approx(cohen_kappa_score(HUMAN[:6], UV[:6]))
    assert kappa.a.value == pytest.approx(1.0)
    assert kappa.diff.value == pytest.approx(2 / 3)
    assert fpr.diff.value == pytest.approx(-1 / 3)
    assert fnr.diff.value == pytest.approx(-1 / 3)


def test_interval_is_the_paired_task_bootstrap_with_seed_0() -> None:
    (comp,) = compare.compare(_table(), "mine:x")
    h = np.array(HUMAN[:6], float)
    expected = metrics.paired_bootstrap_diff(
        np.array(YOURS[:6], float), h, np.array(UV[:6], float), h, TASKS[:6], "kappa",
        metrics.Bootstrap(2000, 0),
    )  # fmt: skip
    assert comp.diffs["kappa"].ci == expected.ci
    assert comp.diffs["kappa"].ci.n_resamples == 2000
    low, high = comp.diffs["kappa"].ci.bounds
    assert low <= comp.diffs["kappa"].diff.value <= high


def test_process_dimension_uses_the_rubric_verdict_and_the_process_label() -> None:
    (comp,) = compare.compare(_table(), "mine:x", "process")
    # yours vs human on t1..t7 (t8 has no label of yours): t2 and t6 wrong
    d = comp.diffs["kappa"]
    assert d.n == 7
    human, uv, yours = [1, 0, 1, 0, 0, 0, 1], [1, 1, 1, 0, 0, 0, 1], [1, 0, 1, 0, 0, 1, 1]
    assert d.a.value == pytest.approx(cohen_kappa_score(human, yours))
    assert d.b.value == pytest.approx(cohen_kappa_score(human, uv))
    assert compare.dimensions(_table(), "mine:x") == ["outcome", "process"]


def test_disagreements_say_who_is_closer_and_link_to_the_viewer() -> None:
    rows = compare.disagreements(_table(), "mine:x")
    assert rows["closer"].tolist() == ["yours", "yours", "unknown"]
    assert (rows["yours"] != rows["uv"]).all()
    gaps = ui_your_verifier.disagreements_display(rows)  # the page's wording
    assert gaps["task"].tolist() == ["Shop--t3", "Shop--t6", "Shop--t7"]
    assert gaps["closer to humans"].tolist() == ["yours", "yours", "unknown"]
    assert gaps["humans"].tolist() == ["success", "failure", "missing"]
    assert gaps["split"].unique().tolist() == ["om2w"]
    assert gaps["link"].iloc[0] == f"Trajectory?split={OM2W}&task=Shop--t3"


def test_split_filter_and_an_uncovered_split() -> None:
    assert compare.compare(_table(), "mine:x", splits=["internal"]) == []
    assert compare.disagreements(_table(), "mine:x", splits=["internal"]).empty
    assert compare.agreement(_table(), "mine:x", splits=["internal"]) == []


def test_agreement_is_the_agreement_pages_record_against_the_humans() -> None:
    (record,) = compare.agreement(_table(), "mine:x")
    assert (record.split, record.reference) == (OM2W, "final_human_outcome_label")
    assert record.n == 7  # t7 lacks a human label
    assert record.n_excluded == 1
    assert record.estimates["kappa"].value == pytest.approx(1.0)
    assert record.bootstrap.seed == 0 and record.bootstrap.n_resamples == 2000
    (process,) = compare.agreement(_table(), "mine:x", "process")
    assert process.reference == "final_human_process_label"
    assert process.n == 7


def test_records_are_strict_json() -> None:
    from lib import report  # the report flattens the comparisons (JSON happens there only)

    records = report.your_verifier_json(_table(), "mine:x", "outcome")
    assert [r["metric"] for r in records] == ["kappa", "fpr", "fnr"]
    assert records[0]["diff"] == pytest.approx(2 / 3)
    assert records[0]["baseline"] == "uv_outcome_success"
    assert records[0]["diff_low"] <= records[0]["diff"] <= records[0]["diff_high"]
    assert records[0]["reasons"] == {}
    json.dumps(records, allow_nan=False)


def test_on_the_mirror_sample(bench) -> None:
    sample = bench.folder / "sample_predictions.csv"
    upload = predictions.parse_predictions(sample.read_bytes(), sample.name, bench.tasks)
    table = pd.concat([bench.verdicts, upload.verdicts], ignore_index=True)
    comps = compare.compare(table, "mine:my_verifier_v1")
    assert [c.split for c in comps] == [OM2W, "internal"]
    for comp in comps:
        assert 0 < comp.n_paired <= comp.n_yours
        assert all(d.diff.defined and d.ci.defined for d in comp.diffs.values())
    gaps = compare.disagreements(table, "mine:my_verifier_v1")
    assert len(gaps) == sum(c.n_disagree for c in comps) > 0


def test_agreement_numbers_match_the_agreement_page(bench) -> None:
    from lib.analysis import agreement

    sample = bench.folder / "sample_predictions.csv"
    upload = predictions.parse_predictions(sample.read_bytes(), sample.name, bench.tasks)
    table = pd.concat([bench.verdicts, upload.verdicts], ignore_index=True)
    mine = compare.agreement(table, "mine:my_verifier_v2", "outcome", pooled=True)
    full = [
        r
        for r in agreement.agreement_records(table)
        if r.verifier == "mine:my_verifier_v2" and r.reference == "final_human_outcome_label"
    ]
    assert [r.split for r in mine] == [OM2W, "internal", "all"]
    assert mine == full
