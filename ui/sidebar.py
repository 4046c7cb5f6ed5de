"""The shared sidebar: split and interval-unit choices (bound to the URL), and what data is
loaded."""

from __future__ import annotations

import streamlit as st

from lib.data.load import Bench
from lib.table.clusters import CLUSTER_MODES, DEFAULT_CLUSTER_MODE
from lib.vocab import ALL, SPLITS, Bootstrap, short_split
from ui import url
from ui.safe_text import inert, without_server_paths

SPLIT_KEY = "split"
SPLIT_OPTIONS: tuple[str, ...] = (ALL, *SPLITS)


def split_selector() -> str:
    """The split selectbox, bound to `?split=`; warns about a value it cannot use."""
    asked = st.query_params.get(SPLIT_KEY)
    if asked is not None and asked not in SPLIT_OPTIONS:
        url.explain("split", asked, ALL, "no such split", SPLIT_OPTIONS, where=st.sidebar)
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


CLUSTER_KEY = "cluster"


def cluster_selector() -> str:
    """What every interval resamples, bound to `?cluster=task|site` like the split.

    The options are the bare mode names (a bound widget with ``format_func`` would put the
    label in the URL, see `split_selector`); the help says what each means. A value the
    app cannot use gives a notice (the value shown only through `inert`) and `task`.
    """
    asked = st.query_params.get(CLUSTER_KEY)
    if asked is not None and asked not in CLUSTER_MODES:
        url.explain("intervals over", asked, DEFAULT_CLUSTER_MODE, known=CLUSTER_MODES,
                    where=st.sidebar)  # fmt: skip
    return st.sidebar.radio(
        "Intervals resample",
        CLUSTER_MODES,
        key=CLUSTER_KEY,
        bind="query-params",
        horizontal=True,
        help="`task`: every task is one unit of the bootstrap (the usual interval). "
        "`site`: whole websites (om2w, from the task id `Site--123`) or task families "
        "(internal, the id without its trailing numbers) are resampled: tasks on one "
        "website are not independent, so these intervals are honest about it and often "
        "wider. Every interval on every page uses this choice.",
    )


def current_cluster() -> str:
    """The chosen bootstrap unit: `task` (default) or `site`."""
    value = st.session_state.get(CLUSTER_KEY, DEFAULT_CLUSTER_MODE)
    return value if value in CLUSTER_MODES else DEFAULT_CLUSTER_MODE


def current_bootstrap() -> Bootstrap:
    """The app's bootstrap settings with the chosen unit: pass it as ``boot=`` to every
    analysis call (the caption then reads it back from the result, never from here)."""
    return Bootstrap(unit=current_cluster())


def cluster_count(bench: Bench) -> int:
    """How many clusters the selected splits' tasks form in the chosen mode, said in the
    sidebar. Not a caption's count: a caption says the clusters its own result resampled
    (`ui.fmt.method_caption`). One pass over the task ids (cheap: a regex per id)."""
    from lib.table.clusters import n_clusters

    splits = current_splits()
    ids = bench.tasks.loc[bench.tasks["split"].astype(str).isin(splits), "task_id"]
    k = n_clusters(ids, current_cluster())
    unit = "tasks" if current_cluster() == "task" else "websites/families"
    st.sidebar.caption(
        f"The selected split(s) hold {k:,} {unit}; each interval's caption says how many it "
        "resampled."
    )
    return k


def current_split() -> str:
    """The chosen split option: `all` or a split name."""
    value = st.session_state.get(SPLIT_KEY, ALL)
    return value if value in SPLIT_OPTIONS else ALL


def current_splits() -> list[str]:
    """The split names the chosen option covers."""
    value = current_split()
    return list(SPLITS) if value == ALL else [value]


def source_panel(bench: Bench) -> None:
    """Which source is in use (with the Hub revision: short sha and date) and its rows."""
    with st.sidebar:
        st.caption("Data source")
        st.markdown(f"**{inert(bench.source.label(), 500)}**")  # no server path
        if bench.revision is not None:
            date = f" ({bench.revision.date})" if bench.revision.date else ""
            st.caption(
                f"Revision `{bench.revision.short}`{date}",
                help=f"Every file is read at commit {bench.revision.sha}. "
                "Pin another with CUAVB_REVISION.",
            )
        counts = bench.tasks.groupby("split").size()
        reviews = bench.annotations.groupby("split").size()
        lines = [
            f"{short_split(s)}: {int(counts.get(s, 0))} trajectories, "
            f"{int(reviews.get(s, 0))} reviews"
            for s in SPLITS
        ]
        st.caption("  \n".join(lines))
        if bench.warnings:
            st.caption(f":orange[{len(bench.warnings)} data warning(s): see Home]")


BANNER_KEY = "demo_banner"
BANNER_TITLE = "Synthetic demo data, not the benchmark"


def banner_reason(source) -> str:
    """The banner's one-line reason as Markdown: our own wording, and the Hub's plain line
    (through `inert`) for a fallback."""
    if source.is_demo and not source.named:
        return f"The Hub could not be reached: {inert(source.note or 'unknown reason', 500)}"
    if source.is_demo:
        return "Chosen with `CUAVB_DATA=demo`."
    return "A folder written by `lib.mirror`."


def demo_banner(bench: Bench) -> None:
    """One line whenever the numbers are made up (the demo, or a folder made by
    `lib.mirror`): a badge and the reason, with the rest behind "Details" (a popover:
    about 40 px of the page, not 190). The technical detail (exception text, which may
    contain URLs) is plain text inside it; so is "Try the Hub again" for a fallback.
    """
    source = bench.source
    if not source.is_synthetic:
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key=BANNER_KEY):
        st.markdown(
            f":orange-badge[:material/science: {BANNER_TITLE}] {banner_reason(source)}",
            width="content",
        )
        with st.popover("Details", icon=":material/info:"):
            st.markdown(
                "A generated mirror with the real schema and made-up values: texts, "
                "screenshots and verdicts are simulated, at the agreement levels the paper "
                "reports. Every page works on it; no number describes the real benchmark. "
                "Set `CUAVB_DATA` to a Hub id or a local mirror folder to read real data "
                "(see the README). A folder counts as synthetic when its README front "
                "matter says `synthetic: true` (as `lib.mirror` writes)."
            )
            if source.detail:
                st.caption("Technical detail")
                st.text(without_server_paths(source.detail))
            if source.is_demo and not source.named:
                from ui import state  # the fallback is kept for a minute; this retries at once

                st.button("Try the Hub again", key="retry_hub", on_click=state.retry_hub)
