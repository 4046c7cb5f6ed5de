"""The shared frame: navigation, the sidebar, the data banner, and the page guard.

Page files live in the top-level `pages/` folder. With `st.navigation` that name makes
Streamlit serve `pages/` in legacy mode until some session runs `app.py`, so the first
deep link after a restart would run a page file bare. Each page's `url_path` is the
name legacy mode infers from its file, and every page file starts with
`ensure_frame()`, which runs the real frame instead (docs/architecture.md, "Cold-start
deep links").
"""

from __future__ import annotations

import os
import secrets
import threading
import traceback
from pathlib import Path

import streamlit as st
from streamlit import config as st_config
from streamlit.logger import get_logger
from streamlit.runtime.scriptrunner import get_script_run_ctx

from lib import about
from lib.data.source import SourceError
from lib.uploads.share_link import SPACE_HOST_ENV, share_link
from ui import session_sweep, sidebar, warmup
from ui.copy_link import copy_link
from ui.nav import HOME_DEFAULT_PATH, PAGES, PageSpec, menu, menu_query, navigation
from ui.safe_text import inert
from ui.state import get_bench, links_query, sync_link

ROOT = Path(__file__).resolve().parents[1]
APP_TITLE = "CUAVerifierBench explorer"
RAISE_ENV = "CUAVB_RAISE_ERRORS"  # tests set it so AppTest sees real exceptions

log = get_logger(__name__)

_state = threading.local()


_navigation = navigation  # the old name
__all__ = ["HOME_DEFAULT_PATH", "PAGES", "PageSpec", "ensure_frame", "navigation", "run_app"]


NARROW_CSS = """<style>
/* Phone widths (390 px): a chart wider than the page scrolls inside its own box, never
   the page (Altair specs with fixed widths: the forest panels, the kappa heatmap). */
[data-testid="stElementContainer"]:has([data-testid="stVegaLiteChart"]) {
  max-width: 100%;
  overflow-x: auto;
}
/* Markdown tables (file-format help, long texts) scroll the same way. */
[data-testid="stMarkdownContainer"] table {
  display: block;
  max-width: 100%;
  overflow-x: auto;
}
/* WCAG AA (4.5:1) for captions in both themes: Streamlit's caption grey was 3.8:1 on the
   light sidebar. The theme's text colour, faded less, passes on either background. */
[data-testid="stCaptionContainer"] {
  color: inherit !important;
  opacity: 0.8;
}
/* Sections are h2 under the page's h1 (heading levels in order, axe heading-order),
   drawn at the size Streamlit gives a subheader. */
[data-testid="stHeading"] h2 {
  font-size: 1.5rem;
  padding: 1rem 0 0.5rem;
}
/* The first screen holds the page, not padding: the viewer's screenshot fits 1366 x 768
   under the demo banner. Streamlit's 6rem top padding -> 4rem, still below its 3.75rem
   header; the page title starts closer to the banner. */
[data-testid="stMainBlockContainer"] {
  padding-top: 4rem;
}
[data-testid="stHeading"] h1 {
  padding: 0.25rem 0 0.5rem;
}
/* The sidebar's page menu (ui.nav.menu, st.page_link) spaced and closed by a rule as
   Streamlit's own page list was. */
[data-testid="stSidebar"] [data-testid="stVerticalBlock"]:has(
    > [data-testid="stElementContainer"] > [data-testid="stPageLink"]) {
  gap: 2px;
  padding-bottom: 1rem;
  border-bottom: 1px solid rgba(128, 128, 128, 0.3);
}
[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"] {
  min-height: 2rem;
}
</style>"""


def details_allowed() -> bool:
    """True when `client.showErrorDetails` lets visitors see a traceback: "full" (the
    local default) or the legacy true. Community Cloud forces false; "stacktrace", "type"
    and "none" also hide it here (our tracebacks carry paths and data values)."""
    value = st_config.get_option("client.showErrorDetails")
    return value in ("full", True, "true", "True")


def show_page_error(exc: BaseException) -> str:
    """Tell the visitor a page failed, log the detail, return the reference code.

    The traceback goes to the server log under a short reference code; the visitor sees
    the code (to quote in a bug report) and the traceback only if `details_allowed()`.
    """
    ref = secrets.token_hex(4)
    log.error("page error [ref %s]", ref, exc_info=(type(exc), exc, exc.__traceback__))
    st.error(
        "Something went wrong on this page and it could not be drawn completely. "
        f"The other pages still work. Reference for a bug report: **{ref}**.",
        icon=":material/error:",
    )
    if details_allowed():
        with st.expander("Details"):
            st.code("".join(traceback.format_exception(exc)), language=None)
    return ref


