"""Agreement statistics for binary verdicts, with task-clustered bootstrap intervals.

Every page that compares two raters (a verifier against a human reference, one judge
against another, a reviewer's informed label against their blind one) needs the same
numbers. They live here, in pure numpy, so that pages, the headless report and the tests
compute them one way.

Conventions
-----------
- A label is 1, 0 or missing (NaN, None or pandas NA). Missing is never turned into 0:
  a two-sided metric uses the rows where both sides have a label, and `Confusion` says
  how many rows were dropped on each side.
- ``pred`` is the rater under study (verifier, judge A, the informed stage) and ``ref``
  the rater it is compared with (human reference, judge B, the blind stage). Counts are
  always ordered ``(tp, fp, fn, tn)``, with "positive" meaning label 1 (success).
- A metric that cannot be computed is ``Value(None, reason)``. NaN never leaves this
  module, except in the documented low-level array functions (`metric_arrays`), where
  it marks "undefined in this resample". Degenerate data (no rows, one class, all
  missing) never raises; malformed input (a label of 2, unequal lengths) does.
- Bootstrap intervals resample tasks (clusters), not rows: the rows of one task (several
  reviewers, several verifiers) are not independent, and resampling rows would make the
  intervals too narrow.
- The resampled unit is whatever label the caller passes as ``clusters`` for every row:
  the task id by default, the website / task family for a cluster bootstrap over sites
  (`lib.clusters.cluster_labels`). With fewer than two clusters every interval is
  undefined (``ONE_CLUSTER``): one resampled cluster gives a zero-width interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from lib.vocab import LEVEL, N_RESAMPLES, SEED

__all__ = [
    "CI_METRICS",
    "METRIC_NAMES",
    "ONE_CLUSTER",
    "PANEL_METRICS",
    "Confusion",
    "Interval",
    "PairedDiff",
    "Value",
    "ac1",
    "accuracy",
    "as_labels",
    "as_scores",
    "auc_ci",
    "batch_intervals",
    "batch_values",
    "binary_report",
    "bootstrap_ci",
    "bootstrap_counts",
    "bootstrap_intervals",
    "cluster_counts",
    "comparison_counts",
    "confusion",
    "f1",
    "fleiss_kappa",
    "fnr",
    "fpr",
    "kappa",
    "kappa_misleads",
    "krippendorff_alpha",
    "mcc",
    "mcnemar_exact",
    "mcnemar_p",
    "metric_arrays",
    "metrics",
    "one_blas_thread",
    "paired_bootstrap_diff",
    "panel_intervals",
    "panel_report",
    "point_at_threshold",
    "precision",
    "pred_positive_rate",
    "recall",
    "ref_positive_rate",
    "resample_weights",
    "roc",
    "specificity",
    "to_jsonable",
]

# ---------------------------------------------------------------------------------------
# Result types
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A metric that may be undefined.

    ``value`` is a finite float, or None with ``reason`` saying why (e.g. ``"n = 0"``).
    Pages show the reason instead of a number; JSON gets ``null`` (see `to_jsonable`).
    """

    value: float | None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.value is None:
            return
        v = float(self.value)
        # NaN must never escape: it is a bug in this module, not a user error.
        if not math.isfinite(v):
            raise ValueError(f"Value must be finite or None, got {self.value!r}")
        object.__setattr__(self, "value", v)

    @property
    def defined(self) -> bool:
        return self.value is not None

    def fmt(self, digits: int = 3, missing: str = "n/a") -> str:
        """The value rounded for display, or ``missing`` when undefined."""
        return missing if self.value is None else f"{self.value:.{digits}f}"


@dataclass(frozen=True)
class Confusion:
    """2x2 counts of ``pred`` against ``ref`` on the rows where both have a label.

    ``n_missing_pred`` / ``n_missing_ref`` count rows whose pred / ref label is missing
    (a row missing on both sides is counted in both and in ``n_missing_both``); such rows
    are excluded from tp/fp/fn/tn, never counted as 0.
    """

    tp: int
    fp: int
    fn: int
    tn: int
    n_missing_pred: int = 0
    n_missing_ref: int = 0
    n_missing_both: int = 0

    @property
    def n(self) -> int:
        """Rows where both sides have a label."""
        return self.tp + self.fp + self.fn + self.tn

    @property
    def n_excluded(self) -> int:
        """Rows dropped because at least one side is missing."""
        return self.n_missing_pred + self.n_missing_ref - self.n_missing_both

    def as_array(self) -> np.ndarray:
        """Counts as ``[tp, fp, fn, tn]`` (float64), the input of `metric_arrays`."""
        return np.array([self.tp, self.fp, self.fn, self.tn], dtype=np.float64)

    @classmethod
    def from_counts(cls, counts: Sequence[float] | np.ndarray) -> Confusion:
        """Build from ``[tp, fp, fn, tn]`` (no missing rows)."""
        tp, fp, fn, tn = (round(float(x)) for x in counts)
        return cls(tp, fp, fn, tn)


@dataclass(frozen=True)
class Interval:
    """A bootstrap percentile interval, or ``low = high = None`` with a reason.

    ``n_valid`` is the number of resamples where the metric was defined (undefined
    resamples are dropped before taking percentiles).
    """

    low: float | None
    high: float | None
    reason: str | None = None
    n_valid: int = 0
    n_resamples: int = 0
    level: float = LEVEL

    @property
    def defined(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def bounds(self) -> tuple[float, float] | None:
        """``(low, high)`` or None: the shape `bootstrap_ci` returns."""
        if self.low is None or self.high is None:
            return None
        return (self.low, self.high)


@dataclass(frozen=True)
class PairedDiff:
    """Difference ``metric(a) - metric(b)`` on the rows both pairs cover, with a CI."""

    metric: str
    a: Value
    b: Value
    diff: Value
    ci: Interval
    n: int  # rows where all four labels are present
    n_clusters: int


# ---------------------------------------------------------------------------------------
# Input coercion
# ---------------------------------------------------------------------------------------


def _to_float(values: Any) -> np.ndarray:
    """1-D float64 array with NaN for missing (None, NaN, pandas NA); strings rejected."""
    if values is None:
        return np.empty(0)
    if isinstance(values, pd.DataFrame):
        raise TypeError("expected a 1-D array of labels, got a DataFrame")
    if isinstance(values, pd.Series | pd.Index | pd.api.extensions.ExtensionArray):
        s = pd.Series(values)
        if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
            raise ValueError(f"labels/scores must be numeric (map strings first), got {s.dtype}")
        if s.dtype != object:  # numeric, bool, or nullable Int64 / Float64 / boolean
            return s.to_numpy(dtype=np.float64, na_value=np.nan)
        values = s.to_numpy()
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D array, got shape {arr.shape}")
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64)
    if arr.dtype.kind != "O":
        raise ValueError(f"labels/scores must be numeric (map strings first), got {arr.dtype}")
    missing = pd.isna(arr)
    present = arr[~missing]
    if any(isinstance(v, str | bytes) for v in present):
        raise ValueError("labels/scores must be numeric (map strings such as 'Correct' first)")
    out = np.full(arr.shape, np.nan)
    out[~missing] = present.astype(np.float64)
    return out


def as_labels(values: Any) -> np.ndarray:
    """Binary labels as float64: 1.0, 0.0, NaN (missing). Booleans become 1/0.

    Raises ValueError for anything else (2, 0.5, "Correct"): a malformed label is a bug
    upstream, and silently dropping it would hide the bug.

    Examples
    --------
    >>> as_labels([1, 0, None, 1.0, pd.NA]).tolist()
    [1.0, 0.0, nan, 1.0, nan]
    """
    arr = _to_float(values)
    bad = ~(np.isnan(arr) | (arr == 0.0) | (arr == 1.0))
    if bad.any():
        raise ValueError(f"labels must be 1, 0 or missing; got e.g. {np.unique(arr[bad])[:5]}")
    return arr


def as_scores(values: Any) -> np.ndarray:
    """Continuous scores as float64 with NaN for missing."""
    return _to_float(values)


def _same_length(*arrays: np.ndarray) -> None:
    sizes = {a.shape[0] for a in arrays}
    if len(sizes) > 1:
        raise ValueError(f"inputs must have the same length, got {sorted(sizes)}")


