"""AppTest of the Iterations section (Your verifier) and the viewer's version-run table.

The sample history (`lib.mirror.history`, the file the page offers) is uploaded: the
section shows its 10 versions, the rule's reasons, the noise floor and the unstable tasks;
the viewer then lists every run's verdict of an unstable task in the same session.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import streamlit as st

from lib.analysis import iterations as it
from tests.helpers.apptest import open_page, shown, texts
from ui.params import ITERATIONS
from ui.state import HISTORY_KEY, UPLOADS_KEY

PAGE = "pages/5_Your_verifier.py"
UPLOADER = "predictions_file"


@pytest.fixture
def history_csv(use_mirror: Path, bench) -> bytes:
    return it.sample_history(bench.verdicts).to_csv(index=False).encode()


def _table(at, column: str) -> pd.DataFrame:
    frames = [d.value for d in at.dataframe if column in d.value.columns]
    assert frames, f"no table with {column}"
    return frames[0]


def test_the_sample_history_shows_the_loop(history_csv: bytes) -> None:
    at = open_page(PAGE)
    at.file_uploader(key=UPLOADER).set_value(("sample_history.csv", history_csv, "text/csv"))
    at = at.run(timeout=120)
    assert not at.exception
    assert at.session_state[UPLOADS_KEY]["rater"].nunique() == 1
    assert len(at.session_state[HISTORY_KEY]) == 12 * 260
    page = texts(at)
    assert "Iterations: versions and repeated runs" in page
    assert "**10 versions**" in page and "5 committed" in page
    assert "Noise floor: 0.023" in page
    table = _table(at, "rule")
    assert table["version"].tolist()[0] == "v1-baseline"
    rules = table["rule"].tolist()
    assert "not committed: FPR rose" in rules
    assert "not committed: gain below the noise floor" in rules
    assert "not committed: kappa fell" in rules
    assert "6 unstable task(s)" in page
    assert "last version" in page  # the upload's note: the other pages pair v10


def test_the_viewer_lists_every_run_of_an_unstable_task(history_csv: bytes, bench) -> None:
    at = open_page(PAGE)
    at.file_uploader(key=UPLOADER).set_value(("sample_history.csv", history_csv, "text/csv"))
    at = at.run(timeout=120)
    history = at.session_state[HISTORY_KEY]
    result = it.iterations(bench.verdicts, history, "mine:my_verifier", intervals=False)
    _split, task = result.stability[0].unstable_tasks[0]
    at.switch_page("pages/4_Trajectory.py")
    at.query_params["task"] = task
    at = at.run(timeout=120)
    assert not at.exception
    runs = _table(at, "run")
    assert len(runs) == 12  # 9 versions x 1 run + 3 runs of v10
    last = runs[runs["version"] == "v10-final"]
    assert last["run"].tolist() == [1, 2, 3]
    assert last["outcome"].nunique() == 2  # the runs disagree: unstable


def test_markup_in_version_names_is_shown_as_text(bench, use_mirror: Path) -> None:
    frame = it.sample_history(bench.verdicts)
    hostile = {v: f"**{v}** :red[x] <b>y</b>" for v in frame["version"].unique()}
    frame["version"] = frame["version"].map(hostile)
    at = open_page(PAGE)
    data = frame.to_csv(index=False).encode()
    at.file_uploader(key=UPLOADER).set_value(("h.csv", data, "text/csv"))
    at = at.run(timeout=120)
    assert not at.exception
    line = next(m.value for m in at.markdown if "Not committed" in m.value)
    assert "**v3-screenshots**" not in line  # the name's markup is escaped, not rendered
    assert hostile["v3-screenshots"] in shown(line)
    table = _table(at, "rule")
    assert table["version"].tolist()[0] == hostile["v1-baseline"]


# --- the section's choices in the URL (Reference, Split, From, To: `ui.params.ITERATIONS`) ---

CHOSEN = {"iter_reference": "majority_human_outcome_vote", "iter_split": "internal"}
CHOSEN_VERSIONS = {"iter_from": "3", "iter_to": "7"}


def _query(at) -> dict[str, str]:
    out = {}
    for name in at.query_params:
        value = at.query_params[name]
        out[name] = value[-1] if isinstance(value, list) else value
    return out


def _choices(at) -> dict[str, object]:
    return {p.name: at.selectbox(key=p.key).value for p in ITERATIONS}


def _changes(at) -> str:
    return next(m.value for m in at.markdown if "tasks both versions and the reference" in m.value)


def _uploaded(history_csv: bytes):
    at = open_page(PAGE)
    at.file_uploader(key=UPLOADER).set_value(("sample_history.csv", history_csv, "text/csv"))
    at = at.run(timeout=120)
    assert not at.exception
    return at


def test_the_choices_land_in_the_url_and_a_link_reopens_them(history_csv: bytes) -> None:
    at = _uploaded(history_csv)
    assert not set(_query(at)) & {p.name for p in ITERATIONS}  # defaults: nothing written
    assert _choices(at) == {
        "iter_reference": "final_human_outcome_label",
        "iter_split": "all",
        "iter_from": "9",
        "iter_to": "10",
    }
    for name, value in {**CHOSEN, **CHOSEN_VERSIONS}.items():
        param = next(p for p in ITERATIONS if p.name == name)
        at.selectbox(key=param.key).set_value(value)
        at = at.run(timeout=120)
        assert not at.exception
    query = _query(at)
    assert {k: query.get(k) for k in (*CHOSEN, *CHOSEN_VERSIONS)} == {**CHOSEN, **CHOSEN_VERSIONS}
    assert "v" in query  # the history travels with them
    chosen, changes = _choices(at), _changes(at)
    caption = next(c.value for c in at.caption if "Kappa of each version against" in c.value)
    assert "internal" in caption and "majority" in caption.lower()

    st.cache_data.clear()
    fresh = open_page(PAGE, timeout=120, **query)  # a fresh session opened with the link
    assert not fresh.exception
    assert _choices(fresh) == chosen
    assert _changes(fresh) == changes
    assert not fresh.warning
    again = next(c.value for c in fresh.caption if "Kappa of each version against" in c.value)
    assert again == caption


@pytest.mark.parametrize(
    ("name", "bogus", "default"),
    [
        ("iter_reference", "Judge9", "final_human_outcome_label"),
        ("iter_split", "nowhere", "all"),
        ("iter_from", "99", "9"),
        ("iter_to", "v10-final", "10"),  # a name, not its place in the file
    ],
)
def test_a_bogus_value_says_so_and_shows_the_default(
    history_csv: bytes, name: str, bogus: str, default: str
) -> None:
    query = {k: v for k, v in _query(_uploaded(history_csv)).items() if k == "v"}
    st.cache_data.clear()
    at = open_page(PAGE, timeout=120, **query, **{name: bogus})
    assert not at.exception
    (warning,) = [w.value for w in at.warning]
    param = next(p for p in ITERATIONS if p.name == name)
    assert shown(warning).startswith(f"The link asks for {param.noun} **{bogus}**")
    assert "\n" not in warning.strip()  # one line
    assert _choices(at)[name] == default
    assert name not in _query(at)  # the default is not written back
