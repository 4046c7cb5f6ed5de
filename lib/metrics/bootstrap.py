"""The cluster bootstrap engine: resample weights drawn in chunks, percentile
intervals, paired differences and many comparisons at once (`batch_intervals`).

Proportions (`lib.metrics.registry.proportions()`: accuracy, precision, recall, FPR,
FNR, specificity) get a cluster-adjusted Clopper-Pearson interval instead of the percentile one,
on the same clusters: a percentile interval cannot reach above a rate of 0 observed
events. Kappa, AC1, F1, MCC, AUC and every paired difference stay percentile intervals;
one of those with no width carries `ZERO_WIDTH` as its reason.

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from lib.metrics import registry
from lib.metrics._base import category_index, check_args, check_names, cluster_codes, same_length
from lib.metrics.binary import (
    metric_arrays,
    metrics,
    scalar_metric,
)
from lib.metrics.proportion import proportion_intervals_many
from lib.metrics.values import (
    Confusion,
    Estimate,
    Interval,
    PairedDiff,
    Value,
    as_labels,
    confusion,
)
from lib.vocab import BOOTSTRAP, Bootstrap

# ---------------------------------------------------------------------------------------
# Task-clustered bootstrap
# ---------------------------------------------------------------------------------------


def prepare(pred: Any, ref: Any, clusters: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Complete rows only: (pred, ref, cluster codes)."""
    p, r = as_labels(pred), as_labels(ref)
    same_length(p, r)
    keep = ~(np.isnan(p) | np.isnan(r))
    codes, _ = cluster_codes(clusters, p.shape[0], keep)
    return p[keep], r[keep], codes


def _counts_by_cluster(p: np.ndarray, r: np.ndarray, codes: np.ndarray) -> np.ndarray:
    k = int(codes.max()) + 1 if codes.size else 0
    flat = np.bincount(codes * 4 + category_index(p, r), minlength=4 * k)
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
    same_length(p, r)
    keep = ~(np.isnan(p) | np.isnan(r))
    codes, ids = cluster_codes(clusters, p.shape[0], keep)
    return ids, _counts_by_cluster(p[keep], r[keep], codes)


# Resamples are drawn in row chunks of about this many cells: small temporaries are
# reused by the allocator, while one (B, K) array costs fresh pages on every call
# (measured: ~2 ms instead of 2-5 ms for K = 260, B = 2000).
_CHUNK_CELLS = 1 << 15


_MIN_CHUNK_ROWS = 32
"""At least this many resamples per block: with one row per block (K above 32,768) the
Python loop, not the arithmetic, took the time (2,000 iterations per bootstrap)."""

LARGE_K = 2_000
"""Above this many clusters, `resample_metrics` draws how often each *distinct* per-cluster
count vector is drawn instead of each cluster (`resampled_by_type`): O(B x types), not
O(B x K). The real dataset has at most 260 clusters, so its draws are unchanged."""


