"""Intervals for proportions that hold at 0 and 1: Clopper-Pearson intervals on the
cluster-adjusted effective sample size.

Why not the percentile bootstrap: a resample cannot hold more false positives than the
data, so with 0 or 1 false positive among 45-65 negatives the percentile interval of the
FPR is [0, 0] in about 40% of datasets and covers a true rate of 0.015-0.02 only 58-62%
of the time (`python -m bench.coverage`).

Why Clopper-Pearson (issue 37): the headline rates live at 0.005-0.05 and 0.95-0.995 on
30-120 rows. There Wilson's score interval dips to 0.86 (rate 0.995, 30 rows) and 0.90
(rate 0.01, 55 rows), and Jeffreys' to 0.92; the Clopper-Pearson interval (the exact
binomial tails, as Beta quantiles) never covers less than its level on independent rows
and stays at or above 0.96 over that grid with 10 sites x 10 tasks and a site effect
(`python -m bench.coverage` prints the grid's minimum and where it occurs). It is wider
than Wilson (about 0.99 coverage at a low FPR): the price of never claiming more.

Why not on the raw n: the rows of one cluster (a task's reviewers, a website's tasks) are
not independent. The cluster-robust (linearised) variance of the ratio estimator gives a
design effect ``deff = v / (p (1 - p) / n)``; the interval is taken on the effective size
``n_e = n / deff`` (never larger than n) with ``p n_e`` successes (fractional counts are
fine for the Beta quantiles), shrunk again by ``(t_{n_e-1} / t_{K-1})^2`` for K clusters
(Korn & Graubard 1998's degrees-of-freedom correction: few clusters make the variance
itself uncertain). With one row per cluster both factors are exactly 1 and the interval is
statsmodels' ``proportion_confint(x, n, method="beta")`` (a test checks it). At p = 0 or 1
the variance is 0 and the design effect unknown: deff = 1 there (Korn & Graubard's
convention), the df correction still applies.

References
----------
C. J. Clopper & E. S. Pearson (1934). The use of confidence or fiducial limits illustrated
in the case of the binomial. Biometrika 26(4), 404-413. L. D. Brown, T. T. Cai &
A. DasGupta (2001). Interval estimation for a binomial proportion. Statistical Science
16(2), 101-133. E. L. Korn & B. I. Graubard (1998). Confidence intervals for proportions
with small expected number of positive counts estimated from survey data. Survey
Methodology 24(2), 193-201. N. Dean & M. Pagano (2015). Evaluating confidence interval
methods for binomial proportions in clustered surveys. J. Survey Statistics and
Methodology 3(4), 484-503.

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from lib.metrics import registry
from lib.metrics.binary import scalar_metric
from lib.metrics.registry import CLOPPER_PEARSON as CLOPPER_PEARSON
from lib.metrics.registry import PERCENTILE as PERCENTILE
from lib.metrics.values import Confusion, Interval

# Which metrics are proportions, and their cells: `lib.metrics.registry` (`Metric.cells`).


ONE_CLUSTER_DENOMINATOR = (
    "all {n} rows it is a share of are in one cluster: resampling it cannot measure uncertainty"
)


def _special():
    """scipy.special, imported on first use: a module-level import put scipy in every
    cold start (Home draws no interval; tests/unit/test_startup_imports.py checks it)."""
    import scipy.special

    return scipy.special


def clopper_pearson_bounds(x: float, n: float, level: float) -> tuple[float, float]:
    """The Clopper-Pearson interval of ``x`` successes in ``n`` trials (both may be
    fractional): the Beta(x, n - x + 1) and Beta(x + 1, n - x) quantiles; 0 / 1 at the ends.

    Examples
    --------
    >>> [round(b, 4) for b in clopper_pearson_bounds(0, 65, 0.95)]
    [0.0, 0.0552]
    """
    low, high = _clopper_pearson_arrays(np.array([x], float), np.array([n], float), level)
    return float(low[0]), float(high[0])


def effective_n(y: np.ndarray, m: np.ndarray, level: float) -> float:
    """The effective sample size of ``sum(y) / sum(m)`` over clusters (y, m per cluster).

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


