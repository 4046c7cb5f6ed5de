"""lib.analysis.slices: per-slice metrics against scikit-learn on the slice's
rows, intervals against
lib.metrics / a plain cluster-bootstrap loop, the ranking rule, the paired comparison."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix

from lib import metrics as M
from lib.analysis import slices as S
from lib.analysis.slice_values import SLICE_DIMS, slice_table
from lib.table.clusters import cluster_key
from lib.table.verdicts import COLUMNS
from lib.vocab import Bootstrap
from tests.helpers import cluster_boot as plain

UV, FINAL, MM = "uv_outcome_success", "final_human_outcome_label", "mm_is_success"
B = 300  # resamples in tests (the app uses 2,000)


@pytest.fixture(scope="module")
def uv_records(bench) -> dict[str, list[S.SliceRecord]]:
    return {
        mode: S.slice_records(
            bench.verdicts, bench.tasks, UV, FINAL, "outcome", "all", boot=Bootstrap(B, unit=mode)
        )
        for mode in ("task", "site")
    }


def _independent_rows(bench, rater: str, split: str = "all") -> pd.DataFrame:
    """Tasks of the split with their slice values and two labels, joined without pair_frame."""
    values = slice_table(bench.tasks, bench.verdicts).frame
    if split != "all":
        values = values[values["split"] == split]
    out = values.astype({"split": str, "task_id": str})
    for name, who in (("pred", rater), ("ref", FINAL)):
        v = bench.verdicts
        v = v[(v["rater"] == who) & (v["dimension"] == "outcome")][["split", "task_id", "label"]]
        v = v.astype({"split": str, "task_id": str}).rename(columns={"label": name})
        out = out.merge(v, on=["split", "task_id"], how="left")
    out["pred"] = out["pred"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    out["ref"] = out["ref"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    return out


def _sklearn(pred: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    if pred.size == 0:
        return dict.fromkeys(S.slice_metrics(), math.nan)
    tn, fp, fn, tp = confusion_matrix(ref, pred, labels=[0, 1]).ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kappa = cohen_kappa_score(ref, pred)
    return {
        "accuracy": accuracy_score(ref, pred),
        "kappa": kappa,
        "fpr": fp / (fp + tn) if fp + tn else math.nan,
        "fnr": fn / (fn + tp) if fn + tp else math.nan,
    }


def _same(value: M.Estimate, expected: float) -> bool:
    if math.isnan(expected):
        return value.value is None and bool(value.reason)
    return value.value is not None and math.isclose(value.value, expected, abs_tol=1e-12)


# ---------------------------------------------------------------------------------------
# Point values and counts
# ---------------------------------------------------------------------------------------


def test_slice_metrics_match_sklearn_on_the_slice_rows(bench, uv_records) -> None:
    rows = _independent_rows(bench, UV)
    complete = rows["pred"].notna() & rows["ref"].notna()
    overall = _sklearn(rows.loc[complete, "pred"].to_numpy(), rows.loc[complete, "ref"].to_numpy())
    records = uv_records["task"]
    assert {(r.slice_dim, r.value) for r in records} == {
        (d, v) for d in SLICE_DIMS for v in rows[d].unique()
    }
    for r in records:
        part = rows[rows[r.slice_dim] == r.value]
        ok = part["pred"].notna() & part["ref"].notna()
        expected = _sklearn(part.loc[ok, "pred"].to_numpy(), part.loc[ok, "ref"].to_numpy())
        assert (r.n, r.n_tasks, r.n_excluded) == (int(ok.sum()), len(part), int((~ok).sum()))
        assert r.small_n == (r.n < S.DEFAULT_MIN_N)
        for m in S.slice_metrics():
            stat = r.stats[m]
            assert _same(stat.value, expected[m]), (r.slice_dim, r.value, m, stat.value)
            assert _same(stat.overall, overall[m]), m
            if stat.value.value is not None:
                assert stat.gap.value == pytest.approx(stat.value.value - stat.overall.value)
            else:
                assert stat.gap.value is None and "slice" in stat.gap.reason


def test_every_task_in_exactly_one_slice_per_dimension(bench, uv_records) -> None:
    for r_dim in SLICE_DIMS:
        per_dim = [r for r in uv_records["task"] if r.slice_dim == r_dim]
        assert sum(r.n_tasks for r in per_dim) == len(bench.tasks), r_dim


def test_split_selection(bench) -> None:
    records = S.slice_records(
        bench.verdicts, bench.tasks, UV, FINAL, "outcome", "internal", boot=Bootstrap(50)
    )
    n_internal = int((bench.tasks["split"] == "internal").sum())
    assert sum(r.n_tasks for r in records if r.slice_dim == "run_end") == n_internal
    rows = _independent_rows(bench, UV, "internal")
    ok = rows["pred"].notna() & rows["ref"].notna()
    expected = _sklearn(rows.loc[ok, "pred"].to_numpy(), rows.loc[ok, "ref"].to_numpy())
    assert _same(records[0].stats["kappa"].overall, expected["kappa"])
    assert {r.split for r in records} == {"internal"}


def test_tasks_a_verifier_did_not_judge_are_excluded_and_counted(bench) -> None:
    # the Online-Mind2Web judge has no verdict on internal tasks
    records = S.slice_records(
        bench.verdicts, bench.tasks, "om2w_judge", FINAL, "outcome", "all", boot=Bootstrap(50)
    )
    run_end = [r for r in records if r.slice_dim == "run_end"]
    n_internal = int((bench.tasks["split"] == "internal").sum())
    assert sum(r.n_tasks for r in run_end) == len(bench.tasks)
    assert sum(r.n_excluded for r in run_end) >= n_internal


# ---------------------------------------------------------------------------------------
# Intervals
# ---------------------------------------------------------------------------------------


def test_task_intervals_equal_lib_metrics_with_task_labels(bench, uv_records) -> None:
    """Same intervals as every other page computes for the same rows (task ids as clusters)."""
    rows = _independent_rows(bench, UV)
    for r in uv_records["task"]:
        part = rows[rows[r.slice_dim] == r.value]
        ref_ci = M.bootstrap_intervals(
            part["pred"],
            part["ref"],
            part["task_id"].tolist(),
            S.slice_metrics(),
            boot=M.Bootstrap(B, 0),
        )
        for m in S.slice_metrics():
            got = r.stats[m].value.ci
            if r.n_clusters == 1:  # lib.metrics gives [v, v] (or undefined): no interval
                assert got.bounds is None
                if ref_ci[m].bounds is not None:
                    assert "one cluster" in got.reason
            else:
                assert got.bounds == ref_ci[m].bounds, (r.slice_dim, r.value, m)


def test_site_intervals_equal_a_plain_cluster_loop(bench, uv_records) -> None:
    rows = _independent_rows(bench, UV)
    rows["site_key"] = rows["task_id"].map(cluster_key)
    checked = 0
    for r in uv_records["site"]:
        if r.slice_dim == "site" or r.n_clusters < 2:
            continue
        part = rows[rows[r.slice_dim] == r.value]
        loop = plain.plain_any(  # Clopper-Pearson for the proportions, percentiles for kappa
            part["pred"].tolist(), part["ref"].tolist(), part["site_key"].tolist(),
            S.slice_metrics(), B, 0,
        )  # fmt: skip
        for m in S.slice_metrics():
            assert r.stats[m].value.ci.bounds == pytest.approx(loop[m], abs=1e-12), (r.value, m)
        assert r.n_clusters == len(plain.group_rows(part["pred"], part["ref"], part["site_key"]))
        checked += 1
    assert checked >= 10
    # the overall figure too
    loop = plain.plain_intervals(rows["pred"], rows["ref"], rows["site_key"], ["kappa"], B, 0)
    assert uv_records["site"][0].stats["kappa"].overall.ci.bounds == pytest.approx(loop["kappa"])


def test_website_slices_have_no_interval_when_websites_are_resampled(uv_records) -> None:
    site_slices = [r for r in uv_records["site"] if r.slice_dim == "site"]
    assert site_slices
    for r in site_slices:
        assert r.n_clusters <= 1
        for m in S.slice_metrics():
            assert r.stats[m].value.ci.bounds is None
            assert r.stats[m].value.ci.reason


def test_site_mode_widens_intervals_on_the_mirror(uv_records) -> None:
    """Fewer clusters than tasks: the overall intervals change when websites are resampled."""
    task, site = uv_records["task"][0].stats, uv_records["site"][0].stats
    assert task["kappa"].overall.value == site["kappa"].overall.value
    assert task["kappa"].overall.ci.bounds != site["kappa"].overall.ci.bounds
    by_task = {(r.slice_dim, r.value): r.n_clusters for r in uv_records["task"]}
    for r in uv_records["site"]:
        assert r.n_clusters <= by_task[(r.slice_dim, r.value)]


# ---------------------------------------------------------------------------------------
# Ranking
# ---------------------------------------------------------------------------------------


def _record(value: str, n: int, kappa: float | None, fpr: float | None = 0.1) -> S.SliceRecord:
    empty = M.Interval(None, None, "not computed")

    def stat(v: float | None, overall: float) -> S.SliceStat:
        val = M.Estimate(v, empty, None if v is not None else "undefined")
        gap = (
            M.Estimate(v - overall) if v is not None else M.Estimate(None, None, "slice: undefined")
        )
        return S.SliceStat(val, M.Estimate(overall, empty), gap)

    stats = {
        "kappa": stat(kappa, 0.6),
        "accuracy": stat(0.8, 0.8),
        "fpr": stat(fpr, 0.1),
        "fnr": stat(0.2, 0.2),
    }
    return S.SliceRecord(
        "all", UV, FINAL, "outcome", "run_end", value, 0, n, n, 0, n, n < 10, stats, Bootstrap(1, 0)
    )


def test_rank_small_n_never_first() -> None:
    records = [
        _record("ok", 50, 0.55),
        _record("tiny-worst", 3, -0.5),
        _record("bad", 40, 0.1),
        _record("undefined", 30, None),
        _record("tiny-undefined", 2, None),
        _record("tiny-good", 4, 0.9),
        _record("good", 60, 0.8),
    ]
    ranked = [r.value for r in S.rank_slices(records, "kappa")]
    assert ranked == ["bad", "ok", "good", "undefined", "tiny-worst", "tiny-good", "tiny-undefined"]


def test_rank_error_rates_higher_is_worse() -> None:
    records = [
        _record("a", 50, 0.5, fpr=0.05),
        _record("b", 50, 0.5, fpr=0.4),
        _record("c", 50, 0.5, fpr=0.2),
    ]
    assert [r.value for r in S.rank_slices(records, "fpr")] == ["b", "c", "a"]
    with pytest.raises(ValueError, match="metric"):
        S.rank_slices(records, "auc")


def test_one_class_and_own_score_are_not_ranked_by_kappa() -> None:
    """The issue's case: the verifier says failure on every task of a slice (kappa 0 by
    construction, the worst gap) and a slice defined by the verifier's own score."""
    flat = replace(_record("one class", 79, 0.0), one_class="the verifier says failure")
    own = replace(_record("own band", 50, -0.2), own_score=True)
    records = [flat, own, _record("bad", 40, 0.3), _record("ok", 50, 0.55)]
    assert [r.value for r in S.rank_slices(records, "kappa")] == [
        "bad", "ok", "own band", "one class",
    ]  # fmt: skip
    assert S.not_ranked(flat, "kappa").startswith(S.ONE_CLASS)
    assert S.not_ranked(flat, "accuracy") is None  # accuracy is informative on one class
    assert S.not_ranked(own, "accuracy") == "defined by this verifier's own score"


