"""Tests for lib.metrics: against scikit-learn, statsmodels, krippendorff and hand-worked tables."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from lib import metrics as M

# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------


def _labels(n: int, prevalence: float, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(n) < prevalence).astype(float)


def _noisy_copy(ref: np.ndarray, agree: float, rng: np.random.Generator) -> np.ndarray:
    """A rater that copies ``ref`` with probability ``agree`` and flips it otherwise."""
    return np.where(rng.random(ref.size) < agree, ref, 1.0 - ref)


def _with_missing(x: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    out = x.copy()
    out[rng.random(x.size) < share] = np.nan
    return out


def _same(value: M.Value, expected: float) -> bool:
    """Value equals a sklearn/statsmodels float, where NaN means undefined."""
    if math.isnan(expected):
        return value.value is None and bool(value.reason)
    return value.value is not None and math.isclose(value.value, expected, abs_tol=1e-10)


def _gwet_ac1_from_labels(a: np.ndarray, b: np.ndarray) -> float:
    """Gwet's multi-rater AC1 (r raters, Q categories) written from raw labels, r = Q = 2.

    p_a = mean_i sum_k r_ik (r_ik - 1) / (r (r - 1)); pi_k = mean_i r_ik / r;
    p_e = sum_k pi_k (1 - pi_k) / (Q - 1). Independent of the count formula in lib.
    """
    r = 2
    ratings = np.column_stack([a, b])
    r_ik = np.stack([(ratings == k).sum(axis=1) for k in (0, 1)], axis=1)
    p_a = np.mean((r_ik * (r_ik - 1)).sum(axis=1) / (r * (r - 1)))
    pi = (r_ik / r).mean(axis=0)
    p_e = float(np.sum(pi * (1 - pi)) / (2 - 1))
    return (p_a - p_e) / (1 - p_e)


def _random_case(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random (pred, ref) with missing values, including tiny and one-class cases."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    prevalence = [0.0, 0.03, 0.5, 0.97, 1.0, float(rng.random())][seed % 6]
    ref = _labels(n, prevalence, rng)
    pred = _noisy_copy(ref, float(rng.random()), rng)
    if seed % 7 == 0:  # one rater that always says the same thing
        pred[:] = float(seed % 2)
    share = [0.0, 0.2, 0.6][seed % 3]
    return _with_missing(pred, share, rng), _with_missing(ref, share, rng)


# ---------------------------------------------------------------------------------------
# Hand-worked tables
# ---------------------------------------------------------------------------------------


def test_hand_worked_table() -> None:
    # tp=20, fp=5, fn=10, tn=15 (n = 50): the classic kappa example.
    # p_o = 35/50 = 0.7; p_pred = 25/50 = 0.5, p_ref = 30/50 = 0.6
    # kappa: p_e = 0.5*0.6 + 0.5*0.4 = 0.5 -> (0.7 - 0.5) / 0.5 = 0.4
    # AC1: pi = (0.5 + 0.6)/2 = 0.55, p_e = 2*0.55*0.45 = 0.495 -> 0.205/0.505
    # MCC: (20*15 - 5*10) / sqrt(25*30*20*25) = 250 / sqrt(375000) = 1/sqrt(6)
    # precision 20/25, recall 20/30, specificity 15/20, F1 = 40/55, FPR 5/20, FNR 10/30
    c = M.Confusion(tp=20, fp=5, fn=10, tn=15)
    got = {k: v.value for k, v in M.metrics(c).items()}
    expected = {
        "pred_positive_rate": 0.5,
        "ref_positive_rate": 0.6,
        "accuracy": 0.7,
        "precision": 0.8,
        "recall": 2 / 3,
        "specificity": 0.75,
        "f1": 40 / 55,
        "fpr": 0.25,
        "fnr": 1 / 3,
        "kappa": 0.4,
        "ac1": 0.205 / 0.505,
        "mcc": 1 / math.sqrt(6),
    }
    assert got == pytest.approx(expected, abs=1e-12)
    assert not M.kappa_misleads(c)


def test_kappa_paradox_table() -> None:
    # tp=90, fp=5, fn=5, tn=0: 90% raw agreement, both raters say 1 for 95% of tasks.
    # kappa: p_e = 0.95^2 + 0.05^2 = 0.905 -> (0.9 - 0.905) / 0.095 = -1/19
    # AC1: pi = 0.95, p_e = 2*0.95*0.05 = 0.095 -> (0.9 - 0.095) / 0.905 = 0.805/0.905
    c = M.Confusion(tp=90, fp=5, fn=5, tn=0)
    assert M.kappa(c).value == pytest.approx(-1 / 19, abs=1e-12)
    assert M.ac1(c).value == pytest.approx(0.805 / 0.905, abs=1e-12)
    assert M.accuracy(c).value == pytest.approx(0.9)
    assert M.kappa_misleads(c)


def test_kappa_misleads_rule() -> None:
    balanced = M.Confusion(tp=40, fp=10, fn=10, tn=40)
    assert not M.kappa_misleads(balanced)
    # Reference prevalence 0.9 alone triggers it, even if pred is balanced.
    assert M.kappa_misleads(M.Confusion(tp=50, fp=0, fn=40, tn=10))
    # Reference 0.80 (inside), pred 0.95: pooled (0.80 + 0.95)/2 = 0.875 > 0.85.
    assert M.kappa_misleads(M.Confusion(tp=80, fp=15, fn=0, tn=5))
    # Low prevalence side: reference 0.10.
    assert M.kappa_misleads(M.Confusion(tp=5, fp=5, fn=5, tn=85))
    # Threshold is a parameter: 0.9 dominance no longer flags reference 0.875.
    c = M.Confusion(tp=70, fp=5, fn=0, tn=5)  # ref 70/80 = 0.875, pooled 0.90625
    assert M.kappa_misleads(c)
    assert not M.kappa_misleads(c, dominance=0.95)
    assert not M.kappa_misleads(M.Confusion(0, 0, 0, 0))


def test_degenerate_values_have_reasons() -> None:
    empty = M.metrics(M.Confusion(0, 0, 0, 0))
    assert all(v.value is None and v.reason.startswith("n = 0") for v in empty.values())

    both_one = M.Confusion(tp=7, fp=0, fn=0, tn=0)  # both raters always say 1
    assert M.kappa(both_one) == M.Value(None, "both raters use one class (p_e = 1)")
    assert M.ac1(both_one).value == 1.0  # AC1 is defined: p_e = 0
    assert M.accuracy(both_one).value == 1.0
    assert M.mcc(both_one).reason == "both raters use one class (a marginal is zero)"
    assert M.fpr(both_one).reason == "reference has no negative label (fp + tn = 0)"
    assert M.recall(both_one).value == 1.0

    ref_one = M.Confusion(tp=3, fp=0, fn=2, tn=0)  # reference all 1, pred mixed
    assert M.mcc(ref_one).reason == "reference has only one class (a marginal is zero)"
    assert M.kappa(ref_one).value == 0.0  # p_e < 1 here, kappa is defined

    pred_one = M.Confusion(tp=0, fp=0, fn=2, tn=3)  # pred never says 1
    assert M.mcc(pred_one).reason == "prediction has only one class (a marginal is zero)"
    assert M.precision(pred_one).value is None
    assert M.f1(pred_one).value == 0.0  # 2tp + fp + fn = 2 > 0

    opposite = M.Confusion(tp=0, fp=0, fn=4, tn=0)  # pred all 0, ref all 1
    assert M.kappa(opposite).value == 0.0  # p_e = 0, p_o = 0
    assert M.f1(M.Confusion(0, 0, 0, 9)).reason.startswith("neither side")


def test_value_rejects_nan_and_formats() -> None:
    with pytest.raises(ValueError):
        M.Value(float("nan"))
    assert M.Value(np.float64(0.5)).value == 0.5
    assert type(M.Value(np.float64(0.5)).value) is float
    assert M.Value(0.41234).fmt(2) == "0.41"
    assert M.Value(None, "n = 0").fmt() == "n/a"


# ---------------------------------------------------------------------------------------
# Against scikit-learn and statsmodels on many random cases
# ---------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("block", range(4))
def test_metrics_match_sklearn(block: int) -> None:
    for seed in range(block * 75, (block + 1) * 75):
        pred, ref = _random_case(seed)
        c = M.confusion(pred, ref)
        ok = ~(np.isnan(pred) | np.isnan(ref))
        p, r = pred[ok].astype(int), ref[ok].astype(int)
        assert c.n == ok.sum()
        if c.n == 0:
            assert all(v.value is None for v in M.metrics(c).values())
            continue
        tn, fp, fn, tp = skm.confusion_matrix(r, p, labels=[0, 1]).ravel()
        assert (c.tp, c.fp, c.fn, c.tn) == (tp, fp, fn, tn)
        nan = np.nan
        assert _same(M.accuracy(c), skm.accuracy_score(r, p))
        assert _same(M.precision(c), skm.precision_score(r, p, zero_division=nan))
        assert _same(M.recall(c), skm.recall_score(r, p, zero_division=nan))
        assert _same(M.f1(c), skm.f1_score(r, p, zero_division=nan))
        spec = skm.recall_score(r, p, pos_label=0, zero_division=nan)
        assert _same(M.specificity(c), spec)
        assert _same(M.fpr(c), 1 - spec)
        assert _same(M.fnr(c), 1 - skm.recall_score(r, p, zero_division=nan))
        assert _same(M.kappa(c), skm.cohen_kappa_score(p, r))
        assert _same(M.ac1(c), _gwet_ac1_from_labels(p, r))
        marginals = [tp + fp, tp + fn, tn + fp, tn + fn]
        sk_mcc = skm.matthews_corrcoef(r, p)
        if min(marginals) > 0:
            assert _same(M.mcc(c), sk_mcc)
        else:  # the documented difference: sklearn says 0.0, we say undefined
            assert sk_mcc == 0.0
            assert M.mcc(c).value is None and "marginal is zero" in M.mcc(c).reason
        if M.kappa(c).defined:
            table = np.array([[c.tp, c.fp], [c.fn, c.tn]])
            assert M.kappa(c).value == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)


def _by_hand(tp: int, fp: int, fn: int, tn: int) -> dict[str, float | None]:
    """Each metric from its textbook formula, one table at a time (None = undefined).

    Written independently of `lib.metrics` (which `metrics` itself calls through
    `metric_arrays`, so comparing the two would only compare the code with itself).
    """

    def ratio(num: float, den: float) -> float | None:
        return None if den == 0 else num / den

    n = tp + fp + fn + tn
    out = {
        "pred_positive_rate": ratio(tp + fp, n),
        "ref_positive_rate": ratio(tp + fn, n),
        "accuracy": ratio(tp + tn, n),
        "precision": ratio(tp, tp + fp),
        "recall": ratio(tp, tp + fn),
        "specificity": ratio(tn, tn + fp),
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
        "fpr": ratio(fp, fp + tn),
        "fnr": ratio(fn, fn + tp),
        "kappa": None,
        "ac1": None,
        "mcc": None,
    }
    if n:
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2  # Cohen: product of marginals
        out["kappa"] = ratio(po - pe, 1 - pe)
        q = ((tp + fp) + (tp + fn)) / (2 * n)  # Gwet: mean positive rate
        out["ac1"] = ratio(po - 2 * q * (1 - q), 1 - 2 * q * (1 - q))
        den = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) ** 0.5
        out["mcc"] = ratio(tp * tn - fp * fn, den)
    return out


def test_metric_arrays_match_textbook_formulas() -> None:
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 4, size=(400, 4)).astype(float)
    counts[rng.random(counts.shape) < 0.3] = 0  # many zero cells and empty tables
    arrays = M.metric_arrays(counts)
    assert set(arrays) == set(M.registry.metric_names())
    n_undefined = 0
    for i, row in enumerate(counts):
        for name, expected in _by_hand(*(int(x) for x in row)).items():
            a = arrays[name][i]
            if expected is None:
                n_undefined += 1
                assert np.isnan(a), (name, row)
            else:
                assert a == pytest.approx(expected, abs=1e-12), (name, row)
    assert n_undefined > 50  # the draw does reach the degenerate tables
    with pytest.raises(ValueError):
        M.metric_arrays(np.zeros((3, 3)))


# ---------------------------------------------------------------------------------------
# Missing labels and input coercion
# ---------------------------------------------------------------------------------------


def test_missing_is_excluded_and_counted_never_zero() -> None:
    pred = [1, None, 0, np.nan, pd.NA, 1, 0]
    ref = [1, 1, None, 0, np.nan, 0, 0]
    c = M.confusion(pred, ref)
    # complete rows: (1,1) tp, (1,0) fp, (0,0) tn
    assert (c.tp, c.fp, c.fn, c.tn) == (1, 1, 0, 1)
    assert c.n == 3
    assert (c.n_missing_pred, c.n_missing_ref, c.n_missing_both) == (3, 2, 1)
    assert c.n_excluded == 4
    # Had missing become 0, pred None vs ref 1 would be an extra fn.
    zeros = M.confusion([0 if v is None or v is pd.NA or v != v else v for v in pred], ref)
    assert zeros.fn == 1 and c.fn == 0


def test_pandas_nullable_inputs() -> None:
    pred = pd.Series([1, pd.NA, 0, 1], dtype="Int64")
    ref = pd.Series([True, True, pd.NA, False], dtype="boolean")
    c = M.confusion(pred, ref)
    assert (c.tp, c.fp, c.fn, c.tn, c.n_missing_pred, c.n_missing_ref) == (1, 1, 0, 0, 1, 1)
    floats = pd.Series([1.0, np.nan, 0.0, 1.0], index=[10, 11, 12, 13])
    assert M.confusion(floats, ref.to_numpy()) == c
    assert M.confusion(np.array([True, False]), [1, 0]) == M.Confusion(1, 0, 0, 1)


def test_all_missing_and_empty_inputs() -> None:
    c = M.confusion([None, None, 1], [1, np.nan, np.nan])
    assert c.n == 0 and c.n_excluded == 3
    assert M.kappa(c).reason == "n = 0 (3 rows have a missing label)"
    assert M.confusion([], []) == M.Confusion(0, 0, 0, 0)
    report = M.binary_report([None, None], [1, 0], ["a", "b"], boot=M.Bootstrap(50))
    assert report["counts"]["n"] == 0 and report["counts"]["n_clusters"] == 0
    assert all(iv.bounds is None and iv.reason == "n = 0" for iv in report["ci"].values())
    json.dumps(M.to_jsonable(report), allow_nan=False)


@pytest.mark.parametrize(
    "bad",
    [
        [1, 2],
        [0.5, 1],
        ["Correct", "Incorrect"],
        ["1", "0"],
        np.array(["1", "0"]),
        pd.Series(["1", "0"]),
        pd.Series(["1", None], dtype=object),
        np.array([[1, 0]]),
    ],
)
def test_malformed_labels_raise(bad: object) -> None:
    with pytest.raises(ValueError):
        M.confusion(bad, [1, 0])


def test_length_mismatch_and_bad_settings_raise() -> None:
    with pytest.raises(ValueError):
        M.confusion([1, 0], [1])
    with pytest.raises(ValueError):
        M.bootstrap_ci([1, 0], [1, 0], ["a"], ["kappa"])
    with pytest.raises(ValueError):
        M.bootstrap_ci([1, 0], [1, 0], ["a", "b"], ["kapa"])
    with pytest.raises(ValueError):
        M.bootstrap_ci([1, 0], [1, 0], ["a", "b"], boot=M.Bootstrap(level=1.5))
    with pytest.raises(ValueError):
        M.bootstrap_ci([1, 0], [1, 0], ["a", "b"], boot=M.Bootstrap(0))
    with pytest.raises(ValueError):
        M.bootstrap_ci([1, 0], [1, 0], ["a", None])


# ---------------------------------------------------------------------------------------
# Bootstrap
# ---------------------------------------------------------------------------------------


def _clustered_data(
    n_tasks: int, seed: int, rows_per_task: int = 2
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Several rows per task (e.g. reviewers) that share the task's truth."""
    rng = np.random.default_rng(seed)
    truth = _labels(n_tasks, 0.45, rng)
    ref = np.repeat(truth, rows_per_task)
    pred = _noisy_copy(ref, 0.8, rng)
    tasks = np.repeat([f"task{i:03d}" for i in range(n_tasks)], rows_per_task)
    return pred, ref, tasks


