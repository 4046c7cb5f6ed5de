"""Your verifier: upload your verifier's outputs; they are scored like the Universal Verifier."""

from ui.download import csv_download
from ui.frame import ensure_frame

ensure_frame()

import pandas as pd
import streamlit as st

from lib.analysis import iterations
from lib.analysis import your_verifier as compare
from lib.table.verdicts import rater_title
from lib.uploads import predictions, score_files, score_sample
from lib.vocab import UV_THRESHOLD, UV_VERDICT
from ui import params as P
from ui import parity as parity_view
from ui.agreement import uploads_key
from ui.flagged import exclude_flagged
from ui.iterations import iterations_section
from ui.safe_text import plain
from ui.share import share_popover
from ui.sidebar import current_cluster, current_splits
from ui.state import (
    SCORE_FILES_KEY,
    UPLOADS_KEY,
    get_bench,
    session_labels,
    source_spec,
    verdicts,
)
from ui.your_verifier import (
    FORMAT_HELP,
    MANY_KEY,
    REMOVE_KEY,
    UPLOADER_KEY,
    on_remove,
    on_upload,
    on_upload_many,
    scores_section,
    show_last_upload,
    uploaded_raters,
    where_else,
)


def sample_frame(path) -> pd.DataFrame:
    """The mirror's sample file, at most `predictions.MAX_ROWS` rows (the mirror is data: the
    download re-writes it through `lib.csv_export`, as a cell could be a spreadsheet formula)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, nrows=predictions.MAX_ROWS)


def parity_part(bench, rater: str | None, dimension: str, table=None, key_suffix: str = "") -> None:
    """Human parity of your verifier beside the Universal Verifier's (the UV's alone before
    an upload); ε in the URL (``?epsilon=``)."""
    st.header(parity_view.TITLE)
    epsilon, margin = parity_view.epsilon_input(P.YOUR_EPSILON, P.YOUR_MARGIN)
    wanted = tuple(r for r in (rater, UV_VERDICT[dimension]) if r)
    records = parity_view.cached_parity(
        verdicts(bench) if table is None else table,
        source_spec(),
        uploads_key() + key_suffix,
        current_cluster(),
        epsilon,
        UV_THRESHOLD,
        wanted,
        margin,
        session_labels(),
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
    csv_download(
        "Download a sample history (10 versions, 3 runs of the last)",
        iterations.sample_history(bench.verdicts),
        "sample_history",
        key="sample_history_csv",
    )
    if (bench.tasks["split"] == "internal").any():  # the data's own score files, stricter
        st.download_button(
            "Download a sample of score files (zip: a stricter backbone)",
            data=lambda: score_sample.sample_zip(bench.tasks),  # made on click, not per run
            file_name=f"{score_sample.NAME}.zip",
            mime="application/zip",
            key="sample_score_zip",
            help="The Universal Verifier's own score files of the internal tasks, re-scored "
            "by a stricter backbone (some post-image points lowered, a first failure step "
            "where it fails): upload it to see every view of an uploaded verifier.",
        )
    st.file_uploader(
        "Predictions file",
        type=list(dict.fromkeys([*predictions.EXTENSIONS, *score_files.EXTENSIONS])),
        key=UPLOADER_KEY,
        on_change=on_upload,
        help=f"CSV, TSV, JSON Lines or parquet with task_id and outcome, at most "
        f"{predictions.MAX_BYTES // 2**20} MB and {predictions.MAX_VERIFIERS_PER_FILE} verifiers; "
        "or your verifier's own score files: a .zip of one JSON file per task, or JSON Lines "
        'of {"task_id", "score_file"}. See the rules above.',
    )
    st.file_uploader(
        "Or several JSON score files (one per task, named by task id)",
        type=["json"],
        accept_multiple_files=True,
        key=MANY_KEY,
        on_change=on_upload_many,
    )
    raters = uploaded_raters()
    st.caption(
        f"Limits: {predictions.MAX_BYTES // 2**20} MB and "
        f"{predictions.MAX_VERIFIERS_PER_FILE} verifiers per file, "
        f"{predictions.MAX_VERIFIERS_PER_SESSION} verifiers per browser session "
        f"({len(raters)} loaded now); with `version` / `run` columns at most "
        f"{predictions.MAX_VERSIONS_PER_VERIFIER} versions per verifier, "
        f"{predictions.MAX_RUNS_PER_VERSION} runs per version and "
        f"{predictions.MAX_VERSION_RUNS_PER_SESSION} version-runs per session (a verifier "
        "with versions counts once towards the verifier cap; versions are ordered as they "
        "first appear in the file)."
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
    with_files = [r for r in st.session_state.get(SCORE_FILES_KEY) or {} if r in raters]
    if with_files:
        st.caption(
            f"{len(with_files)} of these were uploaded as score files: their rubrics (both "
            "passes) are on the Trajectory page in this session only. A link to this page "
            "carries their verdicts and failure steps, not the rubric detail."
        )
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
    table, flagged_key = exclude_flagged(verdicts(bench), P.YOUR_FLAGGED)
    scores_section(rater, dimension or "outcome", splits, table)
    iterations_section(table, rater, dimension or "outcome")
    parity_part(bench, rater, dimension or "outcome", table, flagged_key)
    where_else()


main()
