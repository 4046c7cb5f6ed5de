"""Viewer links carry the session's uploads (`?v=`, issue 36): a link column opens a new
tab, a new session, which sees the uploaded verifier only through the link; and the
reason it was opened (`?why=fp:<rater>`)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pandas as pd
import streamlit as st

from lib.viewer.links import parse_why, viewer_href, why_value
from ui import state
from ui.your_verifier import disagreements_display

PAYLOAD = "AQID-_x" * 10


def _query(href: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(href).query)


def test_viewer_href_carries_v_and_why_only_when_given() -> None:
    href = viewer_href("Adidas--1", "internal", 3, v=PAYLOAD, why=why_value("fp", "mine:x"))
    assert _query(href) == {
        "split": ["internal"],
        "task": ["Adidas--1"],
        "step": ["3"],
        "why": ["fp:mine:x"],
        "v": [PAYLOAD],
    }
    assert "v" not in _query(viewer_href("Adidas--1", "internal"))


def test_parse_why() -> None:
    assert parse_why("fp:mine:my verifier") == ("fp", "mine:my verifier")
    assert parse_why("fn:uv_outcome_success") == ("fn", "uv_outcome_success")
    for bad in (None, "", "fp", "xx:uv", "fp:", "fp:" + "a" * 300):
        assert parse_why(bad) is None


def test_disagreement_links_carry_the_sessions_uploads() -> None:
    rows = pd.DataFrame(
        {
            "split": ["internal"],
            "task_id": ["alltrails_find_23"],
            "yours": [1],
            "uv": [0],
            "human": [1],
            "closer": ["yours"],
        }
    )
    uploads = pd.DataFrame({"rater": ["mine:x"]})
    st.session_state[state.UPLOADS_KEY] = uploads
    st.session_state[state.LINK_KEY] = (uploads, None, None, PAYLOAD)
    try:
        assert _query(disagreements_display(rows)["link"][0])["v"] == [PAYLOAD]
        too_long = "A" * 40_000  # too long for a link
        st.session_state[state.LINK_KEY] = (uploads, None, None, too_long)
        assert "v" not in _query(disagreements_display(rows)["link"][0])
    finally:
        del st.session_state[state.UPLOADS_KEY]
        del st.session_state[state.LINK_KEY]