def test_one_class_by_hand() -> None:
    nan = float("nan")
    pred = np.array([0.0, 0.0, 0.0, 1.0])  # the last task has no reference
    ref = np.array([1.0, 0.0, 1.0, nan])
    assert S.one_class(pred, ref) == "the verifier says failure on every task"
    assert S.one_class(ref[:3], pred[:3]) == "the reference says failure on every task"
    assert S.one_class(np.array([1.0, 0.0]), np.array([1.0, 0.0])) is None
    assert S.one_class(np.array([nan]), np.array([1.0])) is None


def test_zero_width_intervals_say_why_and_rank_first_is_honest(uv_records) -> None:
    for records in uv_records.values():
        for r in records:
            for m, stat in r.stats.items():
                if stat.value.ci.defined and stat.value.ci.low == stat.value.ci.high:
                    assert S.record_row(r)["reasons"][f"ci:{m}"].startswith("every resample")
        first = S.rank_slices(records, "kappa")[0]
        assert S.not_ranked(first, "kappa") is None
        assert first.one_class is None and not first.own_score and not first.small_n
        assert first.stats["kappa"].value.ci.low < first.stats["kappa"].value.ci.high
    bands = [r for r in uv_records["task"] if r.slice_dim == "uv_band"]
    assert bands and all(r.own_score for r in bands)


