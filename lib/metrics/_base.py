"""What the metric modules share (as scikit-learn's `metrics/_base.py`): argument checks,
safe division, the confusion category of a row, cluster codes. Private to `lib.metrics`:
callers use the facade (`import lib.metrics`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd


def div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN where den == 0 (and no warnings)."""
    num, den = np.broadcast_arrays(np.asarray(num, np.float64), np.asarray(den, np.float64))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def check_names(names: Iterable[str] | None, known: Sequence[str]) -> tuple[str, ...]:
    if names is None:
        return tuple(known)
    names = (names,) if isinstance(names, str) else tuple(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {list(known)}")
    return names


def same_length(*arrays: np.ndarray) -> None:
    sizes = {a.shape[0] for a in arrays}
    if len(sizes) > 1:
        raise ValueError(f"inputs must have the same length, got {sorted(sizes)}")


def category_index(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Index into (tp, fp, fn, tn) for complete rows: 2 * (1 - pred) + (1 - ref)."""
    return (2 * (1 - p) + (1 - r)).astype(np.intp)


def check_args(n_resamples: int, level: float) -> None:
    """Bad settings are programming errors, so they raise (unlike degenerate data)."""
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def cluster_codes(clusters: Any, n_rows: int, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..K-1 for the kept rows' clusters, and the K cluster ids (sorted).

    ``clusters=None`` makes every row its own cluster (a plain row bootstrap).
    """
    if clusters is None:
        ids = np.flatnonzero(keep)
        return np.arange(ids.size), ids
    s = clusters if isinstance(clusters, pd.Series) else pd.Series(list(clusters), dtype=object)
    if len(s) != n_rows:
        raise ValueError(f"clusters has length {len(s)}, labels have {n_rows}")
    s = s[keep]
    try:
        codes, uniques = pd.factorize(s, sort=True)
    except TypeError:  # unorderable ids: first-appearance order is still deterministic
        codes, uniques = pd.factorize(s, sort=False)
    if (codes < 0).any():
        raise ValueError("cluster ids must not be missing")
    return codes.astype(np.intp), np.asarray(uniques, dtype=object)
