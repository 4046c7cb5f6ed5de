"""Agreement of two continuous scores: Pearson, Spearman and the mean absolute difference,
with cluster-bootstrap percentile intervals.

The process scores (the Universal Verifier's rubric score, each reviewer's
`human_process_score`) are numbers in [0, 1], not labels, and the paper compares them as
numbers (its Figure 11 and Table 14). The bootstrap is the one of `lib.metrics.bootstrap`:
the same `resample_weights` (clusters in sorted id order), so equal clusters and settings
give equal draws; a resample is the rows of its drawn clusters, each as often as drawn.
Every statistic of a resample is computed from those weights without copying rows:

- Pearson: weighted moments (rows centred on the full-sample means first, for accuracy).
- Spearman: Pearson of the mid-ranks *within the resample*. A row at distinct value l
  with W_l copies in the resample, C_l copies below it, has the average rank
  ``C_l + (W_l + 1) / 2``: what `scipy.stats.rankdata` gives on the expanded rows.
- Mean absolute difference: the weighted mean of ``|x - y|``.

Rows with a missing score on either side are left out (the caller counts them). A
resample where a statistic is undefined (one side constant) is dropped; more than half:
the interval is undefined (`lib.metrics.bootstrap.percentile_intervals`).

Part of `lib.metrics` (import from there).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lib.metrics._base import check_args, cluster_codes, same_length
from lib.metrics.bootstrap import (
    percentile_intervals,
    too_few_clusters,
    weight_chunks,
)
from lib.metrics.values import (
    Interval,
    Value,
    as_scores,
)
from lib.vocab import BOOTSTRAP, Bootstrap

SCORE_METRICS: tuple[str, ...] = ("pearson", "spearman", "mad")
"""The statistics of two scores: Pearson r, Spearman rho, mean absolute difference."""

CONSTANT = "one side has a single value: no correlation is defined"
FEW_ROWS = "fewer than 2 rows with both scores"
_TINY = 1e-12


def complete_scores(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, keep): the scores as floats and the rows where both are present."""
    a, b = as_scores(x), as_scores(y)
    same_length(a, b)
    keep = ~(np.isnan(a) | np.isnan(b))
    return a, b, keep


