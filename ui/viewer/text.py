"""Dataset text in the viewer: inert Markdown, long-text blocks, badges, notices.

Every dataset value the viewer puts into Markdown goes through `_md` (`ui.safe_text.inert`).
"""

from __future__ import annotations

import streamlit as st

from lib import viewer
from ui import safe_text

LABEL_COLOR = {1: "green", 0: "red", None: "gray"}

LONG_TEXT_PREVIEW = 3000
"""Characters of a dataset text shown before "… (N more characters)" and an expander: a
1 MB instruction made the page 1.3 million pixels tall."""


INLINE_MAX = 2000
"""Characters of a dataset value shown inline (a field, a badge, a caption) at most."""


def _md(value: object, max_chars: int = INLINE_MAX) -> str:
    """A dataset value as inert Markdown (`ui.safe_text.inert`); None/NaN/NA give ""."""
    return safe_text.inert(viewer.as_text(value), max_chars)


def text_block(label: str, value: object, empty: str = "(empty)") -> None:
    """A bold label and dataset text shown as plain text (never Markdown or HTML)."""
    text = viewer.as_text(value)
    st.markdown(f"**{label}**")
    if text.strip():
        safe_text.show_long_text(label, text, preview_chars=LONG_TEXT_PREVIEW)
    else:
        st.caption(empty)


def field_line(label: str, value: object) -> None:
    """`**label:** value` on one line, with the value escaped."""
    st.markdown(f"**{label}:** {_md(value)}")


def show_notices(notices: list[viewer.Notice]) -> None:
    for notice in notices:
        text = _md(notice.text)
        if notice.level == "warning":
            st.warning(text, icon=":material/link_off:")
        else:
            st.info(text, icon=":material/info:")


def label_badge(title: str, label: int | None, text: str) -> None:
    """A coloured badge `title: text` (green success, red failure, grey missing)."""
    st.badge(
        _md(f"{title}: {text}"),
        color=LABEL_COLOR.get(label, "gray"),
    )
