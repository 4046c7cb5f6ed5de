"""The page list and `st.navigation`: imports nothing but Streamlit.

`app.py` calls `navigation()` before it imports the rest of the app (data, pandas,
pyarrow), so the sidebar lists the real pages at once. Before that, in a fresh server's
first run, Streamlit sends its legacy list of pages/ with a stray "app" page: the config
hides it (`client.showSidebarNavigation = false`) and `navigation()` turns the option on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PageSpec:
    """One page: its file under pages/, title, icon and the URL path legacy mode infers."""

    file: str
    title: str
    icon: str
    url_path: str
    question: str


PAGES: tuple[PageSpec, ...] = (
    PageSpec("pages/0_Home.py", "Home", ":material/home:", "Home", "What is in the data?"),
    PageSpec(
        "pages/1_Agreement.py",
        "Agreement",
        ":material/fact_check:",
        "Agreement",
        "How often does each verifier agree with the human reviewers, and how does it err?",
    ),
    PageSpec(
        "pages/2_Judges.py",
        "Judges",
        ":material/grid_view:",
        "Judges",
        "Who agrees with whom? Any two raters, human or verifier, on the tasks both judged.",
    ),
    PageSpec(
        "pages/3_Shifts.py",
        "Shifts",
        ":material/swap_horiz:",
        "Shifts",
        "How did seeing the verifier's verdict change the reviewers' labels?",
    ),
    PageSpec(
        "pages/4_Trajectory.py",
        "Trajectory",
        ":material/movie:",
        "Trajectory",
        "What did the agent see and do, step by step, beside every verdict?",
    ),
    PageSpec(
        "pages/5_Your_verifier.py",
        "Your verifier",
        ":material/upload_file:",
        "Your_verifier",
        "How do your own verifier's outputs score against the frozen human labels?",
    ),
    PageSpec(
        "pages/6_Slices.py",
        "Slices",
        ":material/view_week:",
        "Slices",
        "Where does a verifier go wrong: which websites, lengths, run endings, human stands?",
    ),
    PageSpec(
        "pages/7_Inside_the_verifier.py",
        "Inside the verifier",
        ":material/troubleshoot:",
        "Inside_the_verifier",
        "What did the screenshots change in the verifier's verdicts, and where do process "
        "and outcome part?",
    ),
    PageSpec(
        "pages/8_Audit.py",
        "Audit",
        ":material/rule:",
        "Audit",
        "Which human labels are contested, and what changes if you re-label them?",
    ),
)


HOME_DEFAULT_PATH = "home"
"""Internal url_path of the default page (served at `/`). Streamlit serves the default page
at the root only, so its own `url_path` never matches a URL: `/Home` (a shared link, or the
legacy name of `pages/0_Home.py`) showed "Page not found". A hidden page with `url_path`
"Home" runs the same file there; the two need distinct url_paths (a page's identity)."""


def navigation() -> st.Page:
    home, *others = PAGES
    pages = [
        st.Page(
            str(ROOT / home.file),
            title=home.title,
            icon=home.icon,
            url_path=HOME_DEFAULT_PATH,
            default=True,
        ),
        *(st.Page(str(ROOT / p.file), title=p.title, icon=p.icon, url_path=p.url_path)
          for p in others),
        st.Page(
            str(ROOT / home.file),
            title=home.title,
            icon=home.icon,
            url_path=home.url_path,
            visibility="hidden",
        ),
    ]  # fmt: skip
    # .streamlit/config.toml turns the sidebar list off so that Streamlit's legacy list of
    # pages/ (with a stray "app" page), sent in a fresh server's first run before app.py
    # runs, stays hidden; on again here, for this list (the option is process-wide).
    st.set_option("client.showSidebarNavigation", True)
    return st.navigation(pages)
