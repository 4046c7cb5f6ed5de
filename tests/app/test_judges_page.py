"""AppTest of the Judges page: deep links, pair choice, the minimum-n control, degenerate pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from streamlit import dataframe_util

from lib.analysis import judges as J
from tests.helpers.apptest import open_page, texts

PAGE = "pages/2_Judges.py"


def heatmap_frame(at) -> pd.DataFrame:
    """The data behind the first chart of the page (the kappa heatmap)."""
    chart = at.get("vega_lite_chart")[0]
    spec = json.loads(chart.proto.spec)
    assert spec["params"][0]["name"] == "pair"
    frames = [
        dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets
    ]
    return next(f for f in frames if "status" in f.columns)


def table_caption(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Table: both 1"))


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_default_pair_opens_without_error(use_mirror: Path, bench) -> None:
    at = open_page(PAGE)
    assert not at.exception
    assert at.title[0].value == "Judges"
    assert at.selectbox(key="judges_a").value == "uv_outcome_success"
    assert at.selectbox(key="judges_b").value == "final_human_outcome_label"
    d = J.pair_detail(
        bench.verdicts, J.SPLITS, "outcome", "uv_outcome_success", "final_human_outcome_label"
    )
    assert metric(at, "Shared tasks (n)") == str(d.n)
    assert metric(at, "Cohen's kappa") == f"{d.estimates['kappa'].value:.2f}"
    c = d.confusion
    assert (
        f"both 1 = {c.tp} · A 1, B 0 = {c.fp} · A 0, B 1 = {c.fn} · both 0 = {c.tn}"
        in table_caption(at)
    )
    assert "2,000 resamples" in texts(at)
    assert at.query_params["a"] == "uv_outcome_success"
    heat = heatmap_frame(at)
    assert set(heat["rater_a"]) == set(J.raters(bench.verdicts, J.SPLITS, "outcome"))
    off = at.dataframe[0].value
    assert len(off) == c.fp + c.fn
    assert off["task"].str.contains(r"^Trajectory\?split=.+&task=").all()


def test_choosing_a_pair_changes_the_matrix(use_mirror: Path, bench) -> None:
    at = open_page(PAGE)
    before = table_caption(at)
    at.selectbox(key="judges_a").set_value("Judge3").run()
    assert not at.exception
    after = table_caption(at)
    assert after != before
    expected = J.pair_detail(
        bench.verdicts, J.SPLITS, "outcome", "Judge3", "final_human_outcome_label"
    )
    c = expected.confusion
    assert f"both 1 = {c.tp} · A 1, B 0 = {c.fp} · A 0, B 1 = {c.fn} · both 0 = {c.tn}" in after
    assert at.query_params["a"] == "Judge3"
    assert "**A = Judge3**" in texts(at)


def test_process_dimension_from_the_url(use_mirror: Path) -> None:
    at = open_page(PAGE, dimension="process")
    assert not at.exception
    assert at.radio(key="judges_dimension").value == "process"
    assert at.selectbox(key="judges_a").value == "uv_process"
    assert at.selectbox(key="judges_b").value == "final_human_process_label"
    assert "om2w_judge" not in at.selectbox(key="judges_a").options


def test_minimum_n_greys_cells(use_mirror: Path) -> None:
    at = open_page(PAGE)
    heat = heatmap_frame(at)
    assert ((heat["n"] < 10) == heat["status"].str.contains("below")).all()
    at.number_input(key="judges_min_n").set_value(100).run()
    assert not at.exception
    heat = heatmap_frame(at)
    assert ((heat["n"] < 100) == heat["status"].str.contains("below")).all()
    assert (heat["n"] < 100).sum() > (heat["n"] < 10).sum()
    assert at.query_params["min_n"] == "100"


def test_minimum_n_from_the_url(use_mirror: Path) -> None:
    at = open_page(PAGE, min_n="30")
    assert at.number_input(key="judges_min_n").value == 30
    at = open_page(PAGE, min_n="lots")
    assert not at.exception
    assert at.number_input(key="judges_min_n").value == 10
    assert "lots" in texts(at)


def test_bogus_rater_in_the_url_is_explained(use_mirror: Path) -> None:
    at = open_page(PAGE, a="Judge999", b="final_human_outcome_label", dimension="sideways")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "Judge999" in warnings and "no outcome labels" in warnings
    assert "sideways" in warnings
    assert at.selectbox(key="judges_a").value == "uv_outcome_success"
    assert at.selectbox(key="judges_b").value == "final_human_outcome_label"
    assert at.radio(key="judges_dimension").value == "outcome"


def test_a_pair_with_one_shared_task_says_undefined(use_mirror: Path, bench) -> None:
    pairs = J.pair_table(bench.verdicts, J.SPLITS, "outcome")
    one = pairs[pairs["n"] == 1].iloc[0]
    at = open_page(PAGE, a=one["rater_a"], b=one["rater_b"])
    assert not at.exception
    assert not at.warning  # both ids are valid
    assert metric(at, "Shared tasks (n)") == "1"
    assert metric(at, "Cohen's kappa") == "undefined"
    assert "n = 1" in texts(at)


def test_informed_labels_and_the_panel(use_mirror: Path) -> None:
    at = open_page(PAGE, a="Judge9@informed", b="uv_outcome_success")
    assert not at.exception
    assert "high by construction" in texts(at)
    panel = next(d.value for d in at.dataframe if "statistic" in d.value.columns)
    assert set(panel["stage"]) == {"blind", "informed"}
    assert set(panel["statistic"]) == {"Fleiss' kappa", "Krippendorff's alpha"}
    assert panel["value [95% CI]"].str.match(r"-?\d\.\d\d \[").all()
    reviewers = next(d.value for d in at.dataframe if "leniency" in d.value.columns)
    assert reviewers["reviewer"].str.match(r"Judge\d+$").all()
    assert {"blind", "informed"} == set(reviewers["stage"])


def test_internal_split_has_no_panel(use_mirror: Path) -> None:
    at = open_page(PAGE)
    at.sidebar.selectbox(key="split").set_value("internal").run()
    assert not at.exception
    assert "om2w_judge" not in at.selectbox(key="judges_a").options
    panel = next(d.value for d in at.dataframe if "statistic" in d.value.columns)
    assert panel["value [95% CI]"].str.startswith("undefined").all()
    assert (panel["tasks (n)"] == 0).all()


def test_off_diagonal_table_lists_and_filters_the_discordant_tasks(use_mirror: Path, bench) -> None:
    at = open_page(PAGE)
    d = J.pair_detail(
        bench.verdicts, J.SPLITS, "outcome", "uv_outcome_success", "final_human_outcome_label"
    )
    c = d.confusion
    table = next(t.value for t in at.dataframe if "cell" in t.value.columns)
    assert len(table) == c.fp + c.fn > 0
    assert (table["cell"] == "A 1, B 0").sum() == c.fp
    assert table["task"].str.startswith("Trajectory?").all()
    at.radio(key="judges_cell").set_value("a0b1").run()
    table = next(t.value for t in at.dataframe if "cell" in t.value.columns)
    assert len(table) == c.fn and (table["cell"] == "A 0, B 1").all()