@pytest.mark.parametrize("k", [1, 3, 260, 7000])
def test_resample_weights_follow_documented_scheme(k: int) -> None:
    b = 40
    w = M.resample_weights(k, boot=M.Bootstrap(b, 11))
    idx = np.random.default_rng(11).integers(0, k, size=(b, k))
    expected = np.stack([np.bincount(row, minlength=k) for row in idx])
    assert w.shape == (b, k)
    np.testing.assert_array_equal(w, expected)
    assert (w.sum(axis=1) == k).all()


def test_bootstrap_counts_equal_naive_loop() -> None:
    pred, ref, tasks = _clustered_data(30, seed=1, rows_per_task=3)
    pred = _with_missing(pred, 0.1, np.random.default_rng(2))
    counts = M.bootstrap_counts(pred, ref, tasks, boot=M.Bootstrap(25, 4))
    ok = ~(np.isnan(pred) | np.isnan(ref))
    kept_tasks = np.unique(tasks[ok])  # sorted ids = column order
    idx = np.random.default_rng(4).integers(0, kept_tasks.size, size=(25, kept_tasks.size))
    for b in range(5):
        rows = np.concatenate([np.flatnonzero((tasks == kept_tasks[j]) & ok) for j in idx[b]])
        c = M.confusion(pred[rows], ref[rows])
        np.testing.assert_array_equal(counts[b], c.as_array())


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    pred, ref, tasks = _clustered_data(80, seed=3)
    a = M.bootstrap_ci(pred, ref, tasks, ["kappa", "fpr"], boot=M.Bootstrap(300, 7))
    b = M.bootstrap_ci(pred, ref, tasks, ["kappa", "fpr"], boot=M.Bootstrap(300, 7))
    c = M.bootstrap_ci(pred, ref, tasks, ["kappa", "fpr"], boot=M.Bootstrap(300, 8))
    assert a == b
    assert a["kappa"] != c["kappa"]
    # Row order does not matter: clusters are numbered by sorted id.
    perm = np.random.default_rng(0).permutation(pred.size)
    d = M.bootstrap_ci(
        pred[perm], ref[perm], tasks[perm], ["kappa", "fpr"], boot=M.Bootstrap(300, 7)
    )
    assert d == a  # integer counts: exactly equal


