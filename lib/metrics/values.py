"""Result types (Value, Interval, Estimate, Confusion, PairedDiff), label coercion and the
2x2 confusion counts: what every other module of `lib.metrics` returns or reads.

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lib.metrics._base import category_index, same_length
from lib.vocab import LEVEL

# ---------------------------------------------------------------------------------------
# Result types
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A metric that may be undefined.

    ``value`` is a finite float, or None with ``reason`` saying why (e.g. ``"n = 0"``).
    Pages show the reason instead of a number; JSON gets ``null`` (see `to_jsonable`).
    """

    value: float | None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.value is None:
            return
        v = float(self.value)
        # NaN must never escape: it is a bug in this module, not a user error.
        if not math.isfinite(v):
            raise ValueError(f"Value must be finite or None, got {self.value!r}")
        object.__setattr__(self, "value", v)

    @property
    def defined(self) -> bool:
        return self.value is not None

    def fmt(self, digits: int = 3, missing: str = "n/a") -> str:
        """The value rounded for display, or ``missing`` when undefined."""
        return missing if self.value is None else f"{self.value:.{digits}f}"


@dataclass(frozen=True)
class Confusion:
    """2x2 counts of ``pred`` against ``ref`` on the rows where both have a label.

    ``n_missing_pred`` / ``n_missing_ref`` count rows whose pred / ref label is missing
    (a row missing on both sides is counted in both and in ``n_missing_both``); such rows
    are excluded from tp/fp/fn/tn, never counted as 0.
    """

    tp: int
    fp: int
    fn: int
    tn: int
    n_missing_pred: int = 0
    n_missing_ref: int = 0
    n_missing_both: int = 0

    @property
    def n(self) -> int:
        """Rows where both sides have a label."""
        return self.tp + self.fp + self.fn + self.tn

    @property
    def n_excluded(self) -> int:
        """Rows dropped because at least one side is missing."""
        return self.n_missing_pred + self.n_missing_ref - self.n_missing_both

    def as_array(self) -> np.ndarray:
        """Counts as ``[tp, fp, fn, tn]`` (float64), the input of `metric_arrays`."""
        return np.array([self.tp, self.fp, self.fn, self.tn], dtype=np.float64)

    @classmethod
    def from_counts(cls, counts: Sequence[float] | np.ndarray) -> Confusion:
        """Build from ``[tp, fp, fn, tn]`` (no missing rows)."""
        tp, fp, fn, tn = (round(float(x)) for x in counts)
        return cls(tp, fp, fn, tn)


