"""Continuous process scores (`lib.analysis.scores`, `lib.metrics.continuous`).

Point estimates are rebuilt from the raw frames (`bench.tasks`, `bench.annotations`) with
pandas and checked against scipy / numpy / scikit-learn; the intervals must cover a known
correlation in a small simulation with clustered rows; the weighted-resample trick
(`lib.metrics.continuous`) must equal scipy on the explicitly expanded resample.
No demo number is written here: the demo is recalibrated by another change.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from lib import metrics as M
from lib.analysis import scores
from lib.metrics import continuous
from lib.table.clusters import cluster_ids
from lib.vocab import Bootstrap

OM2W = "fara7b_om2w_browserbase"
QUICK = Bootstrap(n_resamples=300)


def _label(value: object) -> float:
    text = str(value).strip().lower() if isinstance(value, str) else ""
    return {"correct": 1.0, "incorrect": 0.0}.get(text, np.nan)


def _reviews(bench) -> pd.DataFrame:
    """Blind reviews of om2w with the UV score beside them, from the raw frames."""
    a = bench.annotations[bench.annotations["split"] == OM2W]
    t = bench.tasks[bench.tasks["split"] == OM2W]
    out = a[["task_id", "annotator", "human_process_score", "human_judgement_process"]].merge(
        t[["task_id", "uv_rubric_score"]], on="task_id", how="left"
    )
    out["label"] = out["human_judgement_process"].map(_label)
    return out.astype({"human_process_score": float, "uv_rubric_score": float})


def _complete(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def _check_scores(record: scores.ScoreComparison, x, y) -> None:
    cx, cy = _complete(x, y)
    assert record.n == cx.size > 10
    assert record.n_missing == len(x) - cx.size
    est = record.estimates
    assert est["pearson"].value == pytest.approx(stats.pearsonr(cx, cy).statistic, abs=1e-9)
    assert est["spearman"].value == pytest.approx(stats.spearmanr(cx, cy).statistic, abs=1e-9)
    assert est["mad"].value == pytest.approx(np.mean(np.abs(cx - cy)), abs=1e-12)
    for name in ("pearson", "spearman", "mad"):
        ci = est[name].ci
        assert ci.defined and ci.low <= est[name].value <= ci.high


def _kappa(a, b) -> float:
    a, b = _complete(a, b)
    return cohen_kappa_score(a.astype(int), b.astype(int))


def test_uv_against_every_review_equals_scipy(bench) -> None:
    r = _reviews(bench)
    record = scores.compare(bench.verdicts, OM2W, "uv_vs_reviewers", boot=QUICK)
    _check_scores(record, r["uv_rubric_score"], r["human_process_score"])
    uv = np.where(r["uv_rubric_score"].isna(), np.nan, r["uv_rubric_score"] >= 0.8)
    hum = r["human_process_score"].to_numpy(float)
    est = record.estimates
    assert est["kappa_labels"].value == pytest.approx(_kappa(uv, r["label"]), abs=1e-9)
    cut = np.where(np.isnan(hum), np.nan, hum >= 0.8)
    assert est["kappa_verifier_threshold"].value == pytest.approx(_kappa(uv, cut), abs=1e-9)
    assert record.n_labels == int((~np.isnan(uv) & r["label"].notna()).sum())


def test_uv_against_the_median_at_another_human_threshold(bench) -> None:
    t = bench.tasks[bench.tasks["split"] == OM2W]
    x = t["uv_rubric_score"].to_numpy(float)
    y = t["median_human_rubric_score_agnostic"].to_numpy(float)
    record = scores.compare(bench.verdicts, OM2W, "uv_vs_median", human_threshold=0.6, boot=QUICK)
    _check_scores(record, x, y)
    both = ~(np.isnan(x) | np.isnan(y))
    want = cohen_kappa_score((x[both] >= 0.8).astype(int), (y[both] >= 0.6).astype(int))
    assert record.estimates["kappa_human_threshold"].value == pytest.approx(want, abs=1e-9)
    assert record.human_threshold == 0.6 and record.verifier_threshold == 0.8
    uv = np.where(np.isnan(x), np.nan, x >= 0.8)
    final = t["final_human_process_label"].astype("Float64").to_numpy(float, na_value=np.nan)
    assert record.estimates["kappa_labels"].value == pytest.approx(_kappa(uv, final), abs=1e-9)


def test_reviewer_against_reviewer_both_orders(bench) -> None:
    r = _reviews(bench)
    pairs = r.merge(r, on="task_id", suffixes=("_a", "_b"))
    pairs = pairs[pairs["annotator_a"] != pairs["annotator_b"]]
    x, y = pairs["human_process_score_a"], pairs["human_process_score_b"]
    record = scores.compare(bench.verdicts, OM2W, "reviewer_vs_reviewer", 0.7, boot=QUICK)
    _check_scores(record, x, y)
    assert record.n_pairs * 2 == record.n
    est = record.estimates
    la, lb = pairs["label_a"], pairs["label_b"]
    assert est["kappa_labels"].value == pytest.approx(_kappa(la, lb), abs=1e-9)
    xa, ya = _complete(x, y)
    at = {0.8: "kappa_verifier_threshold", 0.7: "kappa_human_threshold"}
    for t, name in at.items():
        want = cohen_kappa_score((xa >= t).astype(int), (ya >= t).astype(int))
        assert est[name].value == pytest.approx(want, abs=1e-9)


def test_one_reviewer_and_every_comparison_listed(bench) -> None:
    r = _reviews(bench)
    names = scores.comparisons(bench.verdicts, [OM2W])
    judges = sorted(r.loc[r["human_process_score"].notna(), "annotator"].unique())
    assert sorted(n.removeprefix(scores.PER_REVIEWER) for n in names[3:]) == judges
    one = r[r["annotator"] == judges[0]]
    record = scores.compare(bench.verdicts, OM2W, scores.PER_REVIEWER + judges[0], boot=QUICK)
    _check_scores(record, one["uv_rubric_score"], one["human_process_score"])


def test_internal_has_no_reviewer_scores_so_undefined_not_zero(bench) -> None:
    record = scores.compare(bench.verdicts, "internal", "uv_vs_reviewers", boot=QUICK)
    n_reviews = int((bench.annotations["split"] == "internal").sum())
    assert record.n == 0 and record.n_missing == n_reviews
    for name in ("pearson", "spearman", "mad"):
        assert record.estimates[name].value is None
        assert record.estimates[name].reason == "n = 0"
        assert not record.estimates[name].ci.defined


def test_site_clusters_are_what_is_resampled(bench) -> None:
    site = Bootstrap(n_resamples=300, unit="site")
    record = scores.compare(bench.verdicts, OM2W, "uv_vs_median", boot=site)
    f = record.frame
    both = f["score_a"].notna() & f["score_b"].notna()
    assert record.n_clusters == len(set(cluster_ids(f.loc[both, "task_id"], "site")))
    assert record.n_clusters < record.n_tasks
    assert record.bootstrap == site


# ---------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------


def test_weighted_resample_equals_scipy_on_the_expanded_rows() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 8, 60) / 8  # ties, as rubric scores have
    y = np.clip(x + rng.normal(0, 0.2, 60), 0, 1).round(1)
    weights = rng.multinomial(60, np.full(60, 1 / 60), size=5).astype(float)
    for name, ref in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr)):
        got = continuous._STATS[name](x, y, weights)
        for b in range(5):
            xe, ye = np.repeat(x, weights[b].astype(int)), np.repeat(y, weights[b].astype(int))
            assert got[b] == pytest.approx(ref(xe, ye).statistic, abs=1e-9)
    mad = continuous._weighted_mad(x, y, weights)
    w0 = weights[0].astype(int)
    assert mad[0] == pytest.approx(np.mean(np.abs(np.repeat(x, w0) - np.repeat(y, w0))))


def test_degenerate_inputs_say_why() -> None:
    m = M.score_metrics([0.5, 0.5, 0.5], [0.1, 0.2, 0.3])
    assert m["pearson"].value is None and m["spearman"].value is None
    assert m["mad"].value == pytest.approx(0.3)
    iv = M.score_intervals([0.1, 0.2], [0.3, 0.4], ["a", "a"], boot=QUICK)
    assert iv["pearson"].reason == M.ONE_CLUSTER
    assert M.score_metrics([None], [0.2])["mad"].reason == "n = 0"


def _clustered(rng, rho: float, k: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """k clusters of m rows; (x, y) standard bivariate normal with correlation rho overall,
    half the variance shared inside a cluster."""
    cov = np.array([[1.0, rho], [rho, 1.0]]) / 2
    shared = np.repeat(rng.multivariate_normal([0, 0], cov, size=k), m, axis=0)
    own = rng.multivariate_normal([0, 0], cov, size=k * m)
    xy = shared + own
    return xy[:, 0], xy[:, 1], np.repeat(np.arange(k), m)


def test_intervals_cover_a_known_correlation() -> None:
    """Percentile cluster-bootstrap intervals cover the true Pearson r, Spearman rho and
    E|x - y| of a bivariate normal with clusters (200 datasets, 40 clusters of 5 rows)."""
    rho, k, m, runs = 0.6, 40, 5, 200
    truth = {
        "pearson": rho,
        "spearman": 6 / np.pi * np.arcsin(rho / 2),
        "mad": np.sqrt(2 / np.pi) * np.sqrt(2 * (1 - rho)),
    }
    rng = np.random.default_rng(2026)
    hits = dict.fromkeys(truth, 0)
    naive_narrower = 0
    for run in range(runs):
        x, y, c = _clustered(rng, rho, k, m)
        iv = M.score_intervals(x, y, c, boot=Bootstrap(n_resamples=400, seed=run))
        for name, value in truth.items():
            hits[name] += iv[name].low <= value <= iv[name].high
        rows = M.score_intervals(x, y, np.arange(k * m), ("pearson",), Bootstrap(400, seed=run))
        naive_narrower += (rows["pearson"].high - rows["pearson"].low) < (
            iv["pearson"].high - iv["pearson"].low
        )
    for name, n_hit in hits.items():
        assert 0.88 <= n_hit / runs <= 0.99, (name, n_hit / runs)
    # resampling rows ignores the clusters: its interval is narrower in most datasets
    assert naive_narrower / runs > 0.7
