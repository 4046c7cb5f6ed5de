"""Your verifier, shared: one action with Copy link (issue 36).

Every link the app writes carries the session's uploads (`?v=`, `lib.uploads.link_codec`:
the verdicts themselves, not the file), so sharing is copying the page's link. The Share
popover at the top of Your verifier says what the link holds, gives it (the same live
link as the sidebar's Copy link), and when the verdicts are too many for a link, says so
and offers them as a file in the upload format instead. Nothing is written on the server.
"""

from __future__ import annotations

import streamlit as st

from lib.uploads import link_codec
from ui.download import csv_download
from ui.state import UPLOADS_KEY, full_payload

HOLDS = (
    "The link holds your validated verdicts themselves (not your file): per task each "
    "verifier's outcome and process label and its score (rounded to 1/65,534), compressed "
    "into the address (`?v=`), so it may be long. It opens on any copy of this app that "
    "serves the same data revision, after restarts too, for as long as that revision is "
    "served; nothing is stored on the server. Anyone with the link sees your verifiers on "
    "every page."
)


def share_popover() -> None:
    """The Share popover (only once something is uploaded): what the link holds, and the
    link (or, beyond `link_codec.MAX_CHARS`, the verdicts as a CSV in the upload format)."""
    from ui.frame import current_link, link_box

    uploads = st.session_state.get(UPLOADS_KEY)
    payload = full_payload()
    if uploads is None or not len(uploads) or payload is None:
        return
    with st.popover("Share", icon=":material/share:"):
        st.markdown(HOLDS)
        if link_codec.fits(payload):
            st.caption(f"This link: {len(current_link()):,} characters.")
            link_box()
        else:
            st.warning(
                f"Your verdicts take {len(payload):,} characters, more than the "
                f"{link_codec.MAX_CHARS:,} a link may carry: links from this session do not "
                "hold them. Send this file instead; whoever uploads it on *Your verifier* "
                "sees the same verifiers.",
                icon=":material/link_off:",
            )
            csv_download(
                "Download your verdicts (CSV, upload format)",
                link_codec.upload_csv_frame(uploads),
                "my_verdicts",
                key="share_csv",
            )
