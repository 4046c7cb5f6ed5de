"""Binary agreement metrics: vectorised on count arrays (`metric_arrays`, the
bootstrap's inner loop) and as `Value`s with the reason when undefined. The formulas and
the list of metrics are declared in `lib.metrics.registry`.

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from lib.metrics import registry
from lib.metrics._base import check_names
from lib.metrics.values import (
    Confusion,
    Value,
)

# ---------------------------------------------------------------------------------------
# Vectorised metrics on count arrays (..., 4); NaN marks "undefined"
# ---------------------------------------------------------------------------------------


def metric_arrays(counts: np.ndarray, names: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """Metrics for many confusion tables at once (the bootstrap's inner loop).

    Parameters
    ----------
    counts : array of shape (..., 4)
        ``[tp, fp, fn, tn]`` along the last axis, e.g. (B, 4) for B resamples.
    names : metric names (default: every metric of `lib.metrics.registry.METRICS`)

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
    known = registry.by_name()
    return {name: known[name].counts(tp, fp, fn, tn) for name in check_names(names, tuple(known))}


# ---------------------------------------------------------------------------------------
# Scalar metrics (Value) with reasons
# ---------------------------------------------------------------------------------------


def scalar_metric(name: str, c: Confusion) -> Value:
    v = float(metric_arrays(c.as_array(), (name,))[name])
    if not math.isnan(v):
        return Value(v)
    if c.n == 0:
        extra = f" ({c.n_excluded} rows have a missing label)" if c.n_excluded else ""
        return Value(None, "n = 0" + extra)
    return Value(None, registry.undefined_reason(name, c))


def pred_positive_rate(c: Confusion) -> Value:
    """Share of label 1 in ``pred``: (tp + fp) / n. Undefined when n = 0.

    Examples
    --------
    >>> pred_positive_rate(confusion([1, 1, 0, 0], [1, 0, 0, 0]))
    Value(value=0.5, reason=None)
    """
    return scalar_metric("pred_positive_rate", c)


def ref_positive_rate(c: Confusion) -> Value:
    """Share of label 1 in ``ref`` (the prevalence): (tp + fn) / n. Undefined when n = 0.

    Examples
    --------
    >>> ref_positive_rate(confusion([1, 1, 0, 0], [1, 0, 0, 0]))
    Value(value=0.25, reason=None)
    """
    return scalar_metric("ref_positive_rate", c)


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
    return scalar_metric("accuracy", c)


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
    return scalar_metric("precision", c)


def recall(c: Confusion) -> Value:
    """Sensitivity / true-positive rate tp / (tp + fn).

    Undefined when ``ref`` has no 1 (tp + fn = 0); scikit-learn returns 0.0 by default.

    Examples
    --------
    >>> recall(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.667'
    """
    return scalar_metric("recall", c)


def specificity(c: Confusion) -> Value:
    """True-negative rate tn / (tn + fp) = 1 - FPR. Undefined when ``ref`` has no 0.

    Examples
    --------
    >>> specificity(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]))
    Value(value=0.5, reason=None)
    """
    return scalar_metric("specificity", c)


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
    return scalar_metric("f1", c)


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
    return scalar_metric("fpr", c)


def fnr(c: Confusion) -> Value:
    """False-negative rate fn / (fn + tp) = 1 - recall. Undefined when ``ref`` has no 1.

    Examples
    --------
    >>> fnr(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])).fmt()
    '0.333'
    """
    return scalar_metric("fnr", c)


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
    return scalar_metric("kappa", c)


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
    return scalar_metric("ac1", c)


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
    return scalar_metric("mcc", c)


def metrics(c: Confusion, names: Iterable[str] | None = None) -> dict[str, Value]:
    """Every (or the named) two-rater metric of ``c`` as Value, in the registry's order.

    Examples
    --------
    >>> out = metrics(confusion([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]), ["accuracy", "kappa"])
    >>> {name: v.fmt() for name, v in out.items()}
    {'accuracy': '0.600', 'kappa': '0.167'}
    """
    return {name: scalar_metric(name, c) for name in check_names(names, registry.metric_names())}


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
