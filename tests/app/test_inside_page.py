"""AppTest of the Inside the verifier page: on the project's mirror (one pass recorded:
said, no error) and on a copy whose internal rows carry both passes (the numbers, the
"lowered" count recounted from the parquet, the links); the threshold from the URL moves
the verifier's quadrant exactly as `score >= t`; bogus URL values are explained."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.helpers.apptest import open_page, shown, texts
from tests.helpers.two_pass_mirror import with_post_image, without_post_image

PAGE = "pages/7_Inside_the_verifier.py"
INTERNAL = "internal"


@pytest.fixture(scope="module")
def two_pass_dir(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return with_post_image(mirror_dir, tmp_path_factory.mktemp("inside") / "mirror")


@pytest.fixture(scope="module")
def one_pass_dir(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return without_post_image(mirror_dir, tmp_path_factory.mktemp("inside") / "one_pass")


@pytest.fixture
def use_one_pass(one_pass_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CUAVB_DATA", str(one_pass_dir))
    return one_pass_dir


@pytest.fixture
def use_two_pass(two_pass_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CUAVB_DATA", str(two_pass_dir))
    return two_pass_dir


def _uv_counts(folder: Path, threshold: float) -> pd.DataFrame:
    """The verifier's process x outcome crosstab of the internal split, from the parquet."""
    frame = pd.concat(
        pq.read_table(p, columns=["uv_rubric_score", "uv_outcome_success"]).to_pandas()
        for p in sorted((folder / "trajectories").glob("internal-*.parquet"))
    )
    known = frame["uv_rubric_score"].notna() & frame["uv_outcome_success"].notna()
    frame = frame.loc[known]
    return pd.crosstab(
        (frame["uv_rubric_score"] >= threshold).astype(int), frame["uv_outcome_success"]
    )


def _lowered(folder: Path) -> tuple[int, int, int]:
    """(criteria, criteria lowered, criteria raised) of the internal rows, from the parquet."""
    n = lowered = raised = 0
    for path in sorted((folder / "trajectories").glob("internal-*.parquet")):
        for cell in pq.read_table(path, columns=["gpt_eval_json"]).column(0).to_pylist():
            if not cell or not json.loads(cell).get("gpt_response_text", "").startswith("{"):
                continue
            for item in json.loads(json.loads(cell)["gpt_response_text"])["rubric_items"]:
                n += 1
                lowered += item["post_image_earned_points"] < item["earned_points"]
                raised += item["post_image_earned_points"] > item["earned_points"]
    return n, lowered, raised


def _cell_labels(at) -> list[str]:
    return [e.label for e in at.expander]


def test_one_pass_recorded_is_said_and_the_quadrants_are_drawn(use_one_pass: Path) -> None:
    at = open_page(PAGE, split=INTERNAL)
    assert not at.exception
    assert at.title[0].value == "Inside the verifier"
    text = texts(at)
    assert "No task of split internal records both passes" in text
    assert "one pass recorded" in text
    assert [h.value for h in at.header] == [
        "What the screenshots bought",
        "Process against outcome",
    ]
    assert len(at.get("vega_lite_chart")) == 2
    cross = _uv_counts(use_one_pass, 0.8)
    words = ["sound process, success", "sound process, failure"]
    words += ["flawed process, success", "flawed process, failure"]
    cells = [(1, 1), (1, 0), (0, 1), (0, 0)]
    want = [f"{w} ({cross.loc[p, o]})" for w, (p, o) in zip(words, cells, strict=True)]
    assert _cell_labels(at)[:4] == want  # the verifier's quadrant, then the humans'
    assert len(_cell_labels(at)) == 8
    assert "percentile bootstrap over tasks" in text and "Clopper-Pearson interval" in text


def test_both_passes_are_compared_and_the_lowered_count_is_independent(use_two_pass: Path) -> None:
    at = open_page(PAGE, split=INTERNAL)
    assert not at.exception
    n, lowered, raised = _lowered(use_two_pass)
    assert lowered > 0 and raised > 0
    text = texts(at)
    assert f"lowered {lowered}** of {n} criteria and **raised {raised}**" in text
    metrics = at.dataframe[0].value
    assert len(metrics) == 9 and set(metrics["metric"]) == {
        "Cohen's kappa", "accuracy", "FPR (false passes)"
    }  # fmt: skip
    assert metrics["difference (paired)"].str.match(r"^([+-]\d\.\d\d|±0\.00) \[").all()
    assert "paired bootstrap" in text and "n = 151 tasks with both passes" in text
    failures = at.dataframe[1].value
    assert failures["tasks"].tolist()[0].startswith("lowered")
    tasks = at.dataframe[2].value
    assert tasks["link"].str.startswith("Trajectory?split=internal&task=").all()
    changed = tasks["criteria"] != "unchanged"
    assert changed.iloc[: changed.sum()].all()  # the changed tasks first
    assert at.get("download_button")[0].label == "Download the two passes (CSV)"


def test_the_url_threshold_moves_the_verifier_quadrant(use_mirror: Path) -> None:
    at = open_page(PAGE, split=INTERNAL, threshold="0.50")
    assert not at.exception
    assert at.slider(key="inside_threshold").value == pytest.approx(0.5)
    cross = _uv_counts(use_mirror, 0.5)
    labels = _cell_labels(at)
    assert labels[0] == f"sound process, success ({cross.loc[1, 1]})"
    assert labels[3] == f"flawed process, failure ({cross.loc[0, 0]})"
    assert "uv_rubric_score ≥ 0.5" in texts(at)
    at.slider(key="inside_threshold").set_value(0.9).run()
    cross = _uv_counts(use_mirror, 0.9)
    assert _cell_labels(at)[1] == f"sound process, failure ({cross.loc[1, 0]})"
    assert at.query_params["threshold"] == "0.90"


def test_a_move_wins_over_a_url_that_lags_behind_it(use_mirror: Path) -> None:
    """Keys pressed fast ask for the next run before the browser has applied the URL the
    last run wrote: that run sees the old ``?threshold=``, which must not put the slider
    back (it did: the slider showed 0.17 while the URL said 0.19). Back still works."""
    at = open_page(PAGE, split=INTERNAL)
    at.slider(key="inside_threshold").set_value(0.81).run()
    assert at.query_params["threshold"] == "0.81"
    at.query_params.pop("threshold")  # the browser's URL from before that run wrote 0.81
    at.slider(key="inside_threshold").set_value(0.82).run()
    assert at.slider(key="inside_threshold").value == pytest.approx(0.82)
    assert at.query_params["threshold"] == "0.82"
    at.query_params["threshold"] = "0.81"  # Back: the URL changed, no widget was moved
    at.run()
    assert at.slider(key="inside_threshold").value == pytest.approx(0.81)


@pytest.mark.parametrize("bogus", ["high", "1.5", "-0.2", "0.5; DROP", "NaN"])
def test_a_bogus_threshold_is_explained_and_the_default_shown(use_mirror: Path, bogus: str) -> None:
    at = open_page(PAGE, split=INTERNAL, threshold=bogus)
    assert not at.exception
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert f"threshold **{bogus}**" in warnings
    assert "from 0 to 1" in warnings and "showing **0.80**" in warnings
    assert at.slider(key="inside_threshold").value == pytest.approx(0.8)


def test_om2w_has_no_rubric_and_says_so(use_mirror: Path) -> None:
    at = open_page(PAGE, split="fara7b_om2w_browserbase")
    assert not at.exception
    text = texts(at)
    assert "No task of split om2w records both passes" in text
    assert "106 no rubric" in text