@pytest.mark.parametrize("seed", range(5))
def test_interval_contains_point_estimate(seed: int) -> None:
    pred, ref, tasks = _clustered_data(130, seed=seed)
    report = M.binary_report(pred, ref, tasks, boot=M.Bootstrap(500, seed))
    assert set(report["ci"]) == set(M.registry.interval_names())
    for name, iv in report["ci"].items():
        point = report["metrics"][name].value
        assert iv.low <= point <= iv.high, name
        assert iv.high - iv.low > 0.01, name  # a real spread, not a degenerate point


def test_level_changes_width() -> None:
    pred, ref, tasks = _clustered_data(100, seed=9)
    wide = M.bootstrap_ci(pred, ref, tasks, ["kappa"], boot=M.Bootstrap(1000, 0, 0.95))["kappa"]
    narrow = M.bootstrap_ci(pred, ref, tasks, ["kappa"], boot=M.Bootstrap(1000, 0, 0.5))["kappa"]
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


def test_cluster_resampling_is_not_fooled_by_duplicated_rows() -> None:
    rng = np.random.default_rng(12)
    ref = _labels(120, 0.5, rng)
    pred = _noisy_copy(ref, 0.75, rng)
    tasks = np.arange(120)
    dup = 5  # every task's row copied 5 times within the same task
    pred5, ref5, tasks5 = (np.repeat(x, dup) for x in (pred, ref, tasks))
    names = ["kappa", "accuracy"]
    once = M.bootstrap_ci(pred, ref, tasks, names, boot=M.Bootstrap(1000, 1))
    copies = M.bootstrap_ci(pred5, ref5, tasks5, names, boot=M.Bootstrap(1000, 1))
    # Task resampling: counts scale by 5, ratios are unchanged -> the same interval.
    for name in names:
        assert copies[name] == pytest.approx(once[name], abs=1e-12)
    # Row resampling treats the copies as independent evidence -> about 1/sqrt(5) width.
    rows = M.bootstrap_ci(pred5, ref5, None, names, boot=M.Bootstrap(1000, 1))
    for name in names:
        width_rows = rows[name][1] - rows[name][0]
        width_tasks = once[name][1] - once[name][0]
        assert width_rows < 0.6 * width_tasks, name