@dataclass(frozen=True)
class Interval:
    """An interval, or ``low = high = None`` with the reason.

    ``method`` says how it was computed: ``percentile`` (cluster bootstrap; ``n_valid``
    is the number of resamples where the metric was defined, undefined resamples are
    dropped before taking percentiles) or ``clopper-pearson`` (a proportion's interval on
    the cluster-adjusted effective size ``n_effective``, `lib.metrics.proportion`).
    ``reason`` says why it is undefined, or, on a defined interval, why it has no width
    (every resample gave the same value: `lib.metrics.bootstrap.ZERO_WIDTH`), so a page
    never shows ``[1.00, 1.00]`` without saying why.
    """

    low: float | None
    high: float | None
    reason: str | None = None
    n_valid: int = 0
    n_resamples: int = 0
    level: float = LEVEL
    method: str = "percentile"
    n_effective: float | None = None

    @property
    def defined(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def bounds(self) -> tuple[float, float] | None:
        """``(low, high)`` or None: the shape `bootstrap_ci` returns."""
        if self.low is None or self.high is None:
            return None
        return (self.low, self.high)


@dataclass(frozen=True)
class Estimate:
    """One named number of a result: its point value, its interval, why it is undefined.

    The one shape result records hold their metrics in (``estimates[name]``), so a page,
    a chart and the report read every number the same way. ``value`` is a finite float or
    None; ``ci`` the bootstrap `Interval`, or None where no interval is computed;
    ``reason`` why the value is undefined (None when it is defined). Why the *interval* is
    undefined is ``ci.reason``.

    Examples
    --------
    >>> e = Estimate.of(Value(None, "n = 0"), Interval(None, None, "n = 0"))
    >>> e.value, e.reason, e.defined, e.as_value()
    (None, 'n = 0', False, Value(value=None, reason='n = 0'))
    """

    value: float | None
    ci: Interval | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.value is not None:  # the same check as `Value`: finite or None
            object.__setattr__(self, "value", Value(self.value).value)

    @classmethod
    def of(cls, value: Value, ci: Interval | None = None) -> Estimate:
        """From a `Value` (and its interval)."""
        return cls(value.value, ci, value.reason)

    @property
    def defined(self) -> bool:
        return self.value is not None

    def as_value(self) -> Value:
        """The point value as a `Value` (what `ui.fmt.value_with_ci` and `to_jsonable` read)."""
        return Value(self.value, self.reason)

    def fmt(self, digits: int = 3, missing: str = "n/a") -> str:
        """The value rounded for display, or ``missing`` when undefined (as `Value.fmt`)."""
        return self.as_value().fmt(digits, missing)


@dataclass(frozen=True)
class PairedDiff:
    """Difference ``metric(a) - metric(b)`` on the rows both pairs cover, with a CI.

    ``a``, ``b`` and ``diff`` are `Estimate` s (the one result shape); the paired bootstrap
    interval belongs to the difference (``diff.ci``, also ``ci``).
    """

    metric: str
    a: Estimate
    b: Estimate
    diff: Estimate
    n: int  # rows where all four labels are present
    n_clusters: int

    @property
    def ci(self) -> Interval:
        """The paired interval of the difference."""
        assert self.diff.ci is not None  # `paired_bootstrap_diff` always sets it
        return self.diff.ci


# ---------------------------------------------------------------------------------------
# Input coercion
# ---------------------------------------------------------------------------------------


def _to_float(values: Any) -> np.ndarray:
    """1-D float64 array with NaN for missing (None, NaN, pandas NA); strings rejected."""
    if values is None:
        return np.empty(0)
    if isinstance(values, pd.DataFrame):
        raise TypeError("expected a 1-D array of labels, got a DataFrame")
    if isinstance(values, pd.Series | pd.Index | pd.api.extensions.ExtensionArray):
        s = pd.Series(values)
        if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
            raise ValueError(f"labels/scores must be numeric (map strings first), got {s.dtype}")
        if s.dtype != object:  # numeric, bool, or nullable Int64 / Float64 / boolean
            return s.to_numpy(dtype=np.float64, na_value=np.nan)
        values = s.to_numpy()
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D array, got shape {arr.shape}")
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64)
    if arr.dtype.kind != "O":
        raise ValueError(f"labels/scores must be numeric (map strings first), got {arr.dtype}")
    missing = pd.isna(arr)
    present = arr[~missing]
    if any(isinstance(v, str | bytes) for v in present):
        raise ValueError("labels/scores must be numeric (map strings such as 'Correct' first)")
    out = np.full(arr.shape, np.nan)
    out[~missing] = present.astype(np.float64)
    return out


def as_labels(values: Any) -> np.ndarray:
    """Binary labels as float64: 1.0, 0.0, NaN (missing). Booleans become 1/0.

    Raises ValueError for anything else (2, 0.5, "Correct"): a malformed label is a bug
    upstream, and silently dropping it would hide the bug.

    Examples
    --------
    >>> as_labels([1, 0, None, 1.0, pd.NA]).tolist()
    [1.0, 0.0, nan, 1.0, nan]
    """
    arr = _to_float(values)
    bad = ~(np.isnan(arr) | (arr == 0.0) | (arr == 1.0))
    if bad.any():
        raise ValueError(f"labels must be 1, 0 or missing; got e.g. {np.unique(arr[bad])[:5]}")
    return arr


def as_scores(values: Any) -> np.ndarray:
    """Continuous scores as float64 with NaN for missing."""
    return _to_float(values)


# ---------------------------------------------------------------------------------------
# Confusion counts
# ---------------------------------------------------------------------------------------


def confusion(pred: Any, ref: Any) -> Confusion:
    """Counts of ``pred`` against ``ref``; rows with a missing side are excluded and counted.

    Parameters
    ----------
    pred, ref : array-like of 1 / 0 / missing, same length
        ``pred`` is the rater under study, ``ref`` the reference.

    Returns
    -------
    Confusion
        tp = pred 1 & ref 1, fp = pred 1 & ref 0, fn = pred 0 & ref 1, tn = pred 0 & ref 0.

    Examples
    --------
    >>> c = confusion([1, 1, 0, 0, None], [1, 0, 0, 1, 1])
    >>> c.tp, c.fp, c.fn, c.tn, c.n, c.n_missing_pred
    (1, 1, 1, 1, 4, 1)
    """
    p, r = as_labels(pred), as_labels(ref)
    same_length(p, r)
    mp, mr = np.isnan(p), np.isnan(r)
    ok = ~(mp | mr)
    tp, fp, fn, tn = np.bincount(category_index(p[ok], r[ok]), minlength=4)
    return Confusion(
        int(tp),
        int(fp),
        int(fn),
        int(tn),
        n_missing_pred=int(mp.sum()),
        n_missing_ref=int(mr.sum()),
        n_missing_both=int((mp & mr).sum()),
    )
