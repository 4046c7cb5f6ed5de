"""Proportions' intervals (issue 28): the cluster-adjusted Clopper-Pearson interval, checked against
statsmodels and an independent pandas/scipy computation of the effective n; zero-width
percentile intervals carry why; `ui.fmt` shows both."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from lib import metrics as M
from lib.vocab import Bootstrap
from ui import fmt

# (numerator, denominator) of every proportion over (pred, ref), written independently.
DEFINITIONS = {
    "accuracy": (lambda p, r: p == r, lambda p, r: np.ones_like(p, dtype=bool)),
    "precision": (lambda p, r: (p == 1) & (r == 1), lambda p, r: p == 1),
    "recall": (lambda p, r: (p == 1) & (r == 1), lambda p, r: r == 1),
    "specificity": (lambda p, r: (p == 0) & (r == 0), lambda p, r: r == 0),
    "fpr": (lambda p, r: (p == 1) & (r == 0), lambda p, r: r == 0),
    "fnr": (lambda p, r: (p == 0) & (r == 1), lambda p, r: r == 1),
}


def _labels(n: int, rate: float, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(n) < rate).astype(float)


@pytest.mark.parametrize("seed", range(6))
def test_one_row_per_task_is_statsmodels_beta(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 150))
    ref = _labels(n, rng.uniform(0.05, 0.95), rng)
    # Rare errors, so some proportions are 0 or 1 (the boundary the issue is about).
    flip = rng.random(n) < rng.choice([0.0, 0.02, 0.2])
    pred = np.where(flip, 1 - ref, ref)
    out = M.bootstrap_intervals(pred, ref, np.arange(n), list(DEFINITIONS), Bootstrap(50))
    for name, (num, den) in DEFINITIONS.items():
        d = den(pred, ref)
        x, m = int(num(pred, ref)[d].sum()), int(d.sum())
        iv = out[name]
        assert iv.method == "clopper-pearson", name
        if m == 0:
            assert not iv.defined and iv.reason, name
            continue
        want = proportion_confint(x, m, alpha=0.05, method="beta")
        assert iv.bounds == pytest.approx(want, abs=1e-12), (name, x, m)
        assert iv.n_effective == pytest.approx(m)
        assert iv.high > iv.low  # never zero-width, also at x = 0 or x = m


def _independent_effective_n(y: pd.Series, m: pd.Series, level: float) -> float:
    """Korn & Graubard's effective n from per-cluster (y, m), recomputed with pandas/scipy."""
    n, k = m.sum(), int((m > 0).sum())
    p = y.sum() / n
    if 0 < p < 1:
        var = (((y - p * m) ** 2).sum() / n**2) / (p * (1 - p) / n)  # the design effect
        n_e = n / max(1.0, var)
    else:
        n_e = n
    if n_e > k:
        q = (1 + level) / 2
        n_e *= (stats.t.ppf(q, n_e - 1) / stats.t.ppf(q, k - 1)) ** 2
    return float(n_e)


@pytest.mark.parametrize("seed", range(4))
def test_clustered_rows_use_the_design_effect(seed: int) -> None:
    """Sites with a shared error rate: Clopper-Pearson on the effective n (pandas + scipy +
    statsmodels)."""
    rng = np.random.default_rng(100 + seed)
    sites = np.repeat(np.arange(12), rng.integers(2, 9, 12))
    ref = _labels(sites.size, 0.6, rng)
    site_error = rng.uniform(0.0, 0.5, 12)[sites]
    pred = np.where(rng.random(sites.size) < site_error, 1 - ref, ref)
    out = M.bootstrap_intervals(pred, ref, sites, list(DEFINITIONS), Bootstrap(50))
    frame = pd.DataFrame({"site": sites, "pred": pred, "ref": ref})
    for name, (num, den) in DEFINITIONS.items():
        frame["y"] = num(pred, ref) & den(pred, ref)
        frame["m"] = den(pred, ref)
        per_site = frame.groupby("site")[["y", "m"]].sum().astype(float)
        n_e = _independent_effective_n(per_site["y"], per_site["m"], 0.95)
        p = per_site["y"].sum() / per_site["m"].sum()
        want = proportion_confint(p * n_e, n_e, alpha=0.05, method="beta")
        want = (0.0 if p == 0 else want[0], 1.0 if p == 1 else want[1])
        assert out[name].n_effective == pytest.approx(n_e, rel=1e-9), name
        assert out[name].bounds == pytest.approx(want, abs=1e-9), name
        assert n_e <= per_site["m"].sum() + 1e-9  # clustering never adds information


