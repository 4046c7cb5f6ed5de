"""AppTest of the Agreement page: table, threshold, reference, links, URL, kappa note."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.table.verdicts import COLUMNS
from tests.helpers.apptest import APP, open_page, shown, texts
from tests.helpers.slack import scaled
from ui import agreement as agreement_view
from ui.state import UPLOADS_KEY

PAGE = "pages/1_Agreement.py"
OM2W = "fara7b_om2w_browserbase"


def _table(at: AppTest) -> pd.DataFrame:
    """The metrics table: the main one (the first dataframe) joined with the tables of its
    other columns (`ui.agreement.detail_tables()`), on (split, verifier)."""
    table = at.dataframe[0].value
    assert "kappa" in table
    for more in at.dataframe[1 : 1 + len(agreement_view.detail_tables())]:
        table = table.merge(more.value, on=["split", "verifier"], validate="1:1")
    return table


DETAIL = 3
"""The detail section's header: after the overview, All metrics and human parity."""


def _row(table: pd.DataFrame, split: str, verifier_prefix: str) -> pd.Series:
    hits = table[(table["split"] == split) & table["verifier"].str.startswith(verifier_prefix)]
    assert len(hits) == 1, (split, verifier_prefix)
    return hits.iloc[0]


def test_table_charts_and_defaults(use_mirror: Path) -> None:
    at = open_page(PAGE)
    assert not at.exception
    assert at.title[0].value == "Agreement with the human reviewers"
    main = at.dataframe[0].value.columns.tolist()
    assert main == ["split", "verifier", "n", "kappa", "FPR", "FNR", "accuracy"]
    table = _table(at)
    assert set(table.columns) == {  # every column of the display frame but the note (a caption)
        "split", "verifier", "reference", "n", "kappa", "FPR", "FNR", "accuracy", "AC1", "F1",
        "MCC", "precision", "recall", "specificity", "success rate (verifier / reference)",
        "missing (verifier / reference)",
    }  # fmt: skip
    assert set(table["split"]) == {"om2w", "internal", "both (pooled)"}
    outcome = table[~table["verifier"].str.contains("process")]
    assert set(outcome["reference"]) == {"Humans, final (adjudicated)"}
    assert set(table.loc[table["verifier"].str.contains("process"), "reference"]) == {
        "Humans, final process"
    }
    uv = _row(table, "om2w", "Universal Verifier, outcome")
    assert uv["n"] > 90 and uv["kappa"].count("[") == 1  # value [low, high]
    judge = _row(table, "internal", "Online-Mind2Web judge")
    assert judge["n"] == 0 and judge["kappa"].startswith("undefined (n = 0")
    assert "nan" not in table.astype(str).to_string().lower()
    charts = at.get("vega_lite_chart")
    assert len(charts) >= 3  # forest, confusion matrices, ROC
    forest = json.loads(charts[0].proto.spec)
    assert "human-human band" in json.dumps(forest)
    text = texts(at)
    assert "percentile bootstrap over tasks (" in text and "2,000 resamples, seed 0)" in text
    assert "Grey band = 95% interval of the human-human kappa" in text
    assert at.get("download_button")[0].label == "Download the metrics (CSV)"
    assert at.selectbox(key="agreement_reference").value == "final_human_outcome_label"
    assert at.slider(key="agreement_threshold").value == pytest.approx(0.8)
    assert dict(at.query_params) == {}  # defaults stay out of the URL