def _run_page(page: st.Page) -> None:
    """Run a page; an unexpected error becomes a message, never a traceback (unless the
    server allows details, see `details_allowed`)."""
    try:
        page.run()
    except Exception as exc:
        if os.environ.get(RAISE_ENV):
            raise
        show_page_error(exc)


@st.dialog("About", width="large")
def _about_dialog() -> None:
    st.markdown(about.about_markdown())


def current_link(url_path: str | None = None) -> str:
    """The link to the view now on screen (the server's copy: the browser's component
    rebuilds it from the address bar at the click): `lib.uploads.share_link`."""
    if url_path is None:
        url_path = getattr(_state, "url_path", "")
    return share_link(
        url_path,
        st.query_params.to_dict(),
        space_host=os.environ.get(SPACE_HOST_ENV),
        browser_url=st.context.url,
        base_path=str(st_config.get_option("server.baseUrlPath") or ""),
    )


def link_box(key: str = "share_link", url_path: str | None = None) -> None:
    """The live link with its Copy button (the sidebar's Copy link and Your verifier's
    Share are this one action)."""
    link = current_link(url_path)
    space_host = os.environ.get(SPACE_HOST_ENV)
    # the Space's origin, or None: the browser then uses its own (lib.uploads.share_link checks it)
    in_space = bool(space_host) and link.startswith("https://")
    origin = "/".join(link.split("/", 3)[:3]) if in_space else None
    copy_link(link, origin, key=key)
    if space_host:
        st.caption(
            "On a Hugging Face Space the address bar does not follow the app: "
            "share this direct address instead."
        )


def _copy_link(box, page: st.Page) -> None:
    """Fill `box` (a sidebar placeholder) with the link to the view now on screen."""
    with box.container(), st.popover("Copy link", icon=":material/link:", width="stretch"):
        st.caption(
            "The address of this view as your browser has it, step included (with your "
            "uploaded verdicts, if any: the link holds them):"
        )
        link_box("copy_link", page.url_path)


def run_app(page: st.Page | None = None) -> None:
    """The entry point's whole body: navigation (unless `app.py` ran it already), page
    config, sidebar, data, page."""
    page = page or navigation()
    session_sweep.sweep()  # closed tabs' media and uploads that Streamlit forgot
    st.set_page_config(
        page_title=f"{page.title} | {APP_TITLE}",
        page_icon=":material/gavel:",
        layout="wide",
        menu_items={"Get help": about.DATASET_CARD, "About": about.about_markdown()},
    )
    st.html(NARROW_CSS)
    page_menu = st.sidebar.empty()  # the page links, first in the sidebar (ui.nav.menu)
    with page_menu.container():
        menu(menu_query(st.query_params), page)  # drawn even if the data cannot load
    sidebar.split_selector()
    sidebar.cluster_selector()
    try:
        bench = get_bench()
    except SourceError as exc:
        st.error(
            f"**The data source cannot be used.** {inert(str(exc), 2000)}",
            icon=":material/database:",
        )
        st.info(
            "Set `CUAVB_DATA` to a Hub id or a local mirror folder (see the README), "
            "or unset it to use the Hub with the demo as fallback."
        )
        return
    sidebar.source_panel(bench)
    sidebar.cluster_count(bench)
    sidebar.demo_banner(bench)
    sync_link(bench)  # ?v=<payload>: the uploads a link carries, on every page
    query = menu_query(st.query_params)  # split, cluster, v: now settled
    with page_menu.container():
        menu(query, page)
    link_box = st.sidebar.empty()
    if st.sidebar.button("About, citation, licence", icon=":material/info:", width="stretch"):
        _about_dialog()
    _state.in_frame = True
    _state.url_path = page.url_path
    try:
        _run_page(page)
    finally:
        _state.in_frame = False
        warmup.start()  # the next pages' imports, in the background (once per process)
    # After the page: the link carries the choices the page just wrote to the URL. A page
    # that ends with st.stop() (no data to show) leaves the placeholder empty.
    _copy_link(link_box, page)
    # An upload made during the page: its payload goes into the links now (the URL gets
    # it from sync_link in the next run).
    after = links_query(bench)
    if after != query:
        with page_menu.container():
            menu(after, page)


def ensure_frame() -> None:
    """First statement of every page file: run the frame if the page was started bare."""
    if getattr(_state, "in_frame", False):
        return
    ctx = get_script_run_ctx()
    if ctx is not None and Path(ctx.main_script_path).parent.name == "pages":
        return  # the page file is itself the entry point (AppTest.from_file on a page)
    run_app()
    st.stop()
