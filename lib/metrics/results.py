"""One-call report of a (pred, ref) pair and the one JSON cleaner (`to_jsonable`).

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, fields, is_dataclass
from typing import Any

import numpy as np

from lib.metrics import registry
from lib.metrics._base import check_args
from lib.metrics.binary import (
    kappa_misleads,
    metrics,
)
from lib.metrics.bootstrap import (
    intervals_and_k,
    prepare,
)
from lib.metrics.values import (
    Confusion,
    Interval,
    Value,
    as_labels,
    confusion,
)
from lib.vocab import BOOTSTRAP, Bootstrap

# ---------------------------------------------------------------------------------------
# One-call report and JSON
# ---------------------------------------------------------------------------------------


def binary_report(
    pred: Any,
    ref: Any,
    clusters: Any,
    boot: Bootstrap = BOOTSTRAP,
) -> dict[str, Any]:
    """Everything a page or the JSON report shows for one (pred, ref) pair.

    Keys:
      ``counts``: n, tp, fp, fn, tn, n_missing_pred, n_missing_ref, n_excluded,
      n_clusters (clusters with a complete row);
      ``metrics``: {name: Value} for every metric of `lib.metrics.registry.METRICS`;
      ``ci``: {name: Interval} for the metrics with an interval
      (`lib.metrics.registry.interval_names`, clustered by ``clusters``: Clopper-Pearson on the
      effective n for accuracy, FPR and FNR, the bootstrap percentile for the others);
      ``reasons``: {name: reason} for undefined metrics and intervals (``"ci:<name>"``),
      so the reasons survive `to_jsonable`;
      ``kappa_misleads``: bool (`kappa_misleads`);
      ``bootstrap``: ``boot`` as n_resamples, seed, level, unit. ``boot.unit`` names what
      ``clusters`` holds (``task``, ``site``, ...): this module cannot tell a website id
      from a task id, so the caller says which it passed, and the JSON never claims the
      wrong one.

    Examples
    --------
    >>> r = binary_report([1, 0, 1, 0], [1, 0, 0, 0], ["a", "b", "c", "d"], Bootstrap(200))
    >>> r["counts"]["tp"], r["metrics"]["accuracy"].value, sorted(r)
    (1, 0.75, ['bootstrap', 'ci', 'counts', 'kappa_misleads', 'metrics', 'reasons'])
    """
    check_args(boot.n_resamples, boot.level)
    p, r = as_labels(pred), as_labels(ref)  # coerce once; the helpers below get floats
    c = confusion(p, r)
    values = metrics(c)
    rows = prepare(p, r, clusters)
    names = registry.interval_names()
    cis, n_clusters = intervals_and_k(rows, names, boot.n_resamples, boot.seed, boot.level)
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
        "bootstrap": asdict(boot),
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
