"""The loaded data, shared by every session: one cached Bench per data source."""

from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from lib import predictions
from lib import source as sources
from lib.data import Bench, load_bench
from lib.verdicts import VERIFIERS


@st.cache_resource(max_entries=2, show_spinner=False)
def _bench(spec: str) -> Bench:
    """Load once per source spec; the progress bar lives inside so cache hits replay it empty."""
    bar = st.progress(0.0, text="Opening the data source…")

    def progress(fraction: float, text: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=text)

    try:
        return load_bench(sources.resolve(spec), progress)
    finally:
        bar.empty()


def source_spec() -> str:
    """The configured source: `CUAVB_DATA`, or "" for the default Hub id."""
    return os.environ.get(sources.ENV_VAR, "").strip()


def get_bench() -> Bench:
    """The Bench of the configured source. Raises SourceError with a user-facing message."""
    return _bench(source_spec())


UPLOADS_KEY = "uploaded_verdicts"
"""Session-state key of the verdict rows of verifiers uploaded in this browser session."""


def verdicts(bench: Bench) -> pd.DataFrame:
    """The verdict table every page uses: the dataset's rows plus this session's uploads.

    Uploaded verifiers live in `st.session_state` only (never on disk, never shared with
    another session); they are ordinary `kind == "verifier"` rows.
    """
    return predictions.with_uploaded(bench.verdicts, [st.session_state.get(UPLOADS_KEY)])


def verifier_ids(table: pd.DataFrame, dimension: str | None = None) -> list[str]:
    """Verifier rater ids in a stable order: the dataset's first, then uploads."""
    rows = table[table["kind"] == "verifier"]
    if dimension:
        rows = rows[rows["dimension"] == dimension]
    present = list(dict.fromkeys(rows["rater"].tolist()))
    known = [r for r in VERIFIERS if r in present]
    return known + [r for r in present if r not in VERIFIERS]