def test_slice_records_are_ranked_by_default(uv_records) -> None:
    records = uv_records["task"]
    assert not records[0].small_n
    big = [r for r in records if S.not_ranked(r, "kappa") is None]
    gaps = [r.stats["kappa"].gap.value for r in big]
    assert gaps == sorted(gaps)
    assert records[: len(big)] == big


# ---------------------------------------------------------------------------------------
# Two verifiers
# ---------------------------------------------------------------------------------------


def _paired_loop(pa, pb, ref, clusters, n_resamples: int, seed: int, metric: str):
    """Plain paired loop: one draw of clusters, applied to both verifiers."""
    groups: dict = {}
    for a, b, r, c in zip(pa, pb, ref, clusters, strict=True):
        if not (math.isnan(a) or math.isnan(b) or math.isnan(r)):
            groups.setdefault(c, []).append((a, b, r))
    ids = sorted(groups)
    draws = np.random.default_rng(seed).integers(0, len(ids), size=(n_resamples, len(ids)))
    fn = plain.METRICS[metric]
    diffs = []
    for row in draws:
        pooled = [x for j in row for x in groups[ids[j]]]
        diffs.append(fn([(a, r) for a, _, r in pooled]) - fn([(b, r) for _, b, r in pooled]))
    return plain.percentile_interval(diffs, 0.95)