def test_undefined_resamples_dropped_or_interval_none() -> None:
    # Reference never 1: kappa and MCC are undefined in every resample (percentile), and
    # recall has no row to be a share of (its Clopper-Pearson interval says the metric's reason).
    ref = np.zeros(50)
    pred = _labels(50, 0.3, np.random.default_rng(0))
    out = M.bootstrap_intervals(
        pred, ref, np.arange(50), ["recall", "fpr", "mcc"], boot=M.Bootstrap(400, 0)
    )
    assert out["mcc"].bounds is None
    assert out["mcc"].reason == "undefined in 400 of 400 resamples (more than half)"
    assert out["recall"].bounds is None
    assert out["recall"].reason == "reference has no positive label (tp + fn = 0)"
    assert out["fpr"].defined and out["fpr"].method == "clopper-pearson"
    # Only cluster a holds positives: MCC is undefined when a is not drawn ((2/3)^3) or
    # drawn alone ((1/3)^3): 1/3 of the resamples are dropped, the rest give the interval.
    ref2 = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    pred2 = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    tasks2 = ["a", "a", "b", "b", "c", "c"]
    out2 = M.bootstrap_intervals(pred2, ref2, tasks2, ["mcc", "recall"], boot=M.Bootstrap(2000, 0))
    assert out2["mcc"].defined and out2["mcc"].reason is None
    assert 1200 < out2["mcc"].n_valid < 1470
    # Recall's two rows sit in one cluster: no interval (resampling one cluster is blind).
    assert out2["recall"].bounds is None
    assert out2["recall"].reason.startswith("all 2 rows it is a share of are in one cluster")


def test_clusters_without_complete_rows_are_not_resampled() -> None:
    pred = np.array([1, 0, np.nan, np.nan, 1, 0])
    ref = np.array([1, 0, 1, 0, 0, 0])
    tasks = ["a", "a", "b", "b", "c", "c"]
    ids, per_cluster = M.cluster_counts(pred, ref, tasks)
    assert list(ids) == ["a", "c"]
    np.testing.assert_array_equal(per_cluster, [[1, 0, 0, 1], [0, 1, 0, 1]])
    assert M.binary_report(pred, ref, tasks, boot=M.Bootstrap(20))["counts"]["n_clusters"] == 2


def test_bootstrap_ci_matches_intervals() -> None:
    pred, ref, tasks = _clustered_data(50, seed=4)
    rich = M.bootstrap_intervals(pred, ref, tasks, None, boot=M.Bootstrap(200, 2))
    plain = M.bootstrap_ci(pred, ref, tasks, None, boot=M.Bootstrap(200, 2))
    assert set(plain) == set(M.registry.metric_names())
    assert plain == {k: iv.bounds for k, iv in rich.items()}
    empty = M.bootstrap_ci([np.nan], [1], ["a"], ["kappa"], boot=M.Bootstrap(10))
    assert empty == {"kappa": None}