# ---------------------------------------------------------------------------------------
# Confusion counts
# ---------------------------------------------------------------------------------------


def _category(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Index into (tp, fp, fn, tn) for complete rows: 2 * (1 - pred) + (1 - ref)."""
    return (2 * (1 - p) + (1 - r)).astype(np.intp)


def confusion(pred: Any, ref: Any) -> Confusion:
    """Counts of ``pred`` against ``ref``; rows with a missing side are excluded and counted.

    Parameters
    ----------
    pred, ref : array-like of 1 / 0 / missing, same length
        ``pred`` is the rater under study, ``ref`` the reference.

    Returns
    -------
    Confusion
        tp = pred 1 & ref 1, fp = pred 1 & ref 0, fn = pred 0 & ref 1, tn = pred 0 & ref 0.

    Examples
    --------
    >>> c = confusion([1, 1, 0, 0, None], [1, 0, 0, 1, 1])
    >>> c.tp, c.fp, c.fn, c.tn, c.n, c.n_missing_pred
    (1, 1, 1, 1, 4, 1)
    """
    p, r = as_labels(pred), as_labels(ref)
    _same_length(p, r)
    mp, mr = np.isnan(p), np.isnan(r)
    ok = ~(mp | mr)
    tp, fp, fn, tn = np.bincount(_category(p[ok], r[ok]), minlength=4)
    return Confusion(
        int(tp),
        int(fp),
        int(fn),
        int(tn),
        n_missing_pred=int(mp.sum()),
        n_missing_ref=int(mr.sum()),
        n_missing_both=int((mp & mr).sum()),
    )


# ---------------------------------------------------------------------------------------
# Vectorised metrics on count arrays (..., 4); NaN marks "undefined"
# ---------------------------------------------------------------------------------------


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN where den == 0 (and no warnings)."""
    num, den = np.broadcast_arrays(np.asarray(num, np.float64), np.asarray(den, np.float64))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _kappa_arr(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    # (p_o - p_e) / (1 - p_e) rewritten over counts; the denominator is 0 iff p_e = 1.
    return _div(2.0 * (tp * tn - fp * fn), (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn))


def _ac1_arr(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    n = tp + fp + fn + tn
    p_a = _div(tp + tn, n)
    pi = _div(2.0 * tp + fp + fn, 2.0 * n)  # mean positive rate of the two raters
    p_e = 2.0 * pi * (1.0 - pi)  # <= 0.5, so 1 - p_e >= 0.5 whenever n > 0
    return (p_a - p_e) / (1.0 - p_e)


def _mcc_arr(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return _div(tp * tn - fp * fn, den)


_ARRAY_FNS: dict[str, Callable[..., np.ndarray]] = {
    "pred_positive_rate": lambda tp, fp, fn, tn: _div(tp + fp, tp + fp + fn + tn),
    "ref_positive_rate": lambda tp, fp, fn, tn: _div(tp + fn, tp + fp + fn + tn),
    "accuracy": lambda tp, fp, fn, tn: _div(tp + tn, tp + fp + fn + tn),
    "precision": lambda tp, fp, fn, tn: _div(tp, tp + fp),
    "recall": lambda tp, fp, fn, tn: _div(tp, tp + fn),
    "specificity": lambda tp, fp, fn, tn: _div(tn, tn + fp),
    "f1": lambda tp, fp, fn, tn: _div(2.0 * tp, 2.0 * tp + fp + fn),
    "fpr": lambda tp, fp, fn, tn: _div(fp, fp + tn),
    "fnr": lambda tp, fp, fn, tn: _div(fn, fn + tp),
    "kappa": _kappa_arr,
    "ac1": _ac1_arr,
    "mcc": _mcc_arr,
}

#: Every two-rater metric, in display order.
METRIC_NAMES: tuple[str, ...] = tuple(_ARRAY_FNS)
#: The metrics `binary_report` gives an interval for.
CI_METRICS: tuple[str, ...] = ("kappa", "fpr", "fnr", "accuracy", "ac1", "f1", "mcc")


def _check_names(names: Iterable[str] | None, known: Sequence[str]) -> tuple[str, ...]:
    if names is None:
        return tuple(known)
    names = (names,) if isinstance(names, str) else tuple(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {list(known)}")
    return names


def metric_arrays(counts: np.ndarray, names: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """Metrics for many confusion tables at once (the bootstrap's inner loop).

    Parameters
    ----------
    counts : array of shape (..., 4)
        ``[tp, fp, fn, tn]`` along the last axis, e.g. (B, 4) for B resamples.
    names : metric names (default: all of `METRIC_NAMES`)

    Returns
    -------
    dict name -> array of shape ``counts.shape[:-1]``; NaN where the metric is undefined.
    This is the one public function that uses NaN, because a per-resample marker is
    needed; the scalar functions turn it into ``Value(None, reason)``.

    Examples
    --------
    >>> counts = np.array([[2.0, 1.0, 1.0, 1.0], [3.0, 0.0, 0.0, 0.0]])  # (tp, fp, fn, tn)
    >>> metric_arrays(counts, ["accuracy", "kappa"])["kappa"].round(3).tolist()
    [0.167, nan]
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.shape[-1] != 4:
        raise ValueError(f"counts must have last axis 4 (tp, fp, fn, tn), got {c.shape}")
    tp, fp, fn, tn = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
    return {name: _ARRAY_FNS[name](tp, fp, fn, tn) for name in _check_names(names, METRIC_NAMES)}


# ---------------------------------------------------------------------------------------
# Scalar metrics (Value) with reasons
# ---------------------------------------------------------------------------------------


def _one_class(c: Confusion) -> str:
    """Which side(s) use a single class; used in reasons."""
    pred_one = c.tp + c.fp in (0, c.n)
    ref_one = c.tp + c.fn in (0, c.n)
    if pred_one and ref_one:
        return "both raters use one class"
    return "reference has only one class" if ref_one else "prediction has only one class"


_REASONS: dict[str, Callable[[Confusion], str]] = {
    "precision": lambda c: "prediction has no positive label (tp + fp = 0)",
    "recall": lambda c: "reference has no positive label (tp + fn = 0)",
    "specificity": lambda c: "reference has no negative label (fp + tn = 0)",
    "f1": lambda c: "neither side has a positive label (2tp + fp + fn = 0)",
    "fpr": lambda c: "reference has no negative label (fp + tn = 0)",
    "fnr": lambda c: "reference has no positive label (tp + fn = 0)",
    "kappa": lambda c: "both raters use one class (p_e = 1)",
    "mcc": lambda c: f"{_one_class(c)} (a marginal is zero)",
}


def _scalar(name: str, c: Confusion) -> Value:
    v = float(metric_arrays(c.as_array(), (name,))[name])
    if not math.isnan(v):
        return Value(v)
    if c.n == 0:
        extra = f" ({c.n_excluded} rows have a missing label)" if c.n_excluded else ""
        return Value(None, "n = 0" + extra)
    return Value(None, _REASONS.get(name, lambda c: "undefined")(c))


def pred_positive_rate(c: Confusion) -> Value:
    """Share of label 1 in ``pred``: (tp + fp) / n. Undefined when n = 0.

    Examples
    --------
    >>> pred_positive_rate(confusion([1, 1, 0, 0], [1, 0, 0, 0]))
    Value(value=0.5, reason=None)
    """
    return _scalar("pred_positive_rate", c)


def ref_positive_rate(c: Confusion) -> Value:
    """Share of label 1 in ``ref`` (the prevalence): (tp + fn) / n. Undefined when n = 0.

    Examples
    --------
    >>> ref_positive_rate(confusion([1, 1, 0, 0], [1, 0, 0, 0]))
    Value(value=0.25, reason=None)
    """
    return _scalar("ref_positive_rate", c)


def accuracy(c: Confusion) -> Value:
    """Raw agreement p_o = (tp + tn) / n. Undefined when n = 0.

    Same as ``sklearn.metrics.accuracy_score``. Beside kappa it matters most when one
    class dominates (see `kappa_misleads`).

    Examples
    --------
    >>> accuracy(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]))
    Value(value=0.6, reason=None)
    >>> accuracy(confusion([], []))
    Value(value=None, reason='n = 0')
    """
    return _scalar("accuracy", c)


def precision(c: Confusion) -> Value:
    """Positive predictive value tp / (tp + fp).

    Undefined when ``pred`` has no 1 (tp + fp = 0). scikit-learn's ``precision_score``
    returns 0.0 there by default (``zero_division="warn"``); we return None with a reason,
    as ``zero_division=np.nan`` would.

    Examples
    --------
    >>> precision(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.667'
    """
    return _scalar("precision", c)


def recall(c: Confusion) -> Value:
    """Sensitivity / true-positive rate tp / (tp + fn).

    Undefined when ``ref`` has no 1 (tp + fn = 0); scikit-learn returns 0.0 by default.

    Examples
    --------
    >>> recall(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.667'
    """
    return _scalar("recall", c)


def specificity(c: Confusion) -> Value:
    """True-negative rate tn / (tn + fp) = 1 - FPR. Undefined when ``ref`` has no 0.

    Examples
    --------
    >>> specificity(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]))
    Value(value=0.5, reason=None)
    """
    return _scalar("specificity", c)


def f1(c: Confusion) -> Value:
    """F1 = 2 tp / (2 tp + fp + fn), the harmonic mean of precision and recall.

    Written over counts, so it is defined (and 0) when tp = 0 but fp + fn > 0, even if
    precision or recall alone is undefined; this matches scikit-learn >= 1.3. Undefined
    only when neither side has a 1 (2tp + fp + fn = 0), where sklearn returns its
    ``zero_division`` value.

    Examples
    --------
    >>> f1(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.667'
    """
    return _scalar("f1", c)


def fpr(c: Confusion) -> Value:
    """False-positive rate fp / (fp + tn): share of true failures the rater calls success.

    For a verifier this is the costly error (it would reward a failed trajectory).
    Undefined when ``ref`` has no 0.

    Examples
    --------
    >>> fpr(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]))  # 1 of 2 failures called success
    Value(value=0.5, reason=None)
    >>> fpr(confusion([1, 1], [1, 1])).reason
    'reference has no negative label (fp + tn = 0)'
    """
    return _scalar("fpr", c)


def fnr(c: Confusion) -> Value:
    """False-negative rate fn / (fn + tp) = 1 - recall. Undefined when ``ref`` has no 1.

    Examples
    --------
    >>> fnr(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.333'
    """
    return _scalar("fnr", c)


def kappa(c: Confusion) -> Value:
    """Cohen's kappa: chance-corrected agreement of two raters.

    kappa = (p_o - p_e) / (1 - p_e), with p_o = (tp + tn) / n and
    p_e = p_pred * p_ref + (1 - p_pred) * (1 - p_ref), p_x the positive rate of rater x.
    Over counts: kappa = 2 (tp tn - fp fn) / ((tp + fp)(fp + tn) + (tp + fn)(fn + tn)).

    Edge cases: undefined when n = 0, and when both raters use one single, common class
    (p_e = 1, so 0 / 0); scikit-learn's ``cohen_kappa_score`` returns NaN there.
    When they use two different single classes (all 1 vs all 0), p_e = 0 and kappa = 0.
    Kappa depends on prevalence: with one class dominant it can be near 0 or negative
    despite high raw agreement (the "kappa paradox"; see `kappa_misleads`, `ac1`).

    References
    ----------
    J. Cohen (1960). A coefficient of agreement for nominal scales. Educational and
    Psychological Measurement 20(1), 37-46.

    Examples
    --------
    >>> kappa(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.167'
    >>> kappa(confusion([1, 1, 1], [1, 1, 1])).reason
    'both raters use one class (p_e = 1)'
    """
    return _scalar("kappa", c)


def ac1(c: Confusion) -> Value:
    """Gwet's AC1 for two raters and two categories.

    AC1 = (p_a - p_e) / (1 - p_e), with p_a = (tp + tn) / n,
    pi = (p_pred + p_ref) / 2 (mean positive rate of the two raters) and
    p_e = 2 pi (1 - pi) (Gwet's chance agreement, sum_q pi_q (1 - pi_q) / (Q - 1), Q = 2).

    Since p_e <= 0.5, AC1 is defined whenever n > 0 (also with one class, where it is 1
    for perfect agreement). Unlike kappa it stays close to raw agreement when one class
    dominates, which is why pages show it beside kappa.

    References
    ----------
    K. L. Gwet (2008). Computing inter-rater reliability and its variance in the presence
    of high agreement. British Journal of Mathematical and Statistical Psychology 61(1),
    29-48.

    Examples
    --------
    >>> ac1(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.231'
    """
    return _scalar("ac1", c)


def mcc(c: Confusion) -> Value:
    """Matthews correlation coefficient (the phi coefficient of the 2x2 table).

    MCC = (tp tn - fp fn) / sqrt((tp + fp)(tp + fn)(tn + fp)(tn + fn)).

    Undefined when any marginal is zero (a rater uses one class): the correlation is
    0 / 0. scikit-learn's ``matthews_corrcoef`` returns 0.0 there, which reads as "no
    better than chance"; we return None with a reason instead, so an all-success subset
    is not reported as a chance-level verifier.

    References
    ----------
    B. W. Matthews (1975). Comparison of the predicted and observed secondary structure
    of T4 phage lysozyme. Biochimica et Biophysica Acta 405(2), 442-451.

    Examples
    --------
    >>> mcc(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.167'
    """
    return _scalar("mcc", c)


def metrics(c: Confusion, names: Iterable[str] | None = None) -> dict[str, Value]:
    """Every (or the named) two-rater metric of ``c`` as Value, in `METRIC_NAMES` order.

    Examples
    --------
    >>> out = metrics(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]), ["accuracy", "kappa"])
    >>> {name: v.fmt() for name, v in out.items()}
    {'accuracy': '0.600', 'kappa': '0.167'}
    """
    return {name: _scalar(name, c) for name in _check_names(names, METRIC_NAMES)}


def kappa_misleads(c: Confusion, dominance: float = 0.85) -> bool:
    """True when one class dominates, so kappa should be read beside accuracy and AC1.

    Rule: the reference's positive rate, or the pooled positive rate of both raters
    ((p_pred + p_ref) / 2, the pi of AC1), is above ``dominance`` or below
    ``1 - dominance`` (0.85 / 0.15 by default). Then p_e is large and kappa can be low or
    negative although the raters agree on almost every task. False when n = 0.

    References
    ----------
    A. R. Feinstein & D. V. Cicchetti (1990). High agreement but low kappa: I. The
    problems of two paradoxes. Journal of Clinical Epidemiology 43(6), 543-549.

    Examples
    --------
    >>> kappa_misleads(Confusion(tp=90, fp=3, fn=2, tn=5))  # 95% agree, kappa ~0.6
    True
    """
    if c.n == 0:
        return False
    p_ref = (c.tp + c.fn) / c.n
    pooled = (2 * c.tp + c.fp + c.fn) / (2 * c.n)
    lo = 1.0 - dominance
    return any(p > dominance or p < lo for p in (p_ref, pooled))


# ---------------------------------------------------------------------------------------
# Task-clustered bootstrap
# ---------------------------------------------------------------------------------------


def _cluster_codes(clusters: Any, n_rows: int, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..K-1 for the kept rows' clusters, and the K cluster ids (sorted).

    ``clusters=None`` makes every row its own cluster (a plain row bootstrap).
    """
    if clusters is None:
        ids = np.flatnonzero(keep)
        return np.arange(ids.size), ids
    s = clusters if isinstance(clusters, pd.Series) else pd.Series(list(clusters), dtype=object)
    if len(s) != n_rows:
        raise ValueError(f"clusters has length {len(s)}, labels have {n_rows}")
    s = s[keep]
    try:
        codes, uniques = pd.factorize(s, sort=True)
    except TypeError:  # unorderable ids: first-appearance order is still deterministic
        codes, uniques = pd.factorize(s, sort=False)
    if (codes < 0).any():
        raise ValueError("cluster ids must not be missing")
    return codes.astype(np.intp), np.asarray(uniques, dtype=object)


def _prepare(pred: Any, ref: Any, clusters: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Complete rows only: (pred, ref, cluster codes)."""
    p, r = as_labels(pred), as_labels(ref)
    _same_length(p, r)
    keep = ~(np.isnan(p) | np.isnan(r))
    codes, _ = _cluster_codes(clusters, p.shape[0], keep)
    return p[keep], r[keep], codes


def _counts_by_cluster(p: np.ndarray, r: np.ndarray, codes: np.ndarray) -> np.ndarray:
    k = int(codes.max()) + 1 if codes.size else 0
    flat = np.bincount(codes * 4 + _category(p, r), minlength=4 * k)
    return flat.reshape(k, 4).astype(np.float64)


def cluster_counts(pred: Any, ref: Any, clusters: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster ``[tp, fp, fn, tn]`` counts.

    Returns ``(ids, counts)``: the K cluster ids that have at least one complete row,
    sorted, and a (K, 4) float array. Clusters whose rows are all missing are left out:
    they carry no information about the metric and are not resampled.

    Examples
    --------
    >>> ids, counts = cluster_counts([1, 0, 1], [1, 1, 1], ["t2", "t1", "t2"])
    >>> ids.tolist(), counts.tolist()  # per task: tp, fp, fn, tn
    (['t1', 't2'], [[0.0, 0.0, 1.0, 0.0], [2.0, 0.0, 0.0, 0.0]])
    """
    p, r = as_labels(pred), as_labels(ref)
    _same_length(p, r)
    keep = ~(np.isnan(p) | np.isnan(r))
    codes, ids = _cluster_codes(clusters, p.shape[0], keep)
    return ids, _counts_by_cluster(p[keep], r[keep], codes)


# Resamples are drawn in row chunks of about this many cells: small temporaries are
# reused by the allocator, while one (B, K) array costs fresh pages on every call
# (measured: ~2 ms instead of 2-5 ms for K = 260, B = 2000).
_CHUNK_CELLS = 1 << 15


_MIN_CHUNK_ROWS = 32
"""At least this many resamples per block: with one row per block (K above 32,768) the
Python loop, not the arithmetic, took the time (2,000 iterations per bootstrap)."""

LARGE_K = 2_000
"""Above this many clusters, `_resampled` draws how often each *distinct* per-cluster
count vector is drawn instead of each cluster (`_resampled_by_type`): O(B x types), not
O(B x K). The real dataset has at most 260 clusters, so its draws are unchanged."""


def _weight_chunks(n_clusters: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Consecutive row blocks of the (B, K) resample-count matrix (see `resample_weights`).

    Drawing ``integers(0, K, size=(m, K))`` block after block consumes the generator's
    stream in the same order as one ``size=(B, K)`` call, so the blocks stack to exactly
    that matrix (a test checks it).
    """
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    k = int(n_clusters)
    if k == 0:
        yield np.zeros((n_resamples, 0), dtype=np.int64)
        return
    rng = np.random.default_rng(seed)
    rows = max(1, min(n_resamples, max(_CHUNK_CELLS // k, _MIN_CHUNK_ROWS)))
    offsets = (k * np.arange(rows, dtype=np.int64))[:, None]
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        idx = rng.integers(0, k, size=(m, k))
        idx += offsets[:m]  # row j counts into bins j*K .. j*K + K - 1
        yield np.bincount(idx.ravel(), minlength=m * k).reshape(m, k)


def resample_weights(
    n_clusters: int, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """How often each cluster is drawn in each bootstrap resample: (B, K) int64.

    Resample b draws K clusters with replacement:
    ``idx = np.random.default_rng(seed).integers(0, K, size=(B, K))`` and row b is
    ``np.bincount(idx[b], minlength=K)``. Every bootstrap in this module uses this one
    scheme (clusters numbered in sorted id order), so equal (K, B, seed) give equal draws,
    and a paired comparison reuses the same draws for both sides.

    Examples
    --------
    >>> w = resample_weights(3, n_resamples=4, seed=0)
    >>> w.shape, w.sum(axis=1).tolist()  # each resample draws 3 clusters
    ((4, 3), [3, 3, 3, 3])
    """
    return np.vstack(list(_weight_chunks(n_clusters, n_resamples, seed)))


_BLAS: ThreadpoolController | None = None


def one_blas_thread() -> Any:
    """A context that runs BLAS on one thread.

    The bootstrap products are small; on a busy 2-core machine OpenBLAS's second thread
    made a (2000 x 100) @ (100 x 16) product take 15 ms instead of 1 ms (measured).
    """
    global _BLAS
    if _BLAS is None:
        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


def _resampled(per_cluster: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(K, m) per-cluster sums -> (B, m) sums in every resample: weights @ per_cluster.

    Above `LARGE_K` clusters with few distinct rows, `_resampled_by_type` gives the same
    distribution at a cost independent of K.
    """
    per_cluster = np.asarray(per_cluster, dtype=np.float64)
    if per_cluster.shape[0] > LARGE_K:
        by_type = _resampled_by_type(per_cluster, n_resamples, seed)
        if by_type is not None:
            return by_type
    out = np.empty((n_resamples, per_cluster.shape[1]))
    start = 0
    with one_blas_thread():
        for w in _weight_chunks(per_cluster.shape[0], n_resamples, seed):
            np.matmul(w.astype(np.float64), per_cluster, out=out[start : start + w.shape[0]])
            start += w.shape[0]
    return out


def _resampled_by_type(per_cluster: np.ndarray, n_resamples: int, seed: int) -> np.ndarray | None:
    """The cluster bootstrap drawn per distinct cluster row, or None if rows are too varied.

    A resample draws K clusters uniformly with replacement and sums their rows. Clusters
    with equal rows are interchangeable, so only how many draws fall on each of the U
    distinct rows matters, and that vector is Multinomial(K, n_u / K): the same law as
    `resample_weights` @ per_cluster, drawn in O(B x U). With task clusters a comparison
    has at most 4 distinct rows (one task = one confusion cell), a paired one 16.
    """
    k = per_cluster.shape[0]
    # Group equal rows by a 1-D key (a float sort, not `np.unique(axis=0)`'s row sort),
    # then check that every row equals its group's first: exact whatever the key collides.
    key = per_cluster @ np.random.default_rng(12345).random(per_cluster.shape[1])
    _, first, inverse, n_of = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    if first.shape[0] * 8 > k:
        return None
    types = per_cluster[first]
    if not np.array_equal(types[inverse], per_cluster):
        types, n_of = np.unique(per_cluster, axis=0, return_counts=True)
    draws = np.random.default_rng(seed).multinomial(k, n_of / k, size=n_resamples)
    with one_blas_thread():
        return draws.astype(np.float64) @ types


def bootstrap_counts(
    pred: Any, ref: Any, clusters: Any, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """Confusion counts ``[tp, fp, fn, tn]`` of every cluster-bootstrap resample: (B, 4).

    Examples
    --------
    >>> bootstrap_counts([1, 0], [1, 1], ["t1", "t2"], n_resamples=5).sum(axis=1).tolist()
    [2.0, 2.0, 2.0, 2.0, 2.0]
    """
    p, r, codes = _prepare(pred, ref, clusters)
    return _resampled(_counts_by_cluster(p, r, codes), n_resamples, seed)


def _check_args(n_resamples: int, level: float) -> None:
    """Bad settings are programming errors, so they raise (unlike degenerate data)."""
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _intervals(samples: np.ndarray, level: float) -> list[Interval]:
    """Percentile intervals of every column of (B, m) samples, NaN = undefined resample.

    Undefined resamples are dropped, and the interval is undefined when more than half
    of them are. Columns without an undefined resample (most) share one `np.quantile`
    call: with ~130 comparisons at once that is the difference between one call and 130.
    """
    b, m = samples.shape
    nan = np.isnan(samples)
    n_ok = b - nan.sum(axis=0)
    alpha = (1.0 - level) / 2.0
    q = [alpha, 1.0 - alpha]
    bounds = np.full((2, m), np.nan)
    full = n_ok == b
    if full.any():
        bounds[:, full] = np.quantile(samples[:, full], q, axis=0)
    for j in np.flatnonzero(~full & (2 * (b - n_ok) <= b)):
        bounds[:, j] = np.quantile(samples[~nan[:, j], j], q)
    out = []
    for j in range(m):
        if np.isnan(bounds[0, j]):
            reason = f"undefined in {b - n_ok[j]} of {b} resamples (more than half)"
            out.append(Interval(None, None, reason, int(n_ok[j]), b, level))
        else:
            lo, hi = float(bounds[0, j]), float(bounds[1, j])
            out.append(Interval(lo, hi, None, int(n_ok[j]), b, level))
    return out


def _interval(samples: np.ndarray, level: float) -> Interval:
    """Percentile interval of one metric's (B,) resamples (see `_intervals`)."""
    return _intervals(np.asarray(samples).reshape(-1, 1), level)[0]


def _no_data(names: Iterable[str], n_resamples: int, level: float) -> dict[str, Interval]:
    return {name: Interval(None, None, "n = 0", 0, n_resamples, level) for name in names}


ONE_CLUSTER = "one cluster: resampling it cannot measure uncertainty"
"""Why an interval over a single cluster is undefined (see `_too_few_clusters`)."""


def _too_few_clusters(
    names: Iterable[str], n_clusters: int, n_resamples: int, level: float
) -> dict[str, Interval] | None:
    """Undefined intervals when fewer than two clusters hold a complete row, else None.

    Resampling one cluster reproduces the same rows in every resample, so the percentile
    interval would be ``[v, v]``: certainty the data do not give. That is the case of
    every one-website subset when websites are the clusters (and of a one-task subset
    with task clusters). Zero clusters is "n = 0".
    """
    if n_clusters >= 2:
        return None
    if n_clusters == 0:
        return _no_data(names, n_resamples, level)
    return {name: Interval(None, None, ONE_CLUSTER, 0, n_resamples, level) for name in names}


def bootstrap_intervals(
    pred: Any,
    ref: Any,
    clusters: Any,
    metric_names: Iterable[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Interval]:
    """Task-clustered bootstrap percentile intervals, with reasons when undefined.

    Parameters
    ----------
    pred, ref : labels (1 / 0 / missing), one row per (task, ...) pair
    clusters : task id of every row (any hashable), or None to resample rows
    metric_names : subset of `METRIC_NAMES` (default: all)
    n_resamples, seed, level : B resamples drawn by `resample_weights`; the interval is
        the (1 - level) / 2 and (1 + level) / 2 quantiles (numpy's linear method).

    Notes
    -----
    Rows with a missing side are dropped first, then the K clusters that keep a row are
    resampled K at a time. Counts per resample are ``weights (B, K) @ counts (K, 4)``,
    and every metric is computed on all B count vectors at once (about 2-4 ms for
    K = 260, B = 2000). Resamples where a metric is undefined (e.g. no negative in the
    reference, for FPR) are dropped; if more than half are, the interval is undefined.

    References
    ----------
    B. Efron & R. Tibshirani (1993). An Introduction to the Bootstrap, ch. 13 (percentile
    intervals); A. C. Davison & D. V. Hinkley (1997). Bootstrap Methods and their
    Application, sec. 3.8 (resampling clusters).

    Examples
    --------
    >>> iv = bootstrap_intervals([1, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1],
    ...     ["t1", "t1", "t2", "t3", "t4", "t5"], ["accuracy"], n_resamples=500)["accuracy"]
    >>> (round(iv.low, 3), round(iv.high, 3), iv.n_resamples)
    (0.4, 1.0, 500)
    """
    names = _check_names(metric_names, METRIC_NAMES)
    _check_args(n_resamples, level)
    intervals, _ = _intervals_and_k(_prepare(pred, ref, clusters), names, n_resamples, seed, level)
    return intervals


def _intervals_and_k(
    rows: tuple[np.ndarray, np.ndarray, np.ndarray],
    names: Sequence[str],
    n_resamples: int,
    seed: int,
    level: float,
) -> tuple[dict[str, Interval], int]:
    """Intervals from prepared complete rows (pred, ref, codes), and the number of clusters."""
    p, r, codes = rows
    if codes.size == 0:
        return _no_data(names, n_resamples, level), 0
    per_cluster = _counts_by_cluster(p, r, codes)
    few = _too_few_clusters(names, per_cluster.shape[0], n_resamples, level)
    if few is not None:
        return few, per_cluster.shape[0]
    counts = _resampled(per_cluster, n_resamples, seed)
    arrays = metric_arrays(counts, names)
    return {name: _interval(v, level) for name, v in arrays.items()}, per_cluster.shape[0]


def bootstrap_ci(
    pred: Any,
    ref: Any,
    clusters: Any,
    metric_names: Iterable[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, tuple[float, float] | None]:
    """`bootstrap_intervals` as plain ``(low, high)`` tuples, None where undefined.

    Examples
    --------
    >>> bootstrap_ci([1, 1, 1], [1, 1, 1], ["t1", "t2", "t3"], ["kappa"], 100)  # one class
    {'kappa': None}
    """
    out = bootstrap_intervals(pred, ref, clusters, metric_names, n_resamples, seed, level)
    return {name: iv.bounds for name, iv in out.items()}


def paired_bootstrap_diff(
    pred_a: Any,
    ref_a: Any,
    pred_b: Any,
    ref_b: Any,
    clusters: Any,
    metric: str = "kappa",
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> PairedDiff:
    """Interval for ``metric(pred_a, ref_a) - metric(pred_b, ref_b)`` on the same tasks.

    The inputs are aligned row by row (e.g. one row per task: verifier A, verifier B and
    the human reference, with ``ref_a = ref_b``; or one row per (task, reviewer): the
    informed label, the blind label and the reference). Only rows where all four labels
    are present are used, so both sides are measured on exactly the same rows; each
    resample draws one set of tasks and applies it to both sides, which keeps the
    correlation between the sides (the interval is much narrower than that of two
    independent bootstraps when the two raters mostly agree).

    Resamples where either side is undefined are dropped (more than half: undefined).

    Examples
    --------
    >>> d = paired_bootstrap_diff([1, 1, 0, 1], [1, 0, 0, 1], [1, 0, 0, 0], [1, 0, 0, 1],
    ...     ["a", "b", "c", "d"], "accuracy", n_resamples=500)
    >>> d.a.value, d.b.value, d.diff.value, d.n
    (0.75, 0.75, 0.0, 4)
    """
    (name,) = _check_names((metric,), METRIC_NAMES)
    _check_args(n_resamples, level)
    pa, ra, pb, rb = (as_labels(x) for x in (pred_a, ref_a, pred_b, ref_b))
    _same_length(pa, ra, pb, rb)
    keep = ~(np.isnan(pa) | np.isnan(ra) | np.isnan(pb) | np.isnan(rb))
    codes, ids = _cluster_codes(clusters, pa.shape[0], keep)
    ca = _counts_by_cluster(pa[keep], ra[keep], codes)
    cb = _counts_by_cluster(pb[keep], rb[keep], codes)
    va = _scalar(name, Confusion.from_counts(ca.sum(axis=0)))
    vb = _scalar(name, Confusion.from_counts(cb.sum(axis=0)))
    if va.value is not None and vb.value is not None:
        diff = Value(va.value - vb.value)
    else:
        diff = Value(None, f"a: {va.reason}" if va.reason else f"b: {vb.reason}")
    few = _too_few_clusters((name,), int(ids.size), n_resamples, level)
    if few is not None:
        ci = few[name]
    else:
        both = _resampled(np.hstack([ca, cb]), n_resamples, seed)  # same draws, both sides
        da = metric_arrays(both[:, :4], (name,))[name]
        db = metric_arrays(both[:, 4:], (name,))[name]
        ci = _interval(da - db, level)
    return PairedDiff(name, va, vb, diff, ci, int(keep.sum()), int(ids.size))


# ---------------------------------------------------------------------------------------
# Many comparisons at once (the Agreement page: ~130 comparisons in one call)
# ---------------------------------------------------------------------------------------


def comparison_counts(pred: Any, ref: Any, clusters: Any) -> tuple[Confusion, np.ndarray]:
    """One comparison's `Confusion` and its per-cluster counts, the input of `batch_intervals`.

    ``clusters`` is the resampling unit of every row (a task id today; any hashable label,
    e.g. a website, gives a cluster bootstrap over that unit). The (K, 4) counts are those
    of `cluster_counts`: clusters with a complete row, in sorted label order.

    Examples
    --------
    >>> c, per_cluster = comparison_counts([1, 0, 1, None], [1, 1, 1, 0], ["t1", "t1", "t2", "t3"])
    >>> (c.tp, c.fn, c.n_missing_pred), per_cluster.tolist()
    ((2, 1, 1), [[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    """
    _, per_cluster = cluster_counts(pred, ref, clusters)
    return confusion(pred, ref), per_cluster


def batch_values(confusions: Sequence[Confusion]) -> list[dict[str, Value]]:
    """`metrics` of many confusions in one vectorised pass, with reasons where undefined.

    Examples
    --------
    >>> [v["accuracy"].value for v in batch_values([Confusion(1, 0, 0, 1), Confusion(0, 1, 1, 0)])]
    [1.0, 0.0]
    """
    if not confusions:
        return []
    arrays = metric_arrays(np.array([c.as_array() for c in confusions]))
    out = []
    for i, c in enumerate(confusions):
        values = {name: float(arrays[name][i]) for name in METRIC_NAMES}
        undefined = [name for name, v in values.items() if np.isnan(v)]
        reasons = metrics(c, undefined) if undefined else {}
        out.append({name: reasons.get(name) or Value(v) for name, v in values.items()})
    return out


BATCH_COMPARISONS = 32
"""Comparisons bootstrapped together in `batch_intervals`. Memory per batch is about
B x 4 x 32 resampled counts plus B x 32 per metric (2 MB each at B = 2,000), whatever the
number of comparisons; the weights come in blocks of `_CHUNK_CELLS` cells (`_resampled`),
so neither grows with the number of clusters K times B either."""


def batch_intervals(
    per_cluster: Sequence[np.ndarray],
    metric_names: Iterable[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> list[dict[str, Interval]]:
    """`bootstrap_intervals` of many comparisons at once, from their `comparison_counts`.

    Comparison i with K_i clusters gets the draws ``resample_weights(K_i, B, seed)``, the
    same as `bootstrap_intervals` on its rows, so each interval is exactly the one a single
    call would give (a test checks it). Comparisons with the same K share the weight
    blocks and matrix products, `BATCH_COMPARISONS` at a time, and each batch's intervals
    are taken before the next: memory does not grow with comparisons x resamples (issue
    18: all m at once allocated 2,000 x m per metric).

    Examples
    --------
    >>> _, a = comparison_counts([1, 0, 1, 0], [1, 0, 1, 1], ["t1", "t2", "t3", "t4"])
    >>> batch = batch_intervals([a, np.zeros((0, 4))], ["accuracy"], n_resamples=200)
    >>> batch[0]["accuracy"] == bootstrap_intervals(
    ...     [1, 0, 1, 0], [1, 0, 1, 1], ["t1", "t2", "t3", "t4"], ["accuracy"], 200
    ... )["accuracy"]
    True
    >>> batch[1]["accuracy"].reason
    'n = 0'
    """
    names = _check_names(metric_names, METRIC_NAMES)
    _check_args(n_resamples, level)
    m = len(per_cluster)
    by_k: dict[int, list[int]] = defaultdict(list)
    for i, counts in enumerate(per_cluster):
        by_k[counts.shape[0]].append(i)
    intervals: list[dict[str, Interval] | None] = [None] * m
    for k, members in by_k.items():
        if k < 2:
            continue  # no or one cluster: undefined (`_too_few_clusters`, below)
        size = 1 if k > LARGE_K else BATCH_COMPARISONS  # few distinct rows each
        for start in range(0, len(members), size):
            chunk = members[start : start + size]
            stacked = np.hstack([per_cluster[i] for i in chunk])  # (K, 4 * chunk)
            counts = _resampled(stacked, n_resamples, seed).reshape(n_resamples, len(chunk), 4)
            per_name = {
                name: _intervals(values, level)
                for name, values in metric_arrays(counts, names).items()
            }
            for j, i in enumerate(chunk):
                intervals[i] = {name: per_name[name][j] for name in names}
    out = []
    for i in range(m):
        few = _too_few_clusters(names, per_cluster[i].shape[0], n_resamples, level)
        out.append(few if few is not None else intervals[i])
    return out


# ---------------------------------------------------------------------------------------
# ROC
# ---------------------------------------------------------------------------------------


def _score_rows(scores: Any, ref: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s, r = as_scores(scores), as_labels(ref)
    _same_length(s, r)
    keep = ~(np.isnan(s) | np.isnan(r))
    return s, r, keep


def _auc_reason(r: np.ndarray) -> str | None:
    if r.size == 0:
        return "n = 0"
    if r.min() == r.max():
        return "reference has only one class"
    return None


def roc(scores: Any, ref: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, Value]:
    """ROC curve of a continuous score against binary ``ref``; rows with a missing side dropped.

    Returns ``(fpr, tpr, thresholds, auc)`` from ``sklearn.metrics.roc_curve`` /
    ``roc_auc_score`` (``thresholds[0]`` is ``inf``, the "nobody passes" point, as in
    sklearn). When ``ref`` has one class (or no rows) the curve is undefined: three empty
    arrays and ``auc = Value(None, reason)``.

    Examples
    --------
    >>> fpr_, tpr_, thresholds, auc = roc([0.9, 0.2, 0.6, 0.4], [1, 0, 1, 0])
    >>> auc.value, tpr_.tolist()
    (1.0, [0.0, 0.5, 1.0, 1.0])
    """
    s, r, keep = _score_rows(scores, ref)
    s, r = s[keep], r[keep]
    reason = _auc_reason(r)
    if reason is not None:
        empty = np.empty(0)
        return empty, empty.copy(), empty.copy(), Value(None, reason)
    from sklearn.metrics import roc_auc_score, roc_curve  # late: 0.2 s of every cold start

    f, t, thr = roc_curve(r, s)
    return f, t, thr, Value(float(roc_auc_score(r, s)))


def _weighted_auc(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUC from positive / negative mass per distinct score level: (B, L) -> (B,).

    AUC = P(score_pos > score_neg) + P(tie) / 2 (Mann-Whitney), which is what
    ``roc_auc_score`` computes with ties.
    """
    neg_below = np.cumsum(neg, axis=1) - neg
    num = np.sum(pos * (neg_below + 0.5 * neg), axis=1)
    return _div(num, pos.sum(axis=1) * neg.sum(axis=1))


def auc_ci(
    scores: Any,
    ref: Any,
    clusters: Any,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval:
    """Task-clustered bootstrap interval for the ROC AUC.

    Vectorised: positives and negatives are counted per (cluster, distinct score), the
    resample weights of `resample_weights` turn them into (B, L) masses, and the AUC of
    every resample is the rank (Mann-Whitney) form in `_weighted_auc`. Cost is
    O(B * K * L) for K clusters and L distinct scores (about 20 ms for 260 tasks).
    Resamples with one class only are dropped (more than half: undefined).

    Examples
    --------
    >>> iv = auc_ci([0.9, 0.2, 0.6, 0.4, 0.8, 0.1], [1, 0, 1, 0, 0, 1],
    ...     ["a", "b", "c", "d", "e", "f"], n_resamples=500)
    >>> iv.defined, 0.0 <= iv.low <= iv.high <= 1.0
    (True, True)
    """
    _check_args(n_resamples, level)
    s, r, keep = _score_rows(scores, ref)
    codes, ids = _cluster_codes(clusters, s.shape[0], keep)
    s, r = s[keep], r[keep]
    few = _too_few_clusters(("auc",), int(ids.size), n_resamples, level)
    if few is not None:
        return few["auc"]
    _, level_idx = np.unique(s, return_inverse=True)
    n_levels = int(level_idx.max()) + 1
    k = ids.size
    cell = codes * n_levels + level_idx
    pos = np.bincount(cell[r == 1], minlength=k * n_levels).reshape(k, n_levels)
    neg = np.bincount(cell[r == 0], minlength=k * n_levels).reshape(k, n_levels)
    masses = _resampled(np.hstack([pos, neg]), n_resamples, seed)
    return _interval(_weighted_auc(masses[:, :n_levels], masses[:, n_levels:]), level)


def point_at_threshold(scores: Any, ref: Any, threshold: float) -> tuple[Value, Value]:
    """(FPR, TPR) of the verdict ``score >= threshold`` against ``ref``.

    A missing score stays missing (it is not a failing verdict), so the point uses the
    same rows as `roc`. E.g. the Universal Verifier's process verdict is
    ``uv_rubric_score >= 0.8``.

    Examples
    --------
    >>> point_at_threshold([0.9, 0.2, 0.6, 0.4], [1, 0, 1, 0], 0.5)
    (Value(value=0.0, reason=None), Value(value=1.0, reason=None))
    """
    s = as_scores(scores)
    verdict = np.where(np.isnan(s), np.nan, (s >= threshold).astype(np.float64))
    c = confusion(verdict, ref)
    return fpr(c), recall(c)


# ---------------------------------------------------------------------------------------
# McNemar
# ---------------------------------------------------------------------------------------


def mcnemar_exact(a: Any, b: Any) -> Value:
    """Exact two-sided McNemar p-value for paired binary labels (e.g. blind vs informed).

    With n10 = #(a = 1, b = 0) and n01 = #(a = 0, b = 1) the discordant counts,
    p = min(1, 2 * BinomCDF(min(n10, n01); n10 + n01, 1/2)), the same as
    ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``.

    Edge cases: pairs with a missing side are dropped. No complete pair: undefined
    ("n = 0"). Complete pairs but no discordant pair: p = 1.0, as in statsmodels: the
    exact null distribution with zero trials puts all mass on the observed 0, so the data
    give no evidence of a shift (this is a result, not a failure to compute).

    References
    ----------
    Q. McNemar (1947). Note on the sampling error of the difference between correlated
    proportions or percentages. Psychometrika 12(2), 153-157.

    Examples
    --------
    >>> mcnemar_exact([1, 1, 1, 0], [0, 0, 0, 0])  # 3 discordant pairs, all one way
    Value(value=0.25, reason=None)
    """
    c = confusion(a, b)
    if c.n == 0:
        return Value(None, "n = 0")
    return Value(float(mcnemar_p(c.fp, c.fn)))


def mcnemar_p(n10: Any, n01: Any) -> np.ndarray:
    """`mcnemar_exact` from discordant counts, for many pairs at once (arrays in, array out).

    p = min(1, 2 * BinomCDF(min(n10, n01); n10 + n01, 1/2)); 1.0 with no discordant pair.
    Callers mask pairs with no complete row (undefined, not 1.0).

    Examples
    --------
    >>> mcnemar_p([10, 0, 3], [2, 0, 3]).round(4).tolist()
    [0.0386, 1.0, 1.0]
    """
    b = np.asarray(n10, dtype=np.float64)
    c = np.asarray(n01, dtype=np.float64)
    from scipy.stats import binom  # late: scipy.stats costs 0.5 s of every cold start

    return np.minimum(1.0, 2.0 * binom.cdf(np.minimum(b, c), b + c, 0.5))


# ---------------------------------------------------------------------------------------
# Multi-rater agreement (tasks x raters, missing allowed)
# ---------------------------------------------------------------------------------------

#: Panel metrics computed by `panel_intervals` / `panel_report`.
PANEL_METRICS: tuple[str, ...] = ("fleiss_kappa", "krippendorff_alpha")


def _label_table(table: Any) -> np.ndarray:
    """tasks x raters labels as float64 with NaN; a DataFrame keeps its column dtypes."""
    if isinstance(table, pd.DataFrame):
        if table.shape[1] == 0:
            return np.empty((table.shape[0], 0))
        return np.column_stack([as_labels(table[col]) for col in table.columns])
    arr = np.asarray(table, dtype=object) if not isinstance(table, np.ndarray) else table
    if arr.size == 0:
        return np.empty((0, 0))
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D tasks x raters table, got shape {arr.shape}")
    return as_labels(arr.ravel()).reshape(arr.shape)


def _unit_stats(table: Any, clusters: Any = None) -> tuple[np.ndarray, int]:
    """Per task with >= 2 ratings: [1, m, x, x(m-x)/m, x(m-x)/(m-1)]; and #tasks dropped.

    m = number of ratings of the task, x = number of 1s. Both coefficients are functions
    of the column sums of this (N, 5) matrix, which makes the task bootstrap one product.
    With ``clusters`` (one label per task row), the kept tasks' rows are summed per
    cluster (sorted labels): the (K, 5) input of a cluster bootstrap over, e.g., websites.
    """
    stats, dropped, keep = _task_stats(table)
    if clusters is None:
        return stats, dropped
    codes, _ = _cluster_codes(clusters, keep.shape[0], keep)
    k = int(codes.max()) + 1 if codes.size else 0
    summed = np.zeros((k, 5))
    np.add.at(summed, codes, stats)
    return summed, dropped


def _task_stats(table: Any) -> tuple[np.ndarray, int, np.ndarray]:
    """`_unit_stats` per task, plus the mask of tasks kept (>= 2 ratings)."""
    t = _label_table(table)
    m = (~np.isnan(t)).sum(axis=1).astype(np.float64)
    x = (t == 1.0).sum(axis=1).astype(np.float64)
    keep = m >= 2
    m, x = m[keep], x[keep]
    dis = x * (m - x)
    stats = np.column_stack([np.ones_like(m), m, x, dis / m, dis / (m - 1)])
    return stats.reshape(-1, 5), int((~keep).sum()), keep


def _panel_arrays(sums: np.ndarray, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Fleiss-Cuzick kappa and Krippendorff's alpha from (..., 5) column sums; NaN = undefined."""
    n_units, n_vals, n_pos, d_fleiss, d_alpha = (sums[..., j] for j in range(5))
    n_neg = n_vals - n_pos
    out: dict[str, np.ndarray] = {}
    if "fleiss_kappa" in names:
        p = _div(n_pos, n_vals)
        out["fleiss_kappa"] = 1.0 - _div(d_fleiss, (n_vals - n_units) * p * (1.0 - p))
    if "krippendorff_alpha" in names:
        out["krippendorff_alpha"] = 1.0 - _div((n_vals - 1.0) * d_alpha, n_neg * n_pos)
    return out


def _panel_value(name: str, stats: np.ndarray) -> Value:
    v = float(_panel_arrays(stats.sum(axis=0), (name,))[name])
    if not math.isnan(v):
        return Value(v)
    if stats.shape[0] == 0:
        return Value(None, "n = 0 (no task has two or more ratings)")
    return Value(None, "all ratings use one class (p_e = 1)")


def fleiss_kappa(table: Any) -> Value:
    """Fleiss' kappa for binary labels, generalised to a varying number of raters per task.

    Parameters
    ----------
    table : tasks x raters (DataFrame or 2-D array) of 1 / 0 / missing. Tasks with fewer
        than two ratings are dropped: they carry no information about agreement.

    Notes
    -----
    Fleiss (1971) assumes the same number of ratings m per task. Panels here have 2 or 3
    reviewers per task, so we use the generalisation of Fleiss & Cuzick (1979) for
    binary ratings: with N tasks, m_i ratings and x_i ones on task i,
    m_bar = sum(m_i) / N, p = sum(x_i) / sum(m_i), q = 1 - p,

        kappa = 1 - sum_i x_i (m_i - x_i) / m_i  /  (N (m_bar - 1) p q).

    Since x_i (m_i - x_i) / m_i = (m_i - 1) / 2 * (share of disagreeing rater pairs on
    task i), it weights a task's disagreement by m_i - 1. It keeps every task (instead of
    only those with the modal number of raters, which would drop the 3-reviewer tasks),
    and equals Fleiss' kappa (``statsmodels.stats.inter_rater.fleiss_kappa``) when all
    m_i are equal.
    Undefined when no task has two ratings, or all ratings are one class (p q = 0).

    References
    ----------
    J. L. Fleiss (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin 76(5), 378-382.
    J. L. Fleiss & J. Cuzick (1979). The reliability of dichotomous judgments: unequal
    numbers of judges per subject. Applied Psychological Measurement 3(4), 537-542.

    Examples
    --------
    >>> fleiss_kappa([[1, 1, None], [0, 0, 0], [1, 0, 1]]).fmt()  # tasks x raters
    '0.467'
    """
    stats, _ = _unit_stats(table)
    return _panel_value("fleiss_kappa", stats)


def krippendorff_alpha(table: Any) -> Value:
    """Krippendorff's alpha, nominal, for binary labels with missing ratings.

    Parameters
    ----------
    table : tasks x raters of 1 / 0 / missing (note: the ``krippendorff`` package takes
        the transpose, raters x units). Tasks with fewer than two ratings are not pairable
        and are dropped, as in the package.

    Notes
    -----
    alpha = 1 - D_o / D_e. With n pairable values, n_1 ones and n_0 zeros, and per task
    m_u values of which x_u are ones, the coincidence matrix gives
    D_o / D_e = (n - 1) * sum_u x_u (m_u - x_u) / (m_u - 1)  /  (n_0 n_1),
    equal to ``krippendorff.alpha(table.T, level_of_measurement="nominal")``.
    Undefined when all pairable values are one class (D_e = 0; the package raises).

    References
    ----------
    K. Krippendorff (2011). Computing Krippendorff's alpha-reliability. Annenberg School
    for Communication Departmental Papers 43.

    Examples
    --------
    >>> krippendorff_alpha([[1, 1, None], [0, 0, 0], [1, 0, 1]]).fmt()
    '0.562'
    """
    stats, _ = _unit_stats(table)
    return _panel_value("krippendorff_alpha", stats)


def panel_intervals(
    table: Any,
    metric_names: Iterable[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
    clusters: Any = None,
) -> dict[str, Interval]:
    """Bootstrap intervals for `fleiss_kappa` / `krippendorff_alpha` (rows = tasks).

    The tasks with two or more ratings are resampled with `resample_weights`; with
    ``clusters`` (one label per row, e.g. the website of each task) whole clusters are.

    Examples
    --------
    >>> iv = panel_intervals([[1, 1], [0, 0], [1, 0], [1, 1], [0, 0]], n_resamples=200)
    >>> sorted(iv)
    ['fleiss_kappa', 'krippendorff_alpha']
    """
    names = _check_names(metric_names, PANEL_METRICS)
    _check_args(n_resamples, level)
    stats, _ = _unit_stats(table, clusters)
    few = _too_few_clusters(names, stats.shape[0], n_resamples, level)
    if few is not None:
        return few
    arrays = _panel_arrays(_resampled(stats, n_resamples, seed), names)
    return {name: _interval(arrays[name], level) for name in names}


def panel_report(
    table: Any,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
    unit: str = "task",
    clusters: Any = None,
) -> dict[str, Any]:
    """Fleiss' kappa and Krippendorff's alpha of a tasks x raters panel, with intervals.

    Keys: ``counts`` (n_tasks used, n_clusters resampled, n_tasks_dropped with < 2
    ratings, n_ratings, raters_per_task {m: number of tasks}), ``metrics`` {name: Value}, ``ci``
    {name: Interval}, ``bootstrap`` (settings; ``unit`` is the caller's name for what one
    row of the panel is, written as given).

    Examples
    --------
    >>> sorted(panel_report([[1, 1, None], [0, 0, 0], [1, 0, 1]], n_resamples=200))
    ['bootstrap', 'ci', 'counts', 'metrics']
    """
    stats, dropped = _unit_stats(table)
    per_task = pd.Series(stats[:, 1].astype(int)).value_counts().sort_index()
    n_clusters = stats.shape[0] if clusters is None else _unit_stats(table, clusters)[0].shape[0]
    return {
        "counts": {
            "n_tasks": int(stats.shape[0]),
            "n_clusters": int(n_clusters),
            "n_tasks_dropped": dropped,
            "n_ratings": int(stats[:, 1].sum()),
            "raters_per_task": {int(m): int(k) for m, k in per_task.items()},
        },
        "metrics": {name: _panel_value(name, stats) for name in PANEL_METRICS},
        "ci": panel_intervals(table, PANEL_METRICS, n_resamples, seed, level, clusters),
        "bootstrap": {"n_resamples": n_resamples, "seed": seed, "level": level, "unit": unit},
    }


# ---------------------------------------------------------------------------------------
# One-call report and JSON
# ---------------------------------------------------------------------------------------


def binary_report(
    pred: Any,
    ref: Any,
    clusters: Any,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
    unit: str = "task",
) -> dict[str, Any]:
    """Everything a page or the JSON report shows for one (pred, ref) pair.

    Keys:
      ``counts``: n, tp, fp, fn, tn, n_missing_pred, n_missing_ref, n_excluded,
      n_clusters (clusters with a complete row);
      ``metrics``: {name: Value} for every name in `METRIC_NAMES`;
      ``ci``: {name: Interval} for `CI_METRICS` (task-clustered bootstrap);
      ``reasons``: {name: reason} for undefined metrics and intervals (``"ci:<name>"``),
      so the reasons survive `to_jsonable`;
      ``kappa_misleads``: bool (`kappa_misleads`);
      ``bootstrap``: n_resamples, seed, level, unit. ``unit`` names what ``clusters``
      holds (``task``, ``site``, ...): this module cannot tell a website id from a task
      id, so the caller says which it passed, and the JSON never claims the wrong one.

    Examples
    --------
    >>> r = binary_report([1, 0, 1, 0], [1, 0, 0, 0], ["a", "b", "c", "d"], n_resamples=200)
    >>> r["counts"]["tp"], r["metrics"]["accuracy"].value, sorted(r)
    (1, 0.75, ['bootstrap', 'ci', 'counts', 'kappa_misleads', 'metrics', 'reasons'])
    """
    _check_args(n_resamples, level)
    p, r = as_labels(pred), as_labels(ref)  # coerce once; the helpers below get floats
    c = confusion(p, r)
    values = metrics(c)
    rows = _prepare(p, r, clusters)
    cis, n_clusters = _intervals_and_k(rows, CI_METRICS, n_resamples, seed, level)
    reasons = {name: v.reason for name, v in values.items() if v.reason}
    reasons |= {f"ci:{name}": iv.reason for name, iv in cis.items() if iv.reason}
    counts = {k: getattr(c, k) for k in ("tp", "fp", "fn", "tn")}
    return {
        "counts": {
            "n": c.n,
            **counts,
            "n_missing_pred": c.n_missing_pred,
            "n_missing_ref": c.n_missing_ref,
            "n_excluded": c.n_excluded,
            "n_clusters": n_clusters,
        },
        "metrics": values,
        "ci": cis,
        "reasons": reasons,
        "kappa_misleads": kappa_misleads(c),
        "bootstrap": {"n_resamples": n_resamples, "seed": seed, "level": level, "unit": unit},
    }


def resampled_clusters(pred: Any, ref: Any, clusters: Any) -> int:
    """How many clusters a bootstrap of (pred, ref) resamples: those with a complete row.

    >>> resampled_clusters([1, None, 0], [1, 1, 0], ["a", "b", "b"])
    2
    """
    p, r = as_labels(pred), as_labels(ref)
    keep = ~(np.isnan(p) | np.isnan(r))
    return len(set(np.asarray(clusters, dtype=object)[keep].tolist()))


NOT_IN_REPORT = {"report": False}
"""Metadata of a result field the JSON report leaves out (e.g. a record's ``n_clusters``,
said in captions): `to_jsonable` skips it, so the report's keys stay as they were."""


def to_jsonable(obj: Any) -> Any:
    """Plain JSON types: Value -> float or None, Interval -> [low, high] or None.

    Also converts Confusion / PairedDiff (to dicts), mappings, sequences, numpy scalars
    and arrays; any NaN becomes None, so ``json.dumps(..., allow_nan=False)`` succeeds.

    Examples
    --------
    >>> to_jsonable({"kappa": Value(None, "n = 0"), "x": float("nan"), "ci": Interval(0.1, 0.2)})
    {'kappa': None, 'x': None, 'ci': [0.1, 0.2]}
    """
    if isinstance(obj, Value):
        return obj.value
    if isinstance(obj, Interval):
        return None if obj.bounds is None else list(obj.bounds)
    if isinstance(obj, Confusion):
        return {**asdict(obj), "n": obj.n, "n_excluded": obj.n_excluded}
    if is_dataclass(obj) and not isinstance(obj, type):
        return {
            f.name: to_jsonable(getattr(obj, f.name))
            for f in fields(obj)
            if f.metadata.get("report", True)
        }
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    return obj