def proportion_cluster(per_cluster: np.ndarray, name: str, level: float) -> Interval:
    """Cluster-adjusted Clopper-Pearson interval of the proportion ``name`` from (K, 4)
    counts.

    Undefined when the proportion is (no row in its denominator: the metric's own reason),
    or when its rows all sit in one cluster that holds several of them.

    Examples
    --------
    >>> counts = np.array([[3.0, 0, 1, 4], [2, 0, 0, 6], [4, 0, 1, 5]])  # tp fp fn tn
    >>> iv = proportion_cluster(counts, "fpr", 0.95)  # 0 false positives in 15 negatives
    >>> iv.low, round(iv.high, 3), iv.method, round(iv.n_effective, 2)  # 3 clusters: t_2
    (0.0, 0.628, 'clopper-pearson', 3.73)
    """
    num, den = _cells(name)
    counts = np.asarray(per_cluster, dtype=np.float64)
    y, m = counts[:, num].sum(axis=1), counts[:, den].sum(axis=1)
    used = m > 0
    y, m = y[used], m[used]
    n, k = float(m.sum()), int(used.sum())
    if n == 0:
        reason = scalar_metric(name, Confusion.from_counts(counts.sum(axis=0))).reason or "n = 0"
        return Interval(None, None, reason, method=CLOPPER_PEARSON)
    if k < 2 and n > k:
        why = ONE_CLUSTER_DENOMINATOR.format(n=int(n))
        return Interval(None, None, why, method=CLOPPER_PEARSON)
    n_eff = effective_n(y, m, level)
    low, high = clopper_pearson_bounds(float(y.sum()) / n * n_eff, n_eff, level)
    return Interval(low, high, None, level=level, method=CLOPPER_PEARSON, n_effective=n_eff)


def _cells(name: str) -> registry.Cells:
    cells = registry.get(name).cells
    if cells is None:
        raise ValueError(f"{name} is not a proportion (lib.metrics.registry)")
    return cells


def _masks(names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(P, 4) 0/1 matrices: which cells are each proportion's numerator and denominator."""
    num, den = np.zeros((len(names), 4)), np.zeros((len(names), 4))
    for i, name in enumerate(names):
        cells = _cells(name)
        num[i, list(cells[0])] = 1.0
        den[i, list(cells[1])] = 1.0
    return num, den


def proportion_intervals_many(
    per_cluster: Sequence[np.ndarray], names: Iterable[str], level: float
) -> list[dict[str, Interval]]:
    """`proportion_cluster` of every proportion among ``names`` for comparisons with the same K
    clusters, vectorised over comparisons and metrics (the engine's path: ~130 comparisons
    on the Agreement page, ~300 slices on Slices). The other names are left out.

    Examples
    --------
    >>> counts = np.array([[3.0, 0, 1, 4], [2, 0, 0, 6], [4, 0, 1, 5]])
    >>> proportion_intervals_many([counts], ["fpr", "kappa"], 0.95)[0] == {
    ...     "fpr": proportion_cluster(counts, "fpr", 0.95)}
    True
    """
    shares = registry.proportions()
    chosen = [name for name in names if name in shares]
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
    low, high = _clopper_pearson_arrays(p * n_e, n_e, level)
    totals = counts.sum(axis=1)
    out = []
    for c in range(counts.shape[0]):
        row = {}
        for j, name in enumerate(chosen):
            if ok[c, j]:
                row[name] = Interval(
                    float(low[c, j]), float(high[c, j]), None, level=level, method=CLOPPER_PEARSON,
                    n_effective=float(n_e[c, j]),
                )  # fmt: skip
            elif n[c, j] == 0:
                reason = scalar_metric(name, Confusion.from_counts(totals[c])).reason or "n = 0"
                row[name] = Interval(None, None, reason, method=CLOPPER_PEARSON)
            else:
                why = ONE_CLUSTER_DENOMINATOR.format(n=int(n[c, j]))
                row[name] = Interval(None, None, why, method=CLOPPER_PEARSON)
        out.append(row)
    return out


def _clopper_pearson_arrays(
    x: np.ndarray, n: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """`clopper_pearson_bounds` on arrays (n > 0)."""
    tail = (1.0 - level) / 2.0
    inv = _special().betaincinv
    low = np.where(x <= 0, 0.0, inv(np.where(x > 0, x, 1.0), n - x + 1.0, tail))
    high = np.where(x >= n, 1.0, inv(x + 1.0, np.where(x < n, n - x, 1.0), 1.0 - tail))
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
