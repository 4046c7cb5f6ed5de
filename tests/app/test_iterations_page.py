"""AppTest of the Iterations section (Your verifier) and the viewer's version-run table.

The sample history (`lib.mirror.history`, the file the page offers) is uploaded: the
section shows its 10 versions, the rule's reasons, the noise floor and the unstable tasks;
the viewer then lists every run's verdict of an unstable task in the same session.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from lib.analysis import iterations as it
from tests.helpers.apptest import open_page, shown, texts
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
