"""Viewer links carry a shared upload (`?mine=`): a link column opens a new tab, a new
session, which sees the uploaded verifier only through the shared upload."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pandas as pd
import streamlit as st

from lib.viewer.links import viewer_href
from ui import state
from ui.your_verifier import disagreements_display

HASH = "ab" * 32


def _query(href: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(href).query)


def test_viewer_href_carries_mine_only_when_given() -> None:
    assert _query(viewer_href("Adidas--1", "internal", 3, mine=HASH)) == {
        "split": ["internal"],
        "task": ["Adidas--1"],
        "step": ["3"],
        "mine": [HASH],
    }
    assert "mine" not in _query(viewer_href("Adidas--1", "internal"))


def test_disagreement_links_carry_the_shared_upload_while_it_is_the_sessions() -> None:
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
    st.session_state[state.SHARED_KEY] = (HASH, uploads)
    try:
        assert _query(disagreements_display(rows)["link"][0])["mine"] == [HASH]
        st.session_state[state.UPLOADS_KEY] = uploads.copy()  # uploaded again: not shared
        assert "mine" not in _query(disagreements_display(rows)["link"][0])
    finally:
        del st.session_state[state.UPLOADS_KEY]
        del st.session_state[state.SHARED_KEY]
