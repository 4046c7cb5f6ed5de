"""Intervals for proportions that hold at 0 and 1: Wilson score intervals on the
cluster-adjusted effective sample size.

Why not the percentile bootstrap: a resample cannot hold more false positives than the
data, so with 0 or 1 false positive among 45-65 negatives the percentile interval of the
FPR is [0, 0] in about 40% of datasets and covers a true rate of 0.015-0.02 only 58-62%
of the time (`python -m bench.coverage`). The Wilson interval inverts the score test, so
its upper bound is above 0 when nothing was observed, and its coverage stays near
nominal for few events (Brown, Cai & DasGupta 2001).

Why not plain Wilson: the rows of one cluster (a task's reviewers, a website's tasks) are
not independent. The cluster-robust (linearised) variance of the ratio estimator gives a
design effect ``deff = v / (p (1 - p) / n)``; Wilson is taken on the effective size
``n_e = n / deff`` (never larger than n), shrunk again by ``(t_{n_e-1} / t_{K-1})^2`` for
K clusters (Korn & Graubard 1998's degrees-of-freedom correction: few clusters make the
variance itself uncertain). With one row per cluster both factors are exactly 1 and the
interval is statsmodels' ``proportion_confint(x, n, method="wilson")`` (a test checks it).
At p = 0 or 1 the variance is 0 and the design effect unknown: deff = 1 there (Korn &
Graubard's convention), the df correction still applies.

References
----------
E. B. Wilson (1927). Probable inference, the law of succession, and statistical
inference. JASA 22(158), 209-212. L. D. Brown, T. T. Cai & A. DasGupta (2001). Interval
estimation for a binomial proportion. Statistical Science 16(2), 101-133. E. L. Korn &
B. I. Graubard (1998). Confidence intervals for proportions with small expected number of
positive counts estimated from survey data. Survey Methodology 24(2), 193-201.
N. Dean & M. Pagano (2015). Evaluating confidence interval methods for binomial
proportions in clustered surveys. J. Survey Statistics and Methodology 3(4), 484-503.

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from lib.metrics.binary import scalar_metric
from lib.metrics.values import Confusion, Interval

# Cells of [tp, fp, fn, tn]: (numerator, denominator) of every proportion metric.
_CELLS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "pred_positive_rate": ((0, 1), (0, 1, 2, 3)),
    "ref_positive_rate": ((0, 2), (0, 1, 2, 3)),
    "accuracy": ((0, 3), (0, 1, 2, 3)),
    "precision": ((0,), (0, 1)),
    "recall": ((0,), (0, 2)),
    "specificity": ((3,), (1, 3)),
    "fpr": ((1,), (1, 3)),
    "fnr": ((2,), (0, 2)),
}

PROPORTIONS: tuple[str, ...] = tuple(_CELLS)
"""Metrics that are a share of rows (x of n): their interval is `wilson_cluster`."""

WILSON = "wilson"
PERCENTILE = "percentile"

ONE_CLUSTER_DENOMINATOR = (
    "all {n} rows it is a share of are in one cluster: resampling it cannot measure uncertainty"
)


def _special():
    """scipy.special, imported on first use: a module-level import put scipy in every
    cold start (Home draws no interval; tests/unit/test_startup_imports.py checks it)."""
    import scipy.special

    return scipy.special


def wilson_bounds(x: float, n: float, level: float) -> tuple[float, float]:
    """The Wilson score interval of ``x`` successes in ``n`` trials (both may be fractional).

    Examples
    --------
    >>> [round(b, 4) for b in wilson_bounds(0, 65, 0.95)]
    [0.0, 0.0558]
    """
    z = float(_special().ndtri((1.0 + level) / 2.0))
    p = x / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * np.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    low = 0.0 if x <= 0 else max(0.0, centre - half)
    high = 1.0 if x >= n else min(1.0, centre + half)
    return float(low), float(high)


def effective_n(y: np.ndarray, m: np.ndarray, level: float) -> float:
    """The Wilson sample size of ``sum(y) / sum(m)`` over clusters (y, m per cluster).

    ``n_e = n / deff`` with ``deff = max(1, v / (p (1 - p) / n))`` (v the linearised
    cluster variance of the ratio), times ``(t_{n_e - 1} / t_{K-1})^2`` when the K clusters
    with m > 0 are fewer than n_e (Korn & Graubard's factor, with the effective sample's
    degrees of freedom, so copying every row of a cluster changes nothing).

    Examples
    --------
    >>> effective_n(np.array([1.0, 0, 0, 0]), np.ones(4), 0.95)  # one row per cluster
    4.0
    >>> effective_n(np.array([5.0, 0]), np.array([5.0, 5]), 0.95)  # all-or-nothing clusters
    2.0
    """
    n = float(m.sum())
    k = int((m > 0).sum())
    p = float(y.sum()) / n
    deff = 1.0
    if 0.0 < p < 1.0:
        v = float(((y - p * m) ** 2).sum()) / n**2
        deff = max(1.0, v / (p * (1.0 - p) / n))
    n_eff = n / deff
    if n_eff > k * (1.0 + 1e-9) and k >= 2:  # fewer clusters than effective rows
        q = (1.0 + level) / 2.0
        t = _special().stdtrit
        n_eff *= (float(t(n_eff - 1.0, q)) / float(t(k - 1.0, q))) ** 2
    return n_eff


def wilson_cluster(per_cluster: np.ndarray, name: str, level: float) -> Interval:
    """Cluster-adjusted Wilson interval of the proportion ``name`` from (K, 4) counts.

    Undefined when the proportion is (no row in its denominator: the metric's own reason),
    or when its rows all sit in one cluster that holds several of them.

    Examples
    --------
    >>> counts = np.array([[3.0, 0, 1, 4], [2, 0, 0, 6], [4, 0, 1, 5]])  # tp fp fn tn
    >>> iv = wilson_cluster(counts, "fpr", 0.95)  # 0 false positives in 15 negatives
    >>> iv.low, round(iv.high, 3), iv.method, round(iv.n_effective, 2)  # 3 clusters: t_2
    (0.0, 0.508, 'wilson', 3.73)
    """
    num, den = _CELLS[name]
    counts = np.asarray(per_cluster, dtype=np.float64)
    y, m = counts[:, num].sum(axis=1), counts[:, den].sum(axis=1)
    used = m > 0
    y, m = y[used], m[used]
    n, k = float(m.sum()), int(used.sum())
    if n == 0:
        reason = scalar_metric(name, Confusion.from_counts(counts.sum(axis=0))).reason or "n = 0"
        return Interval(None, None, reason, method=WILSON)
    if k < 2 and n > k:
        return Interval(None, None, ONE_CLUSTER_DENOMINATOR.format(n=int(n)), method=WILSON)
    n_eff = effective_n(y, m, level)
    low, high = wilson_bounds(float(y.sum()) / n * n_eff, n_eff, level)
    return Interval(low, high, None, level=level, method=WILSON, n_effective=n_eff)


def _masks(names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(P, 4) 0/1 matrices: which cells are each proportion's numerator and denominator."""
    num, den = np.zeros((len(names), 4)), np.zeros((len(names), 4))
    for i, name in enumerate(names):
        num[i, list(_CELLS[name][0])] = 1.0
        den[i, list(_CELLS[name][1])] = 1.0
    return num, den


def proportion_intervals_many(
    per_cluster: Sequence[np.ndarray], names: Iterable[str], level: float
) -> list[dict[str, Interval]]:
    """`wilson_cluster` of every proportion among ``names`` for comparisons with the same K
    clusters, vectorised over comparisons and metrics (the engine's path: ~130 comparisons
    on the Agreement page, ~300 slices on Slices). The other names are left out.

    Examples
    --------
    >>> counts = np.array([[3.0, 0, 1, 4], [2, 0, 0, 6], [4, 0, 1, 5]])
    >>> proportion_intervals_many([counts], ["fpr", "kappa"], 0.95)[0] == {
    ...     "fpr": wilson_cluster(counts, "fpr", 0.95)}
    True
    """
    chosen = [name for name in names if name in _CELLS]
    if not chosen or not len(per_cluster):
        return [{} for _ in per_cluster]
    counts = np.stack([np.asarray(c, dtype=np.float64) for c in per_cluster])  # (C, K, 4)
    num, den = _masks(chosen)
    y, m = counts @ num.T, counts @ den.T  # (C, K, P)
    n, x = m.sum(axis=1), y.sum(axis=1)  # (C, P)
    k = (m > 0).sum(axis=1)
    ok = (n > 0) & ~((k < 2) & (n > k))
    safe_n = np.where(ok, n, 1.0)
    p = x / safe_n
    v = ((y - p[:, None, :] * m) ** 2).sum(axis=1) / safe_n**2
    inner = (p > 0) & (p < 1)
    binom = np.where(inner, p * (1 - p) / safe_n, 1.0)
    deff = np.where(inner, np.maximum(1.0, v / binom), 1.0)
    n_e = safe_n / deff
    adjust = ok & (k >= 2) & (n_e > k * (1.0 + 1e-9))
    q = (1.0 + level) / 2.0
    t_e = _special().stdtrit(np.where(adjust, n_e - 1.0, 1.0), q)
    t_k = _special().stdtrit(np.where(adjust, k - 1.0, 1.0), q)
    n_e = np.where(adjust, n_e * (t_e / t_k) ** 2, n_e)
    low, high = _wilson_arrays(p * n_e, n_e, level)
    totals = counts.sum(axis=1)
    out = []
    for c in range(counts.shape[0]):
        row = {}
        for j, name in enumerate(chosen):
            if ok[c, j]:
                row[name] = Interval(
                    float(low[c, j]), float(high[c, j]), None, level=level, method=WILSON,
                    n_effective=float(n_e[c, j]),
                )  # fmt: skip
            elif n[c, j] == 0:
                reason = scalar_metric(name, Confusion.from_counts(totals[c])).reason or "n = 0"
                row[name] = Interval(None, None, reason, method=WILSON)
            else:
                why = ONE_CLUSTER_DENOMINATOR.format(n=int(n[c, j]))
                row[name] = Interval(None, None, why, method=WILSON)
        out.append(row)
    return out


def _wilson_arrays(x: np.ndarray, n: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """`wilson_bounds` on arrays (n > 0)."""
    z = float(_special().ndtri((1.0 + level) / 2.0))
    p = x / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * np.sqrt(np.maximum(p * (1.0 - p), 0.0) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    low = np.where(x <= 0, 0.0, np.maximum(0.0, centre - half))
    high = np.where(x >= n, 1.0, np.minimum(1.0, centre + half))
    return low, high
