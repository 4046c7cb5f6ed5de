"""The picker's search box and filters popover, each kept in the URL (`ui.url`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib import viewer
from lib.table.verdicts import rater_title
from lib.vocab import reviewer_sort_key
from ui import params, safe_text, url

SEARCH_KEY = params.VIEWER_SEARCH.key
ANY = "(any)"

SEARCH_MAX = 300
"""Characters of a search taken from a link at most."""

FILTER_PARAMS = {p.name: p.key for p in params.VIEWER_FILTERS}
"""URL parameter -> widget key of each filter (`ui.url`)."""


def show_unusable(asked: dict[str, str | None]) -> None:
    """Say which filter values of a link are not offered here (those filters are off)."""
    for name, value in asked.items():
        if value is not None:
            st.warning(
                f"The link's {name} **{safe_text.inert(value, 300)}** is not offered here; "
                "that filter is off.",
                icon=":material/link_off:",
            )


def search_box() -> str:
    """Free-text search over task ids and instructions, kept in `?q=`."""
    asked = url.read("q", SEARCH_KEY, lambda v: len(v) <= SEARCH_MAX, "")
    url.explain("search", asked, "all tasks", why=f"longer than {SEARCH_MAX} characters")
    query = st.text_input(
        "Search",
        key=SEARCH_KEY,
        placeholder="task id or words of the instruction",
        help="Every word must occur in the task id or the instruction (case-insensitive).",
    )
    url.write("q", SEARCH_KEY, query, default="")
    if asked is not None:
        st.caption(f"The link's search is longer than {SEARCH_MAX} characters; it is off.")
    return query


def _range_parser(top: int):
    def parse(value: str) -> tuple[int, int]:
        low, high = (int(v) for v in value.split("-", 1))
        return low, high

    def valid(value: str) -> bool:
        try:
            low, high = parse(value)
        except ValueError:
            return False
        return 0 <= low <= high <= top

    return parse, valid


def filter_controls(
    cat: pd.DataFrame, verifiers: list[str], query: str
) -> tuple[viewer.TaskFilter, dict[str, str | None]]:
    """The filters popover, each filter kept in the URL.

    Returns the chosen TaskFilter and the link's values that could not be used (for
    `show_unusable`, below the pickers rather than inside the narrow column).
    """
    reviewers = sorted(
        {n for names in cat["reviewers"] for n in names.split(", ") if n},
        key=reviewer_sort_key,
    )
    family_options = sorted(cat["family"].unique())
    top = max(int(cat["n_actions"].max()) if len(cat) else 0, 1)
    parse_range, valid_range = _range_parser(top)
    keys = FILTER_PARAMS
    asked = {
        "disagree": url.read("disagree", keys["disagree"], verifiers, ANY),
        "reviewer": url.read("reviewer", keys["reviewer"], reviewers, ANY),
        "outcome": url.read("outcome", keys["outcome"], viewer.OUTCOME_CHOICES, ANY),
        "family": url.read(
            "family",
            keys["family"],
            lambda v: all(f in family_options for f in v.split(",")),
            [],
            parse=lambda v: v.split(","),
        ),
        "actions": url.read("actions", keys["actions"], valid_range, (0, top), parse=parse_range),
        "shots": url.read("shots", keys["shots"], viewer.SCREENSHOT_CHOICES, "any"),
    }
    low_high = st.session_state.get(keys["actions"])
    if not (isinstance(low_high, tuple | list) and valid_range(f"{low_high[0]}-{low_high[1]}")):
        st.session_state[keys["actions"]] = (0, top)  # another source: other bounds
    with st.popover("Filters", icon=":material/filter_list:", width="stretch"):
        left, middle, right = st.columns(3)
        with left:
            disagree = st.selectbox(
                "Verifier disagrees with the humans",
                [ANY, *verifiers],
                format_func=lambda r: r if r == ANY else safe_text.plain(rater_title(r), 200),
                key=keys["disagree"],
                help="Keep tasks where this verifier's label differs from the final human "
                "label of the same dimension (outcome or process); both must be present.",
            )
            reviewer = st.selectbox(
                "Reviewer",
                [ANY, *reviewers],
                key=keys["reviewer"],
                format_func=lambda r: safe_text.plain(r, 200),
            )
        with middle:
            outcome = st.selectbox(
                "Human outcome (final)",
                [ANY, *viewer.OUTCOME_CHOICES],
                key=keys["outcome"],
            )
            families = st.multiselect(
                "Site or task family",
                family_options,
                key=keys["family"],
                format_func=lambda f: safe_text.plain(f, 200),
            )
        with right:
            low, high = st.slider("Number of actions", 0, top, key=keys["actions"])
            shots = st.segmented_control(
                "Screenshots",
                viewer.SCREENSHOT_CHOICES,
                format_func={"any": "any", "with": "with", "without": "log only"}.get,
                key=keys["shots"],
            )
    url.write("disagree", keys["disagree"], disagree, default=ANY)
    url.write("reviewer", keys["reviewer"], reviewer, default=ANY)
    url.write("outcome", keys["outcome"], outcome, default=ANY)
    url.write("family", keys["family"], ",".join(families), default="")
    url.write("actions", keys["actions"], f"{low}-{high}", default=f"0-{top}")
    url.write("shots", keys["shots"], shots or "any", default="any")
    chosen = viewer.TaskFilter(
        query=query or "",
        disagree_with=None if disagree == ANY else disagree,
        reviewer=None if reviewer == ANY else reviewer,
        human_outcome=None if outcome == ANY else outcome,
        families=tuple(families),
        min_steps=low if low > 0 else None,
        max_steps=high if high < top else None,
        screenshots=shots or "any",
    )
    return chosen, asked
