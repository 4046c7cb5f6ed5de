"""A share of tasks (x of n) with the app's interval for proportions, for analyses that
count tasks rather than compare two raters ("the humans failed 7 of the 9 lowered tasks").

Why a module: `lib.metrics` intervals are defined on (pred, ref) pairs; a plain share is
the reference's positive rate of a flag compared with itself, which gets the same
cluster-adjusted Clopper-Pearson interval as every other proportion on screen (`lib.metrics.
proportion`), so no analysis module writes interval code of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import metrics as M
from lib.vocab import BOOTSTRAP, Bootstrap

_RATE = "ref_positive_rate"


@dataclass(frozen=True)
class Share:
    """``estimate`` = x / n over the rows with a flag; ``n_missing`` rows had none;
    ``n_clusters`` clusters hold the ``n`` rows (what the interval's effective n uses)."""

    estimate: M.Estimate
    x: int
    n: int
    n_missing: int
    n_clusters: int


def share(flags: Any, clusters: Any, boot: Bootstrap = BOOTSTRAP) -> Share:
    """The share of 1s among the non-missing ``flags`` (1 / 0 / missing), with the
    cluster-adjusted Clopper-Pearson interval (``clusters``: the resampling unit of every row).

    Examples
    --------
    >>> s = share([1, 0, 1, None], ["a", "b", "c", "d"])
    >>> round(s.estimate.value, 3), s.x, s.n, s.n_missing, s.n_clusters, s.estimate.ci.method
    (0.667, 2, 3, 1, 3, 'clopper-pearson')
    >>> share([], []).estimate.reason
    'n = 0'
    """
    values = M.as_labels(np.asarray(list(flags), dtype=object))
    known = ~np.isnan(values)
    n, x = int(known.sum()), int(np.nansum(values))
    labels = list(clusters)
    ci = M.bootstrap_intervals(values, values, labels, [_RATE], boot)[_RATE]
    k = len({c for c, seen in zip(labels, known, strict=True) if seen})
    if n == 0:
        return Share(M.Estimate(None, ci, "n = 0"), 0, 0, int((~known).sum()), 0)
    return Share(M.Estimate(x / n, ci), x, n, int((~known).sum()), k)
