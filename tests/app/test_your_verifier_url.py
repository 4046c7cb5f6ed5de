"""Your verifier's *Verifier to score* and *Dimension* in the URL (`ui.params.YOUR_VERIFIER`,
`YOUR_DIMENSION`): a choice lands in the link, the link reopens it in a fresh session, and a
value the page cannot use is said in one line while the first verifier / dimension is shown.

The mirror's sample file holds two verifiers judging both dimensions, so both choices move.
With one verifier's process labels emptied, the dimension's fallback is tested: a link asking
for a dimension the verifier lacks, and a switch in the page to such a verifier, show a
dimension it has and say so in one line, once.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.helpers.apptest import open_page, shown
from ui.params import YOUR_DIMENSION, YOUR_VERIFIER

PAGE = "pages/5_Your_verifier.py"
UPLOADER = "predictions_file"
COMPARED = "yours − UV [95% CI]"


@pytest.fixture
def uploaded(use_mirror: Path) -> AppTest:
    at = open_page(PAGE)
    data = (use_mirror / "sample_predictions.csv").read_bytes()
    at.file_uploader(key=UPLOADER).set_value(("sample_predictions.csv", data, "text/csv"))
    at = at.run(timeout=120)
    assert not at.exception
    return at


def _query(at: AppTest) -> dict[str, str]:
    out = {}
    for name in at.query_params:
        value = at.query_params[name]
        out[name] = value[-1] if isinstance(value, list) else value
    return out


def _choices(at: AppTest) -> tuple[str, str]:
    return (at.selectbox(key=YOUR_VERIFIER.key).value, at.radio(key=YOUR_DIMENSION.key).value)


def _compared(at: AppTest) -> pd.DataFrame:
    (frame,) = [d.value for d in at.dataframe if COMPARED in d.value.columns][:1]
    return frame


def _link(at: AppTest) -> dict[str, str]:
    """The uploads link alone (`?v=`), as a session that chose nothing would copy it."""
    return {k: v for k, v in _query(at).items() if k == "v"}


def test_the_choices_land_in_the_url_and_a_link_reopens_them(uploaded: AppTest) -> None:
    at = uploaded
    assert _choices(at) == ("mine:my_verifier_v1", "outcome")
    assert not {"verifier", "dimension"} & set(_query(at))  # defaults: nothing written
    before = _compared(at)
    at.selectbox(key=YOUR_VERIFIER.key).set_value("mine:my_verifier_v2")
    at = at.run(timeout=120)
    at.radio(key=YOUR_DIMENSION.key).set_value("process")
    at = at.run(timeout=120)
    assert not at.exception
    query = _query(at)
    assert query["verifier"] == "mine:my_verifier_v2" and query["dimension"] == "process"
    assert "v" in query  # the verdicts travel with them
    chosen = _compared(at)
    assert not chosen.equals(before)  # the table follows the choice

    st.cache_data.clear()
    fresh = open_page(PAGE, timeout=120, **query)  # a fresh session opened with the link
    assert not fresh.exception
    assert _choices(fresh) == ("mine:my_verifier_v2", "process")
    assert not fresh.warning
    pd.testing.assert_frame_equal(_compared(fresh), chosen)


@pytest.mark.parametrize(
    ("name", "bogus", "why"),
    [
        ("verifier", "Judge9", "no such verifier"),
        ("verifier", "my_verifier_v2", "no such verifier"),  # a display name, not the id
        ("verifier", "mine:gone", "no such upload in this browser session"),
        ("dimension", "banana", "not a dimension **my_verifier_v1 (yours)** judges"),
    ],
)
def test_a_bogus_value_says_so_in_one_line_and_shows_the_default(
    uploaded: AppTest, name: str, bogus: str, why: str
) -> None:
    at = open_page(PAGE, timeout=120, **_link(uploaded), **{name: bogus})
    assert not at.exception
    (warning,) = [w.value for w in at.warning]
    noun = {"verifier": YOUR_VERIFIER.noun, "dimension": YOUR_DIMENSION.noun}[name]
    assert shown(warning).startswith(f"The link asks for {noun} **{bogus}**: {why}")
    assert "\n" not in warning.strip()  # one line
    assert _choices(at) == ("mine:my_verifier_v1", "outcome")
    assert name not in _query(at)  # the default is not written back


def test_a_long_hostile_verifier_is_bounded_and_inert(uploaded: AppTest) -> None:
    bogus = "mine:x` ![i](http://planted.invalid/u.png) `y" + "z" * 5000
    at = open_page(PAGE, timeout=120, **_link(uploaded), verifier=bogus)
    assert not at.exception
    (warning,) = [w.value for w in at.warning]
    assert len(warning) < 2000  # the echo is cut (`ui.url.explain`: 300 characters)
    assert "](http" not in warning and "planted.invalid" not in warning
    assert _choices(at)[0] == "mine:my_verifier_v1"


# --- the dimension's fallback when the verifier has no label for it -----------------------
# The sample file with `my_verifier_v2`'s process column emptied: v1 judges both dimensions,
# v2 the outcome only (an empty process cell is no process verdict for that task).

OUTCOME_ONLY = "mine:my_verifier_v2"


@pytest.fixture
def uneven(use_mirror: Path) -> AppTest:
    frame = pd.read_csv(use_mirror / "sample_predictions.csv", dtype=str, keep_default_na=False)
    frame.loc[frame["verifier"] == "my_verifier_v2", "process"] = ""
    at = open_page(PAGE)
    data = frame.to_csv(index=False).encode()
    at.file_uploader(key=UPLOADER).set_value(("uneven.csv", data, "text/csv"))
    at = at.run(timeout=120)
    assert not at.exception
    return at


def _notes(at: AppTest) -> list[str]:
    """Every alert of the run (warnings and infos), as a reader sees it."""
    return [shown(e.value) for kind in (at.warning, at.info) for e in kind]


def _dimension_notes(at: AppTest) -> list[str]:
    return [n for n in _notes(at) if "process" in n]


def test_a_link_asking_a_dimension_the_verifier_lacks_falls_back_in_one_line(
    uneven: AppTest,
) -> None:
    assert at_options(uneven, OUTCOME_ONLY) == ["outcome"]
    at = open_page(PAGE, timeout=120, **_link(uneven), verifier=OUTCOME_ONLY, dimension="process")
    assert not at.exception
    (note,) = _dimension_notes(at)
    assert note.startswith(
        "The link asks for dimension **process**: not a dimension **my_verifier_v2 (yours)** "
        "judges; showing **outcome**."
    )
    assert "showing **outcome**" in note and "\n" not in note.strip()
    assert _choices(at) == (OUTCOME_ONLY, "outcome")
    query = _query(at)
    assert query["verifier"] == OUTCOME_ONLY and "dimension" not in query  # the default
    before = _compared(at)
    assert set(before["metric"]) and not before.empty  # the outcome scores are drawn
    again = at.run(timeout=120)  # said once: the next run of the page is quiet
    assert not again.exception and not _dimension_notes(again)
    assert _choices(again) == (OUTCOME_ONLY, "outcome")


def test_switching_to_a_verifier_without_the_dimension_falls_back_and_says_so_once(
    uneven: AppTest,
) -> None:
    at = uneven
    at.radio(key=YOUR_DIMENSION.key).set_value("process")
    at = at.run(timeout=120)
    assert _choices(at) == ("mine:my_verifier_v1", "process")
    assert _query(at)["dimension"] == "process"
    at.selectbox(key=YOUR_VERIFIER.key).set_value(OUTCOME_ONLY)
    at = at.run(timeout=120)
    assert not at.exception
    assert _choices(at) == (OUTCOME_ONLY, "outcome")
    assert at.radio(key=YOUR_DIMENSION.key).options == ["outcome"]
    (note,) = _dimension_notes(at)
    assert "my_verifier_v2" in note and "**outcome**" in note
    assert "\n" not in note.strip()
    query = _query(at)
    assert query["verifier"] == OUTCOME_ONLY and "dimension" not in query
    assert not _compared(at).empty
    again = at.run(timeout=120)  # once: not repeated on the next run
    assert not again.exception and not _dimension_notes(again)
    # back to the verifier with both: its default (outcome) is shown, nothing said
    again.selectbox(key=YOUR_VERIFIER.key).set_value("mine:my_verifier_v1")
    back = again.run(timeout=120)
    assert not back.exception and not _dimension_notes(back)
    assert _choices(back) == ("mine:my_verifier_v1", "outcome")


def at_options(at: AppTest, rater: str) -> list[str]:
    """The dimensions the page offers for `rater` (chosen in a copy of the run)."""
    from lib.analysis.your_verifier import dimensions
    from ui.state import UPLOADS_KEY

    return dimensions(at.session_state[UPLOADS_KEY], rater)


def test_the_fallback_line_keeps_a_hostile_verifier_name_inert() -> None:
    from ui.your_verifier import dimension_dropped

    line = dimension_dropped("mine:x` ![i](http://planted.invalid/u.png) `y" + "z" * 5000,
                             "process", "outcome")  # fmt: skip
    assert "](http" not in line and "planted.invalid" not in line
    assert len(line) < 1000 and "\n" not in line
    assert shown(line).endswith("gives no **process** label; showing its **outcome** scores.")
