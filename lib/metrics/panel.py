"""Multi-rater agreement of a tasks x raters panel (Fleiss' kappa, Krippendorff's
alpha) with cluster-bootstrap intervals.

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from lib.metrics._base import check_args, check_names, cluster_codes, div
from lib.metrics.bootstrap import (
    one_interval,
    resample_metrics,
    too_few_clusters,
)
from lib.metrics.values import (
    Interval,
    Value,
    as_labels,
)
from lib.vocab import BOOTSTRAP, Bootstrap

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
    codes, _ = cluster_codes(clusters, keep.shape[0], keep)
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
        p = div(n_pos, n_vals)
        out["fleiss_kappa"] = 1.0 - div(d_fleiss, (n_vals - n_units) * p * (1.0 - p))
    if "krippendorff_alpha" in names:
        out["krippendorff_alpha"] = 1.0 - div((n_vals - 1.0) * d_alpha, n_neg * n_pos)
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
    boot: Bootstrap = BOOTSTRAP,
    clusters: Any = None,
) -> dict[str, Interval]:
    """Bootstrap intervals for `fleiss_kappa` / `krippendorff_alpha` (rows = tasks).

    The tasks with two or more ratings are resampled with `resample_weights`; with
    ``clusters`` (one label per row, e.g. the website of each task) whole clusters are.

    Examples
    --------
    >>> iv = panel_intervals([[1, 1], [0, 0], [1, 0], [1, 1], [0, 0]], boot=Bootstrap(200))
    >>> sorted(iv)
    ['fleiss_kappa', 'krippendorff_alpha']
    """
    names = check_names(metric_names, PANEL_METRICS)
    n_resamples, seed, level = boot.n_resamples, boot.seed, boot.level
    check_args(n_resamples, level)
    stats, _ = _unit_stats(table, clusters)
    few = too_few_clusters(names, stats.shape[0], n_resamples, level)
    if few is not None:
        return few
    arrays = _panel_arrays(resample_metrics(stats, n_resamples, seed), names)
    return {name: one_interval(arrays[name], level) for name in names}


def panel_report(
    table: Any,
    boot: Bootstrap = BOOTSTRAP,
    clusters: Any = None,
) -> dict[str, Any]:
    """Fleiss' kappa and Krippendorff's alpha of a tasks x raters panel, with intervals.

    Keys: ``counts`` (n_tasks used, n_clusters resampled, n_tasks_dropped with < 2
    ratings, n_ratings, raters_per_task {m: number of tasks}), ``metrics`` {name: Value}, ``ci``
    {name: Interval}, ``bootstrap`` (``boot``'s settings; ``boot.unit`` is the caller's name
    for what one row of the panel is, or the ``clusters`` label, written as given).

    Examples
    --------
    >>> sorted(panel_report([[1, 1, None], [0, 0, 0], [1, 0, 1]], Bootstrap(200)))
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
        "ci": panel_intervals(table, PANEL_METRICS, boot, clusters),
        "bootstrap": asdict(boot),
    }