# ---------------------------------------------------------------------------------------
# Paired difference
# ---------------------------------------------------------------------------------------


def test_paired_diff_identical_sides_is_zero() -> None:
    pred, ref, tasks = _clustered_data(60, seed=5)
    d = M.paired_bootstrap_diff(pred, ref, pred, ref, tasks, "kappa", boot=M.Bootstrap(300, 0))
    assert d.diff.value == 0.0
    assert d.ci.bounds == (0.0, 0.0)


def test_paired_diff_uses_common_rows_and_pairs_the_draws() -> None:
    rng = np.random.default_rng(6)
    ref = _labels(200, 0.5, rng)
    pred_a = _noisy_copy(ref, 0.85, rng)
    pred_b = pred_a.copy()
    pred_b[0] = 1 - pred_b[0]  # B differs from A on one task only
    pred_b[1] = np.nan  # and has no verdict on another
    tasks = np.arange(200)
    d = M.paired_bootstrap_diff(pred_a, ref, pred_b, ref, tasks, "kappa", boot=M.Bootstrap(1000, 0))
    assert d.n == 199 and d.n_clusters == 199
    keep = ~np.isnan(pred_b)
    ka = M.kappa(M.confusion(pred_a[keep], ref[keep])).value
    kb = M.kappa(M.confusion(pred_b[keep], ref[keep])).value
    assert d.a.value == pytest.approx(ka) and d.b.value == pytest.approx(kb)
    assert d.diff.value == pytest.approx(ka - kb)
    assert d.ci.low <= d.diff.value <= d.ci.high
    # Same tasks on both sides: the width reflects one flipped task (drawn 0-3 times),
    # not two independent samples (which would be about sqrt(2) x one side's width).
    single = M.bootstrap_ci(pred_a, ref, tasks, ["kappa"], boot=M.Bootstrap(1000, 0))["kappa"]
    assert d.ci.high - d.ci.low < 0.25 * (single[1] - single[0])


def test_paired_diff_detects_a_real_difference() -> None:
    rng = np.random.default_rng(7)
    ref = _labels(150, 0.5, rng)
    good, poor = _noisy_copy(ref, 0.95, rng), _noisy_copy(ref, 0.65, rng)
    d = M.paired_bootstrap_diff(
        good, ref, poor, ref, np.arange(150), "accuracy", boot=M.Bootstrap(1000, 0)
    )
    assert d.ci.low > 0.1
    undefined = M.paired_bootstrap_diff([1, 1], [1, 1], [1, 0], [1, 0], ["a", "b"], "kappa")
    assert undefined.diff.value is None and undefined.diff.reason.startswith("a: ")


# ---------------------------------------------------------------------------------------
# ROC
# ---------------------------------------------------------------------------------------


def _scores_for(ref: np.ndarray, rng: np.random.Generator, ties: bool) -> np.ndarray:
    s = np.clip(0.25 * ref + rng.random(ref.size) * 0.8, 0, 1)
    return np.round(s, 1) if ties else s


@pytest.mark.parametrize("seed", range(12))
def test_roc_matches_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ref = _labels(int(rng.integers(5, 80)), 0.4, rng)
    ref[:2] = [0, 1]
    scores = _with_missing(_scores_for(ref, rng, ties=seed % 2 == 0), 0.1, rng)
    ref = _with_missing(ref, 0.05, rng)
    f, t, thr, auc = M.roc(scores, ref)
    ok = ~(np.isnan(scores) | np.isnan(ref))
    ok[:2] = True
    ok &= ~(np.isnan(scores) | np.isnan(ref))
    sf, st, sthr = skm.roc_curve(ref[ok], scores[ok])
    np.testing.assert_allclose(f, sf)
    np.testing.assert_allclose(t, st)
    np.testing.assert_allclose(thr, sthr)
    if len(set(ref[ok])) == 2:
        assert auc.value == pytest.approx(skm.roc_auc_score(ref[ok], scores[ok]), abs=1e-12)


def test_roc_degenerate() -> None:
    f, t, thr, auc = M.roc([0.2, 0.9, 0.4], [1, 1, np.nan])
    assert f.size == t.size == thr.size == 0
    assert auc == M.Value(None, "reference has only one class")
    assert M.roc([np.nan], [1])[3] == M.Value(None, "n = 0")
    assert M.auc_ci([0.1, 0.2], [1, 1], ["a", "b"], boot=M.Bootstrap(50)).reason.startswith(
        "undefined in 50"
    )
    assert M.auc_ci([], [], [], boot=M.Bootstrap(50)).reason == "n = 0"


@pytest.mark.parametrize("ties", [False, True])
def test_auc_ci_equals_naive_resampling_loop(ties: bool) -> None:
    rng = np.random.default_rng(3)
    tasks = np.repeat(np.arange(40), 2)  # two rows per task
    ref = _labels(80, 0.5, rng)
    scores = _scores_for(ref, rng, ties)
    b, seed = 300, 5
    iv = M.auc_ci(scores, ref, tasks, boot=M.Bootstrap(b, seed))
    weights = M.resample_weights(40, boot=M.Bootstrap(b, seed))
    aucs = []
    for w in weights:
        rows = np.repeat(np.arange(80), w[tasks])
        r = ref[rows]
        aucs.append(skm.roc_auc_score(r, scores[rows]) if 0 < r.sum() < r.size else np.nan)
    aucs = np.array(aucs)
    lo, hi = np.quantile(aucs[~np.isnan(aucs)], [0.025, 0.975])
    assert (iv.low, iv.high) == pytest.approx((lo, hi), abs=1e-12)
    point = M.roc(scores, ref)[3].value
    assert iv.low < point < iv.high


