"""Judges: who agrees with whom? Any two raters, human or verifier, on the tasks both judged."""

from ui.frame import ensure_frame

ensure_frame()

import pandas as pd
import streamlit as st

from lib.analysis import judges
from lib.charts import judges as charts
from lib.table.verdicts import rater_title
from lib.uploads import predictions
from ui import audit as audit_view
from ui import fmt, url, vega
from ui import judges as view
from ui import params as P
from ui.judges import apply_pick
from ui.safe_text import inert, plain
from ui.sidebar import current_bootstrap, current_split, current_splits
from ui.state import get_bench, source_spec, verdicts

MIN_N_DEFAULT = 10


bench = get_bench()
table = verdicts(bench)
splits = current_splits()
where = fmt.split_label(splits)

st.title("Judges")
st.markdown(
    "**Who agrees with whom?** Any two raters, human or verifier, compared on the tasks both "
    "judged: each reviewer's blind labels, their informed labels (after seeing the Universal "
    "Verifier's verdict), every verifier, and the task-level human labels."
)

# --- choices, each in the URL (ui.params) ------------------------------------------------
left, middle, right = st.columns([1, 1, 1])
dimension = url.choice(
    P.JUDGES_DIMENSION,
    list(judges.DIMENSIONS),
    "outcome",
    where=left,
    omit_default=False,
    help="Outcome (was the task done?) and process (was it done properly?) are separate "
    "labels; each rater is compared on one dimension at a time.",
)
min_n = url.number(
    P.JUDGES_MIN_N,
    1,
    1000,
    MIN_N_DEFAULT,
    where=middle,
    omit_default=False,
    help="Cells whose pair shares fewer tasks are grey: their kappa is too noisy to read.",
)
n_uploads = url.number(
    P.JUDGES_UPLOADS,
    0,
    predictions.MAX_VERIFIERS_PER_SESSION,
    view.UPLOADS_SHOWN,
    where=right,
    help="How many of your uploaded verifiers (the first ones) the heatmap and the table of "
    "every pair show; raters A and B are always shown.",
)

# Every call below reads one dimension in these splits: filter the table once (at 100x
# with 20 uploads each call filtered 800,000 rows again).
full = table
table = view.rows_of(full, splits, dimension)
options = judges.raters(table, splits, dimension)
if len(options) < 2:
    st.info(f"Fewer than two raters have {dimension} labels in {where}: nothing to compare.")
    st.stop()

# --- the chosen pair: URL, then a heatmap click, then the selectboxes ------------------
default_a, default_b = judges.default_pair(options, dimension)
labels = judges.display_labels(options)

st.header("Pairwise Cohen's kappa")
st.caption(
    f"Split: {where} · dimension: {dimension}. Rows are rater A, columns rater B; every cell "
    f"shows kappa over n, the number of tasks both labelled. Grey: n below {min_n} (light) or "
    "kappa undefined (dark, e.g. both raters use one class); no cell: no shared task. "
    "**Click a cell** (or choose below) to open that pair."
)
heat_box = st.container()

st.header("One pair")
col_a, col_b = st.columns(2)
rater_a = url.choice(
    P.JUDGES_A,
    options,
    default_a,
    where=col_a,
    format_func=lambda r: plain(labels[r], 200),
    why=lambda _: f"that rater has no {dimension} labels in {where}",
    omit_default=False,
    say_stale=True,
)
# B may judge the other dimension (process against outcome); its default is A's.
view.follow_dimension(dimension)
dimension_b = url.choice(
    P.JUDGES_B_DIMENSION,
    list(judges.DIMENSIONS),
    dimension,
    where=col_b,
    help="Rater B's labels: of the same dimension as A, or of the other one (e.g. the "
    "Universal Verifier's process verdict against the humans' outcome label).",
)
rows_b = table if dimension_b == dimension else view.rows_of(full, splits, dimension_b)
options_b, default_b = view.b_options(rows_b, splits, dimension_b, default_b)
labels_b = labels if dimension_b == dimension else judges.display_labels(options_b)
if not options_b:
    st.info(f"No rater has {dimension_b} labels in {where}.")
    st.stop()
rater_b = url.choice(
    P.JUDGES_B,
    options_b,
    default_b,
    where=col_b,
    format_func=lambda r: plain(labels_b[r], 200),
    why=lambda _: f"that rater has no {dimension_b} labels in {where}",
    omit_default=False,
    say_stale=True,
)
crossed = dimension_b != dimension
audit_view.your_labels_notes({rater_a: dimension, rater_b: dimension_b}, table, splits)
# Only the shown raters are paired (the dataset's, the first uploads, A and B): a session or
# a link at the cap of 20 uploads must not cost every pair of every verifier (issue 26).
shown = view.shown_raters(options, (rater_a,) if crossed else (rater_a, rater_b), n_uploads)
pairs = judges.pair_table(table[table["rater"].isin(shown).to_numpy()], splits, dimension)
groups = dict(zip(pairs["rater_a"], pairs["group_a"], strict=False))
hidden = view.hidden_uploads_note(options, shown)

# The chart's key names the pair it shows: a click opens another pair, which draws a fresh
# chart (no stale selection), so the same cell can be clicked again later.
heat_key = f"judges_heatmap_{dimension}_{rater_a}_{dimension_b}_{rater_b}"

with heat_box:
    data = charts.heatmap_data(pairs, labels, groups, min_n)
    chosen = None if crossed else (rater_a, rater_b)
    chart = charts.kappa_heatmap(data, shown, labels, groups, chosen=chosen)
    vega.altair_chart(
        chart,
        on_select=lambda: apply_pick(heat_key, shown, dimension),
        key=heat_key,
        width="content",
    )
    if hidden:
        st.caption(hidden)

if rater_a == rater_b and not crossed:
    st.info("Choose two different raters.")
    st.stop()

pair_rows = table if not crossed else pd.concat([table, rows_b])
detail = judges.pair_detail(
    pair_rows, splits, dimension, rater_a, rater_b, current_bootstrap(), dimension_b
)
st.markdown(
    f"**A = {inert(rater_title(rater_a), 200)}** against "
    f"**B = {inert(rater_title(rater_b), 200)}**, {view.pair_words(detail)}"
)
if detail.n == 0:
    st.info(
        f"These two raters labelled no common task in {where} "
        f"({int(detail.frame['judged_a'].sum())} and {int(detail.frame['judged_b'].sum())} "
        "tasks each)."
    )
    st.stop()

view.pair_section(detail, splits, where, labels | labels_b, bench.tasks)
view.reviewers_section(table, splits, dimension, where)
view.panel_section(table, splits, dimension, where)
view.pairs_table_section(pairs, shown, labels, dimension, where, hidden)

view.scores_section(full, source_spec(), current_split(), where)
