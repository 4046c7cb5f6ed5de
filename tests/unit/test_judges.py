"""Tests for lib.analysis.judges and lib.charts.judges: pair statistics against statsmodels and the
krippendorff package on the mirror, hand-built degenerate pairs, and the report records."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from lib import metrics as M
from lib.analysis import judges as J
from lib.charts import judges as C
from lib.table.verdicts import COLUMNS
from lib.vocab import Bootstrap
from ui import judges as ui_judges

OM2W = "fara7b_om2w_browserbase"
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
CASES = [([OM2W], "outcome"), ([OM2W], "process"), (["internal"], "outcome"), (J.SPLITS, "outcome")]


def direct_table(verdicts: pd.DataFrame, splits, dimension: str, a: str, b: str) -> list:
    """[[both 1, a 1 b 0], [a 0 b 1, both 0]] counted straight from the verdict rows."""
    sub = verdicts[verdicts["split"].isin(list(splits)) & (verdicts["dimension"] == dimension)]
    keys = ["split", "task_id"]
    left = sub.loc[sub["rater"] == a, [*keys, "label"]]
    right = sub.loc[sub["rater"] == b, [*keys, "label"]]
    both = left.merge(right, on=keys, suffixes=("_a", "_b")).dropna()
    la, lb = both["label_a"].astype(int), both["label_b"].astype(int)
    return [
        [int(((la == 1) & (lb == 1)).sum()), int(((la == 1) & (lb == 0)).sum())],
        [int(((la == 0) & (lb == 1)).sum()), int(((la == 0) & (lb == 0)).sum())],
    ]


def hand_table(rows: list[tuple[str, str, int | None]], dimension: str = "outcome") -> pd.DataFrame:
    """A verdict table from (task, rater, label) triples; raters named r* are verifiers."""
    records = [
        {
            "split": OM2W,
            "task_id": task,
            "rater": rater,
            "kind": "verifier" if rater.startswith("r") else "human",
            "annotator": None if rater.startswith("r") else rater,
            "stage": None if rater.startswith("r") else "blind",
            "dimension": dimension,
            "label": label,
            "score": None,
            "raw": None,
        }
        for task, rater, label in rows
    ]
    table = pd.DataFrame(records, columns=COLUMNS)
    table["label"] = table["label"].astype("Int8")
    return table


# ---------------------------------------------------------------------------------------
# Every pair against statsmodels and a direct count
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("splits", "dimension"), CASES)
def test_pair_table_matches_statsmodels(bench, splits, dimension) -> None:
    pairs = J.pair_table(bench.verdicts, splits, dimension)
    assert len(pairs) > 20
    checked = 0
    for p in pairs[pairs["n"] > 1].itertuples():
        table = np.array([[p.a1b1, p.a1b0], [p.a0b1, p.a0b0]], dtype=float)
        expected = cohens_kappa(table).kappa
        if np.isnan(expected):
            assert np.isnan(p.kappa) and "one class" in p.kappa_reason
        else:
            assert p.kappa == pytest.approx(expected, abs=1e-12)
            checked += 1
        assert p.mcnemar_p == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
        assert p.agreement == pytest.approx((p.a1b1 + p.a0b0) / p.n)
    assert checked > 10


def test_pair_table_counts_match_a_direct_count(bench) -> None:
    pairs = J.pair_table(bench.verdicts, [OM2W], "outcome").set_index(["rater_a", "rater_b"])
    for a, b in [
        ("uv_outcome_success", "final_human_outcome_label"),
        ("Judge9", "Judge9@informed"),
        ("om2w_judge", "majority_human_outcome_vote"),
        ("Judge3", "Judge5"),
    ]:
        row = pairs.loc[(a, b)]
        table = [[row.a1b1, row.a1b0], [row.a0b1, row.a0b0]]
        assert table == direct_table(bench.verdicts, [OM2W], "outcome", a, b)
        assert row.n == sum(map(sum, table))
        # The reverse pair is the transposed table, with the same kappa.
        rev = pairs.loc[(b, a)]
        assert [[rev.a1b1, rev.a1b0], [rev.a0b1, rev.a0b0]] == [
            list(r) for r in zip(*table, strict=True)
        ]
        assert rev.kappa == pytest.approx(row.kappa)


def test_n_excluded_counts_tasks_both_judged_with_a_label_missing(bench) -> None:
    v = bench.verdicts
    pairs = J.pair_table(v, [OM2W], "outcome").set_index(["rater_a", "rater_b"])
    a, b = "uv_outcome_success", "final_human_outcome_label"
    sub = v[(v["split"] == OM2W) & (v["dimension"] == "outcome")]
    both = sub[sub["rater"] == a].merge(sub[sub["rater"] == b], on="task_id")
    expected = int((both["label_x"].isna() | both["label_y"].isna()).sum())
    assert expected > 0  # the mirror has missing verifier verdicts
    assert pairs.loc[(a, b), "n_excluded"] == expected


def test_pair_detail_agrees_with_the_pair_table_and_the_report(bench) -> None:
    v = bench.verdicts
    a, b = "uv_outcome_success", "final_human_outcome_label"
    d = J.pair_detail(v, J.SPLITS, "outcome", a, b)
    row = J.pair_table(v, J.SPLITS, "outcome").set_index(["rater_a", "rater_b"]).loc[(a, b)]
    assert d.table == [[row.a1b1, row.a1b0], [row.a0b1, row.a0b0]]
    assert d.estimates["kappa"].value == pytest.approx(row.kappa)
    assert d.estimates["mcnemar_p"].value == pytest.approx(row.mcnemar_p)
    assert d.n_excluded == row.n_excluded
    assert d.estimates["kappa"].ci.low < d.estimates["kappa"].value < d.estimates["kappa"].ci.high
    # Same bootstrap (task clusters, 2,000 resamples, seed 0) as a direct metrics call.
    direct = M.bootstrap_intervals(
        d.frame["label_a"], d.frame["label_b"], d.frame["task_id"], ("kappa",)
    )["kappa"]
    assert d.estimates["kappa"].ci.bounds == pytest.approx(direct.bounds)
    record = next(
        r for r in J.pair_records(v, J.ALL, "outcome") if {r.rater_a, r.rater_b} == {a, b}
    )
    assert record.estimates["kappa"].ci.bounds == pytest.approx(d.estimates["kappa"].ci.bounds)


def test_shares_are_row_and_column_proportions(bench) -> None:
    d = J.pair_detail(bench.verdicts, [OM2W], "outcome", "mm_is_success", "uv_outcome_success")
    s = J.shares(d).set_index(["a", "b"])
    t = np.array(d.table, dtype=float)
    assert s.loc[(1, 0), "count"] == t[0, 1]
    assert s.loc[(1, 0), "row_share"] == pytest.approx(t[0, 1] / t[0].sum())
    assert s.loc[(0, 1), "col_share"] == pytest.approx(t[1, 0] / t[:, 0].sum())
    assert s.groupby(level="a")["row_share"].sum().to_numpy() == pytest.approx([1, 1])


def test_off_diagonal_lists_the_discordant_tasks_with_viewer_links(bench) -> None:
    d = J.pair_detail(bench.verdicts, [OM2W], "outcome", "uv_outcome_success", "Judge3")
    off = J.off_diagonal(d, bench.tasks)
    c = d.confusion
    assert len(off) == c.fp + c.fn > 0
    assert (off["label_a"] == 1).sum() == c.fp
    assert (off["label_a"] != off["label_b"]).all()
    assert off["instruction"].notna().all()
    view = ui_judges.off_diagonal_table(off)  # the page's wording and links
    assert (view["cell"] == "A 1, B 0").sum() == c.fp
    assert view["task"].str.startswith("Trajectory?").all()
    first, link = off.iloc[0], view["task"].iloc[0]
    assert f"task={first['task_id']}" in link and f"split={OM2W}" in link
    assert view["instruction"].tolist() == off["instruction"].tolist()


# ---------------------------------------------------------------------------------------
# Degenerate pairs
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([("t1", "ra", 1), ("t1", "rb", 1)], "n = 1"),
        ([("t1", "ra", 1), ("t1", "rb", 0)], "n = 1"),
        ([(t, r, 1) for t in ("t1", "t2", "t3") for r in ("ra", "rb")], "one class"),
        ([(t, r, 0) for t in ("t1", "t2") for r in ("ra", "rb")], "one class"),
    ],
)
def test_degenerate_pairs_are_undefined_with_a_reason(rows, reason) -> None:
    table = hand_table(rows)
    pairs = J.pair_table(table, [OM2W], "outcome")
    assert pairs["kappa"].isna().all()
    assert pairs["kappa_reason"].str.contains(reason).all()
    d = J.pair_detail(table, [OM2W], "outcome", "ra", "rb")
    assert d.estimates["kappa"].value is None and reason in d.estimates["kappa"].reason
    assert not d.estimates["kappa"].ci.defined
    assert d.estimates["agreement"].defined  # raw agreement is still a number
    if reason == "one class":  # statsmodels agrees: 0 / 0
        assert np.isnan(cohens_kappa(np.array(d.table, dtype=float)).kappa)


def test_two_single_but_different_classes_give_kappa_zero_as_statsmodels() -> None:
    table = hand_table([(t, "ra", 1) for t in ("t1", "t2")] + [(t, "rb", 0) for t in ("t1", "t2")])
    d = J.pair_detail(table, [OM2W], "outcome", "ra", "rb")
    assert d.estimates["kappa"].value == pytest.approx(
        cohens_kappa(np.array(d.table, dtype=float)).kappa
    )
    assert d.estimates["kappa"].value == 0.0


def test_no_shared_task_and_missing_labels() -> None:
    table = hand_table([("t1", "ra", 1), ("t2", "rb", 0), ("t3", "ra", None), ("t3", "rb", 1)])
    pairs = J.pair_table(table, [OM2W], "outcome").set_index(["rater_a", "rater_b"])
    assert pairs.loc[("ra", "rb"), "n"] == 0
    assert pairs.loc[("ra", "rb"), "n_excluded"] == 1
    assert np.isnan(pairs.loc[("ra", "rb"), "mcnemar_p"])
    d = J.pair_detail(table, [OM2W], "outcome", "ra", "rb")
    assert d.n == 0 and d.estimates["kappa"].reason.startswith("n = 0")
    assert d.estimates["mcnemar_p"].value is None
    assert J.pair_records(table, OM2W, "outcome") == []


# ---------------------------------------------------------------------------------------
# Raters, panel, reviewers
# ---------------------------------------------------------------------------------------


def test_raters_are_grouped_and_uploads_are_generic_verifiers(bench) -> None:
    upload = bench.verdicts[bench.verdicts["rater"] == "uv_outcome_success"].copy()
    upload["rater"] = "my_verifier"
    table = pd.concat([bench.verdicts, upload], ignore_index=True)
    order = J.raters(table, [OM2W], "outcome")
    assert order[:2] == ["final_human_outcome_label", "majority_human_outcome_vote"]
    assert order.index("my_verifier") == order.index("om2w_judge") + 1
    blind = [r for r in order if r.startswith("Judge") and "@" not in r]
    assert blind == sorted(blind, key=lambda r: int(r[5:]))
    assert order.index(blind[-1]) < min(i for i, r in enumerate(order) if "@informed" in r)
    assert "om2w_judge" not in J.raters(table, ["internal"], "outcome")
    assert "uv_process" in J.raters(table, [OM2W], "process")
    pairs = J.pair_table(table, [OM2W], "outcome").set_index(["rater_a", "rater_b"])
    assert pairs.loc[("my_verifier", "uv_outcome_success"), "kappa"] == pytest.approx(1.0)
    labels = J.display_labels(order)
    assert len(set(labels.values())) == len(order)


def test_check_rater_and_default_pair() -> None:
    options = ["final_human_outcome_label", "uv_outcome_success", "Judge9"]
    assert J.default_pair(options, "outcome") == ("uv_outcome_success", "final_human_outcome_label")
    assert J.default_pair(["Judge1", "Judge2"], "process") == ("Judge1", "Judge2")
    assert J.check_rater("Judge9", options, "outcome", "om2w") is None
    message = J.check_rater("JudgeX", options, "outcome", "om2w")
    assert "JudgeX" in message and "default pair" in message


def test_panel_matches_statsmodels_and_krippendorff(bench) -> None:
    v = bench.verdicts
    for dimension in ("outcome", "process"):
        panel = J.panel_table(v, [OM2W], dimension)
        labelled = panel.notna().sum(axis=1)
        assert labelled.max() <= 3 and (labelled >= 2).sum() > 50
        report = J.panel(v, [OM2W], dimension)
        ours = report["metrics"]
        alpha = krippendorff.alpha(
            reliability_data=panel.to_numpy(dtype=float, na_value=np.nan).T,
            level_of_measurement="nominal",
        )
        assert ours["krippendorff_alpha"].value == pytest.approx(alpha, abs=1e-10)
        assert report["ci"]["fleiss_kappa"].defined
        # statsmodels' Fleiss needs equal raters per task: compare on the 2-label tasks.
        two = panel[labelled == 2]
        keep = set(two.index.get_level_values("task_id"))
        sub = v[~((v["kind"] == "human") & ~v["task_id"].isin(keep))]
        ours_two = J.panel(sub, [OM2W], dimension, boot=Bootstrap(10))["metrics"]["fleiss_kappa"]
        rows = np.array([r[~np.isnan(r)] for r in two.to_numpy(dtype=float, na_value=np.nan)])
        expected = sm_fleiss_kappa(aggregate_raters(rows.astype(int))[0])
        assert ours_two.value == pytest.approx(expected, abs=1e-10)


def test_panel_of_one_reviewer_per_task_is_undefined(bench) -> None:
    report = J.panel(bench.verdicts, ["internal"], "outcome")
    assert report["counts"]["n_tasks"] == 0
    assert report["counts"]["n_tasks_dropped"] == 154
    assert report["metrics"]["fleiss_kappa"].value is None
    assert "two or more" in report["metrics"]["fleiss_kappa"].reason


def test_reviewer_profiles(bench) -> None:
    v = bench.verdicts
    profiles = J.reviewer_profiles(v, J.SPLITS, "outcome").set_index("rater")
    pairs = J.pair_table(v, J.SPLITS, "outcome").set_index(["rater_a", "rater_b"])
    ann = bench.annotations
    for rater, row in profiles.iterrows():
        if row["stage"] == "blind":
            assert row["tasks"] + row["unlabelled"] == (ann["annotator"] == rater).sum()
        mine = v[(v["rater"] == rater) & (v["dimension"] == "outcome")]["label"].dropna()
        assert row["leniency"] == pytest.approx(mine.mean())
        final = pairs.loc[(rater, "final_human_outcome_label")]
        assert row["n_final"] == final["n"]
        if row["kappa_final"].defined:
            assert row["kappa_final"].value == pytest.approx(final["kappa"])
        uv = pairs.loc[(rater, "uv_outcome_success")]
        assert row["n_uv"] == uv["n"]
    assert set(profiles["stage"]) == {"blind", "informed"}
    internal = J.reviewer_profiles(v, ["internal"], "outcome")
    assert set(internal["stage"]) == {"blind"}


# ---------------------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------------------


def test_heatmap_greys_low_n_and_undefined_cells(bench) -> None:
    v = bench.verdicts
    order = J.raters(v, [OM2W], "outcome")
    pairs = J.pair_table(v, [OM2W], "outcome")
    labels = J.display_labels(order)
    groups = dict(zip(pairs["rater_a"], pairs["group_a"], strict=False))
    data = C.heatmap_data(pairs, labels, groups, min_n=10)
    assert (data["n"] > 0).all()
    assert (data.loc[data["n"] < 10, "status"] == C.LOW_N).all()
    undefined = (data["n"] >= 10) & data["kappa"].isna()
    assert (data.loc[undefined, "status"] == C.UNDEFINED).all()
    assert (data.loc[data["status"] == C.OK, "kappa"].notna()).all()
    spec = C.kappa_heatmap(data, order, labels, groups, chosen=(order[0], order[1])).to_dict()
    assert spec["params"][0]["name"] == C.PAIR_PARAM
    assert spec["params"][0]["select"]["fields"] == ["rater_a", "rater_b"]
    assert C.heatmap_data(pairs, labels, groups, min_n=1000)["status"].eq(C.LOW_N).all()


def test_picked_pair_parses_the_selection_event() -> None:
    event = {"selection": {C.PAIR_PARAM: [{"rater_a": "Judge3", "rater_b": "Judge5"}]}}
    assert C.picked_pair(event) == ("Judge3", "Judge5")
    assert C.picked_pair({"selection": {C.PAIR_PARAM: []}}) is None
    assert C.picked_pair(None) is None
    assert C.picked_pair({"selection": {}}) is None


def test_confusion_chart_shows_counts_and_shares(bench) -> None:
    d = J.pair_detail(bench.verdicts, [OM2W], "outcome", "uv_outcome_success", "Judge3")
    spec = C.confusion_chart(J.shares(d), "UV", "Judge3").to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert sorted(r["count"] for r in rows) == sorted(c for row in d.table for c in row)
    assert all("of row" in r["share_text"] and "of col" in r["share_text"] for r in rows)


# ---------------------------------------------------------------------------------------
# Headless report
# ---------------------------------------------------------------------------------------


def test_report_has_judge_pairs(report_json: str, bench) -> None:
    records = json.loads(report_json)["judge_pairs"]
    required = {"split", "dimension", "rater_a", "rater_b", "n", "agreement", "kappa"}
    required |= {"kappa_ci", "mcnemar_p", "table"}
    assert all(required <= set(r) for r in records)
    assert {r["split"] for r in records} == {OM2W, "internal", "all"}
    assert {r["dimension"] for r in records} == {"outcome", "process"}
    assert all(r["n"] > 0 and sum(map(sum, r["table"])) == r["n"] for r in records)
    keys = [(r["split"], r["dimension"], r["rater_a"], r["rater_b"]) for r in records]
    assert len(keys) == len(set(keys))
    assert not any((s, d, b, a) in set(keys) for s, d, a, b in keys)  # each pair once
    for split, a, b in [
        (OM2W, "final_human_outcome_label", "uv_outcome_success"),
        ("all", "uv_outcome_success", "Judge9"),
    ]:
        record = next(
            r for r in records if (r["split"], r["rater_a"], r["rater_b"]) == (split, a, b)
        )
        splits = J.split_names(split)
        assert record["table"] == direct_table(bench.verdicts, splits, "outcome", a, b)
        low, high = record["kappa_ci"]
        assert low <= record["kappa"] <= high
    undefined = [r for r in records if r["kappa"] is None]
    assert undefined and all(r["kappa_reason"] for r in undefined)
