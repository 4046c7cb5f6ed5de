"""ROC curve and AUC of a continuous score against a binary label, with a cluster
bootstrap interval of the AUC.

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.metrics._base import check_args, cluster_codes, div, same_length
from lib.metrics.binary import (
    fpr,
    recall,
)
from lib.metrics.bootstrap import (
    one_interval,
    resample_metrics,
    too_few_clusters,
)
from lib.metrics.values import (
    Interval,
    Value,
    as_labels,
    as_scores,
    confusion,
)
from lib.vocab import BOOTSTRAP, Bootstrap

# ---------------------------------------------------------------------------------------
# ROC
# ---------------------------------------------------------------------------------------


def _score_rows(scores: Any, ref: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s, r = as_scores(scores), as_labels(ref)
    same_length(s, r)
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

    Returns ``(fpr, tpr, thresholds, auc)`` as ``sklearn.metrics.roc_curve`` /
    ``roc_auc_score`` give them (`roc_curve`, `roc_area` are ports; ``thresholds[0]`` is
    ``inf``, the "nobody passes" point, as in sklearn). When ``ref`` has one class (or no
    rows) the curve is undefined: three empty arrays and ``auc = Value(None, reason)``.

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
    f, t, thr = roc_curve(r, s)
    return f, t, thr, Value(roc_area(f, t))


def roc_curve(ref: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sklearn.metrics.roc_curve(ref, scores)`` (``drop_intermediate=True``) for complete
    rows and a 0/1 ``ref`` with both classes, ported to numpy: importing sklearn.metrics
    (scipy, joblib, ...) was most of the Agreement page's first render. The same operations
    in the same order: the arrays are equal to sklearn's bit for bit (a test compares them).
    """
    order = np.argsort(scores, kind="stable")[::-1]  # descending; ties' order is immaterial
    ordered = scores[order]
    positive = (ref[order] == 1).astype(np.float64)
    last = np.append(np.flatnonzero(np.diff(ordered)), ordered.size - 1)  # each level's end
    tps = np.cumsum(positive)[last]
    fps = 1 + last.astype(np.float64) - tps
    thresholds = ordered[last].astype(np.float64)
    if fps.shape[0] > 2:  # drop the points on a straight segment
        corners = np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]])
        keep = np.flatnonzero(corners)
        fps, tps, thresholds = fps[keep], tps[keep], thresholds[keep]
    tps = np.concatenate([[0.0], tps])
    fps = np.concatenate([[0.0], fps])
    thresholds = np.concatenate([[np.inf], thresholds])
    return fps / fps[-1], tps / tps[-1], thresholds


def roc_area(fpr_: np.ndarray, tpr_: np.ndarray) -> float:
    """The area under a ROC curve of `roc_curve`: ``sklearn.metrics.auc`` (trapezoids), which
    is ``roc_auc_score`` of the same rows."""
    return float(np.trapezoid(tpr_, fpr_))


def _weighted_auc(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUC from positive / negative mass per distinct score level: (B, L) -> (B,).

    AUC = P(score_pos > score_neg) + P(tie) / 2 (Mann-Whitney), which is what
    ``roc_auc_score`` computes with ties.
    """
    neg_below = np.cumsum(neg, axis=1) - neg
    num = np.sum(pos * (neg_below + 0.5 * neg), axis=1)
    return div(num, pos.sum(axis=1) * neg.sum(axis=1))


def auc_ci(
    scores: Any,
    ref: Any,
    clusters: Any,
    boot: Bootstrap = BOOTSTRAP,
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
    ...     ["a", "b", "c", "d", "e", "f"], Bootstrap(500))
    >>> iv.defined, 0.0 <= iv.low <= iv.high <= 1.0
    (True, True)
    """
    n_resamples, seed, level = boot.n_resamples, boot.seed, boot.level
    check_args(n_resamples, level)
    s, r, keep = _score_rows(scores, ref)
    codes, ids = cluster_codes(clusters, s.shape[0], keep)
    s, r = s[keep], r[keep]
    few = too_few_clusters(("auc",), int(ids.size), n_resamples, level)
    if few is not None:
        return few["auc"]
    _, level_idx = np.unique(s, return_inverse=True)
    n_levels = int(level_idx.max()) + 1
    k = ids.size
    cell = codes * n_levels + level_idx
    pos = np.bincount(cell[r == 1], minlength=k * n_levels).reshape(k, n_levels)
    neg = np.bincount(cell[r == 0], minlength=k * n_levels).reshape(k, n_levels)
    masses = resample_metrics(np.hstack([pos, neg]), n_resamples, seed)
    return one_interval(_weighted_auc(masses[:, :n_levels], masses[:, n_levels:]), level)


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