@pytest.mark.parametrize("mode", ["task", "site"])
def test_paired_slices(bench, mode: str) -> None:
    records = S.paired_slice_records(
        bench.verdicts, bench.tasks, UV, MM, FINAL, "outcome", "all",
        slice_dims=["length", "blind_tie"], boot=Bootstrap(B, unit=mode),
    )  # fmt: skip
    a_rows, b_rows = _independent_rows(bench, UV), _independent_rows(bench, MM)
    rows = a_rows.assign(pred_b=b_rows["pred"].to_numpy())
    rows["cluster"] = rows["task_id"] if mode == "task" else rows["task_id"].map(cluster_key)
    assert {r.slice_dim for r in records} == {"length", "blind_tie"}
    for r in records:
        part = rows[rows[r.slice_dim] == r.value]
        ok = part["pred"].notna() & part["pred_b"].notna() & part["ref"].notna()
        assert r.n == int(ok.sum()) and r.n_tasks == len(part)
        ref = part.loc[ok, "ref"].to_numpy()
        a = _sklearn(part.loc[ok, "pred"].to_numpy(), ref)
        b = _sklearn(part.loc[ok, "pred_b"].to_numpy(), ref)
        for m in S.slice_metrics():
            d = r.diffs[m]
            assert _same(d.a, a[m]) and _same(d.b, b[m]), (r.value, m)
            if d.a.value is not None and d.b.value is not None:
                assert d.diff.value == pytest.approx(a[m] - b[m])
            if r.n_clusters >= 2:
                loop = _paired_loop(
                    part["pred"], part["pred_b"], part["ref"], part["cluster"], B, 0, m
                )
                assert d.ci.bounds == pytest.approx(loop, abs=1e-12), (r.value, m)
        row = json.loads(json.dumps(S.paired_row(r), allow_nan=False))
        assert row["kappa_diff"] == r.diffs["kappa"].diff.value
        assert row["kappa_diff_ci"] == (
            list(r.diffs["kappa"].ci.bounds) if r.diffs["kappa"].ci.defined else None
        )
        assert r.overall["kappa"].n == int(
            (rows["pred"].notna() & rows["pred_b"].notna() & rows["ref"].notna()).sum()
        )


