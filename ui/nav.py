"""The page list, `st.navigation` and the sidebar's menu: imports nothing but Streamlit.

`app.py` calls `navigation()` before it imports the rest of the app (data, pandas,
pyarrow). Streamlit's own sidebar list is hidden (`position="hidden"`; and the config's
`client.showSidebarNavigation = false` hides the legacy list of pages/, with a stray
"app" page, that a fresh server's first run sends before app.py runs): its links carry no
query string, so one opened in a new tab lost the uploads (`?v=`, issue 36). The frame
draws the menu itself with `menu()`: one `st.page_link` per page, same order, titles and
icons, each carrying the view's lasting parameters (`KEEP`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
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


KEEP: tuple[str, ...] = ("split", "cluster", "v")
"""The query parameters every sidebar link carries: the split and cluster choices (bound
to the URL, ui.sidebar) and the uploads (`?v=`, ui.state.sync_link). A page's own choices
(task, verifier, ...) stay behind, as with Streamlit's own list."""

_local = threading.local()  # this run's visible st.Page objects (the script thread)


def menu_query(query_params: Mapping[str, str]) -> dict[str, str]:
    """The parameters of `query_params` a sidebar link carries (`KEEP`), in that order."""
    return {name: query_params[name] for name in KEEP if query_params.get(name)}


def menu(query: Mapping[str, str], current: st.Page | None = None) -> None:
    """The sidebar's page links (drawn where the caller is, e.g. a sidebar placeholder):
    `PAGES` in order, each `st.page_link` carrying `query` (see `menu_query`). A link
    opened in a new tab (middle-click) then arrives with the uploads and choices.

    Home: `st.page_link` writes a page's `url_path` as a relative href, and the default
    page's is empty ("?v=..."), which resolves to the page now on screen. So Home links
    to its `/Home` twin (same file), except on Home itself (either one), where the link
    is the page now on screen (highlighted, its href resolves to it)."""
    pages = getattr(_local, "pages", None)
    if not pages:
        return
    home, *others = pages
    twin = getattr(_local, "home_twin", home)
    home = current if current is not None and current in (home, twin) else twin
    with st.container(gap=None):
        for spec, page in zip(PAGES, (home, *others), strict=True):
            st.page_link(
                page,
                label=spec.title,
                icon=spec.icon,
                query_params=dict(query) or None,
                width="stretch",
            )


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
    _local.pages = pages[:-1]  # the visible ones, in PAGES order: `menu` draws them
    _local.home_twin = pages[-1]
    # Hidden: `menu` draws the list (Streamlit's links carry no query string). The
    # config's `client.showSidebarNavigation = false` stays off (the legacy list).
    return st.navigation(pages, position="hidden")