def test_point_at_threshold() -> None:
    scores = np.array([0.9, 0.8, 0.79, 0.1, np.nan, 0.95])
    ref = np.array([1, 0, 1, 0, 1, np.nan])
    # verdicts >= 0.8: 1, 1, 0, 0, missing, 1 -> rows 0-3 complete
    # tp=1 (row 0), fp=1 (row 1), fn=1 (row 2), tn=1 (row 3)
    fpr_v, tpr_v = M.point_at_threshold(scores, ref, 0.8)
    assert (fpr_v.value, tpr_v.value) == (0.5, 0.5)
    fpr_all, tpr_all = M.point_at_threshold(scores, ref, 0.0)
    assert (fpr_all.value, tpr_all.value) == (1.0, 1.0)
    assert M.point_at_threshold([0.5], [1], 0.3)[0].reason.startswith("reference has no neg")


# ---------------------------------------------------------------------------------------
# McNemar
# ---------------------------------------------------------------------------------------


def test_mcnemar_matches_statsmodels() -> None:
    rng = np.random.default_rng(0)
    for _ in range(150):
        n = int(rng.integers(1, 60))
        a = _labels(n, float(rng.random()), rng)
        b = _noisy_copy(a, float(rng.random()), rng)
        c = M.confusion(a, b)
        table = np.array([[c.tp, c.fp], [c.fn, c.tn]])
        expected = mcnemar(table, exact=True).pvalue
        assert M.mcnemar_exact(a, b).value == pytest.approx(expected, rel=1e-12)


def test_mcnemar_edge_cases() -> None:
    # No discordant pair: p = 1 (statsmodels agrees).
    assert M.mcnemar_exact([1, 0, 1], [1, 0, 1]) == M.Value(1.0)
    assert mcnemar(np.array([[2, 0], [0, 1]]), exact=True).pvalue == 1.0
    # Hand-worked: discordant 0 vs 6 -> 2 * 0.5^6 = 1/32.
    assert M.mcnemar_exact([0] * 6, [1] * 6).value == pytest.approx(1 / 32)
    # Missing pairs are dropped, not counted as 0.
    assert M.mcnemar_exact([0] * 6 + [None] * 5, [1] * 6 + [0] * 5).value == pytest.approx(1 / 32)
    assert M.mcnemar_exact([None], [1]) == M.Value(None, "n = 0")


# ---------------------------------------------------------------------------------------
# Multi-rater agreement
# ---------------------------------------------------------------------------------------


def _panel(n_tasks: int, n_raters: int, seed: int, missing: bool) -> np.ndarray:
    """tasks x raters; with ``missing`` each task keeps 1-3 raters (like om2w)."""
    rng = np.random.default_rng(seed)
    truth = _labels(n_tasks, 0.35, rng)
    table = np.array([_noisy_copy(truth, 0.8, rng) for _ in range(n_raters)]).T
    if missing:
        for i in range(n_tasks):
            keep = rng.choice(n_raters, int(rng.integers(1, 4)), replace=False)
            drop = np.setdiff1d(np.arange(n_raters), keep)
            table[i, drop] = np.nan
    return table


# Hand-worked panel: tasks with ratings [1,1,-], [1,0,0], [0,0,-], [1,1,1].
# m = (2,3,2,3), x = (2,1,0,3); N = 4, sum m = 10, p = 6/10.
# Fleiss-Cuzick: sum x(m-x)/m = 2/3; kappa = 1 - (2/3) / (N (m_bar - 1) p q)
#   = 1 - (2/3) / (4 * 1.5 * 0.24) = 1 - (2/3) / 1.44 = 29/54.
# Krippendorff: sum x(m-x)/(m-1) = 1; alpha = 1 - (n-1) * 1 / (n0 n1) = 1 - 9/24 = 5/8.
HAND_PANEL = [[1, 1, None], [1, 0, 0], [0, 0, None], [1, 1, 1]]


def test_panel_hand_worked() -> None:
    assert M.fleiss_kappa(HAND_PANEL).value == pytest.approx(float(Fraction(29, 54)))
    assert M.krippendorff_alpha(HAND_PANEL).value == pytest.approx(0.625)
    reliability = np.array(HAND_PANEL, dtype=float).T
    assert krippendorff.alpha(reliability, level_of_measurement="nominal") == pytest.approx(0.625)


@pytest.mark.parametrize("n_raters", [2, 3, 5])
def test_fleiss_matches_statsmodels_with_equal_raters(n_raters: int) -> None:
    for seed in range(20):
        table = _panel(int(np.random.default_rng(seed).integers(3, 60)), n_raters, seed, False)
        counts, _ = aggregate_raters(table.astype(int), n_cat=2)
        expected = sm_fleiss_kappa(counts, method="fleiss")
        got = M.fleiss_kappa(table)
        assert _same(got, expected)


def test_fleiss_unequal_raters_rules() -> None:
    table = _panel(80, 6, seed=1, missing=True)
    value = M.fleiss_kappa(table).value
    # Tasks with a single rating carry no agreement information: dropping them is a no-op.
    m = (~np.isnan(table)).sum(axis=1)
    assert M.fleiss_kappa(table[m >= 2]).value == pytest.approx(value, abs=1e-12)
    # Column order (which reviewer is which) does not matter.
    assert M.fleiss_kappa(table[:, ::-1]).value == pytest.approx(value, abs=1e-12)
    # With equal raters per task it reduces to statsmodels' Fleiss kappa.
    two = table[m == 2]
    two_compact = np.array([row[~np.isnan(row)] for row in two])
    counts, _ = aggregate_raters(two_compact.astype(int), n_cat=2)
    assert M.fleiss_kappa(two).value == pytest.approx(sm_fleiss_kappa(counts), abs=1e-12)


def test_krippendorff_matches_package() -> None:
    for seed in range(30):
        table = _panel(int(np.random.default_rng(seed).integers(4, 60)), 6, seed, True)
        got = M.krippendorff_alpha(table)
        try:
            with np.errstate(invalid="ignore"):
                expected = krippendorff.alpha(table.T, level_of_measurement="nominal")
        except ValueError:  # one value in the domain: the package raises
            expected = np.nan
        assert _same(got, expected)


