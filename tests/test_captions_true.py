"""Every interval caption says the unit and the number of clusters of the result it
describes, under `?cluster=site` and each split: never the sidebar's count (issue 21).

The expected numbers are counted here from the rows themselves (tasks, websites/families
with a complete row), not read back from the result objects the captions use.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import streamlit as st

from lib import clusters as C
from lib import report, shifts
from lib.vocab import Bootstrap
from tests.apptest import open_page, texts

OM2W = "fara7b_om2w_browserbase"
METHOD = re.compile(
    r"percentile bootstrap over (tasks|websites/families) \(([\d,]+)(?:–([\d,]+))? clusters"
)
PAGES = {
    "pages/1_Agreement.py": {},
    "pages/2_Judges.py": {},
    "pages/3_Shifts.py": {},
    "pages/5_Your_verifier.py": {},
    "pages/6_Slices.py": {"slice": "length"},
}


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield


def _sites(ids) -> int:
    return C.n_clusters([str(i) for i in ids], "site")


def _methods(text: str) -> list[tuple[str, int, int]]:
    return [
        (unit, int(low.replace(",", "")), int((high or low).replace(",", "")))
        for unit, low, high in METHOD.findall(text)
    ]


@pytest.mark.parametrize("split", [OM2W, "internal", "all"])
@pytest.mark.parametrize("page", list(PAGES))
def test_captions_count_the_clusters_their_results_resampled(
    use_mirror: Path, bench, page: str, split: str
) -> None:
    at = open_page(page, split=split, cluster="site", **PAGES[page])
    assert not at.exception
    splits = [OM2W, "internal"] if split == "all" else [split]
    tasks = bench.tasks[bench.tasks["split"].astype(str).isin(splits)]
    existing = _sites(tasks["task_id"])
    methods = _methods(texts(at))
    for unit, low, high in methods:
        assert unit == "websites/families"
        # a count no result of this selection can have was taken from somewhere else
        assert 0 <= low <= high <= existing and high >= 1, (page, split, low, high, existing)
    if page != "pages/5_Your_verifier.py" and not (page.endswith("Shifts.py") and split != OM2W):
        assert methods, f"{page} {split}: no interval caption found"


def test_shifts_page_says_tasks_and_sites_of_its_own_rows(use_mirror: Path, bench) -> None:
    at = open_page("pages/3_Shifts.py", split=OM2W, cluster="site")
    assert not at.exception
    paired = shifts.paired_reviews(bench.verdicts, bench.annotations, [OM2W])
    rows = paired[paired["dimension"] == "outcome"]
    used = rows[rows[["blind", "informed", "shown"]].notna().all(axis=1)]
    n_tasks = used["task_id"].nunique()
    n_sites = _sites(used["task_id"])
    assert n_sites < n_tasks  # the demo has websites with several tasks: the bug showed
    text = texts(at)
    assert f"n = {len(used)} reviews on {n_tasks} tasks" in text
    pairs = shifts.reviewer_pairs(paired, "outcome")
    labels = ["blind_a", "blind_b", "informed_a", "informed_b"]
    pair_sites = _sites(pairs.loc[pairs[labels].notna().all(axis=1), "task_id"])
    low, high = min(n_sites, pair_sites), max(n_sites, pair_sites)
    counts = f"{low:,}" if low == high else f"{low:,}–{high:,}"
    counts += " clusters per comparison"
    assert f"percentile bootstrap over websites/families ({counts}" in text, [
        c.value for c in at.caption if "bootstrap" in c.value
    ]


def test_shifts_report_says_its_unit_and_counts(bench) -> None:
    records = [report.shift_json(r) for r in shifts.report_records(bench, Bootstrap(unit="site"))]
    assert records
    paired = shifts.paired_reviews(bench.verdicts, bench.annotations)
    for r in records:
        rows = paired[(paired["split"] == r["split"]) & (paired["dimension"] == r["dimension"])]
        if r["annotator"] != shifts.ALL:
            rows = rows[rows["annotator"] == r["annotator"]]
        used = rows[rows[["blind", "informed", "shown"]].notna().all(axis=1)]
        assert r["n_tasks"] == used["task_id"].nunique()
        assert r["ci_method"].startswith(
            f"paired percentile bootstrap over websites/families ({_sites(used['task_id'])} "
            "clusters), 2000 resamples, seed 0"
        )
    default = [report.shift_json(r) for r in shifts.report_records(bench)]
    assert all("over tasks (" in r["ci_method"] for r in default)


def _range(counts: set[int]) -> str:
    low, high = min(counts), max(counts)
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def test_your_verifier_captions_count_their_own_clusters(use_mirror: Path, bench) -> None:
    """The upload page's captions (once hard-coded "over tasks ... 2,000, seed 0")."""
    at = open_page("pages/5_Your_verifier.py", cluster="site")
    data = (use_mirror / "sample_predictions.csv").read_bytes()
    at.file_uploader(key="predictions_file").set_value(("p.csv", data, "text/csv"))
    at = at.run()
    assert not at.exception
    v = bench.verdicts
    labelled = v[v["label"].notna()]

    def tasks_of(rater: str, split: str) -> set[str]:
        rows = labelled[(labelled["rater"] == rater) & (labelled["split"] == split)]
        return set(rows["task_id"].astype(str))

    # the sample labels every task, so "yours" adds no restriction
    human = {s: tasks_of("final_human_outcome_label", s) for s in (OM2W, "internal")}
    uv = {s: tasks_of("uv_outcome_success", s) for s in (OM2W, "internal")}
    agreement = {_sites(human[s]) for s in human}
    paired = {_sites(human[s] & uv[s]) for s in human}
    text = texts(at)
    for counts in (agreement, paired):
        assert f"bootstrap over websites/families ({_range(counts)} clusters per comparison" in (
            text
        ), counts
