"""The shared sidebar: split choice (bound to the URL) and what data is loaded."""

from __future__ import annotations

import streamlit as st

from lib.data import Bench
from lib.schema import SPLIT_SHORT, SPLITS
from lib.vocab import ALL

SPLIT_KEY = "split"
SPLIT_OPTIONS: tuple[str, ...] = (ALL, *SPLITS)


def split_selector() -> str:
    """The split selectbox, bound to `?split=`; warns about a value it cannot use."""
    asked = st.query_params.get(SPLIT_KEY)
    if asked is not None and asked not in SPLIT_OPTIONS:
        st.sidebar.warning(
            f"The link asks for split `{asked}`, which does not exist; showing both splits. "
            f"Known: {', '.join(SPLIT_OPTIONS)}."
        )
    return st.sidebar.selectbox(
        "Split",
        SPLIT_OPTIONS,
        key=SPLIT_KEY,
        bind="query-params",
        help="`all` = both splits. `fara7b_om2w_browserbase` (om2w) = Online-Mind2Web tasks, "
        "2-3 reviewers each, blind and informed stages; `internal` = one reviewer per task, "
        "blind only. The option itself goes into the link (no display labels: with a bound "
        "widget Streamlit would put the label in the URL).",
    )


def current_split() -> str:
    """The chosen split option: `all` or a split name."""
    value = st.session_state.get(SPLIT_KEY, ALL)
    return value if value in SPLIT_OPTIONS else ALL


def current_splits() -> list[str]:
    """The split names the chosen option covers."""
    value = current_split()
    return list(SPLITS) if value == ALL else [value]


def source_panel(bench: Bench) -> None:
    """Which source is in use and how many rows it holds."""
    with st.sidebar:
        st.caption("Data source")
        st.markdown(f"**{bench.source.describe()}**")
        counts = bench.tasks.groupby("split").size()
        reviews = bench.annotations.groupby("split").size()
        lines = [
            f"{SPLIT_SHORT.get(s, s)}: {int(counts.get(s, 0))} trajectories, "
            f"{int(reviews.get(s, 0))} reviews"
            for s in SPLITS
        ]
        st.caption("  \n".join(lines))
        if bench.warnings:
            st.caption(f":orange[{len(bench.warnings)} data warning(s): see Home]")


def demo_banner(bench: Bench) -> None:
    """Say plainly when the numbers come from synthetic demo data."""
    if not bench.source.is_demo:
        return
    why = f" ({bench.source.note})" if bench.source.note else ""
    st.warning(
        "**Synthetic demo data, not the benchmark.** The Hugging Face Hub could not be used"
        f"{why}, so this is a generated mirror with the real schema and made-up values. "
        "Set `CUAVB_DATA` to use the real dataset or a local mirror."
        if not bench.source.named
        else "**Synthetic demo data, not the benchmark** (`CUAVB_DATA=demo`): generated values "
        "with the real schema.",
        icon=":material/science:",
    )
