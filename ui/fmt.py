"""How numbers are written on screen: value, interval, and what they were computed on."""

from __future__ import annotations

from lib.metrics import Interval, Value
from lib.schema import SPLIT_SHORT
from lib.vocab import LEVEL, N_RESAMPLES, SEED

BOOTSTRAP_SEED = SEED
BOOTSTRAP_RESAMPLES = N_RESAMPLES


def value_with_ci(value: Value, interval: Interval | None = None, digits: int = 2) -> str:
    """`0.62 [0.51, 0.72]`, or `undefined (reason)`; never `nan`."""
    if not value.defined:
        return f"undefined ({value.reason})" if value.reason else "undefined"
    text = value.fmt(digits)
    if interval is not None and interval.defined:
        text += f" [{interval.low:.{digits}f}, {interval.high:.{digits}f}]"
    return text


def split_label(splits: list[str] | str) -> str:
    """Short split name(s) for captions: `om2w`, `internal`, `om2w + internal`."""
    if isinstance(splits, str):
        splits = [splits]
    return " + ".join(SPLIT_SHORT.get(s, s) for s in splits)


UNIT_WORDS = {"task": "tasks", "site": "websites/families"}
"""What one resampled unit is called on screen, per `lib.clusters` mode."""


def method_caption(
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    cluster: str | None = None,
    n_clusters: int | None = None,
) -> str:
    """The CI method, said the same way on every page, naming the resampled unit.

    ``cluster`` is ``task`` / ``site``; None = the sidebar's current choice (so a caption
    can never name a unit the numbers above it did not use). ``n_clusters``, when the
    caller knows it, is said too: "over websites/families (63 clusters)".
    """
    if cluster is None:
        from ui.sidebar import CLUSTER_COUNT_KEY, current_cluster  # the session's choice

        cluster = current_cluster()
        if n_clusters is None:
            import streamlit as st

            n_clusters = st.session_state.get(CLUSTER_COUNT_KEY)
    unit = UNIT_WORDS.get(cluster, cluster)
    count = f"{n_clusters:,} clusters, " if n_clusters is not None else ""
    rows = "a task's rows" if cluster == "task" else "all rows of a website/family"
    return (
        f"{LEVEL:.0%} intervals: percentile bootstrap over {unit} ({count}{resamples:,} "
        f"resamples, seed {seed}); {rows} are resampled together."
    )


def n_caption(n: int, excluded: int, splits: list[str] | str, what: str = "tasks") -> str:
    """`n = 212 tasks (18 excluded: a label missing) · split: om2w`."""
    text = f"n = {n} {what}"
    if excluded:
        text += f" ({excluded} excluded: a label missing)"
    return f"{text} · split: {split_label(splits)}"


def interval_text(interval: Interval, digits: int = 2) -> str:
    """`[0.51, 0.72]`, or `undefined (reason)` when the interval has no bounds."""
    if interval.defined:
        return f"[{interval.low:.{digits}f}, {interval.high:.{digits}f}]"
    return f"undefined ({interval.reason})" if interval.reason else "undefined"


def p_value(p: Value) -> str:
    """A p-value: three decimals, or scientific below 0.001 (never a bare 0.000)."""
    if p.defined and p.value < 0.001:
        return f"{p.value:.1e}"
    return value_with_ci(p, digits=3)


def plus_minus(x: float) -> str:
    """`+0.30`, `-0.12`, and `±0.00` for a value that rounds to zero (never `-0.00`)."""
    return "±0.00" if round(x, 2) == 0 else f"{x:+.2f}"


def signed_diff(diff: Value, ci: Interval) -> str:
    """A difference with its interval, signs always shown: `+0.30 [+0.19, +0.41]`, or
    `undefined (reason)`."""
    if not diff.defined:
        return f"undefined ({diff.reason})"
    text = plus_minus(diff.value)
    if ci.defined:
        text += f" [{plus_minus(ci.low)}, {plus_minus(ci.high)}]"
    return text
