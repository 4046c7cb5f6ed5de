"""AppTest: a `?mine=` link is bounded like an upload (issue 26). A stored file with 760
verifiers (what chaining "Share these results" 38 times made) loads the per-session cap,
and the page says how many were left out; a session's own verifiers count against it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st

from lib.table.verdicts import COLUMNS
from lib.uploads import predictions
from lib.uploads import shared as SU
from tests.helpers.apptest import open_page, texts
from ui.state import UPLOADS_KEY

PAGE = "pages/5_Your_verifier.py"


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield


def _chained_link(tasks: pd.DataFrame, store: Path, verifiers: int = 760) -> str:
    """Plant a stored share of ``verifiers`` verifiers over ``tasks`` (as an older app
    stored it, before sharing was capped); return its hash."""
    data = SU._to_bytes(_chained_rows(tasks, verifiers))
    digest = hashlib.sha256(data).hexdigest()
    store.mkdir(parents=True, exist_ok=True)
    (store / f"{digest}.parquet").write_bytes(data)
    return digest


def _chained_rows(tasks: pd.DataFrame, verifiers: int) -> pd.DataFrame:
    n = len(tasks)
    names = [f"mine:chained_{v}" for v in range(verifiers)]
    rows = pd.DataFrame(
        {
            "split": list(tasks["split"]) * verifiers,
            "task_id": list(tasks["task_id"]) * verifiers,
            "rater": [r for r in names for _ in range(n)],
            "kind": "verifier",
            "annotator": None,
            "stage": None,
            "dimension": "outcome",
            "label": [i % 2 for i in range(n)] * verifiers,
            "score": 0.5,
            "raw": "1",
        },
        columns=COLUMNS,
    )
    return predictions.typed_verdicts(rows)


@pytest.fixture
def chained(use_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    sample = pd.read_csv(use_mirror / "sample_predictions.csv", dtype=str)
    tasks = sample[["split", "task_id"]].drop_duplicates()
    return _chained_link(tasks, tmp_path / "shared-uploads")


def test_a_link_to_760_verifiers_loads_the_cap_and_says_how_many_were_left_out(
    chained: str,
) -> None:
    at = open_page(PAGE, mine=chained)
    assert not at.exception
    raters = list(dict.fromkeys(at.session_state[UPLOADS_KEY]["rater"]))
    assert raters == [f"mine:chained_{v}" for v in range(predictions.MAX_VERIFIERS_PER_SESSION)]
    text = texts(at)
    assert "holds 760 verifiers" in text and "at most 20" in text
    assert "20 were loaded" in text and "740 were left out" in text
    at.run()  # the next run (any page) still says it while the link's upload is held
    assert "740 were left out" in texts(at)


def test_a_session_with_its_own_verifiers_takes_only_what_is_left(
    chained: str, use_mirror: Path
) -> None:
    at = open_page(PAGE)
    sample = (use_mirror / "sample_predictions.csv").read_bytes()
    at.file_uploader(key="predictions_file").set_value(
        ("sample_predictions.csv", sample, "text/csv")
    )
    at.run()
    own = list(dict.fromkeys(at.session_state[UPLOADS_KEY]["rater"]))
    assert len(own) == 2
    at.query_params["mine"] = chained
    at.run()
    assert not at.exception
    raters = list(dict.fromkeys(at.session_state[UPLOADS_KEY]["rater"]))
    assert raters[:2] == own and len(raters) == predictions.MAX_VERIFIERS_PER_SESSION
    text = texts(at)
    assert "2 already in this session" in text and "742 were left out" in text


def test_the_share_button_tells_a_visitor_it_reached_its_quota(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The button's callback, as the page runs it (bare Streamlit: one session)."""
    from ui import share, state

    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    tasks = pd.DataFrame({"split": ["internal"] * 3, "task_id": ["a", "b", "c"]})
    base = _chained_rows(tasks, 1)
    said = []
    try:
        for i in range(SU.VISITOR_RATE + 1):
            st.session_state[UPLOADS_KEY] = base.assign(rater=f"mine:v{i}")
            share._on_share()
            said.append(st.session_state.get("_share_error"))
        assert said[: SU.VISITOR_RATE] == [None] * SU.VISITOR_RATE
        assert "Not shared: you reached your quota of 10 new shared links" in said[-1]
        assert state.visitor_id().startswith("session:")  # no cookie here: the session
    finally:
        for key in (UPLOADS_KEY, state.SHARED_KEY, "_share_error", state.VISITOR_KEY):
            st.session_state.pop(key, None)


def test_the_visitor_is_the_browsers_xsrf_token_whatever_the_mask() -> None:
    """Streamlit re-masks the XSRF cookie on every page load (checked in chromium: three
    tabs, three cookies, one token); the visitor id follows the token. The cookies are
    made by Streamlit's own encoder."""
    import os

    utils = pytest.importorskip("streamlit.web.server.starlette.starlette_app_utils")
    from ui.state import xsrf_token

    token = os.urandom(16)
    first, second = (utils.generate_xsrf_token_string(token) for _ in range(2))
    assert first != second and xsrf_token(first) == xsrf_token(second) == token
    assert xsrf_token(f'"{first}"') == token  # a quoted cookie value
    for bad in ("", "1|abc", "2|zz|00|1", "2|0102|0a0b|1", "2|01020304||1"):
        assert xsrf_token(bad) == b""