def test_hand_worked_three_sites_with_no_false_positive() -> None:
    """0 false positives in 15 negatives over 3 sites: p = 0, so deff = 1 and the effective
    n is 15 (t_14 / t_2)^2 = 3.727; Clopper-Pearson's upper bound at x = 0 is
    1 - 0.025^(1 / n_e) = 0.628."""
    counts = np.array([[3.0, 0, 1, 4], [2, 0, 0, 6], [4, 0, 1, 5]])
    iv = M.proportion_cluster(counts, "fpr", 0.95)
    n_e = 15 * (stats.t.ppf(0.975, 14) / stats.t.ppf(0.975, 2)) ** 2
    assert iv.n_effective == pytest.approx(n_e)
    assert iv.bounds == pytest.approx((0.0, 1 - 0.025 ** (1 / n_e)))
    # The same 15 rows as 15 tasks: plain Clopper-Pearson, much narrower.
    plain = M.bootstrap_intervals(np.zeros(15), np.zeros(15), np.arange(15), ["fpr"])["fpr"]
    assert plain.bounds == pytest.approx(proportion_confint(0, 15, method="beta"), abs=1e-12)


def test_rows_of_one_cluster_give_no_interval() -> None:
    # Every positive of the reference is in task "a" (two rows): recall is not resampled.
    iv = M.bootstrap_intervals(
        [1, 0, 0, 1], [1, 1, 0, 0], ["a", "a", "b", "c"], ["recall", "fpr"], Bootstrap(50)
    )
    assert not iv["recall"].defined and "in one cluster" in iv["recall"].reason
    assert iv["fpr"].defined  # its two rows are in two clusters


def test_batch_intervals_and_report_use_the_same_clopper_pearson_interval() -> None:
    rng = np.random.default_rng(3)
    ref = _labels(60, 0.7, rng)
    pred = np.where(rng.random(60) < 0.03, 1 - ref, ref)
    tasks = np.arange(60) // 2
    single = M.bootstrap_intervals(pred, ref, tasks, None, Bootstrap(200))
    (batch,) = M.batch_intervals([M.cluster_counts(pred, ref, tasks)[1]], None, Bootstrap(200))
    report = M.binary_report(pred, ref, tasks, Bootstrap(200))
    assert batch == single
    for name in ("accuracy", "fpr", "fnr"):
        assert report["ci"][name] == single[name]


def test_zero_width_percentile_intervals_say_why() -> None:
    """Kappa [1, 1] at n = 4 (perfect agreement in every resample) and the difference of
    two identical raters: defined, no width, and a reason; a proportion never has none."""
    out = M.bootstrap_intervals([1, 1, 0, 0], [1, 1, 0, 0], list("abcd"), None, Bootstrap(300))
    assert out["kappa"].bounds == (1.0, 1.0)
    assert out["kappa"].reason == M.ZERO_WIDTH.format(value=1.0)
    assert out["accuracy"].high == 1.0 and out["accuracy"].low < 0.6 and not out["accuracy"].reason
    same = [1, 0, 1, 1, 0, 1]
    d = M.paired_bootstrap_diff(same, [1, 0, 0, 1, 0, 1], same, [1, 0, 0, 1, 0, 1], list("abcdef"))
    assert d.ci.bounds == (0.0, 0.0) and d.ci.reason.startswith("no width")
    # A defined interval with width has no reason.
    wide = M.bootstrap_intervals([1, 0, 1, 0, 1], [1, 0, 0, 0, 1], list("abcde"), ["kappa"])
    assert wide["kappa"].reason is None and wide["kappa"].high > wide["kappa"].low


def test_fmt_shows_the_reason_beside_a_zero_width_interval() -> None:
    out = M.bootstrap_intervals([1, 1, 0, 0], [1, 1, 0, 0], list("abcd"), None, Bootstrap(300))
    text = fmt.value_with_ci(M.Value(1.0), out["kappa"])
    assert text == f"1.00 [1.00, 1.00] ({M.ZERO_WIDTH.format(value=1.0)})"
    assert fmt.interval_text(out["kappa"]).endswith("too few tasks or no disagreement)")
    assert "no width" in fmt.signed_diff(M.Value(0.0), M.Interval(0.0, 0.0, "no width: x"))
    # A positive width that rounds to none gets more digits, not "[0.00, 0.00]".
    assert fmt.value_with_ci(M.Value(0.0), M.Interval(0.0, 0.004)) == "0.00 [0.000, 0.004]"
    assert fmt.signed_diff(M.Value(0.001), M.Interval(-0.001, 0.003)) == "±0.00 [-0.001, +0.003]"


def test_method_caption_names_each_interval_and_warns_of_few_clusters() -> None:
    text = fmt.method_caption(Bootstrap(), 63)
    assert "percentile bootstrap over tasks (63 clusters, 2,000 resamples, seed 0)" in text
    assert "Accuracy, precision, recall, specificity, FPR, FNR: Clopper-Pearson interval" in text
    assert "kappa, AC1, F1, MCC, AUC and differences: the percentile bootstrap" in text
    assert "too narrow" not in text
    few = fmt.method_caption(Bootstrap(unit="site"), [12, 40])
    assert "As few as 12 clusters (fewer than 20): the percentile intervals are likely " in few
    assert "Only 19 clusters" in fmt.method_caption(Bootstrap(), 19)
    assert "too narrow" not in fmt.method_caption(Bootstrap(), [20, 300])
