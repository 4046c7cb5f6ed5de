"""Shifts: how seeing the Universal Verifier's verdict changed the reviewers' labels."""

from ui.frame import ensure_frame

ensure_frame()

import streamlit as st

from lib.analysis import shifts
from ui import fmt, url
from ui import params as P
from ui import shifts as view
from ui.safe_text import plain
from ui.shifts import no_informed_stage
from ui.sidebar import current_bootstrap, current_splits
from ui.state import get_bench, verdicts


def main() -> None:
    bench = get_bench()
    table = verdicts(bench)
    st.title("Shifts: blind → informed")
    st.markdown(
        "In om2w every reviewer labelled each trajectory twice: **blind**, then after "
        "seeing the Universal Verifier's verdict (**informed**), saying whether they agree. "
        "Labels given while seeing a model's answer tend to drift toward it; this page "
        "measures how much."
    )
    asked = current_splits()
    use = shifts.informed_splits(table, asked)
    if not use:
        no_informed_stage(asked)
        return
    skipped = [s for s in asked if s not in use]
    if skipped:
        st.info(
            f"Both splits are selected, but only {fmt.split_label(use)} had an informed "
            f"stage ({fmt.split_label(skipped)} was reviewed blind only), so this page "
            f"analyses {fmt.split_label(use)}.",
            icon=":material/filter_alt:",
        )
    with st.expander("How the informed label is derived", expanded=False):
        st.markdown(shifts.derivation_markdown())

    paired = shifts.paired_reviews(table, bench.annotations, use)
    people = shifts.reviewers(paired)
    left, right = st.columns([1, 2])
    dimension = url.choice(
        P.SHIFTS_DIMENSION,
        list(shifts.DIMENSIONS),
        shifts.DIMENSIONS[0],
        where=left,
        format_func=str.capitalize,
        help="Outcome: was the task done? Process: did the agent work sensibly?",
    )
    who = url.choice(
        P.SHIFTS_REVIEWER,
        [shifts.ALL, *people],
        shifts.ALL,
        where=right,
        format_func=lambda r: "All reviewers (pooled)" if r == shifts.ALL else plain(r, 200),
        help="Narrows the headline numbers, the flip matrix and the flipped cases.",
    )

    boot = current_bootstrap()
    summaries = shifts.shift_summaries(paired, dimension, boot)
    chosen = next(s for s in summaries if s.annotator == who)
    inter = shifts.inter_reviewer_shift(paired, dimension, boot)
    whose = "all reviewers" if who == shifts.ALL else who
    where = fmt.split_label(use)

    view.headline_section(chosen, inter, dimension, whose, use)
    view.table13_section(shifts.verifier_errors(paired, dimension, boot), dimension, where)
    view.per_reviewer_section(summaries, where)
    view.flipped_section(paired, dimension, who, whose, where)


main()