def test_threshold_slider_moves_the_process_metrics(use_mirror: Path) -> None:
    at = open_page(PAGE)
    before = _table(at)
    at.slider(key="agreement_threshold").set_value(0.5).run()
    assert not at.exception
    after = _table(at)
    process_before = _row(before, "om2w", "Universal Verifier, process")
    process_after = _row(after, "om2w", "Universal Verifier, process (rubric score ≥ 0.5)")
    assert (
        process_before["success rate (verifier / reference)"]
        != (process_after["success rate (verifier / reference)"])
    )
    assert process_before["kappa"] != process_after["kappa"]

    def outcome(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[~frame["verifier"].str.contains("process")]

    pd.testing.assert_frame_equal(outcome(before), outcome(after))
    assert at.query_params["threshold"] == "0.50"
    assert "score ≥ 0.50" in texts(at)  # the point on the ROC curve


def test_reference_choice(use_mirror: Path) -> None:
    at = open_page(PAGE)
    full = _row(_table(at), "om2w", "Universal Verifier, outcome")
    at.selectbox(key="agreement_reference").set_value("Judge9").run()
    assert not at.exception
    table = _table(at)
    outcome = table[~table["verifier"].str.contains("process")]
    assert set(outcome["reference"]) == {"Judge9"}
    assert _row(table, "om2w", "Universal Verifier, outcome")["n"] < full["n"]
    assert at.query_params["reference"] == "Judge9"
    assert "against Judge9" in shown(at.header[DETAIL].value)
    at.radio(key="agreement_roc").set_value("Judge9").run()  # the rubric score vs Judge9
    assert not at.exception
    assert "reference: Judge9" in texts(at)


def test_deep_link_reproduces_the_view(use_mirror: Path) -> None:
    at = open_page(
        PAGE, reference="majority_human_outcome_vote", verifier="mm_is_success", threshold="0.65"
    )
    assert not at.exception
    assert not at.warning
    assert at.selectbox(key="agreement_reference").value == "majority_human_outcome_vote"
    assert at.selectbox(key="agreement_verifier").value == "mm_is_success"
    assert at.slider(key="agreement_threshold").value == pytest.approx(0.65)
    title = "Legacy multimodal verifier against Humans, blind majority"
    assert shown(at.header[DETAIL].value) == title
    assert "(rubric score ≥ 0.65)" in _table(at)["verifier"].str.cat()


def test_bogus_url_values_are_explained(use_mirror: Path) -> None:
    at = open_page(PAGE, reference="Judge999", verifier="nonsense", threshold="high")
    assert not at.exception
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "reference **Judge999**" in warnings and "final_human_outcome_label" in warnings
    assert "verifier **nonsense**" in warnings and "uv_outcome_success" in warnings
    assert "threshold **high**" in warnings and "from 0 to 1" in warnings
    assert at.selectbox(key="agreement_reference").value == "final_human_outcome_label"
    assert at.slider(key="agreement_threshold").value == pytest.approx(0.8)
    assert len(_table(at)) > 0


def test_split_choice_and_a_reviewer_of_the_other_split(use_mirror: Path) -> None:
    at = open_page(PAGE, split=OM2W, reference="Judge3")  # Judge3 reviewed om2w only
    assert not at.exception and not at.warning
    assert set(_table(at)["split"]) == {"om2w"}
    assert at.selectbox(key="agreement_reference").value == "Judge3"
    at.sidebar.selectbox(key="split").set_value("internal").run()
    assert not at.exception
    assert set(_table(at)["split"]) == {"internal"}
    assert at.selectbox(key="agreement_reference").value == "final_human_outcome_label"
    assert "Judge3" not in at.selectbox(key="agreement_reference").options


def test_a_link_to_a_reviewer_of_another_split(use_mirror: Path) -> None:
    at = open_page(PAGE, split="internal", reference="Judge3")
    assert not at.exception
    assert "**Judge3**: that reviewer judged no task in split internal" in shown(
        at.warning[0].value
    )
    assert set(_table(at)["split"]) == {"internal"}


def test_disagreement_links_open_the_trajectory_viewer(use_mirror: Path) -> None:
    at = open_page(PAGE)
    # the tables of metrics, human parity (and per reviewer), false positives and negatives,
    # the corrected success rates
    assert len(at.dataframe) == 6 + len(agreement_view.detail_tables())
    false_pos, false_neg = at.dataframe[-3].value, at.dataframe[-2].value
    assert "corrected success [95% CI]" in at.dataframe[-1].value.columns
    for frame in (false_pos, false_neg):
        assert frame["link"].str.match(r"Trajectory\?split=[a-z0-9_]+&task=").all()
    uv = _row(_table(at), "both (pooled)", "Universal Verifier, outcome")
    assert f"): {len(false_pos)}" in texts(at)
    assert len(false_pos) + len(false_neg) > 0 and uv["n"] > 0


def _skewed_upload(bench) -> pd.DataFrame:
    """An uploaded verifier judged only on tasks where the humans mostly say failure:
    on its rows the reference is 30 failures and 2 successes, so kappa misleads."""
    final = bench.verdicts[
        (bench.verdicts["rater"] == "final_human_outcome_label")
        & (bench.verdicts["split"] == OM2W)
        & bench.verdicts["label"].notna()
    ]
    rows = pd.concat([final[final["label"] == 0].head(30), final[final["label"] == 1].head(2)])
    labels = rows["label"].astype(int).tolist()
    labels[0] = 1  # one false positive
    upload = rows.assign(rater="skewed", kind="verifier", label=labels)[COLUMNS].copy()
    upload["label"] = upload["label"].astype("Int8")
    return upload.astype({c: "string" for c in ("rater", "kind")})


def test_kappa_misleads_note(use_mirror: Path, bench) -> None:
    at = AppTest.from_file(APP, default_timeout=scaled(90))
    at.session_state[UPLOADS_KEY] = _skewed_upload(bench)
    at.query_params.update({"verifier": "skewed"})
    at.switch_page(PAGE)
    at.run()
    assert not at.exception
    info = " ".join(shown(i.value) for i in at.info)
    assert "One class dominates, so kappa misleads" in info
    assert "skewed (outcome) vs Humans, final (adjudicated) on om2w (n = 32" in info
    assert "raw agreement" in info and "AC1" in info
    detail = " ".join(shown(w.value) for w in at.warning)
    assert "kappa misleads" in detail and "reference success rate 0.06" in detail
    (notes,) = [shown(c.value) for c in at.caption if "read kappa with accuracy" in c.value]
    assert "skewed (outcome) on om2w" in notes and "Universal Verifier" not in notes
