"""The upload callback is its own error boundary, and names from an upload are shown inert.

`on_upload` runs before the page script, outside the page's error boundary: any exception
in it (not only a rejected file) must become one message, leave the session's verifiers
as they were, and let the rest of the page work.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lib.uploads import predictions
from tests.helpers.apptest import open_page, shown
from tests.helpers.hostile_payloads import PLANTED_HOST, payloads
from ui.safe_text import inert
from ui.state import UPLOADS_KEY
from ui.your_verifier import UPLOADER_KEY

PAGE = "pages/5_Your_verifier.py"
HOSTILE_NAME = payloads()["backtick_breakout"] + " " + payloads()["link"] + ".csv"


def _upload(at: AppTest, data: bytes, name: str) -> AppTest:
    at.file_uploader(key=UPLOADER_KEY).set_value((name, data, "text/csv"))
    return at.run()


def _raters(at: AppTest) -> list[str]:
    rows = at.session_state[UPLOADS_KEY] if UPLOADS_KEY in at.session_state else None  # noqa: SIM401 (AppTest state has no .get)
    return [] if rows is None else list(dict.fromkeys(rows["rater"]))


def test_hostile_file_name_is_inert_in_the_success_message(use_mirror: Path) -> None:
    sample = (use_mirror / "sample_predictions.csv").read_bytes()
    at = _upload(open_page(PAGE), sample, HOSTILE_NAME)
    assert not at.exception
    message = at.success[0].value
    assert inert(HOSTILE_NAME, 200) in message and PLANTED_HOST not in message
    assert HOSTILE_NAME in shown(message)


def test_unexpected_failure_in_the_callback_is_a_message_and_nothing_changes(
    use_mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = (use_mirror / "sample_predictions.csv").read_bytes()
    at = _upload(open_page(PAGE), sample, "sample_predictions.csv")
    before = _raters(at)
    assert len(before) == 2

    def boom(*args: object, **kwargs: object) -> None:
        raise MemoryError("out of memory\nwith a second line")

    monkeypatch.setattr(predictions, "parse_predictions", boom)
    at = _upload(at, b"task_id,outcome\nx,1\n", HOSTILE_NAME)
    assert not at.exception  # no traceback: CUAVB_RAISE_ERRORS would re-raise in the page
    (error,) = [e.value for e in at.error]
    assert "Nothing was loaded" in error and "MemoryError" in error
    assert "Verifiers loaded before are unchanged" in error
    assert inert(HOSTILE_NAME) in error and PLANTED_HOST not in error
    assert _raters(at) == before  # nothing half-added, nothing lost
    assert "Agreement with the humans" in [shown(s.value) for s in at.header]


def test_a_rejected_file_keeps_its_message_and_dropped_rows_not_the_exception(
    use_mirror: Path,
) -> None:
    from ui.your_verifier import KEPT_DROPPED, LAST_KEY

    data = ("task_id,outcome\n" + "".join(f"nope-{i},1\n" for i in range(1_200))).encode()
    at = _upload(open_page(PAGE), data, "unknown.csv")
    assert not at.exception
    last = at.session_state[LAST_KEY]
    assert set(last) == {"filename", "error", "dropped", "n_dropped"}  # no exception object
    assert last["n_dropped"] == 1_200 and len(last["dropped"]) == KEPT_DROPPED
    (error,) = [e.value for e in at.error]
    assert "Nothing was loaded" in error and "`" not in shown(error)
    assert any("first 1,000 of 1,200 rows" in c.value for c in at.caption)
    assert any("10 verifiers per file, 20 verifiers per browser session" in c.value
               for c in at.caption)  # fmt: skip
    assert len(at.dataframe) >= 1
    assert any("success = " in m.value and "pass" in m.value for m in at.markdown)  # spellings
