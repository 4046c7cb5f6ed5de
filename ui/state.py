"""The loaded data, shared by every session: one cached Bench per data source."""

from __future__ import annotations

import os
import threading
import time

import pandas as pd
import streamlit as st

from lib import predictions
from lib import source as sources
from lib.data import Bench, load_bench
from lib.verdicts import VERIFIERS

FALLBACK_TTL = 60.0
"""Seconds a demo stand-in for an unreachable Hub is reused before the Hub is tried again
(a single hiccup at cold start must not pin every later visitor to the demo)."""
_ATTEMPT: dict[str, int] = {}
_FALLBACK_SINCE: dict[tuple[str, int], float] = {}
_ATTEMPT_LOCK = threading.Lock()


@st.cache_resource(max_entries=2, show_spinner=False)
def _bench(spec: str, attempt: int = 0) -> Bench:
    """Load once per source spec (and attempt: `retry_hub` or an expired fallback makes a
    new one); the progress bar lives inside so cache hits replay it empty."""
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


def is_fallback(bench: Bench) -> bool:
    """True when the demo stands in for a default Hub that could not be used."""
    return bench.source.is_demo and not bench.source.named


def retry_hub(spec: str | None = None) -> None:
    """Forget the demo fallback: the next `get_bench` tries the Hub again ("Try the Hub
    again" button, and automatically FALLBACK_TTL seconds after the fallback)."""
    spec = source_spec() if spec is None else spec
    with _ATTEMPT_LOCK:
        _ATTEMPT[spec] = _ATTEMPT.get(spec, 0) + 1


def get_bench() -> Bench:
    """The Bench of the configured source. Raises SourceError with a user-facing message.

    A fallback to the demo is kept for FALLBACK_TTL seconds only, never for good."""
    spec = source_spec()
    attempt = _ATTEMPT.get(spec, 0)
    bench = _bench(spec, attempt)
    if is_fallback(bench):
        with _ATTEMPT_LOCK:
            since = _FALLBACK_SINCE.setdefault((spec, attempt), time.monotonic())
            expired = time.monotonic() - since > FALLBACK_TTL and _ATTEMPT.get(spec, 0) == attempt
        if expired:
            retry_hub(spec)
            bench = _bench(spec, _ATTEMPT.get(spec, 0))
    return bench


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
