"""One CSV download button, the same everywhere: bytes through `lib.csv_export` (formula
cells neutralised: task ids, rater names and comments are untrusted), a file name made
only of safe characters, and no rerun on click (a rerun would redraw the whole page)."""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from lib.csv_export import to_csv_bytes


def file_name(stem: str, max_chars: int = 120) -> str:
    """`stem` with anything but letters, digits, `.`, `_` and `-` replaced, plus `.csv`
    (`download.csv` when nothing safe is left: never a hidden `.csv`)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", stem)[:max_chars].strip("._")
    return (safe or "download") + ".csv"


def csv_download(label: str, frame: pd.DataFrame, stem: str, key: str) -> None:
    """A download button of `frame` as CSV, named `file_name(stem)`; the page does not rerun."""
    st.download_button(
        label,
        to_csv_bytes(frame),
        file_name=file_name(stem),
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )
