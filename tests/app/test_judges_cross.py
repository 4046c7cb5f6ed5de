"""Judges across dimensions (issue 29): rater A on one dimension, B on the other, in
`lib.analysis.judges.pair_detail` and on the page (`?b_dimension=`), checked against scikit-learn
on labels rebuilt from the raw task frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from lib.analysis import judges as J
from tests.helpers.apptest import open_page, texts

PAGE = "pages/2_Judges.py"
OM2W = "fara7b_om2w_browserbase"


def _uv_process_vs_outcome(bench) -> tuple[np.ndarray, np.ndarray]:
    t = bench.tasks[bench.tasks["split"] == OM2W]
    score = t["uv_rubric_score"].to_numpy(float)
    final = t["final_human_outcome_label"].astype("Float64").to_numpy(float, na_value=np.nan)
    uv = np.where(np.isnan(score), np.nan, score >= 0.8)
    keep = ~(np.isnan(uv) | np.isnan(final))
    return uv[keep].astype(int), final[keep].astype(int)


def test_the_verifiers_process_against_the_humans_outcome(bench) -> None:
    d = J.pair_detail(
        bench.verdicts, [OM2W], "process", "uv_process", "final_human_outcome_label",
        dimension_b="outcome",
    )  # fmt: skip
    uv, final = _uv_process_vs_outcome(bench)
    assert d.crossed and d.b_dimension == "outcome"
    assert d.n == len(uv) > 50
    assert d.estimates["kappa"].value == pytest.approx(cohen_kappa_score(uv, final), abs=1e-9)
    assert d.table == [
        [int(((uv == 1) & (final == 1)).sum()), int(((uv == 1) & (final == 0)).sum())],
        [int(((uv == 0) & (final == 1)).sum()), int(((uv == 0) & (final == 0)).sum())],
    ]


def test_one_reviewer_process_against_their_own_outcome(bench) -> None:
    a = bench.annotations[bench.annotations["split"] == OM2W]
    judge = a["annotator"].value_counts().index[0]
    mine = a[a["annotator"] == judge]
    label = {"correct": 1, "incorrect": 0}
    p = mine["human_judgement_process"].str.strip().str.lower().map(label)
    o = mine["human_judgement_outcome"].str.strip().str.lower().map(label)
    keep = p.notna() & o.notna()
    d = J.pair_detail(bench.verdicts, [OM2W], "process", judge, judge, dimension_b="outcome")
    assert d.n == int(keep.sum())
    want = cohen_kappa_score(p[keep].astype(int), o[keep].astype(int))
    if d.estimates["kappa"].value is not None:
        assert d.estimates["kappa"].value == pytest.approx(want, abs=1e-9)


def test_same_dimension_is_not_crossed(bench) -> None:
    d = J.pair_detail(
        bench.verdicts, [OM2W], "outcome", "uv_outcome_success", "final_human_outcome_label",
        dimension_b="outcome",
    )  # fmt: skip
    assert not d.crossed and d.dimension_b is None


def test_the_page_keeps_a_pair_across_dimensions(use_mirror: Path, bench) -> None:
    at = open_page(
        PAGE, split=OM2W, dimension="process", a="uv_process",
        b_dimension="outcome", b="final_human_outcome_label",
    )  # fmt: skip
    assert not at.exception
    assert at.radio(key="judges_b_dimension").value == "outcome"
    assert at.selectbox(key="judges_b").value == "final_human_outcome_label"
    uv, final = _uv_process_vs_outcome(bench)
    shared = next(m.value for m in at.metric if m.label == "Shared tasks (n)")
    assert shared == str(len(uv))
    assert "A on process, B on outcome" in texts(at)
    kappa = next(m.value for m in at.metric if m.label == "Cohen's kappa")
    assert kappa == f"{cohen_kappa_score(uv, final):.2f}"
    assert at.query_params["b_dimension"] == "outcome"


def test_a_change_of_dimension_puts_b_back_on_it(use_mirror: Path) -> None:
    at = open_page(PAGE, split=OM2W, dimension="process", b_dimension="outcome")
    assert at.radio(key="judges_b_dimension").value == "outcome"
    at.radio(key="judges_dimension").set_value("outcome").run()
    assert not at.exception
    assert at.radio(key="judges_b_dimension").value == "outcome"
    at.radio(key="judges_dimension").set_value("process").run()
    assert at.radio(key="judges_b_dimension").value == "process"
    assert "b_dimension" not in at.query_params


def test_a_bogus_b_dimension_is_explained(use_mirror: Path) -> None:
    at = open_page(PAGE, split=OM2W, b_dimension="sideways")
    assert not at.exception
    warning = "\n".join(str(w.value) for w in at.warning)
    assert "rater B's dimension" in warning and "sideways" in warning
    assert at.radio(key="judges_b_dimension").value == "outcome"