def _weighted_sums(w: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each row of weights w (B, n) times v (n,), summed: (B,).

    Not `w @ v`: BLAS picks its kernel (and so its order of additions) by CPU, so the last
    digit of a real-valued sum changed from one machine to another and the frozen report
    with it. numpy's own pairwise sum over a contiguous row adds in one fixed order.
    (The whole-count sums of `_midranks` are exact in any order.)
    """
    return (w * v).sum(axis=1)


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson r of x and y under each row of weights w (B, n): (B,), NaN when undefined."""
    x = x - x.mean()
    y = y - y.mean()
    s = w.sum(axis=1)
    mx, my = _weighted_sums(w, x) / s, _weighted_sums(w, y) / s
    vx = _weighted_sums(w, x * x) / s - mx**2
    vy = _weighted_sums(w, y * y) / s - my**2
    cov = _weighted_sums(w, x * y) / s - mx * my
    ok = (vx > _TINY) & (vy > _TINY)
    out = np.full(s.shape, np.nan)
    out[ok] = cov[ok] / np.sqrt(vx[ok] * vy[ok])
    return np.clip(out, -1.0, 1.0)


def _midranks(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each row's average rank among the weighted rows (B, n), ties sharing their mean rank.

    One sort of the values (they are the same in every resample; only the weights change),
    then per resample a cumulative sum of the weights in that order: the copies below a
    distinct value and at it are read off the cumulative sums at the value's first and
    last position. O(B x n) time and memory, never rows x distinct values. The weights are
    whole counts, so every sum is exact and the ranks equal those of the former one-hot
    product bit for bit (tests/unit/test_scores.py checks both against scipy).
    """
    n = v.shape[0]
    order = np.argsort(v, kind="stable")
    ordered = v[order]
    first = np.ones(n, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    starts = np.flatnonzero(first)  # each distinct value's first position in `order`
    ends = np.append(starts[1:], n) - 1  # ... and its last
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = np.cumsum(first) - 1  # each row's distinct value
    through = np.cumsum(w[:, order], axis=1)[:, ends]  # (B, L): copies at or below
    below = np.zeros_like(through)
    below[:, 1:] = through[:, :-1]
    per_level = through - below  # copies of each distinct value in each resample
    rank = below + (per_level + 1.0) / 2.0
    return rank[:, inverse]


def _weighted_spearman(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spearman rho under each row of weights: Pearson of the resample's mid-ranks."""
    rx, ry = _midranks(x, w), _midranks(y, w)
    s = w.sum(axis=1)
    mx = (w * rx).sum(axis=1) / s
    my = (w * ry).sum(axis=1) / s
    dx, dy = rx - mx[:, None], ry - my[:, None]
    vx = (w * dx * dx).sum(axis=1)
    vy = (w * dy * dy).sum(axis=1)
    cov = (w * dx * dy).sum(axis=1)
    ok = (vx > _TINY) & (vy > _TINY)
    out = np.full(s.shape, np.nan)
    out[ok] = cov[ok] / np.sqrt(vx[ok] * vy[ok])
    return np.clip(out, -1.0, 1.0)


def _weighted_mad(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    return _weighted_sums(w, np.abs(x - y)) / w.sum(axis=1)


_STATS = {"pearson": _weighted_pearson, "spearman": _weighted_spearman, "mad": _weighted_mad}


def check_names(names: Iterable[str]) -> list[str]:
    names = list(names)
    unknown = [n for n in names if n not in _STATS]
    if unknown:
        raise ValueError(f"unknown score metrics {unknown}; known: {list(_STATS)}")
    return names


def score_metrics(x: Any, y: Any, names: Iterable[str] = SCORE_METRICS) -> dict[str, Value]:
    """Each statistic of the complete rows as a `Value` (undefined with the reason).

    Examples
    --------
    >>> m = score_metrics([0.1, 0.5, 0.9, None], [0.2, 0.4, 1.0, 0.3])
    >>> round(m["pearson"].value, 4), m["spearman"].value, round(m["mad"].value, 4)
    (0.9608, 1.0, 0.1)
    >>> score_metrics([0.5, 0.5], [0.1, 0.9])["pearson"]
    Value(value=None, reason='one side has a single value: no correlation is defined')
    """
    names = check_names(names)
    a, b, keep = complete_scores(x, y)
    a, b = a[keep], b[keep]
    out: dict[str, Value] = {}
    for name in names:
        if a.size == 0:
            out[name] = Value(None, "n = 0")
        elif name != "mad" and a.size < 2:
            out[name] = Value(None, FEW_ROWS)
        else:
            value = float(_STATS[name](a, b, np.ones((1, a.size)))[0])
            out[name] = Value(None, CONSTANT) if np.isnan(value) else Value(value)
    return out


def score_intervals(
    x: Any,
    y: Any,
    clusters: Any,
    names: Iterable[str] = SCORE_METRICS,
    boot: Bootstrap = BOOTSTRAP,
) -> dict[str, Interval]:
    """Cluster-bootstrap percentile intervals of each statistic (``clusters``: one label per
    row, the task id or its website/family; rows with a missing score are not resampled).

    Examples
    --------
    >>> iv = score_intervals([0.1, 0.5, 0.9, 0.3, 0.7], [0.2, 0.4, 1.0, 0.5, 0.6],
    ...     ["a", "b", "c", "d", "e"], ("pearson", "mad"), Bootstrap(500))
    >>> iv["pearson"].defined, iv["pearson"].low <= 0.9 <= iv["pearson"].high
    (True, True)
    """
    names = check_names(names)
    check_args(boot.n_resamples, boot.level)
    a, b, keep = complete_scores(x, y)
    codes, ids = cluster_codes(clusters, a.shape[0], keep)
    few = too_few_clusters(names, int(ids.size), boot.n_resamples, boot.level)
    if few is not None:
        return few
    a, b = a[keep], b[keep]
    samples = np.empty((boot.n_resamples, len(names)))
    start = 0
    # Resamples in blocks (rows of `resample_weights`, drawn in the same order): memory is
    # one block of (resamples x rows), not all B of them (issue 39: 100x tasks).
    for block in weight_chunks(int(ids.size), boot.n_resamples, boot.seed):
        weights = block[:, codes].astype(np.float64)
        stop = start + weights.shape[0]
        for j, name in enumerate(names):
            samples[start:stop, j] = _STATS[name](a, b, weights)
        start = stop
    return dict(zip(names, percentile_intervals(samples, boot.level), strict=True))
