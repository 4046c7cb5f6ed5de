"""A page that raises, run through the app's real error boundary (`ui.frame._run_page`)
for tests/browser/test_error_details.py. The message and the frames carry a "secret" path and
value that must never reach a visitor when `client.showErrorDetails` is false."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ui.frame import _run_page  # noqa: E402

SECRET = "secret-cell-value /srv/private/shard-00007.parquet"


def broken_page() -> None:
    st.title("A page that fails")
    rows = {"task": SECRET}
    raise KeyError(f"no column in {rows['task']}")


_run_page(st.navigation([st.Page(broken_page, title="Broken")]))
