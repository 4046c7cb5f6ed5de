"""AppTest: a link carries more than the verdicts (`?v=`, `lib.uploads.link_codec`'s
optional sections): the visitor's own labels (issue 42) and the uploaded verifiers'
versions and runs (issue 40). Each opens in a fresh session, with nothing on the server;
a damaged section loads nothing and says why in one line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import streamlit as st

from lib.analysis import iterations as it
from lib.uploads import history_section, link_codec
from tests.helpers.apptest import open_page, texts
from ui.state import HISTORY_KEY, LABELS_KEY, UPLOADS_KEY

AUDIT = "pages/8_Audit.py"
YOURS = "pages/5_Your_verifier.py"
AGREEMENT = "pages/1_Agreement.py"


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield


def _payload(at) -> str:
    payload = at.query_params.get(link_codec.PARAM)
    payload = payload[0] if isinstance(payload, list) else payload
    assert payload and link_codec.fits(payload)
    return payload


def _held(at, key: str) -> pd.DataFrame | None:
    return at.session_state[key] if key in at.session_state else None  # noqa: SIM401


def _canon(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return frame[columns].astype(str).sort_values(columns).reset_index(drop=True)


def test_your_labels_travel_in_the_link(use_mirror: Path) -> None:
    """Labels uploaded on Audit (no predictions) put a `v=` in the URL; a fresh session
    opened with it has the same labels, and Agreement offers 'your labels'."""
    at = open_page(AUDIT)
    sample = (use_mirror / "sample_labels.csv").read_bytes()
    at.file_uploader(key="audit_upload").set_value(("labels.csv", sample, "text/csv"))
    at.run()
    assert not at.exception
    mine = _held(at, LABELS_KEY)
    assert mine is not None and len(mine) > 0
    payload = _payload(at)

    fresh = open_page(AGREEMENT, v=payload)
    assert not fresh.exception
    got = _held(fresh, LABELS_KEY)
    cols = ["split", "task_id", "dimension", "label"]
    assert got is not None
    pd.testing.assert_frame_equal(_canon(got, cols), _canon(mine, cols))
    assert _held(fresh, UPLOADS_KEY) is None  # the link held labels only
    options = [o for s in fresh.selectbox for o in s.options]
    assert any("your labels" in str(o).lower() for o in options), options


def test_versions_and_runs_travel_in_the_link(use_mirror: Path, bench) -> None:
    """The sample history uploaded on Your verifier: a fresh session opened with the link
    has the same version-runs, and its Iterations section shows them."""
    history_csv = it.sample_history(bench.verdicts).to_csv(index=False).encode()
    at = open_page(YOURS)
    at.file_uploader(key="predictions_file").set_value(
        ("sample_history.csv", history_csv, "text/csv")
    )
    at.run()
    assert not at.exception
    mine = _held(at, HISTORY_KEY)
    assert mine is not None and len(mine) > 0
    payload = _payload(at)

    fresh = open_page(YOURS, v=payload)
    fresh = fresh.run(timeout=120)
    assert not fresh.exception
    got = _held(fresh, HISTORY_KEY)
    cols = ["rater", "version", "order", "run", "split", "task_id", "dimension", "label"]
    assert got is not None
    pd.testing.assert_frame_equal(_canon(got, cols), _canon(mine, cols))
    page = texts(fresh)
    assert "**10 versions**" in page and "6 unstable task(s)" in page


def test_a_damaged_history_section_loads_nothing(use_mirror: Path, bench) -> None:
    """A link whose history section does not decode refuses the whole link in one line."""
    from ui.state import task_order

    order = task_order(bench)
    empty = pd.DataFrame(columns=["split", "task_id", "rater", "dimension", "label"])
    payload = link_codec.encode(empty, order, extra=[(link_codec.HISTORY, b"\x78\x9c junk")])
    with pytest.raises(link_codec.LinkError, match="version history"):
        link_codec.decode(payload, order)
    at = open_page(AGREEMENT, v=payload)
    assert not at.exception
    lines = [w.value for w in at.warning if "were not loaded" in w.value]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert _held(at, HISTORY_KEY) is None and _held(at, UPLOADS_KEY) is None
    assert history_section.MAX_BYTES >= 2**20  # the section's own bound is checked first
