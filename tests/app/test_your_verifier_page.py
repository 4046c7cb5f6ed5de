"""AppTest of the Your verifier page: upload, validation messages, comparison, session scope."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.apptest import open_page, shown, texts
from ui.state import UPLOADS_KEY

PAGE = "pages/5_Your_verifier.py"
UPLOADER = "predictions_file"


@pytest.fixture
def sample(use_mirror: Path) -> bytes:
    return (use_mirror / "sample_predictions.csv").read_bytes()


def upload(at: AppTest, data: bytes, name: str = "sample_predictions.csv") -> AppTest:
    at.file_uploader(key=UPLOADER).set_value((name, data, "text/csv"))
    return at.run()


def uploaded_raters(at: AppTest) -> list[str]:
    if UPLOADS_KEY not in at.session_state:
        return []
    rows = at.session_state[UPLOADS_KEY]
    return [] if rows is None else list(dict.fromkeys(rows["rater"]))


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    frames = [d.value for d in at.dataframe] + [t.value for t in at.table]
    frames = [f for f in frames if column in f.columns]
    assert frames, f"no table with a `{column}` column"
    return frames[0]


def test_upload_is_scored_and_compared_with_the_universal_verifier(sample: bytes) -> None:
    at = open_page(PAGE)
    assert not at.exception
    assert "No verifier uploaded in this session yet" in texts(at)
    at = upload(at, sample)
    assert not at.exception
    assert "520 rows read, **520 used**, 0 dropped" in shown(at.success[0].value)
    assert uploaded_raters(at) == ["mine:my_verifier_v1", "mine:my_verifier_v2"]

    coverage = frame_with(at, "outcome coverage")
    assert coverage["tasks in split"].tolist() == [106, 154, 106, 154]
    assert (coverage["outcome coverage"] == 1.0).all()

    agreement = frame_with(at, "kappa")
    assert agreement["split"].tolist() == ["om2w", "internal"]
    assert agreement["kappa"].str.match(r"-?\d\.\d\d \[-?\d\.\d\d, -?\d\.\d\d\]$").all()

    comparison = frame_with(at, "yours − UV [95% CI]")
    assert set(comparison["metric"]) == {"kappa", "FPR", "FNR"}
    assert comparison["yours − UV [95% CI]"].str.match(r"[+-]\d\.\d\d \[").all()
    assert (comparison["n tasks (all three labelled)"] > 0).all()
    assert "2,000" in texts(at) and "seed 0" in texts(at)

    gaps = frame_with(at, "closer to humans")
    assert 0 < len(gaps) < 260
    assert f"disagree**: {len(gaps)} (om2w " in texts(at)
    assert gaps["link"].str.startswith("Trajectory?split=").all()
    assert "now ordinary raters on every page" in texts(at)


def test_a_rejected_file_loads_nothing(sample: bytes) -> None:
    at = upload(open_page(PAGE), b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "predictions.csv")
    assert not at.exception
    assert "Nothing was loaded" in at.error[0].value and "PNG image" in at.error[0].value
    assert uploaded_raters(at) == []
    assert "No verifier uploaded in this session yet" in texts(at)


def test_dropped_rows_are_listed_and_the_rest_is_scored(sample: bytes) -> None:
    extra = b"Nope--00000000,internal,my_verifier_v1,1,1,0.5\n"
    extra += b"fam_does_not_exist_1,,my_verifier_v1,0,0,0.1\n"
    at = upload(open_page(PAGE), sample + extra, "partial.csv")
    assert not at.exception
    assert "522 rows read, **520 used**, 2 dropped" in shown(at.success[0].value)
    assert "2 row(s) dropped" in at.warning[-1].value
    dropped = frame_with(at, "reason")
    assert dropped["row"].tolist() == [521, 522]
    assert "**2 unknown task id(s)**" in texts(at)
    assert "**Nope--00000000**" in texts(at)


def test_all_rows_bad_shows_the_problems_and_adds_nothing(use_mirror: Path) -> None:
    at = upload(open_page(PAGE), b"task_id,outcome\nnope_1,1\nnope_2,maybe\n", "bad.csv")
    assert "No usable row" in at.error[0].value
    assert frame_with(at, "reason")["row"].tolist() == [1, 2]
    assert uploaded_raters(at) == []


def test_two_sessions_never_see_each_others_uploads(sample: bytes) -> None:
    first = upload(open_page(PAGE), sample)
    second = open_page(PAGE)  # another browser session on the same server process
    assert uploaded_raters(first) == ["mine:my_verifier_v1", "mine:my_verifier_v2"]
    assert uploaded_raters(second) == []
    assert "No verifier uploaded in this session yet" in texts(second)
    first.run()
    assert uploaded_raters(first) == ["mine:my_verifier_v1", "mine:my_verifier_v2"]


def test_remove_a_verifier_and_upload_the_same_file_again(sample: bytes) -> None:
    at = upload(open_page(PAGE), sample)
    at.multiselect(key="predictions_remove").set_value(["my_verifier_v1"])
    at.button(key="remove_button").click().run()
    assert not at.exception
    assert uploaded_raters(at) == ["mine:my_verifier_v2"]
    at = upload(at, sample)  # a new upload of the same file: v2 is taken, v1 is free again
    assert uploaded_raters(at) == [
        "mine:my_verifier_v2",
        "mine:my_verifier_v1",
        "mine:my_verifier_v2 (2)",
    ]
    assert any("already loaded" in i.value for i in at.info)


def test_split_and_dimension_choices(sample: bytes) -> None:
    at = upload(open_page(PAGE), sample)
    # open_page(PAGE, split=...) loses the split when it switches page before the first
    # run (shared helper); the sidebar is what a user changes anyway.
    at.sidebar.selectbox(key="split").set_value("internal").run()
    assert frame_with(at, "yours − UV [95% CI]")["split"].unique().tolist() == ["internal"]
    assert at.radio(key="predictions_dimension").options == ["outcome", "process"]
    at.radio(key="predictions_dimension").set_value("process").run()
    assert not at.exception
    assert "rubric score ≥ 0.8" in texts(at)
    assert "final_human_process_label" in texts(at)


def everything_shown(at: AppTest) -> str:
    """Texts (markdown escapes removed), table cells and widget options of a run."""
    parts = [texts(at).replace("\\", "")]
    parts += [d.value.to_csv() for d in at.dataframe] + [t.value.to_csv() for t in at.table]
    for kind in (at.selectbox, at.multiselect, at.radio):
        parts += [str(o) for widget in kind for o in (widget.options or [])]
    return "\n".join(parts)


@pytest.mark.parametrize(
    "other", ["pages/1_Agreement.py", "pages/2_Judges.py", "pages/4_Trajectory.py"]
)
def test_uploaded_verifier_appears_on_the_other_pages(sample: bytes, other: str) -> None:
    if not (Path(__file__).parents[2] / other).exists():
        pytest.skip(f"{other} is not built yet")
    at = upload(open_page(PAGE), sample)
    at.switch_page(other).run()
    assert not at.exception
    assert "my_verifier_v1" in everything_shown(at)
    if other.endswith("Trajectory.py"):  # in the verdict list, not only in a filter
        assert "my_verifier_v1 (yours)" in texts(at).replace("\\", "")
    assert "my_verifier_v1" not in everything_shown(open_page(other))  # another session
