"""Your verifier, shared: the "Share these results" button and the link it gives.

The rows are stored by `lib.uploads.shared` (bounded, content-addressed, never listed);
`ui.state.load_shared` loads `?mine=<hash>` on every page for whoever opens the link.
"""

from __future__ import annotations

import logging

import streamlit as st

from lib.uploads import shared as shared_uploads
from ui.state import SHARED_KEY, SHARED_PARAM, UPLOADS_KEY, share_uploads

log = logging.getLogger(__name__)
_SU = shared_uploads
LIFETIME = (
    f"**How long a link lasts:** at least {_SU.PROTECT_S // 86400} days after it was last "
    "opened, whatever other visitors share (a stranger's shares never remove it); it is "
    f"dropped after {_SU.MAX_AGE_S // 86400} days without being opened, when you share more "
    f"than {_SU.VISITOR_FILES} links from this browser (your oldest goes first), or when this "
    "app's storage is cleared (a restart of the app, e.g. on Streamlit Community Cloud, "
    f"clears it). A browser shares at most {_SU.VISITOR_RATE} new links per "
    f"{int(_SU.VISITOR_WINDOW_S // 60)} minutes, and a link holds at most "
    f"{_SU.MAX_VERIFIERS} verifiers (what one session may hold)."
)


def _on_share() -> None:
    """Button callback: its own error boundary (a callback runs outside the page's)."""
    st.session_state.pop("_share_notice", None)
    try:
        shared = share_uploads()
        st.session_state.pop("_share_error", None)
        if shared.notice:
            st.session_state["_share_notice"] = shared.notice
    except shared_uploads.ShareError as exc:  # a limit (quota, rate, full) is said as is
        st.session_state["_share_error"] = f"Not shared: {exc}."
    except Exception:  # never a traceback: a disk error is a message
        log.exception("sharing failed")
        st.session_state["_share_error"] = "Not shared: the server could not store the rows."


def share_section() -> None:
    """The button, then the link for this session's uploads when they are shared."""
    st.header("Share these results")
    st.caption(
        "Stores your validated verdicts (not your file) on this server under their content "
        "hash and gives a link: whoever opens it sees your verifiers on every page "
        f"(Agreement, Judges, Slices, Trajectory). Nothing lists shared uploads. {LIFETIME}"
    )
    st.button("Share these results", on_click=_on_share, icon=":material/share:", key="share")
    error = st.session_state.get("_share_error")
    if error:
        st.error(error, icon=":material/block:")
    notice = st.session_state.get("_share_notice")
    if notice:
        st.warning(notice, icon=":material/data_usage:")
    held = st.session_state.get(SHARED_KEY)
    if held is None or held[1] is not st.session_state.get(UPLOADS_KEY):
        return
    page = str(st.context.url or "").split("?", 1)[0]
    st.success("Shared. The link (also in the address bar now):", icon=":material/link:")
    st.code(f"{page}?{SHARED_PARAM}={held[0]}", language=None)
    st.caption(f"Add `{SHARED_PARAM}={held[0][:8]}…` to any page's link to show them there.")