def test_panel_degenerate_and_dataframe_input() -> None:
    ones = [[1, 1], [1, None], [1, 1]]
    assert M.fleiss_kappa(ones) == M.Value(None, "all ratings use one class (p_e = 1)")
    assert M.krippendorff_alpha(ones).value is None
    singles = [[1, None], [None, 0]]
    assert M.fleiss_kappa(singles).reason == "n = 0 (no task has two or more ratings)"
    assert M.krippendorff_alpha(np.empty((0, 0))).reason.startswith("n = 0")
    frame = pd.DataFrame(
        {"Judge9": pd.array([1, 1, 0, 1], dtype="Int64"), "Judge11": [1.0, 0.0, 0.0, 1.0]}
    )
    frame["Judge12"] = pd.array([None, 0, None, 1], dtype="Int64")
    assert M.fleiss_kappa(frame).value == pytest.approx(float(Fraction(29, 54)))
    assert M.krippendorff_alpha(frame).value == pytest.approx(0.625)


def test_panel_report_and_intervals() -> None:
    table = _panel(106, 6, seed=2, missing=True)
    report = M.panel_report(table, boot=M.Bootstrap(500, 0))
    counts = report["counts"]
    m = (~np.isnan(table)).sum(axis=1)
    assert counts["n_tasks"] == (m >= 2).sum()
    assert counts["n_tasks_dropped"] == (m < 2).sum()
    assert counts["raters_per_task"] == {2: (m == 2).sum(), 3: (m == 3).sum()}
    for name in M.PANEL_METRICS:
        iv, point = report["ci"][name], report["metrics"][name].value
        assert iv.low < point < iv.high
    again = M.panel_intervals(table, None, boot=M.Bootstrap(500, 0))
    assert again == report["ci"]
    assert M.panel_intervals(table, ["fleiss_kappa"], boot=M.Bootstrap(500, 1)) != {
        "fleiss_kappa": again["fleiss_kappa"]
    }
    # Naive check of the task bootstrap for a few resamples.
    kept = table[m >= 2]
    w = M.resample_weights(kept.shape[0], boot=M.Bootstrap(500, 0))
    samples = []
    for row in w:
        v = M.fleiss_kappa(np.repeat(kept, row, axis=0)).value
        samples.append(np.nan if v is None else v)
    lo, hi = np.quantile(np.array(samples)[~np.isnan(samples)], [0.025, 0.975])
    assert (lo, hi) == pytest.approx(report["ci"]["fleiss_kappa"].bounds, abs=1e-12)


# ---------------------------------------------------------------------------------------
# Report, JSON and speed
# ---------------------------------------------------------------------------------------


def test_binary_report_agrees_with_parts() -> None:
    pred, ref, tasks = _clustered_data(120, seed=8)
    pred = _with_missing(pred, 0.05, np.random.default_rng(1))
    report = M.binary_report(pred, ref, tasks, boot=M.Bootstrap(400, 3))
    c = M.confusion(pred, ref)
    assert report["counts"] == {
        "n": c.n,
        "tp": c.tp,
        "fp": c.fp,
        "fn": c.fn,
        "tn": c.tn,
        "n_missing_pred": c.n_missing_pred,
        "n_missing_ref": 0,
        "n_excluded": c.n_excluded,
        "n_clusters": 120,
    }
    assert report["metrics"] == M.metrics(c)
    assert report["ci"] == M.bootstrap_intervals(
        pred, ref, tasks, M.registry.interval_names(), boot=M.Bootstrap(400, 3)
    )
    assert report["kappa_misleads"] is M.kappa_misleads(c)
    assert report["reasons"] == {}

    as_json = M.to_jsonable(report)
    assert as_json["metrics"]["kappa"] == report["metrics"]["kappa"].value
    assert as_json["ci"]["kappa"] == list(report["ci"]["kappa"].bounds)
    json.dumps(as_json, allow_nan=False)


def test_report_reasons_survive_json() -> None:
    ref = np.ones(20)
    pred = _labels(20, 0.5, np.random.default_rng(0))
    as_json = M.to_jsonable(M.binary_report(pred, ref, np.arange(20), boot=M.Bootstrap(100)))
    assert as_json["metrics"]["fpr"] is None
    assert as_json["ci"]["fpr"] is None
    assert as_json["reasons"]["fpr"] == "reference has no negative label (fp + tn = 0)"
    # FPR's interval (Clopper-Pearson) is undefined for the metric's own reason.
    assert as_json["reasons"]["ci:fpr"] == "reference has no negative label (fp + tn = 0)"
    assert as_json["reasons"]["ci:mcc"].startswith("undefined in 100 of 100")
    # Kappa is 0 in every resample (one reference class): no width, and it says why.
    assert as_json["reasons"]["ci:kappa"].startswith("no width: every resample gives 0.00")
    assert M.to_jsonable({"x": np.float64("nan"), "y": np.arange(2), "z": (M.Value(1),)}) == {
        "x": None,
        "y": [0, 1],
        "z": [1.0],
    }


# ---------------------------------------------------------------------------------------
# Cluster edges (issue 14): one cluster, and the name of the resampled unit
# ---------------------------------------------------------------------------------------


