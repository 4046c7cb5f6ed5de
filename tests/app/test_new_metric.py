"""A new metric is one entry in `lib.metrics.registry.METRICS`: a throwaway one (balanced
accuracy) added there, and nowhere else, is computed, shown on the Agreement page (a
column of the *More columns* tables, named in the expander's label), written to the CSV
and to the headless report, with its interval. What the docs' *Add a metric* section
promises (`docs/conventions.md`)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from sklearn.metrics import balanced_accuracy_score

from lib import report
from lib.analysis import agreement as A
from lib.metrics import registry
from lib.metrics._base import div
from lib.vocab import Bootstrap
from tests.helpers.apptest import open_page
from ui import agreement as agreement_view

PAGE = "pages/1_Agreement.py"


def _balanced(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    return (div(tp, tp + fn) + div(tn, tn + fp)) / 2.0


BALANCED = registry.Metric(
    "balanced_accuracy",
    _balanced,
    "balanced accuracy",
    higher_is_better=True,
    column=len(registry.columns()),  # the next place: the last column
    undefined=lambda c: "the reference uses one class",
)


@pytest.fixture
def balanced(monkeypatch: pytest.MonkeyPatch) -> registry.Metric:
    monkeypatch.setattr(registry, "METRICS", (*registry.METRICS, BALANCED))
    st.cache_data.clear()  # the page's cached records were computed without it
    yield BALANCED
    st.cache_data.clear()


def test_it_is_computed_and_has_its_interval(balanced, bench) -> None:
    boot = Bootstrap(200)
    records = A.agreement_records(bench.verdicts, boot=boot, only_verifiers=["mm_is_success"])
    reference = A.HUMAN_REFERENCE[A.OUTCOME]
    record = next(r for r in records if r.split == "internal" and r.reference == reference)
    rows = A.paired_labels(bench.verdicts, record.verifier, record.reference, ["internal"])
    rows = rows.dropna(subset=["verifier", "reference"])
    want = balanced_accuracy_score(rows["reference"], rows["verifier"])
    estimate = record.estimates["balanced_accuracy"]
    assert estimate.value == pytest.approx(want, abs=1e-12)
    assert estimate.ci is not None and estimate.ci.method == "percentile"
    assert estimate.ci.low <= estimate.value <= estimate.ci.high
    csv = agreement_view.csv_frame([record])
    assert csv.loc[0, "balanced_accuracy"] == pytest.approx(want)
    assert {"balanced_accuracy_ci_low", "balanced_accuracy_ci_high"} <= set(csv.columns)


def test_it_is_on_the_agreement_page(balanced, use_mirror: Path) -> None:
    at = open_page(PAGE)
    assert not at.exception
    main = at.dataframe[0].value
    assert "balanced accuracy" not in main.columns  # the main table keeps its four figures
    tables = [frame.value for frame in at.dataframe[1 : 1 + len(agreement_view.detail_tables())]]
    holding = [t for t in tables if "balanced accuracy" in t.columns]
    assert len(holding) == 1
    cells = holding[0]["balanced accuracy"].astype(str)
    assert cells.str.match(r"^(0\.\d\d|1\.00) \[").any()  # a value with its interval
    assert any("balanced accuracy" in e.label for e in at.expander)


def test_it_is_in_the_report(balanced, mirror_dir: Path, monkeypatch) -> None:
    # only the Agreement section (the others do not list the two-rater metrics): seconds
    monkeypatch.setattr(report, "SECTIONS", {"agreement": report.SECTIONS["agreement"]})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report.main(["--data", str(mirror_dir), "--format", "json"]) == 0
    records = json.loads(out.getvalue())["agreement"]
    assert records and all("balanced_accuracy" in r for r in records)
    assert all("balanced_accuracy_ci" in r for r in records)
    keys = list(records[0])
    assert keys.index("balanced_accuracy") == keys.index("mcc") + 1  # after the others
    defined = [r for r in records if r["balanced_accuracy"] is not None]
    assert defined and all(0.0 <= r["balanced_accuracy"] <= 1.0 for r in defined)
    assert all(len(r["balanced_accuracy_ci"]) == 2 for r in defined if r["n"] > 20)


def test_without_it_nothing_lists_it() -> None:
    # the entry above is the only place it lives: without it, no surface knows it
    assert "balanced_accuracy" not in registry.metric_names()
    assert "balanced accuracy" not in agreement_view.more_columns_label()
