"""The Judges page's continuous-score section (issue 29): its table shows the numbers of
`lib.analysis.scores` for the page's split, threshold and cluster unit; the scatter has
one point per task with both scores and the two threshold rules; `?human_threshold=`
moves the human threshold and a bad value is explained."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from streamlit import dataframe_util

from lib.analysis import scores
from lib.vocab import Bootstrap
from tests.helpers.apptest import open_page, texts
from ui import fmt

PAGE = "pages/2_Judges.py"
OM2W = "fara7b_om2w_browserbase"


def score_table(at):
    return next(d.value for d in at.dataframe if "B (reference)" in d.value.columns)


def scatter(at) -> tuple[dict, list]:
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        frames = [
            dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data)
            for d in chart.proto.datasets
        ]
        if any("verdicts" in f.columns for f in frames):
            return spec, frames
    raise AssertionError("no score scatter on the page")


@pytest.mark.parametrize("unit", ["task", "site"])
def test_the_table_shows_the_analysis_numbers(use_mirror: Path, bench, unit: str) -> None:
    at = open_page(PAGE, split=OM2W, cluster=unit, human_threshold="0.60")
    assert not at.exception
    table = score_table(at)
    boot = Bootstrap(unit=unit)
    for comparison in scores.COMPARISONS:
        record = scores.compare(bench.verdicts, OM2W, comparison, 0.6, boot)
        rows = table[table["B (reference)"] == scores.short_sides(comparison)[1]]
        assert len(rows) == 6
        pearson = rows[rows["statistic"] == "Pearson r"].iloc[0]
        assert pearson["value [95% CI]"] == fmt.value_with_ci(record.estimates["pearson"])
        assert pearson["n"] == record.n and pearson["excluded"] == record.n_missing
        assert pearson["clusters"] == record.n_clusters
        human = rows[rows["statistic"].str.contains("human ≥ 0.6")].iloc[0]
        assert human["value [95% CI]"] == fmt.value_with_ci(
            record.estimates["kappa_human_threshold"]
        )
    assert "percentile bootstrap over " + ("tasks" if unit == "task" else "websites") in texts(at)


def test_the_scatter_is_every_task_with_both_scores(use_mirror: Path, bench) -> None:
    at = open_page(PAGE, split=OM2W, human_threshold="0.55")
    spec, frames = scatter(at)
    points = next(f for f in frames if "verdicts" in f.columns)
    t = bench.tasks[bench.tasks["split"] == OM2W]
    x = t["uv_rubric_score"].to_numpy(float)
    y = t["median_human_rubric_score_agnostic"].to_numpy(float)
    both = ~(np.isnan(x) | np.isnan(y))
    assert len(points) == int(both.sum())
    agree = (x[both] >= 0.8) == (y[both] >= 0.55)
    assert int((points["verdicts"] == "same verdict").sum()) == int(agree.sum())
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks.count("rule") == 2 and "circle" in marks
    rules = [f for f in frames if "at" in f.columns]
    assert sorted(float(v) for f in rules for v in f["at"]) == [0.55, 0.8]
    kappa = cohen_kappa_score((x[both] >= 0.8).astype(int), (y[both] >= 0.55).astype(int))
    record = scores.compare(bench.verdicts, OM2W, "uv_vs_median", 0.55)
    assert record.estimates["kappa_human_threshold"].value == pytest.approx(kappa)
    assert f"{int(both.sum())} tasks with both scores" in texts(at)


def test_internal_says_no_scores_instead_of_zero(use_mirror: Path) -> None:
    at = open_page(PAGE, split="internal")
    assert not at.exception
    assert any("reviewed without scores" in str(i.value) for i in at.info)
    table = score_table(at)
    pearson = table[table["statistic"] == "Pearson r"]
    assert (pearson["value [95% CI]"] == "undefined (n = 0)").all()


def test_a_bad_threshold_is_explained(use_mirror: Path) -> None:
    at = open_page(PAGE, split=OM2W, human_threshold="2")
    assert not at.exception
    warning = "\n".join(str(w.value) for w in at.warning)
    assert "human threshold" in warning and "not a number from 0 to 1" in warning
    assert at.slider(key="judges_human_threshold").value == pytest.approx(0.8)
