"""AppTest of pages/4_Trajectory.py: deep links, stepping, every robustness case, verdicts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.apptest import APP, open_page, shown, texts
from tests.helpers.slack import scaled
from tests.unit.test_viewer import HOSTILE, make_broken_mirror, special_tasks
from ui import viewer as ui_viewer
from ui.sidebar import BANNER_TITLE
from ui.state import UPLOADS_KEY

PAGE = "pages/4_Trajectory.py"


@pytest.fixture(scope="module")
def special(bench) -> dict[str, str]:
    return special_tasks(bench)


@pytest.fixture(scope="module")
def broken_dir(bench, mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    task_id = special_tasks(bench)["om2w_normal"]
    return make_broken_mirror(mirror_dir, tmp_path_factory.mktemp("broken") / "m", task_id)


def data(at: AppTest) -> dict:
    """What the page handed the in-browser stepper on this run (`ui.stepper`)."""
    (component,) = [
        c for c in at.get("bidi_component") if c.proto.component_name == "cuavb_stepper"
    ]
    return json.loads(component.proto.json)


def step_of(at: AppTest) -> int:
    return int(data(at)["step"])


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def all_text(at: AppTest) -> str:
    return texts(at) + "\n" + "\n".join(t.value for t in at.text)


def _qp(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


# --------------------------------------------------------------------------- deep links


def test_deep_link_hands_the_stepper_every_step_and_screenshot_urls(
    use_mirror: Path, special, bench
) -> None:
    task_id = special["om2w_normal"]
    at = open_page(PAGE, task=task_id, step="2")
    assert not at.exception
    assert at.title[0].value == "Trajectory"
    assert at.sidebar.selectbox(key="split").value == "all"  # the shared frame ran
    assert at.selectbox(key=ui_viewer.TASK_KEY).value == task_id
    sent = data(at)
    task = bench.task(task_id)
    n_shots = int(task.n_screenshots_stored)
    assert sent["task"] == task_id and sent["step"] == 2
    assert len(sent["steps"]) == n_shots and len(sent["shots"]) == n_shots
    # URLs, not bytes: one media file per screenshot, distinct for distinct bytes
    assert all(u and "/media/" in u and u.endswith(".png") for u in sent["shots"])
    assert len(json.dumps(sent)) < 100_000
    pngs = [bench.screenshot_png(task.split, int(task.row), k) for k in range(n_shots)]
    assert len(set(sent["shots"])) == len(set(pngs))
    step2 = sent["steps"][2]
    assert (
        step2["caption"].startswith("Step 3 of ") and "screenshot 2 · action 2" in step2["caption"]
    )
    assert step2["alt"].startswith("Step 3 of ") and "action:" in step2["alt"]
    assert not at.warning
    assert _qp(at, "task") == task_id and _qp(at, "step") == "2"


def test_choosing_another_task_starts_at_step_0(use_mirror: Path, special) -> None:
    at = open_page(PAGE, task=special["om2w_normal"], step="3")
    other = special["internal_normal"]
    at.selectbox(key=ui_viewer.TASK_KEY).set_value(other).run()
    assert not at.exception
    assert _qp(at, "task") == other and _qp(at, "step") == "0"
    assert data(at)["task"] == other and step_of(at) == 0


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
    assert any("outside the chosen split or filters" in w.value for w in at.warning)
    assert step_of(at) == 1


def test_search_narrows_the_task_list_and_is_in_the_url(use_mirror: Path, special) -> None:
    task_id = special["internal_normal"]
    at = open_page(PAGE, task=task_id)
    at.text_input(key=ui_viewer.SEARCH_KEY).set_value(task_id).run()
    box = at.selectbox(key=ui_viewer.TASK_KEY)
    assert box.label.startswith("Task (1 of 260 match)")
    assert box.value == task_id and len(box.options) == 1
    assert _qp(at, "q") == task_id
    again = open_page(PAGE, task=task_id, q=task_id)  # the shared link
    assert again.text_input(key=ui_viewer.SEARCH_KEY).value == task_id
    assert again.selectbox(key=ui_viewer.TASK_KEY).label.startswith("Task (1 of 260 match)")


def test_filters_and_informed_toggle_round_trip_through_the_url(
    use_mirror: Path, special, bench
) -> None:
    task_id = special["om2w_normal"]
    final = bench.verdicts[
        (bench.verdicts.rater == "final_human_outcome_label") & (bench.verdicts.task_id == task_id)
    ]["label"].iloc[0]
    other = "failure" if final == 1 else "success"
    at = open_page(PAGE, task=task_id, outcome=other, shots="with", informed="1")
    assert not at.exception
    assert at.selectbox(key="viewer_f_outcome").value == other
    assert at.segmented_control(key="viewer_f_shots").value == "with"
    assert at.toggle(key=ui_viewer.INFORMED_KEY).value is True
    # the task is outside these filters: kept, and said so plainly
    assert at.selectbox(key=ui_viewer.TASK_KEY).value == task_id
    assert any("outside the chosen split or filters" in w.value for w in at.warning)
    at.selectbox(key="viewer_f_outcome").set_value("(any)").run()
    assert _qp(at, "outcome") is None and _qp(at, "shots") == "with"
    at.selectbox(key="viewer_f_reviewer").set_value("Judge3").run()
    assert _qp(at, "reviewer") == "Judge3"
    at.toggle(key=ui_viewer.INFORMED_KEY).set_value(False).run()
    assert _qp(at, "informed") is None
    # a filter value the page does not offer: said so, filter off
    bad = open_page(PAGE, task=task_id, outcome="<b>maybe</b>")
    assert bad.selectbox(key="viewer_f_outcome").value == "(any)"
    assert any(
        "is not offered here" in w.value and "<b>maybe</b>" in shown(w.value) for w in bad.warning
    )
    assert not any("<b>" in w.value for w in bad.warning)


# --------------------------------------------------------------------------- robustness


def test_unknown_task_shows_a_message_and_the_closest_task(use_mirror: Path, special) -> None:
    real = special["om2w_normal"]
    at = open_page(PAGE, task=real[:-1] + "Q", step="1")
    assert not at.exception
    warning = shown(at.warning[0].value)
    assert "There is no task" in warning and real in warning
    assert at.selectbox(key=ui_viewer.TASK_KEY).value == real
    assert _qp(at, "task") == real and step_of(at) == 1  # corrected link keeps its step


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
    assert step_of(at) == want and _qp(at, "step") == str(want)
    message = shown(at.warning[0].value)
    assert f"Showing step {want}" in message or "not a number" in message


def test_log_only_trajectory(use_mirror: Path, special, bench) -> None:
    task_id = special["log_only"]
    at = open_page(PAGE, task=task_id, step="1")
    assert not at.exception
    sent = data(at)
    assert sent["shots"] == [] and step_of(at) == 1
    assert any("log-only" in shown(i.value) for i in at.info)
    from lib.table.trajlog import parse_log

    thoughts = parse_log(bench.task(task_id).web_surfer_log).steps[1].thoughts
    assert sent["steps"][1]["thoughts"] == thoughts
    assert "no screenshot · action 1" in sent["steps"][1]["caption"]


def test_empty_log_shows_screenshots_without_actions(use_mirror: Path, special) -> None:
    at = open_page(PAGE, task=special["empty_log"], step="0")
    assert not at.exception
    assert any("log is empty" in i.value for i in at.info)
    sent = data(at)
    assert sent["shots"][0] and "index" not in sent["steps"][0]
    assert "no action" in sent["steps"][0]["caption"]


def test_malformed_log_lines_are_reported(use_mirror: Path, special) -> None:
    at = open_page(PAGE, task=special["bad_lines"])
    assert not at.exception
    assert any("could not be read as actions" in i.value for i in at.info)


def test_more_actions_than_screenshots(use_mirror: Path, special, bench) -> None:
    task_id = special["more_actions"]
    shots = int(bench.task(task_id).n_screenshots_stored)
    at = open_page(PAGE, task=task_id, step=str(shots))  # a step past the last screenshot
    assert not at.exception
    sent = data(at)
    assert step_of(at) == shots and sent["steps"][shots]["shot"] is None
    assert "no screenshot · action" in sent["steps"][shots]["caption"]
    assert sent["steps"][0]["shot"] == 0 and sent["shots"][0]


def test_more_screenshots_than_actions(use_mirror: Path, special, bench) -> None:
    task_id = special["more_screenshots"]
    shots = int(bench.task(task_id).n_screenshots_stored)
    at = open_page(PAGE, task=task_id, step=str(shots - 2))
    assert not at.exception
    assert f"screenshot {shots - 2} · no action" in data(at)["steps"][shots - 2]["caption"]
    assert any("have no action" in i.value for i in at.info)


def test_corrupt_screenshot_gets_a_reason_for_that_step_only(
    broken_dir: Path, special, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(broken_dir))
    at = open_page(PAGE, task=special["om2w_normal"], step="0")
    assert not at.exception
    sent = data(at)
    assert sent["shots"][0] and sent["problems"][0] is None
    for k in (1, 2):
        assert sent["shots"][k] is None
        assert f"Screenshot {k} cannot be decoded" in sent["problems"][k]
    assert sent["shots"][3] and sent["problems"][3] is None


def test_dataset_text_is_never_markdown(
    broken_dir: Path, special, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(broken_dir))
    at = open_page(PAGE, task=special["om2w_normal"], step="0")
    assert not at.exception
    plain = [t.value for t in at.text]
    for label in ("Instruction", "Answer", "Comment"):
        assert f"{label} {HOSTILE}" in plain  # shown by st.text: never parsed
    # the stepper gets the raw text (it sets it with textContent: see the browser test)
    assert data(at)["steps"][0]["thoughts"] == f"Thoughts {HOSTILE}"
    markdown = [m.value for m in at.markdown] + [c.value for c in at.caption]
    markdown += [e.value for kind in (at.info, at.warning, at.error) for e in kind]
    for value in markdown:
        value = re.sub(r"^:\w+-badge\[(.*)\]$", r"\1", value)  # Streamlit's own badge markup
        value = value.replace(f"-badge[:material/science: {BANNER_TITLE}]", "")  # the banner
        assert not re.search(r"(?<!\\)[<\[]", value.replace("\\\\", "")), value
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
    from lib.table.gpt_eval import parse_gpt_eval

    rubric = parse_gpt_eval(bench.task(task_id).gpt_eval_json).rubric
    plain = [t.value for t in at.text]
    assert rubric["outcome_reasoning"] in plain
    for item in rubric["rubric_items"]:
        assert item["justification"] in plain


def test_an_uploaded_verifier_appears_beside_the_dataset_ones(use_mirror: Path, special) -> None:
    task_id = special["internal_normal"]
    at = AppTest.from_file(APP, default_timeout=scaled(60))
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


def test_a_filter_that_excludes_the_task_on_screen_shows_a_matching_one(
    use_mirror: Path, special, bench
) -> None:
    from lib.viewer import disagreeing_tasks

    task_id = special["om2w_normal"]
    disagreeing = disagreeing_tasks(bench.verdicts, "uv_outcome_success")
    agreeing = bench.tasks[
        (bench.tasks.split == bench.task(task_id).split) & ~bench.tasks.task_id.isin(disagreeing)
    ]
    task_id = str(agreeing.task_id.iloc[0])
    at = open_page(PAGE, task=task_id, step="2")
    assert step_of(at) == 2
    at.selectbox(key="viewer_f_disagree").set_value("uv_outcome_success").run()
    assert not at.exception
    shown_now = at.selectbox(key=ui_viewer.TASK_KEY).value
    assert shown_now != task_id and shown_now in set(disagreeing)
    assert data(at)["task"] == shown_now and step_of(at) == 0
    assert _qp(at, "task") == shown_now and _qp(at, "step") == "0"
    assert any(f"Task {task_id} does not match" in shown(i.value) for i in at.info)
    assert not any("outside the chosen split or filters" in w.value for w in at.warning)
    # a shared link with the same filter still opens its own task (it is then flagged)
    again = open_page(PAGE, task=task_id, disagree="uv_outcome_success")
    assert again.selectbox(key=ui_viewer.TASK_KEY).value == task_id
    assert any("outside the chosen split or filters" in w.value for w in again.warning)


def test_the_count_is_of_the_chosen_split(use_mirror: Path, special, bench) -> None:
    split = bench.task(special["om2w_normal"]).split
    n_split = int((bench.tasks.split == split).sum())
    assert 0 < n_split < len(bench.tasks)
    at = open_page(PAGE, split=split)
    box = at.selectbox(key=ui_viewer.TASK_KEY)
    assert box.label.startswith(f"Task ({n_split} of {n_split} match)"), box.label


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
