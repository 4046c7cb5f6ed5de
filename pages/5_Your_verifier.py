"""Your verifier: upload your verifier's outputs; they are scored like the Universal Verifier."""

from ui.download import csv_download
from ui.frame import ensure_frame

ensure_frame()

import pandas as pd
import streamlit as st

from lib.analysis import your_verifier as compare
from lib.table.verdicts import rater_title
from lib.uploads import predictions
from lib.vocab import UV_THRESHOLD, UV_VERDICT
from ui import params as P
from ui import parity as parity_view
from ui.agreement import uploads_key
from ui.safe_text import plain
from ui.share import share_popover
from ui.sidebar import current_cluster, current_splits
from ui.state import UPLOADS_KEY, get_bench, source_spec, verdicts
from ui.your_verifier import (
    FORMAT_HELP,
    REMOVE_KEY,
    UPLOADER_KEY,
    on_remove,
    on_upload,
    scores_section,
    show_last_upload,
    uploaded_raters,
    where_else,
)


def sample_frame(path) -> pd.DataFrame:
    """The mirror's sample file, at most `predictions.MAX_ROWS` rows (the mirror is data: the
    download re-writes it through `lib.csv_export`, as a cell could be a spreadsheet formula)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, nrows=predictions.MAX_ROWS)


def parity_part(bench, rater: str | None, dimension: str) -> None:
    """Human parity of your verifier beside the Universal Verifier's (the UV's alone before
    an upload); ε in the URL (``?epsilon=``)."""
    st.header(parity_view.TITLE)
    epsilon, margin = parity_view.epsilon_input(P.YOUR_EPSILON, P.YOUR_MARGIN)
    wanted = tuple(r for r in (rater, UV_VERDICT[dimension]) if r)
    records = parity_view.cached_parity(
        verdicts(bench),
        source_spec(),
        uploads_key(),
        current_cluster(),
        epsilon,
        UV_THRESHOLD,
        wanted,
        margin,
    )
    records = [r for r in records if r.dimension == dimension]
    if rater is None:
        st.caption("No upload yet: the Universal Verifier's result, the one yours will sit beside.")
    elif not any(r.verifier == rater for r in records):
        st.caption(
            f"Yours is not tested: it has no {dimension} label on a task that two or more "
            "reviewers labelled blind (om2w). The Universal Verifier's result, for scale:"
        )
    parity_view.parity_section(records, UV_THRESHOLD)


def main() -> None:
    bench = get_bench()
    splits = current_splits()
    st.title("Your verifier")
    share_popover()  # at the top once something is uploaded (issue 36)
    st.markdown(
        "Score your own verifier's outputs against the same frozen human labels as the "
        "Universal Verifier. Upload a table of verdicts: your verifier is then scored here, "
        "compared with the Universal Verifier on the same tasks, and listed as one more "
        "rater on every page. "
        "**Uploads stay in this browser session and its links**: nothing is stored on the "
        "server; every link the app gives (Copy link, *Share*, trajectory links) holds your "
        "verdicts, so whoever opens it sees your verifiers."
    )
    with st.expander("File format and validation rules", expanded=False):
        st.markdown(FORMAT_HELP)
    sample = bench.folder / "sample_predictions.csv"
    if sample.is_file():  # one click, not inside the rules (issue 30: two clicks deep)
        csv_download(
            "Download a sample file for this data",
            sample_frame(sample),
            "sample_predictions",
            key="sample_csv",
        )
    st.file_uploader(
        "Predictions file",
        type=list(predictions.EXTENSIONS),
        key=UPLOADER_KEY,
        on_change=on_upload,
        help=f"CSV, TSV, JSON Lines or parquet with task_id and outcome, at most "
        f"{predictions.MAX_BYTES // 2**20} MB and {predictions.MAX_VERIFIERS_PER_FILE} verifiers; "
        "see the rules above.",
    )
    raters = uploaded_raters()
    st.caption(
        f"Limits: {predictions.MAX_BYTES // 2**20} MB and "
        f"{predictions.MAX_VERIFIERS_PER_FILE} verifiers per file, "
        f"{predictions.MAX_VERIFIERS_PER_SESSION} verifiers per browser session "
        f"({len(raters)} loaded now)."
    )
    show_last_upload()

    if not raters:
        st.info(
            "No verifier uploaded in this session yet. Open *File format and validation "
            "rules* for the columns; the demo and local mirrors offer a sample file above.",
            icon=":material/upload_file:",
        )
        parity_part(bench, None, "outcome")
        return

    st.header("Your verifiers in this session")
    st.dataframe(predictions.uploaded_summary(st.session_state[UPLOADS_KEY]), hide_index=True)
    names = [predictions.display_name(r) for r in raters]
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    left.multiselect(
        "Remove from this session", names, key=REMOVE_KEY, format_func=lambda n: plain(n, 200)
    )
    right.button("Remove", on_click=on_remove, icon=":material/delete:", key="remove_button")

    left, right = st.columns(2)
    shown = left.selectbox(
        "Verifier to score",
        names,
        key="predictions_shown",
        format_func=lambda n: plain(rater_title(raters[names.index(n)]), 200),
    )
    rater = raters[names.index(shown)]
    dims = compare.dimensions(st.session_state[UPLOADS_KEY], rater)
    dimension = right.radio("Dimension", dims, horizontal=True, key="predictions_dimension")
    scores_section(rater, dimension or "outcome", splits)
    parity_part(bench, rater, dimension or "outcome")
    where_else()


main()