def weight_chunks(n_clusters: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
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


def resample_weights(n_clusters: int, boot: Bootstrap = BOOTSTRAP) -> np.ndarray:
    """How often each cluster is drawn in each bootstrap resample: (B, K) int64.

    Resample b draws K clusters with replacement:
    ``idx = np.random.default_rng(seed).integers(0, K, size=(B, K))`` and row b is
    ``np.bincount(idx[b], minlength=K)``. Every bootstrap in this module uses this one
    scheme (clusters numbered in sorted id order), so equal (K, B, seed) give equal draws,
    and a paired comparison reuses the same draws for both sides. B and the seed are
    ``boot.n_resamples`` and ``boot.seed``.

    Examples
    --------
    >>> w = resample_weights(3, Bootstrap(n_resamples=4, seed=0))
    >>> w.shape, w.sum(axis=1).tolist()  # each resample draws 3 clusters
    ((4, 3), [3, 3, 3, 3])
    """
    return np.vstack(list(weight_chunks(n_clusters, boot.n_resamples, boot.seed)))


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


def resample_metrics(per_cluster: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(K, m) per-cluster sums -> (B, m) sums in every resample: weights @ per_cluster.

    Above `LARGE_K` clusters with few distinct rows, `resampled_by_type` gives the same
    distribution at a cost independent of K.
    """
    per_cluster = np.asarray(per_cluster, dtype=np.float64)
    if per_cluster.shape[0] > LARGE_K:
        by_type = resampled_by_type(per_cluster, n_resamples, seed)
        if by_type is not None:
            return by_type
    out = np.empty((n_resamples, per_cluster.shape[1]))
    start = 0
    with one_blas_thread():
        for w in weight_chunks(per_cluster.shape[0], n_resamples, seed):
            np.matmul(w.astype(np.float64), per_cluster, out=out[start : start + w.shape[0]])
            start += w.shape[0]
    return out


def resampled_by_type(per_cluster: np.ndarray, n_resamples: int, seed: int) -> np.ndarray | None:
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


def bootstrap_counts(pred: Any, ref: Any, clusters: Any, boot: Bootstrap = BOOTSTRAP) -> np.ndarray:
    """Confusion counts ``[tp, fp, fn, tn]`` of every cluster-bootstrap resample: (B, 4).

    Examples
    --------
    >>> bootstrap_counts([1, 0], [1, 1], ["t1", "t2"], Bootstrap(5)).sum(axis=1).tolist()
    [2.0, 2.0, 2.0, 2.0, 2.0]
    """
    p, r, codes = prepare(pred, ref, clusters)
    return resample_metrics(_counts_by_cluster(p, r, codes), boot.n_resamples, boot.seed)


def percentile_intervals(samples: np.ndarray, level: float) -> list[Interval]:
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
            why = ZERO_WIDTH.format(value=lo) if hi - lo < ZERO else None
            out.append(Interval(lo, hi, why, int(n_ok[j]), b, level))
    return out


ZERO = 1e-12
"""Below this width a percentile interval is "zero-width" (float noise aside)."""

ZERO_WIDTH = "no width: every resample gives {value:.2f}; too few tasks or no disagreement"
"""Why a defined percentile interval has no width: the bootstrap cannot put mass where
no resample goes (kappa [1, 1] at n = 4; a difference of two identical raters). Carried
as the interval's ``reason``, so every page and the report say it beside the interval."""


def one_interval(samples: np.ndarray, level: float) -> Interval:
    """Percentile interval of one metric's (B,) resamples (see `percentile_intervals`)."""
    return percentile_intervals(np.asarray(samples).reshape(-1, 1), level)[0]


def _no_data(names: Iterable[str], n_resamples: int, level: float) -> dict[str, Interval]:
    return {name: Interval(None, None, "n = 0", 0, n_resamples, level) for name in names}


ONE_CLUSTER = "one cluster: resampling it cannot measure uncertainty"
"""Why an interval over a single cluster is undefined (see `too_few_clusters`)."""


def too_few_clusters(
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
    boot: Bootstrap = BOOTSTRAP,
) -> dict[str, Interval]:
    """Task-clustered intervals, with reasons when undefined or of zero width.

    Proportions (`lib.metrics.registry.proportions()`) get the cluster-adjusted
    Clopper-Pearson interval (``method == "clopper-pearson"``, no resampling); the other
    metrics the bootstrap percentile interval described below (``method == "percentile"``).

    Parameters
    ----------
    pred, ref : labels (1 / 0 / missing), one row per (task, ...) pair
    clusters : task id of every row (any hashable), or None to resample rows
    metric_names : names of `lib.metrics.registry.METRICS` (default: all)
    boot : B = ``boot.n_resamples`` resamples drawn by `resample_weights` with
        ``boot.seed``; the interval is the (1 - level) / 2 and (1 + level) / 2 quantiles
        (numpy's linear method). ``boot.unit`` only names what ``clusters`` holds.

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
    ...     ["t1", "t1", "t2", "t3", "t4", "t5"], ["kappa"], Bootstrap(500))["kappa"]
    >>> (round(iv.low, 3), round(iv.high, 3), iv.n_resamples, iv.method)
    (0.0, 1.0, 500, 'percentile')
    """
    names = check_names(metric_names, registry.metric_names())
    check_args(boot.n_resamples, boot.level)
    rows = prepare(pred, ref, clusters)
    intervals, _ = intervals_and_k(rows, names, boot.n_resamples, boot.seed, boot.level)
    return intervals


def intervals_and_k(
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
    few = too_few_clusters(names, per_cluster.shape[0], n_resamples, level)
    if few is not None:
        return few, per_cluster.shape[0]
    return _mixed_intervals([per_cluster], names, n_resamples, seed, level)[0], per_cluster.shape[0]


def _mixed_intervals(
    per_cluster: Sequence[np.ndarray],
    names: Sequence[str],
    n_resamples: int,
    seed: int,
    level: float,
) -> list[dict[str, Interval]]:
    """Intervals of comparisons with the same K >= 2 clusters: a proportion's is its
    cluster-adjusted Clopper-Pearson interval (`lib.metrics.proportion`), every other metric's the
    percentile interval of one shared bootstrap (skipped when only proportions are asked)."""
    shares = registry.proportions()
    boot_names = [name for name in names if name not in shares]
    per_name: dict[str, list[Interval]] = {}
    if boot_names:
        m = len(per_cluster)
        stacked = np.hstack(list(per_cluster))  # (K, 4 * m)
        counts = resample_metrics(stacked, n_resamples, seed).reshape(n_resamples, m, 4)
        per_name = {
            name: percentile_intervals(values, level)
            for name, values in metric_arrays(counts, boot_names).items()
        }
    out = []
    for j, exact in enumerate(proportion_intervals_many(per_cluster, names, level)):
        out.append({name: exact[name] if name in exact else per_name[name][j] for name in names})
    return out


def bootstrap_ci(
    pred: Any,
    ref: Any,
    clusters: Any,
    metric_names: Iterable[str] | None = None,
    boot: Bootstrap = BOOTSTRAP,
) -> dict[str, tuple[float, float] | None]:
    """`bootstrap_intervals` as plain ``(low, high)`` tuples, None where undefined.

    Examples
    --------
    >>> bootstrap_ci([1, 1, 1], [1, 1, 1], ["t1", "t2", "t3"], ["kappa"], Bootstrap(100))
    {'kappa': None}
    """
    out = bootstrap_intervals(pred, ref, clusters, metric_names, boot)
    return {name: iv.bounds for name, iv in out.items()}


def paired_bootstrap_diff(
    pred_a: Any,
    ref_a: Any,
    pred_b: Any,
    ref_b: Any,
    clusters: Any,
    metric: str = "kappa",
    boot: Bootstrap = BOOTSTRAP,
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
    ...     ["a", "b", "c", "d"], "accuracy", Bootstrap(500))
    >>> d.a.value, d.b.value, d.diff.value, d.n
    (0.75, 0.75, 0.0, 4)
    """
    (name,) = check_names((metric,), registry.metric_names())
    n_resamples, seed, level = boot.n_resamples, boot.seed, boot.level
    check_args(n_resamples, level)
    pa, ra, pb, rb = (as_labels(x) for x in (pred_a, ref_a, pred_b, ref_b))
    same_length(pa, ra, pb, rb)
    keep = ~(np.isnan(pa) | np.isnan(ra) | np.isnan(pb) | np.isnan(rb))
    codes, ids = cluster_codes(clusters, pa.shape[0], keep)
    ca = _counts_by_cluster(pa[keep], ra[keep], codes)
    cb = _counts_by_cluster(pb[keep], rb[keep], codes)
    va = scalar_metric(name, Confusion.from_counts(ca.sum(axis=0)))
    vb = scalar_metric(name, Confusion.from_counts(cb.sum(axis=0)))
    if va.value is not None and vb.value is not None:
        diff = Value(va.value - vb.value)
    else:
        diff = Value(None, f"a: {va.reason}" if va.reason else f"b: {vb.reason}")
    few = too_few_clusters((name,), int(ids.size), n_resamples, level)
    if few is not None:
        ci = few[name]
    else:
        both = resample_metrics(np.hstack([ca, cb]), n_resamples, seed)  # same draws, both sides
        da = metric_arrays(both[:, :4], (name,))[name]
        db = metric_arrays(both[:, 4:], (name,))[name]
        ci = one_interval(da - db, level)
    return PairedDiff(
        name,
        Estimate.of(va),
        Estimate.of(vb),
        Estimate.of(diff, ci),
        int(keep.sum()),
        int(ids.size),
    )


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
        values = {name: float(arrays[name][i]) for name in arrays}
        undefined = [name for name, v in values.items() if np.isnan(v)]
        reasons = metrics(c, undefined) if undefined else {}
        out.append({name: reasons.get(name) or Value(v) for name, v in values.items()})
    return out


BATCH_COMPARISONS = 32
"""Comparisons bootstrapped together in `batch_intervals`. Memory per batch is about
B x 4 x 32 resampled counts plus B x 32 per metric (2 MB each at B = 2,000), whatever the
number of comparisons; the weights come in blocks of `_CHUNK_CELLS` cells (`resample_metrics`),
so neither grows with the number of clusters K times B either."""


def batch_intervals(
    per_cluster: Sequence[np.ndarray],
    metric_names: Iterable[str] | None = None,
    boot: Bootstrap = BOOTSTRAP,
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
    >>> batch = batch_intervals([a, np.zeros((0, 4))], ["accuracy"], Bootstrap(200))
    >>> batch[0]["accuracy"] == bootstrap_intervals(
    ...     [1, 0, 1, 0], [1, 0, 1, 1], ["t1", "t2", "t3", "t4"], ["accuracy"], Bootstrap(200)
    ... )["accuracy"]
    True
    >>> batch[1]["accuracy"].reason
    'n = 0'
    """
    names = check_names(metric_names, registry.metric_names())
    n_resamples, seed, level = boot.n_resamples, boot.seed, boot.level
    check_args(n_resamples, level)
    m = len(per_cluster)
    by_k: dict[int, list[int]] = defaultdict(list)
    for i, counts in enumerate(per_cluster):
        by_k[counts.shape[0]].append(i)
    intervals: list[dict[str, Interval] | None] = [None] * m
    for k, members in by_k.items():
        if k < 2:
            continue  # no or one cluster: undefined (`too_few_clusters`, below)
        size = 1 if k > LARGE_K else BATCH_COMPARISONS  # few distinct rows each
        for start in range(0, len(members), size):
            chunk = members[start : start + size]
            chunk_counts = [per_cluster[i] for i in chunk]
            done = _mixed_intervals(chunk_counts, names, n_resamples, seed, level)
            for i, result in zip(chunk, done, strict=True):
                intervals[i] = result
    out = []
    for i in range(m):
        few = too_few_clusters(names, per_cluster[i].shape[0], n_resamples, level)
        out.append(few if few is not None else intervals[i])
    return out
