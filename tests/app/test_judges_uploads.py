"""Judges pairs only the raters it shows (issue 26): the dataset's raters, the first
`?uploads=` (default 5) uploaded verifiers, and raters A and B, saying how many uploads are
left out. A session or a link at the cap of 20 must not cost every pair of every verifier
(760 verifiers from a chained link cost 13.1 s of CPU and 1.6 GB on this page)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from lib.table.verdicts import UPLOAD_PREFIX
from tests.app.test_agreement_shown import uploads
from tests.helpers.apptest import APP, shown
from tests.helpers.slack import scaled
from ui import judges as view
from ui.state import UPLOADS_KEY

PAGE = "pages/2_Judges.py"


def _open(bench, n_uploads: int, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=scaled(120))
    at.session_state[UPLOADS_KEY] = uploads(bench, n_uploads)
    at.query_params.update(query)
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _paired_uploads(at: AppTest) -> set[str]:
    """The uploads in the table of every pair (the one with McNemar's p)."""
    table = next(d.value for d in at.dataframe if "McNemar p" in d.value.columns)
    names = set(table["A"].astype(str)) | set(table["B"].astype(str))
    return {f"u{i}" for i in range(20) if any(n.startswith(f"u{i} ") for n in names)}


def _captions(at: AppTest) -> str:
    return " ".join(shown(c.value) for c in at.caption)


def test_the_first_five_uploads_are_paired_and_the_rest_counted(use_mirror: Path, bench) -> None:
    at = _open(bench, 7)
    assert _paired_uploads(at) == {f"u{i}" for i in range(5)}
    assert "2 of your 7 uploaded verifiers are not in the heatmap" in _captions(at)
    assert at.number_input(key="judges_uploads").value == view.UPLOADS_SHOWN


def test_raters_a_and_b_are_always_paired_and_the_link_asks_for_more(
    use_mirror: Path, bench
) -> None:
    at = _open(bench, 7, a=f"{UPLOAD_PREFIX}u6", uploads="1")
    assert _paired_uploads(at) == {"u0", "u6"}
    assert "5 of your 7 uploaded" in _captions(at)
    at = _open(bench, 7, uploads="7")
    assert _paired_uploads(at) == {f"u{i}" for i in range(7)}
    assert "uploaded verifiers are not in" not in _captions(at)


def test_shown_raters_keep_the_option_order() -> None:
    options = ["uv", "Judge1", "mine:a", "mine:b", "mine:c"]
    assert view.shown_raters(options, ["mine:c", "uv"], 0) == ["uv", "Judge1", "mine:c"]
    assert view.shown_raters(options, ["uv", "Judge1"], 5) == options
    note = view.hidden_uploads_note(options, ["uv", "Judge1", "mine:c"])
    assert note is not None and note.startswith("2 of your 3 uploaded verifiers")
    assert view.hidden_uploads_note(options, options) is None