# ---------------------------------------------------------------------------------------
# Hand-made table, JSON rows, errors
# ---------------------------------------------------------------------------------------


def _hand_table() -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = ["Nike--01", "Nike--02", "Nike--03", "Adidas--01", "Adidas--02", "Puma--01"]
    tasks = pd.DataFrame(
        {"split": "om2w", "task_id": ids, "final_answer": "x", "is_aborted": False}
    )
    tasks.loc[5, "is_aborted"] = True
    verdict = [1, 1, None, 0, 1, 0]
    final = [1, 0, 1, 0, 0, None]
    rows = [
        ("om2w", t, rater, kind, None, None, "outcome", v)
        for rater, kind, labels in ((UV, "verifier", verdict), (FINAL, "reference", final))
        for t, v in zip(ids, labels, strict=True)
    ]
    table = pd.DataFrame(rows, columns=COLUMNS[:8]).astype({"label": "Int8"})
    return tasks, table.assign(score=np.nan, raw=None)


def test_hand_made_slices() -> None:
    tasks, table = _hand_table()
    records = S.slice_records(
        table, tasks, UV, FINAL, "outcome", "all", sort_by=None, min_n=2, boot=Bootstrap(200)
    )
    by = {(r.slice_dim, r.value): r for r in records}
    nike = by[("site", "Nike")]
    assert (nike.n, nike.n_tasks, nike.n_excluded, nike.n_clusters) == (2, 3, 1, 2)
    assert nike.stats["accuracy"].value.value == pytest.approx(0.5)  # (1,1) right, (1,0) wrong
    assert nike.stats["fpr"].value.value == pytest.approx(1.0)
    adidas = by[("site", "Adidas")]
    assert adidas.stats["accuracy"].value.value == pytest.approx(0.5)
    puma = by[("site", "Puma")]
    assert (puma.n, puma.n_excluded, puma.small_n) == (0, 1, True)
    assert puma.stats["kappa"].value.value is None
    assert by[("run_end", "aborted")].n_tasks == 1
    # natural order without sort_by: dimensions in SLICE_DIMS order, values in their order
    dims = [r.slice_dim for r in records]
    assert dims == sorted(dims, key=SLICE_DIMS.index)
    # overall: 4 complete rows, 2 right
    assert nike.stats["accuracy"].overall.value == pytest.approx(0.5)


def test_record_row_is_plain_json(uv_records) -> None:
    rows = [S.record_row(r) for r in uv_records["site"]]
    text = json.dumps(rows, allow_nan=False)
    back = json.loads(text)
    assert {"n", "small_n", "cluster", "kappa", "kappa_ci", "kappa_gap", "reasons"} <= set(back[0])
    assert {row["cluster"] for row in back} == {"site"}
    undefined = [row for row in back if row["kappa"] is None]
    assert undefined and all("kappa" in row["reasons"] for row in undefined)


def test_bad_arguments_raise(bench) -> None:
    with pytest.raises(ValueError, match="slice dimension"):
        S.slice_records(bench.verdicts, bench.tasks, UV, FINAL, "outcome", slice_dims=["colour"])
    with pytest.raises(ValueError, match="cluster mode"):
        S.slice_records(
            bench.verdicts, bench.tasks, UV, FINAL, "outcome", boot=Bootstrap(unit="website")
        )
