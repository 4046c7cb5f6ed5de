"""AppTest of pages/4_Trajectory.py: deep links, stepping, every robustness case, verdicts."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.apptest import open_page, shown, texts
from tests.test_viewer import HOSTILE, make_broken_mirror, special_tasks
from ui import viewer as ui_viewer
from ui.state import UPLOADS_KEY

PAGE = "pages/4_Trajectory.py"
STEP = ui_viewer.STEP_KEY


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield


@pytest.fixture(scope="module")
def special(bench) -> dict[str, str]:
    return special_tasks(bench)


@pytest.fixture(scope="module")
def broken_dir(bench, mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    task_id = special_tasks(bench)["om2w_normal"]
    return make_broken_mirror(mirror_dir, tmp_path_factory.mktemp("broken") / "m", task_id)


def step_of(at: AppTest) -> int:
    return int(at.session_state[STEP])


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def all_text(at: AppTest) -> str:
    return texts(at) + "\n" + "\n".join(t.value for t in at.text)


def image_count(at: AppTest) -> int:
    return len(at.image)


def shown_step(at: AppTest) -> int:
    """The step number written in the step caption ("Step k of 0–n ...")."""
    match = re.search(r"Step (\d+) of 0–(\d+)", captions(at))
    assert match, captions(at)
    return int(match.group(1))


# --------------------------------------------------------------------------- deep links, stepping


def test_deep_link_shows_that_step_with_the_frame(use_mirror: Path, special, bench) -> None:
    task_id = special["om2w_normal"]
    at = open_page(PAGE, task=task_id, step="2")
    assert not at.exception
    assert at.title[0].value == "Trajectory"
    assert at.sidebar.selectbox(key="split").value == "all"  # the shared frame ran
    assert at.selectbox(key=ui_viewer.TASK_KEY).value == task_id
    assert step_of(at) == 2 and shown_step(at) == 2
    assert at.slider(key=STEP).value == 2
    assert at.query_params["task"] == [task_id] or at.query_params["task"] == task_id
    assert "screenshot 2 · action 2" in captions(at)
    # base screenshot + action layer + filmstrip thumbnails
    n_shots = int(bench.task(task_id).n_screenshots_stored)
    assert image_count(at) == 2 + min(n_shots, 8)
    assert not at.warning


def _qp(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[0] if isinstance(value, list) else value


def test_next_previous_slider_and_filmstrip_change_step_and_url(use_mirror: Path, special) -> None:
    task_id = special["om2w_normal"]
    at = open_page(PAGE, task=task_id, step="2")
    last = int(at.slider(key=STEP).max)
    at.button(key=ui_viewer.NEXT_KEY).click().run()
    assert step_of(at) == 3 and _qp(at, "step") == "3" and shown_step(at) == 3
    at.button(key=ui_viewer.PREV_KEY).click().run()
    at.button(key=ui_viewer.PREV_KEY).click().run()
    assert step_of(at) == 1 and _qp(at, "step") == "1"
    at.slider(key=STEP).set_value(last).run()
    assert step_of(at) == last and _qp(at, "step") == str(last)
    assert at.button(key=ui_viewer.NEXT_KEY).disabled
    at.button(key="viewer_film_0").click().run()
    assert step_of(at) == 0 and _qp(at, "step") == "0"
    assert at.button(key=ui_viewer.PREV_KEY).disabled
    assert _qp(at, "task") == task_id
    assert not at.exception


def test_choosing_another_task_starts_at_step_0(use_mirror: Path, special) -> None:
    at = open_page(PAGE, task=special["om2w_normal"], step="3")
    other = special["internal_normal"]
    at.selectbox(key=ui_viewer.TASK_KEY).set_value(other).run()
    assert not at.exception
    assert _qp(at, "task") == other and _qp(at, "step") == "0" and step_of(at) == 0
    at.button(key=ui_viewer.NEXT_KEY).click().run()
    assert _qp(at, "task") == other and _qp(at, "step") == "1"


def test_no_task_in_the_url_opens_the_first_task(use_mirror: Path) -> None:
    at = open_page(PAGE)
    assert not at.exception
    first = at.selectbox(key=ui_viewer.TASK_KEY).options[0]
    assert _qp(at, "task") == first.split(" · ")[0] and _qp(at, "step") == "0"


def test_sidebar_split_narrows_the_list_but_the_url_task_wins(use_mirror: Path, special) -> None:
    om2w_task = special["om2w_normal"]
    at = open_page(PAGE, split="internal", task=om2w_task, step="1")
    assert not at.exception
    box = at.selectbox(key=ui_viewer.TASK_KEY)
    assert box.value == om2w_task
    assert "outside the chosen split" in box.options[0]
    assert all(" · internal · " in o for o in box.options[1:]) and len(box.options) == 155
    assert "belongs to the split fara7b" in at.info[0].value.replace("\\", "")
    assert step_of(at) == 1


def test_search_narrows_the_task_list(use_mirror: Path, special) -> None:
    task_id = special["internal_normal"]
    at = open_page(PAGE, task=task_id)
    at.text_input(key=ui_viewer.SEARCH_KEY).set_value(task_id).run()
    box = at.selectbox(key=ui_viewer.TASK_KEY)
    assert box.label.startswith("Task (1 of 260 match)")
    assert box.value == task_id and len(box.options) == 1


# --------------------------------------------------------------------------- robustness


def test_unknown_task_shows_a_message_and_the_closest_task(use_mirror: Path, special) -> None:
    real = special["om2w_normal"]
    at = open_page(PAGE, task=real[:-1] + "Q", step="1")
    assert not at.exception
    warning = shown(at.warning[0].value)
    assert "There is no task" in warning and real in warning
    assert at.selectbox(key=ui_viewer.TASK_KEY).value == real
    assert _qp(at, "task") == real and step_of(at) == 1  # corrected link keeps its step
    at.button(key=ui_viewer.NEXT_KEY).click().run()  # the message stays while on that task
    assert "There is no task" in at.warning[0].value


def test_hostile_task_id_in_the_url_is_shown_as_text(use_mirror: Path) -> None:
    at = open_page(PAGE, task="<b>x</b>](javascript:alert(1))")
    assert not at.exception
    warning = at.warning[0].value
    assert "<b>" not in warning and "](" not in warning and "\\<" in warning
    assert "<b>x</b>](javascript:alert(1))" in shown(warning)


@pytest.mark.parametrize(("asked", "expected"), [("99", "last"), ("-1", 0), ("two", 0)])
def test_step_out_of_range_shows_a_message_and_the_nearest_step(
    use_mirror: Path, special, bench, asked: str, expected
) -> None:
    task_id = special["om2w_normal"]
    last = int(bench.task(task_id).n_screenshots_stored) - 1
    want = last if expected == "last" else expected
    at = open_page(PAGE, task=task_id, step=asked)
    assert not at.exception
    assert step_of(at) == want and shown_step(at) == want and _qp(at, "step") == str(want)
    message = shown(at.warning[0].value)
    assert f"Showing step {want}" in message or "not a number" in message


def test_log_only_trajectory(use_mirror: Path, special, bench) -> None:
    task_id = special["log_only"]
    at = open_page(PAGE, task=task_id, step="1")
    assert not at.exception
    assert image_count(at) == 0
    assert any("log-only" in shown(i.value) for i in at.info)
    traj_log = bench.task(task_id).web_surfer_log
    from lib.trajlog import parse_log

    thoughts = parse_log(traj_log).steps[1].thoughts
    assert thoughts in [t.value for t in at.text]
    assert "no screenshot · action 1" in captions(at)
    at.button(key=ui_viewer.NEXT_KEY).click().run()
    assert step_of(at) == 2 and _qp(at, "step") == "2"


def test_empty_log_shows_screenshots_without_actions(use_mirror: Path, special) -> None:
    at = open_page(PAGE, task=special["empty_log"], step="0")
    assert not at.exception
    assert any("log is empty" in i.value for i in at.info)
    assert "**No action at this step**" in texts(at)
    assert image_count(at) >= 1
    assert at.caption and "no action" in captions(at)


def test_malformed_log_lines_are_reported(use_mirror: Path, special) -> None:
    at = open_page(PAGE, task=special["bad_lines"])
    assert not at.exception
    assert any("could not be read as actions" in i.value for i in at.info)


def test_more_actions_than_screenshots(use_mirror: Path, special, bench) -> None:
    task_id = special["more_actions"]
    shots = int(bench.task(task_id).n_screenshots_stored)
    at = open_page(PAGE, task=task_id, step=str(shots))  # a step past the last screenshot
    assert not at.exception
    assert step_of(at) == shots
    assert "No screenshot is stored for this step" in at.warning[0].value
    assert "no screenshot · action" in captions(at)
    assert image_count(at) >= 1  # the placeholder (+ thumbnails)
    at.slider(key=STEP).set_value(0).run()
    assert not at.warning and "screenshot 0 · action 0" in captions(at)


def test_more_screenshots_than_actions(use_mirror: Path, special, bench) -> None:
    task_id = special["more_screenshots"]
    shots = int(bench.task(task_id).n_screenshots_stored)
    at = open_page(PAGE, task=task_id, step=str(shots - 2))
    assert not at.exception
    assert f"screenshot {shots - 2} · no action" in captions(at)
    assert any("have no action" in i.value for i in at.info)


def test_corrupt_screenshot_gets_a_placeholder_for_that_step_only(
    broken_dir: Path, special, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(broken_dir))
    task_id = special["om2w_normal"]
    at = open_page(PAGE, task=task_id, step="0")
    assert not at.exception and not at.warning
    good = image_count(at)
    at.button(key=ui_viewer.NEXT_KEY).click().run()
    assert not at.exception
    assert "Screenshot 1 cannot be decoded" in at.warning[0].value
    assert image_count(at) == good - 1  # placeholder instead of screenshot + layer
    at.button(key=ui_viewer.NEXT_KEY).click().run()
    assert "Screenshot 2 cannot be decoded" in at.warning[0].value
    at.button(key=ui_viewer.NEXT_KEY).click().run()
    assert not at.warning and image_count(at) == good


def test_dataset_text_is_never_markdown(
    broken_dir: Path, special, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(broken_dir))
    at = open_page(PAGE, task=special["om2w_normal"], step="0")
    assert not at.exception
    plain = [t.value for t in at.text]
    for label in ("Instruction", "Answer", "Thoughts", "Comment"):
        assert f"{label} {HOSTILE}" in plain  # shown by st.text: never parsed
    markdown = [m.value for m in at.markdown] + [c.value for c in at.caption]
    markdown += [e.value for kind in (at.info, at.warning, at.error) for e in kind]
    for value in markdown:
        value = re.sub(r"^:\w+-badge\[(.*)\]$", r"\1", value)  # Streamlit's own badge markup
        assert not re.search(r"(?<!\\)[<\[]", value.replace("\\\\", "")), value
    # the selectbox label is plain text too, and the task list still works
    assert at.selectbox(key=ui_viewer.TASK_KEY).value == special["om2w_normal"]


# --------------------------------------------------------------------------- verdicts


def test_verdicts_and_informed_stage_hidden_by_default(use_mirror: Path, special, bench) -> None:
    task_id = special["om2w_normal"]
    at = open_page(PAGE, task=task_id)
    assert not at.exception
    assert at.toggle(key=ui_viewer.INFORMED_KEY).value is False
    body = all_text(at)
    for title in ("Universal Verifier, outcome", "Legacy multimodal verifier"):
        assert title in shown(body)
    assert "Online-Mind2Web judge's text" in shown(body)
    reviews = bench.annotations[bench.annotations.task_id == task_id]
    for review in reviews.itertuples():
        assert review.outcome_comment in [t.value for t in at.text]
    assert "Informed stage" not in body
    assert not any(r.informed_outcome_comment in body for r in reviews.itertuples())
    at.toggle(key=ui_viewer.INFORMED_KEY).set_value(True).run()
    body = all_text(at)
    assert "Informed stage" in body
    informed = [r.informed_outcome_comment for r in reviews.itertuples()]
    assert any(c and c in [t.value for t in at.text] for c in informed)


def test_internal_rubric_and_blind_only_note(use_mirror: Path, special, bench) -> None:
    task_id = special["internal_normal"]
    at = open_page(PAGE, task=task_id)
    assert not at.exception
    assert at.toggle(key=ui_viewer.INFORMED_KEY).disabled
    assert "blind stage only" in captions(at)
    labels = " ".join(e.label for e in at.expander)
    assert "Universal Verifier rubric:" in labels
    from lib.gpt_eval import parse_gpt_eval

    rubric = parse_gpt_eval(bench.task(task_id).gpt_eval_json).rubric
    plain = [t.value for t in at.text]
    assert rubric["outcome_reasoning"] in plain
    for item in rubric["rubric_items"]:
        assert item["justification"] in plain


def test_an_uploaded_verifier_appears_beside_the_dataset_ones(use_mirror: Path, special) -> None:
    task_id = special["internal_normal"]
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.session_state[UPLOADS_KEY] = pd.DataFrame(
        [
            {"split": "internal", "task_id": task_id, "rater": "my_verifier", "kind": "verifier",
             "annotator": None, "stage": None, "dimension": "outcome", "label": 1, "score": None,
             "raw": None},
        ]
    ).astype({"label": "Int8"})  # fmt: skip
    at.query_params.update({"task": task_id})
    at.switch_page(PAGE)
    at.run()
    assert not at.exception
    assert "my_verifier, outcome" in [shown(m.value) for m in at.markdown]


def test_filters_narrow_the_list(use_mirror: Path, special, bench) -> None:
    from lib.viewer import disagreeing_tasks

    at = open_page(PAGE, task=special["om2w_normal"])
    at.selectbox(key="viewer_f_disagree").set_value("uv_outcome_success").run()
    expected = len(disagreeing_tasks(bench.verdicts, "uv_outcome_success"))
    box = at.selectbox(key=ui_viewer.TASK_KEY)
    assert box.label.startswith(f"Task ({expected} of 260 match)")
    at.selectbox(key="viewer_f_disagree").set_value("(any)").run()
    at.selectbox(key="viewer_f_outcome").set_value("missing").run()
    final = bench.verdicts[bench.verdicts.rater == "final_human_outcome_label"]
    missing = int(final["label"].isna().sum())
    assert at.selectbox(key=ui_viewer.TASK_KEY).label.startswith(f"Task ({missing} of 260")
    assert not at.exception
