"""An independent cluster bootstrap, written as the textbook loop, to check lib.metrics.

Nothing here imports lib: clusters are numbered in sorted id order, and resample b draws
``K`` cluster numbers with ``np.random.default_rng(seed).integers(0, K, size=(B, K))[b]``
(the protocol `lib.metrics.resample_weights` documents); every drawn cluster contributes
all of its rows (a cluster drawn twice contributes them twice), and the metric is
recomputed from the pooled rows with the textbook formulas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

Rows = list[tuple[float, float]]  # (pred, ref) pairs


def _counts(rows: Rows) -> tuple[int, int, int, int]:
    tp = fp = fn = tn = 0
    for p, r in rows:
        if p == 1 and r == 1:
            tp += 1
        elif p == 1:
            fp += 1
        elif r == 1:
            fn += 1
        else:
            tn += 1
    return tp, fp, fn, tn


def accuracy(rows: Rows) -> float:
    return sum(p == r for p, r in rows) / len(rows) if rows else math.nan


def fpr(rows: Rows) -> float:
    _, fp, _, tn = _counts(rows)
    return fp / (fp + tn) if fp + tn else math.nan


def fnr(rows: Rows) -> float:
    tp, _, fn, _ = _counts(rows)
    return fn / (fn + tp) if fn + tp else math.nan


def kappa(rows: Rows) -> float:
    """Cohen's kappa as (p_o - p_e) / (1 - p_e) from the raters' marginal rates."""
    if not rows:
        return math.nan
    n = len(rows)
    p_o = sum(p == r for p, r in rows) / n
    p_pred = sum(p for p, _ in rows) / n
    p_ref = sum(r for _, r in rows) / n
    p_e = p_pred * p_ref + (1 - p_pred) * (1 - p_ref)
    return (p_o - p_e) / (1 - p_e) if p_e != 1 else math.nan


METRICS: dict[str, Callable[[Rows], float]] = {
    "accuracy": accuracy,
    "kappa": kappa,
    "fpr": fpr,
    "fnr": fnr,
}


def group_rows(pred: Sequence[float], ref: Sequence[float], clusters: Sequence) -> dict:
    """Complete rows grouped by cluster id (rows with a missing label are dropped)."""
    groups: dict = {}
    for p, r, c in zip(pred, ref, clusters, strict=True):
        if math.isnan(p) or math.isnan(r):
            continue
        groups.setdefault(c, []).append((p, r))
    return groups


def resample_values(
    groups: dict, fn: Callable[[Rows], float], n_resamples: int, seed: int
) -> list[float]:
    """The metric in every resample, by pooling the rows of the drawn clusters."""
    ids = sorted(groups)
    k = len(ids)
    draws = np.random.default_rng(seed).integers(0, k, size=(n_resamples, k))
    out = []
    for b in range(n_resamples):
        pooled: Rows = []
        for j in draws[b]:
            pooled.extend(groups[ids[j]])
        out.append(fn(pooled))
    return out


def percentile_interval(values: Sequence[float], level: float) -> tuple[float, float] | None:
    """Percentile interval of the defined values; None when more than half are undefined."""
    v = np.asarray(values, dtype=float)
    ok = ~np.isnan(v)
    if 2 * int((~ok).sum()) > v.size:
        return None
    lo, hi = np.quantile(v[ok], [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def plain_intervals(
    pred: Sequence[float],
    ref: Sequence[float],
    clusters: Sequence,
    names: Sequence[str],
    n_resamples: int,
    seed: int,
    level: float = 0.95,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of ``names`` from the plain loop."""
    groups = group_rows(pred, ref, clusters)
    return {
        name: percentile_interval(resample_values(groups, METRICS[name], n_resamples, seed), level)
        for name in names
    }


# The proportions' interval (issues 28, 37): Clopper-Pearson on Korn & Graubard's effective
# n, written as a loop over clusters with scipy's t and statsmodels' "beta" (nothing from lib).
SHARE_OF: dict[str, tuple[Callable[[float, float], bool], Callable[[float, float], bool]]] = {
    "accuracy": (lambda p, r: p == r, lambda p, r: True),
    "fpr": (lambda p, r: p == 1, lambda p, r: r == 0),
    "fnr": (lambda p, r: p == 0, lambda p, r: r == 1),
}


def plain_exact(groups: dict, name: str, level: float) -> tuple[float, float] | None:
    """Clopper-Pearson interval of the proportion ``name`` on its effective n (None: undefined)."""
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    hit, among = SHARE_OF[name]
    per = []
    for rows in groups.values():
        chosen = [(p, r) for p, r in rows if among(p, r)]
        if chosen:
            per.append((sum(hit(p, r) for p, r in chosen), len(chosen)))
    n = sum(m for _, m in per)
    k = len(per)
    if n == 0 or (k < 2 and n > k):
        return None
    p = sum(y for y, _ in per) / n
    n_e = float(n)
    if 0 < p < 1:
        v = sum((y - p * m) ** 2 for y, m in per) / n**2
        n_e = n / max(1.0, v / (p * (1 - p) / n))
    if n_e > k:
        q = (1 + level) / 2
        n_e *= (stats.t.ppf(q, n_e - 1) / stats.t.ppf(q, k - 1)) ** 2
    lo, hi = proportion_confint(p * n_e, n_e, alpha=1 - level, method="beta")
    return (0.0 if p == 0 else float(lo), 1.0 if p == 1 else float(hi))


def plain_any(
    pred: Sequence[float],
    ref: Sequence[float],
    clusters: Sequence,
    names: Sequence[str],
    n_resamples: int,
    seed: int,
    level: float = 0.95,
) -> dict[str, tuple[float, float] | None]:
    """Each metric's interval as lib documents it: Clopper-Pearson for a proportion (`SHARE_OF`),
    the percentile loop for the others."""
    groups = group_rows(pred, ref, clusters)
    out = {name: plain_exact(groups, name, level) for name in names if name in SHARE_OF}
    rest = [name for name in names if name not in SHARE_OF]
    out |= plain_intervals(pred, ref, clusters, rest, n_resamples, seed, level)
    return {name: out[name] for name in names}
