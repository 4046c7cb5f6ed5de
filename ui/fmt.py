"""How numbers are written on screen: value, interval, and what they were computed on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lib.metrics import Estimate, Interval, Value, registry
from lib.vocab import UNIT_WORDS, Bootstrap, short_split

FEW_CLUSTERS = 20
"""Below this many resampled clusters a percentile bootstrap interval is likely too narrow
(`python -m bench.coverage`: 10 sites cover kappa about 0.89 of the time, 20 sites 0.91),
so the caption says so. The proportions' Clopper-Pearson intervals carry their own correction."""


def proportion_words() -> str:
    """The proportions the captions name ("accuracy, precision, ..., FPR, FNR"): those
    Agreement shows as columns (the positive rates are proportions too, shown apart)."""
    return ", ".join(m.title for m in registry.METRICS if m.proportion and m.column is not None)


def _pair(low: float, high: float, digits: int, signed: bool = False) -> str:
    """``[low, high]`` at ``digits``, more digits (up to 4) if the rounding would show a
    positive width as none (``[0.00, 0.00]`` for ``[0, 0.004]``)."""
    show = _bound if signed else (lambda x, d: f"{x:.{d}f}")
    d = digits
    while d < 4 and high > low and show(low, d) == show(high, d):
        d += 1
    return f"[{show(low, d)}, {show(high, d)}]"


def _why(interval: Interval) -> str:
    """`` (reason)`` for a defined interval that carries one (it has no width), else ''."""
    return f" ({interval.reason})" if interval.defined and interval.reason else ""


def value_with_ci(
    value: Value | Estimate, interval: Interval | None = None, digits: int = 2
) -> str:
    """`0.62 [0.51, 0.72]`, or `undefined (reason)`; never `nan`. An `Estimate` brings
    its own interval (``interval`` overrides it)."""
    if isinstance(value, Estimate):
        interval = value.ci if interval is None else interval
        value = value.as_value()
    if not value.defined:
        return f"undefined ({value.reason})" if value.reason else "undefined"
    text = value.fmt(digits)
    if interval is not None and interval.defined:
        text += f" {_pair(interval.low, interval.high, digits)}{_why(interval)}"
    return text


def split_label(splits: list[str] | str) -> str:
    """Short split name(s) for captions: `om2w`, `internal`, `om2w + internal`."""
    if isinstance(splits, str):
        splits = [splits]
    return " + ".join(short_split(s) for s in splits)


def method_caption(source: Any, n_clusters: int | Iterable[int] | None = None) -> str:
    """The CI method, said the same way on every page, from the result it describes.

    ``source`` is a result carrying ``bootstrap`` (a `lib.vocab.Bootstrap`) and
    ``n_clusters``, or a `Bootstrap` itself with ``n_clusters`` given. ``n_clusters`` is
    one count, or the counts of the several comparisons a caption covers (said as a
    range). Never read from the sidebar: a caption names only what the numbers used.
    """
    boot = source if isinstance(source, Bootstrap) else source.bootstrap
    if n_clusters is None:
        n_clusters = source.n_clusters
    count = cluster_count_text(n_clusters)
    rows = "a task's rows" if boot.unit == "task" else "all rows of a website/family"
    return (
        f"{boot.level:.0%} intervals: percentile bootstrap over "
        f"{UNIT_WORDS.get(boot.unit, boot.unit)} ({count}, {boot.n_resamples:,} "
        f"resamples, seed {boot.seed}); {rows} are resampled together. "
        f"{proportion_words()[:1].upper()}{proportion_words()[1:]}: Clopper-Pearson interval on "
        "the effective n of "
        "those clusters (it holds at 0 and 1); kappa, AC1, F1, MCC, AUC and differences: "
        f"the percentile bootstrap.{few_clusters_text(n_clusters)}"
    )


def few_clusters_text(n_clusters: int | Iterable[int]) -> str:
    """`` Only 12 clusters: ...`` when an interval resampled fewer than `FEW_CLUSTERS`, else ''."""
    counts = (
        [int(n_clusters)]
        if isinstance(n_clusters, int | np.integer)
        else sorted({int(k) for k in n_clusters})
    )
    few = [k for k in counts if 2 <= k < FEW_CLUSTERS]
    if not few:
        return ""
    who = f"Only {few[0]} clusters" if len(counts) == 1 else f"As few as {few[0]} clusters"
    return f" {who} (fewer than {FEW_CLUSTERS}): the percentile intervals are likely too narrow."


def cluster_count_text(n_clusters: int | Iterable[int]) -> str:
    """`63 clusters`, or `34–133 clusters per comparison` for several comparisons.

    A comparison with no cluster is undefined (its row says why) and is left out of the
    range: "0–254" read as if one interval rested on nothing (issue 30)."""
    if isinstance(n_clusters, int | np.integer):
        return f"{int(n_clusters):,} clusters"
    every = {int(k) for k in n_clusters}
    counts = sorted(k for k in every if k > 0)
    if not counts:
        return "no clusters"
    per = "per defined comparison" if 0 in every else "per comparison"
    if len(counts) == 1:
        return f"{counts[0]:,} clusters {per}"
    return f"{counts[0]:,}–{counts[-1]:,} clusters {per}"


def n_caption(n: int, excluded: int, splits: list[str] | str, what: str = "tasks") -> str:
    """`n = 212 tasks (18 excluded: a label missing) · split: om2w`."""
    text = f"n = {n} {what}"
    if excluded:
        text += f" ({excluded} excluded: a label missing)"
    return f"{text} · split: {split_label(splits)}"


def interval_text(interval: Interval, digits: int = 2) -> str:
    """`[0.51, 0.72]`, or `undefined (reason)` when the interval has no bounds."""
    if interval.defined:
        return _pair(interval.low, interval.high, digits) + _why(interval)
    return f"undefined ({interval.reason})" if interval.reason else "undefined"


def p_value(p: Value) -> str:
    """A p-value: three decimals, or scientific below 0.001 (never a bare 0.000)."""
    if p.defined and p.value < 0.001:
        return f"{p.value:.1e}"
    return value_with_ci(p, digits=3)


def plus_minus(x: float, digits: int = 2) -> str:
    """`+0.30`, `-0.12`, and `±0.00` for a value that rounds to zero (never `-0.00`)."""
    return f"±{0:.{digits}f}" if round(x, digits) == 0 else f"{x:+.{digits}f}"


def signed_diff(diff: Value | Estimate, ci: Interval) -> str:
    """A difference with its interval, signs always shown: `+0.30 [+0.19, +0.41]`, or
    `undefined (reason)`."""
    if not diff.defined:
        return f"undefined ({diff.reason})"
    text = plus_minus(diff.value)
    if ci.defined:
        text += f" {_pair(ci.low, ci.high, 2, signed=True)}{_why(ci)}"
    return text


def _bound(x: float, digits: int = 2) -> str:
    """An interval bound with its sign; one that rounds to zero is `0.00` (`[-0.13, 0.00]`,
    not `[-0.13, ±0.00]`: a bound is a point, not a spread)."""
    return f"{0:.{digits}f}" if round(x, digits) == 0 else f"{x:+.{digits}f}"