def test_one_cluster_interval_is_undefined() -> None:
    """Resampling a single cluster reproduces the same rows every time.

    The interval would be ``[v, v]``: certainty the data do not give. With websites as
    clusters every one-website subset is in that case. Expected in every bootstrap entry
    point: undefined, with the reason, as for ``n = 0``.
    """
    pred, ref, clusters = [1, 0, 1, 0], [1, 1, 0, 0], ["Adidas"] * 4
    ci = M.bootstrap_intervals(pred, ref, clusters, ["accuracy", "kappa"], boot=M.Bootstrap(200, 0))
    for name in ("accuracy", "kappa"):
        assert ci[name].bounds is None, (name, ci[name])
        assert ci[name].reason == M.ONE_CLUSTER
    report = M.binary_report(pred, ref, clusters, boot=M.Bootstrap(200))
    assert report["ci"]["accuracy"].bounds is None
    assert report["reasons"]["ci:accuracy"] == M.ONE_CLUSTER
    assert report["counts"]["n_clusters"] == 1
    diff = M.paired_bootstrap_diff(
        pred, ref, [1, 1, 1, 0], ref, clusters, "accuracy", boot=M.Bootstrap(200)
    )
    assert diff.ci.bounds is None and diff.ci.reason == M.ONE_CLUSTER
    assert diff.diff.value == pytest.approx(0.5 - 0.75)  # the point difference stays defined
    auc = M.auc_ci([0.9, 0.2, 0.6, 0.4], ref, clusters, boot=M.Bootstrap(200))
    assert auc.bounds is None and auc.reason == M.ONE_CLUSTER
    assert M.panel_intervals([[1, 1], [0, 1]][:1], boot=M.Bootstrap(200))[
        "fleiss_kappa"
    ].reason == (M.ONE_CLUSTER)
    # Missing rows do not count as clusters: two ids, but only one has a complete row.
    lone = M.bootstrap_intervals([1, None], [1, 0], ["a", "b"], ["accuracy"], boot=M.Bootstrap(200))
    assert lone["accuracy"].reason == M.ONE_CLUSTER


def test_batch_intervals_one_cluster_undefined_others_unchanged() -> None:
    """The batched engine: a one-cluster comparison is undefined, its neighbours keep the
    exact interval a single call gives (the draws of K >= 2 are not disturbed)."""
    _, one = M.comparison_counts([1, 0, 1], [1, 1, 0], ["Nike"] * 3)
    rows = ([1, 0, 1, 0, 1], [1, 0, 0, 0, 1], ["a", "a", "b", "c", "c"])
    _, many = M.comparison_counts(*rows)
    _, none = M.comparison_counts([None], [1], ["z"])
    batch = M.batch_intervals([one, many, none], ["accuracy", "kappa"], boot=M.Bootstrap(300))
    assert batch[0]["accuracy"].reason == M.ONE_CLUSTER and batch[0]["kappa"].bounds is None
    single = M.bootstrap_intervals(*rows, ["accuracy", "kappa"], M.Bootstrap(300))
    assert batch[1] == single
    assert batch[2]["accuracy"].reason == "n = 0"


def test_two_clusters_still_give_an_interval() -> None:
    """The guard is K < 2 only: two clusters are resampled as before (hand-enumerated).

    Clusters a (pred 1, ref 1) and b (pred 1, ref 0): each resample draws {a,a}, {a,b},
    {b,a} or {b,b}, so AC1 is 1, 0.2 or -1 (p_e = 0, 0.375, 0.5), and with 2,000 draws both
    extremes occur. Accuracy (1 of 2, one row per cluster) is the plain Clopper-Pearson interval.
    """
    out = M.bootstrap_intervals(
        [1, 1], [1, 0], ["a", "b"], ["accuracy", "ac1"], boot=M.Bootstrap(2000, 0)
    )
    assert out["ac1"].bounds == (-1.0, 1.0)
    assert out["accuracy"].bounds == pytest.approx(proportion_confint(1, 2, method="beta"))


def test_report_names_the_resampled_unit() -> None:
    """The caller names the unit; the default stays ``task`` (today's JSON unchanged)."""
    sites = ["Adidas", "Adidas", "Nike", "Nike"]
    report = M.binary_report([1, 0, 1, 1], [1, 1, 0, 1], sites, boot=M.Bootstrap(50, unit="site"))
    assert report["bootstrap"]["unit"] == "site"
    default = M.binary_report([1, 0, 1, 1], [1, 1, 0, 1], sites, boot=M.Bootstrap(50))
    assert default["bootstrap"]["unit"] == "task"
    panel = M.panel_report([[1, 1], [0, 0], [1, 0]], boot=M.Bootstrap(50, unit="site"))
    assert panel["bootstrap"]["unit"] == "site"


def test_panel_intervals_over_clusters_match_a_plain_loop() -> None:
    """Fleiss' kappa resampling whole clusters (websites): the same draws as
    `resample_weights`, each resample rebuilt row by row and scored by `fleiss_kappa`."""
    rng = np.random.default_rng(3)
    table = rng.integers(0, 2, size=(24, 3)).astype(float)
    table[rng.random(table.shape) < 0.15] = np.nan
    sites = np.array([f"s{i // 3}" for i in range(24)], dtype=object)  # 8 sites of 3 tasks
    got = M.panel_intervals(table, ["fleiss_kappa"], boot=M.Bootstrap(300, 0), clusters=sites)[
        "fleiss_kappa"
    ]
    kept = (~np.isnan(table)).sum(axis=1) >= 2
    ids = sorted(set(sites[kept]))
    weights = M.resample_weights(len(ids), boot=M.Bootstrap(300, 0))
    values = []
    for w in weights:
        rows = [
            table[(sites == site) & kept] for site, k in zip(ids, w, strict=True) for _ in range(k)
        ]
        values.append(M.fleiss_kappa(np.vstack(rows)).value)
    low, high = np.quantile([v for v in values if v is not None], [0.025, 0.975])
    assert got.low == pytest.approx(low, abs=1e-9) and got.high == pytest.approx(high, abs=1e-9)
    # Unique labels per task = the task bootstrap; one label = undefined.
    by_task = M.panel_intervals(table, ["fleiss_kappa"], boot=M.Bootstrap(300, 0))
    same = M.panel_intervals(
        table, ["fleiss_kappa"], boot=M.Bootstrap(300, 0), clusters=[f"t{i:02d}" for i in range(24)]
    )
    assert by_task == same
    one = M.panel_intervals(table, ["fleiss_kappa"], boot=M.Bootstrap(300, 0), clusters=["x"] * 24)
    assert one["fleiss_kappa"].reason == M.ONE_CLUSTER
