"""Every interval caption says the unit and the number of clusters of the result it
describes, under `?cluster=site` and each split: never the sidebar's count (issue 21).

The expected numbers are counted here from the rows themselves (tasks, websites/families
with a complete row), not read back from the result objects the captions use. Agreement,
Judges and Slices are checked exactly, caption by caption, under both units and each
split (the table, chart, detail and ROC captions; the pair, reviewer-profile and panel
captions; the overall figure, the context caption and each website's slice).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lib import report
from lib.analysis import shifts
from lib.table import clusters as C
from lib.table.verdicts import rater_title
from lib.vocab import Bootstrap, short_split
from tests.helpers.apptest import open_page, shown, texts

OM2W = "fara7b_om2w_browserbase"
METHOD = re.compile(
    r"percentile bootstrap over (tasks|websites/families) \(([\d,]+)(?:–([\d,]+))? clusters"
)
PAGES = {  # Agreement, Judges and Slices: the exact checks at the end of this file
    "pages/3_Shifts.py": {},
    "pages/5_Your_verifier.py": {},
}


def _chosen(split: str) -> list[str]:
    """The splits a `?split=` value selects (``all``: both)."""
    return [OM2W, "internal"] if split == "all" else [split]


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
    splits = _chosen(split)
    tasks = bench.tasks[bench.tasks["split"].astype(str).isin(splits)]
    existing = _sites(tasks["task_id"])
    methods = _methods(texts(at))
    for unit, low, high in methods:
        assert unit == "websites/families"
        # a count no result of this selection can have was taken from somewhere else
        assert 0 <= low <= high <= existing and high >= 1, (page, split, low, high, existing)
    if page != "pages/5_Your_verifier.py" and not (page.endswith("Shifts.py") and split != OM2W):
        assert methods, f"{page} {split}: no interval caption found"


@pytest.mark.parametrize("unit", ["site", "task"])
def test_shifts_page_says_tasks_and_sites_of_its_own_rows(
    use_mirror: Path, bench, unit: str
) -> None:
    at = open_page("pages/3_Shifts.py", split=OM2W, cluster=unit)
    assert not at.exception
    paired = shifts.paired_reviews(bench.verdicts, bench.annotations, [OM2W])
    rows = paired[paired["dimension"] == "outcome"]
    used = rows[rows[["blind", "informed", "shown"]].notna().all(axis=1)]
    n_tasks = used["task_id"].nunique()
    n_units = C.n_clusters([str(i) for i in used["task_id"]], unit)
    if unit == "site":
        assert n_units < n_tasks  # the demo has websites with several tasks: the bug showed
    text = texts(at)
    assert f"n = {len(used)} reviews on {n_tasks} tasks" in text
    pairs = shifts.reviewer_pairs(paired, "outcome")
    labels = ["blind_a", "blind_b", "informed_a", "informed_b"]
    pair_ids = pairs.loc[pairs[labels].notna().all(axis=1), "task_id"]
    pair_units = C.n_clusters([str(i) for i in pair_ids], unit)
    low, high = min(n_units, pair_units), max(n_units, pair_units)
    counts = f"{low:,}" if low == high else f"{low:,}–{high:,}"
    counts += " clusters per comparison"
    words = "websites/families" if unit == "site" else "tasks"
    assert f"percentile bootstrap over {words} ({counts}" in text, [
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


# --------------------------------------------------------------------------- exact counts
# Agreement, Judges and Slices under each unit and each split: every interval caption's
# n and cluster counts equal those of the rows behind it, counted here from the verdict
# table and `lib.table.clusters` alone.

FINAL = {"outcome": "final_human_outcome_label", "process": "final_human_process_label"}
UV = {"outcome": "uv_outcome_success", "process": "uv_process"}
SPLITS = [OM2W, "internal", "all"]
COUNTS = re.compile(r"\(([\d,]+)(?:–([\d,]+))? clusters")


def _labelled(table, rater: str, dimension: str, splits) -> set[str]:
    """Task ids where ``rater`` has a 1/0 label of ``dimension`` in ``splits``."""
    rows = table[
        (table["rater"] == rater)
        & (table["dimension"] == dimension)
        & table["split"].astype(str).isin(splits)
        & table["label"].notna()
    ]
    return set(rows["task_id"].astype(str))


def _count(ids, unit: str) -> int:
    return C.n_clusters(sorted(ids), unit) if ids else 0


def _said(text: str) -> tuple[int, int]:
    """The (low, high) cluster counts one caption states."""
    found = COUNTS.findall(text)
    assert len(found) == 1, text
    low, high = found[0]
    return int(low.replace(",", "")), int((high or low).replace(",", ""))


def _captions(at, needle: str) -> list[str]:
    return [shown(c.value) for c in at.caption if needle in shown(c.value)]


def _span(counts) -> tuple[int, int]:
    """The span a caption states: a comparison with no cluster is undefined and left out
    (issue 30: "0–254 clusters per comparison")."""
    counts = [c for c in counts if c > 0]
    return min(counts), max(counts)


@pytest.mark.parametrize("unit", ["site", "task"])
@pytest.mark.parametrize("split", SPLITS)
def test_agreement_captions_state_their_results_n_and_clusters(
    use_mirror: Path, bench, split: str, unit: str
) -> None:
    at = open_page("pages/1_Agreement.py", split=split, cluster=unit)
    assert not at.exception
    table = bench.verdicts
    groups = [OM2W, "internal", "all"] if split == "all" else [split]
    titles = {rater_title(r): r for r in table["rater"].unique()}
    metrics = at.dataframe[0].value  # the metrics table, one row per record shown
    expected, drawn, details = [], [], {}
    long = {short_split(s): s for s in groups} | {"both (pooled)": "all"}
    for row in metrics.itertuples():
        verifier = titles[row.verifier]
        dimension = "process" if verifier == UV["process"] else "outcome"
        group = long[row.split]
        splits = _chosen(group)
        both = _labelled(table, verifier, dimension, splits) & _labelled(
            table, FINAL[dimension], dimension, splits
        )
        assert int(row.n) == len(both), (row.verifier, row.split)
        expected.append(_count(both, unit))
        if not (row.kappa.startswith("undefined") and row.FPR.startswith("undefined")):
            drawn.append(_count(both, unit))
        if verifier == UV["outcome"]:  # the detail below the chart: one caption per group
            details[row.split] = (len(both), _count(both, unit))
    assert {long[r.split] for r in metrics.itertuples()} == set(groups)
    # the table's caption: exactly the span of its rows' clusters
    (table_caption,) = _captions(at, "n = tasks where both sides")
    assert _said(table_caption) == _span(expected)
    # the chart's caption: its records and the reviewers' band (pairs of blind reviewers
    # on the same om2w task)
    blind = table[(table["stage"] == "blind") & (table["split"].astype(str) == OM2W)]
    band = []
    for dimension in ("outcome", "process"):
        rows = blind[(blind["dimension"] == dimension) & blind["label"].notna()]
        per_task = rows.groupby(rows["task_id"].astype(str))["rater"].nunique()
        band.append(_count(set(per_task[per_task >= 2].index), unit))
    # (a record the chart does not draw, kappa and FPR undefined, is not counted)
    (chart_caption,) = [c for c in _captions(at, "intervals: percentile") if c.startswith("95%")]
    assert _said(chart_caption) == _span([*drawn, *band])
    words = "websites/families" if unit == "site" else "tasks"
    for title, (n, k) in details.items():
        (caption,) = [c for c in _captions(at, f"· split: {title} · ") if c.startswith("kappa")]
        assert f"n = {n} tasks" in caption and caption.endswith(f" · {k:,} {words} resampled")
    # ROC: the Universal Verifier's rubric score against the final process label
    splits = _chosen(split)
    scored = table[
        (table["rater"] == UV["process"])
        & table["split"].astype(str).isin(splits)
        & table["score"].notna()
    ]
    roc_ids = set(scored["task_id"].astype(str)) & _labelled(
        table, FINAL["process"], "process", splits
    )
    (roc_caption,) = _captions(at, "reference: Humans, final process")
    assert f"n = {len(roc_ids)} tasks" in roc_caption
    assert _said(roc_caption) == (_count(roc_ids, unit),) * 2


@pytest.mark.parametrize("unit", ["site", "task"])
@pytest.mark.parametrize("split", SPLITS)
def test_judges_captions_state_their_results_n_and_clusters(
    use_mirror: Path, bench, split: str, unit: str
) -> None:
    at = open_page("pages/2_Judges.py", split=split, cluster=unit)
    assert not at.exception
    table = bench.verdicts
    splits = _chosen(split)
    # the chosen pair
    a = at.selectbox(key="judges_a").value
    b = at.selectbox(key="judges_b").value
    both = _labelled(table, a, "outcome", splits) & _labelled(table, b, "outcome", splits)
    (pair_n,) = _captions(at, "excluded: a label missing")
    assert pair_n.startswith(f"n = {len(both)} tasks")
    (pair_method,) = [c for c in _captions(at, "intervals: percentile") if c.startswith("95%")]
    assert _said(pair_method) == (_count(both, unit),) * 2
    # reviewer profiles: each reviewer x stage against the final label and the UV
    profiles = next(d.value for d in at.dataframe if "n (final)" in d.value.columns)
    counts = []
    for row in profiles.itertuples():
        rater = row.reviewer if row.stage == "blind" else f"{row.reviewer}@informed"
        mine = _labelled(table, rater, "outcome", splits)
        for other, n in ((FINAL["outcome"], row[7]), (UV["outcome"], row[9])):
            shared = mine & _labelled(table, other, "outcome", splits)
            assert int(n) == len(shared), (rater, other)
            counts.append(_count(shared, unit))
    (profile_caption,) = _captions(at, "so kappa with it is not independent")
    assert _said(profile_caption) == _span(counts)
    # the panel: tasks with at least two labels of a stage
    humans = table[
        (table["kind"] == "human")
        & (table["dimension"] == "outcome")
        & table["split"].astype(str).isin(splits)
        & table["label"].notna()
    ]
    panel = next(d.value for d in at.dataframe if "tasks (n)" in d.value.columns)
    (panel_caption,) = _captions(at, "All reviewers' labels of a stage as one panel")
    panel_counts = []
    for stage in panel["stage"].unique():
        rows = humans[humans["stage"] == stage]
        per_task = rows.groupby(rows["task_id"].astype(str))["annotator"].nunique()
        ids = set(per_task[per_task >= 2].index)
        assert set(panel.loc[panel["stage"] == stage, "tasks (n)"]) == {len(ids)}
        panel_counts.append(_count(ids, unit))
    if any(panel_counts):
        assert _said(panel_caption) == _span(panel_counts)
    else:
        assert "clusters" not in panel_caption


@pytest.mark.parametrize("unit", ["site", "task"])
@pytest.mark.parametrize("split", SPLITS)
def test_slices_captions_state_their_results_n_and_clusters(
    use_mirror: Path, bench, split: str, unit: str
) -> None:
    at = open_page("pages/6_Slices.py", split=split, cluster=unit)
    assert not at.exception
    table = bench.verdicts
    splits = _chosen(split)
    both = _labelled(table, UV["outcome"], "outcome", splits) & _labelled(
        table, FINAL["outcome"], "outcome", splits
    )
    # the overall figure (the metric) and its caption
    (overall,) = _captions(at, "Overall kappa:")
    assert f"n = {len(both)} tasks" in overall
    assert _said(overall) == (_count(both, unit),) * 2
    # the context caption: the selection's n, and the span of the slices' clusters
    (context,) = _captions(at, "are left out of the chart")
    assert f"n = {len(both)} tasks with both labels" in context
    slices = next(d.value for d in at.dataframe if "clusters" in d.value.columns)
    assert _said(context) == _span(slices["clusters"])
    # each website/family slice: its own tasks, one cluster under ?cluster=site
    sites = slices[slices["slice"].str.startswith("Website / task family: ")]
    assert len(sites)
    family = {t: C.cluster_ids([t], "site")[0] for t in both}
    for row in sites.itertuples():
        name = row.slice.removeprefix("Website / task family: ")
        mine = {t for t in both if family[t] == name}
        assert int(row.n) == len(mine), name
        assert int(row.clusters) == (_count(mine, unit)), name


FEW = re.compile(r"(?:Only|As few as) ([\d,]+) clusters \(fewer than 20\): the percentile")


@pytest.mark.parametrize("unit", ["site", "task"])
@pytest.mark.parametrize(
    "page",
    ["pages/1_Agreement.py", "pages/2_Judges.py", "pages/3_Shifts.py", "pages/6_Slices.py"],
)
def test_captions_name_each_metrics_interval_and_warn_under_20_clusters(
    use_mirror: Path, page: str, unit: str
) -> None:
    """Issue 28: every interval caption says which interval each metric uses
    (Clopper-Pearson for the proportions, the percentile bootstrap for the rest), and says
    the percentile intervals are likely too narrow exactly when a comparison it covers
    resampled fewer than 20 clusters (the counts themselves are checked against the verdict
    table above)."""
    at = open_page(page, split=OM2W, cluster=unit)
    assert not at.exception
    captions = [shown(c.value) for c in at.caption if METHOD.search(shown(c.value))]
    assert captions, page
    for text in captions:
        assert "FPR, FNR: Clopper-Pearson interval on the effective n" in text, text
        assert "kappa, AC1, F1, MCC, AUC and differences: the percentile bootstrap" in text
        ((_, low, high),) = _methods(text)
        few = [int(k.replace(",", "")) for k in FEW.findall(text)]
        if low >= 20:
            assert not few, text
        elif low >= 2:
            assert few == [low], text
        else:  # 0 or 1 cluster: no interval; the warning names the smallest count >= 2
            assert not few or (few[0] >= 2 and few[0] < 20 and few[0] <= high), text
    if unit == "site" and page.endswith("Slices.py"):  # slices of a few websites: warned
        assert any(FEW.search(text) for text in captions), captions
