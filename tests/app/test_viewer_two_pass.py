"""The rubric card shows the Universal Verifier's two passes (issue 29).

On a mirror whose internal rubrics carry both passes (`tests.helpers.uv_score_file`), every card's
criteria add up to the total it shows and that total is the score file's (the sum of the
post-image points); the "lowered" tasks are counted again straight from the JSON. Rows
with one pass say so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lib import viewer
from lib.data import load_bench
from lib.data.source import resolve
from lib.table.gpt_eval import GptEval
from tests.helpers.apptest import open_page, shown
from tests.helpers.two_pass_mirror import without_post_image
from tests.helpers.uv_score_file import internal_rubric_tasks, two_pass_mirror

PAGE = "pages/4_Trajectory.py"
BADGE = re.compile(r"actions ([\d.?]+) → screenshots ([\d.?]+) of ([\d.?]+) points")
TITLE = re.compile(r"Universal Verifier rubric: ([\d.?]+) of ([\d.?]+) points \(([^)]*)\)")


@pytest.fixture(scope="module")
def two_pass(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return two_pass_mirror(mirror_dir, tmp_path_factory.mktemp("two_pass") / "m")


@pytest.fixture(scope="module")
def two_bench(two_pass: Path):
    return load_bench(resolve(str(two_pass)))


@pytest.fixture(scope="module")
def one_pass(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mirror with the first pass only (old real rows; the demo writes both)."""
    return without_post_image(mirror_dir, tmp_path_factory.mktemp("one_pass") / "m")


@pytest.fixture(scope="module")
def one_bench(one_pass: Path):
    return load_bench(resolve(str(one_pass)))


def _json_rubric(cell: str) -> dict:
    return json.loads(json.loads(cell)["gpt_response_text"])


def test_every_internal_card_adds_up_to_the_total_it_shows(two_bench) -> None:
    tasks = two_bench.tasks[two_bench.tasks.split == "internal"]
    checked = first_pass_off = 0
    for task in tasks.itertuples():
        got = viewer.task_verdicts(two_bench.verdicts, two_bench.annotations, two_bench.task(
            task.task_id))  # fmt: skip
        if got.rubric is None or not got.rubric.items:
            continue
        inner = _json_rubric(task.gpt_eval_json)
        post = [i["post_image_earned_points"] for i in inner["rubric_items"]]
        first = [i["earned_points"] for i in inner["rubric_items"]]
        assert got.rubric.passes == "two"
        assert [i.points for i in got.rubric.items] == post
        assert got.rubric.shown_total == pytest.approx(sum(post))
        assert got.rubric.shown_total == pytest.approx(inner["rubric_total_earned_points"])
        first_pass_off += sum(first) != pytest.approx(inner["rubric_total_earned_points"])
        checked += 1
    assert checked >= 40
    # the first pass would not have added up on many of them: the test can tell the passes
    assert first_pass_off >= 10


def test_the_lowered_count_equals_a_count_straight_from_the_json(two_bench) -> None:
    frame = viewer.two_pass_frame(two_bench.tasks)
    independent_lowered, independent_raised, n_changed, n_criteria = set(), set(), 0, 0
    for task in two_bench.tasks.itertuples():
        try:
            inner = _json_rubric(task.gpt_eval_json)
        except (ValueError, TypeError, KeyError):
            continue
        for item in inner.get("rubric_items") or []:
            n_criteria += 1
            a, b = item["earned_points"], item.get("post_image_earned_points")
            if b is not None and b < a:
                independent_lowered.add(task.task_id)
            if b is not None and b > a:
                independent_raised.add(task.task_id)
            n_changed += b is not None and b != a
    assert set(frame.loc[frame.lowered, "task_id"]) == independent_lowered
    assert set(frame.loc[frame.n_raised > 0, "task_id"]) == independent_raised
    assert int(frame.lowered.sum()) == len(independent_lowered) > 0
    assert frame.adds_up.all() and (frame.passes == "two").all()
    assert 0.1 < n_changed / n_criteria < 0.3  # about one criterion in five, as in the data


def test_one_pass_rows_say_so_and_keep_their_first_pass(one_bench) -> None:
    bench = one_bench
    frame = viewer.two_pass_frame(bench.tasks)  # first pass only
    assert len(frame) and (frame.passes == "one").all() and not frame.lowered.any()
    task_id = internal_rubric_tasks(bench)[0]
    got = viewer.task_verdicts(bench.verdicts, bench.annotations, bench.task(task_id))
    assert all(i.change is None and i.points == i.earned for i in got.rubric.items)
    from ui.viewer.verdicts import passes_caption

    assert passes_caption(got.rubric).startswith("Only one pass is recorded")


def test_mixed_and_malformed_passes() -> None:
    rubric = viewer.parse_rubric(
        GptEval(
            rubric={
                "rubric_items": [
                    {"criterion": "a", "max_points": 2, "earned_points": 2,
                     "post_image_earned_points": 1, "post_image_justification": "grounded"},
                    {"criterion": "b", "max_points": 3, "earned_points": 1,
                     "post_image_earned_points": "n/a"},
                    {"criterion": "c", "max_points": 1, "earned_points": 0,
                     "post_image_earned_points": 1},
                    "not an item",
                ],
                "rubric_total_earned_points": 99,
                "rubric_total_max_points": 6,
            }
        )
    )  # fmt: skip
    assert rubric.passes == "mixed"
    assert [i.points for i in rubric.items] == [1, 1, 1]
    assert [i.change for i in rubric.items] == ["lowered", None, "raised"]
    assert rubric.lowered == [0] and rubric.raised == [2]
    assert rubric.shown_total == 3 and rubric.n_items_in_data == 4
    from ui.viewer.verdicts import passes_caption, total_note

    assert "Only 2 of the 3 criteria" in passes_caption(rubric)
    assert total_note(rubric) == (
        "The score file's total is 99 points; its criteria add up to 3 (shown above)."
    )
    many = viewer.parse_rubric(GptEval(rubric={"rubric_items": [{"criterion": "x"}] * 10_000}))
    assert len(many.items) == viewer.cards.ITEMS_MAX and many.n_items_in_data == 10_000


def _card_numbers(at) -> tuple[tuple[float, float, str], list[tuple[float, float, float]]]:
    (title,) = [m for e in at.expander if (m := TITLE.search(shown(e.label)))]
    badges = [m for e in at.markdown for m in BADGE.finditer(shown(e.value))]
    total = (float(title.group(1)), float(title.group(2)), title.group(3))
    return total, [(float(a), float(b), float(c)) for a, b, c in (m.groups() for m in badges)]


def test_the_page_shows_both_passes_and_its_points_add_up(
    two_pass: Path, two_bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(two_pass))
    frame = viewer.two_pass_frame(two_bench.tasks)
    lowered = frame[frame.lowered].task_id.iloc[0]
    unchanged = frame[(frame.n_lowered == 0) & (frame.n_raised == 0)].task_id.iloc[0]
    for task_id in (lowered, unchanged):
        at = open_page(PAGE, task=task_id)
        assert not at.exception and not at.error
        (earned, maximum, which), rows = _card_numbers(at)
        inner = _json_rubric(two_bench.task(task_id).gpt_eval_json)
        assert which == "screenshot-grounded"
        assert earned == pytest.approx(sum(b for _, b, _ in rows))
        assert earned == pytest.approx(inner["rubric_total_earned_points"])
        assert maximum == pytest.approx(inner["rubric_total_max_points"])
        assert [(a, b) for a, b, _ in rows] == [
            (i["earned_points"], i["post_image_earned_points"]) for i in inner["rubric_items"]
        ]
        body = "\n".join(shown(e.value) for e in at.markdown)
        n_lowered = sum(b < a for a, b, _ in rows)
        assert body.count("lowered by the screenshots") == n_lowered
        assert (n_lowered > 0) == (task_id == lowered)
        plain = [t.value for t in at.text]
        for item in inner["rubric_items"]:
            assert item["post_image_justification"] in plain
            assert item["justification"] in plain


def test_the_page_says_when_only_one_pass_is_recorded(
    one_pass: Path, one_bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUAVB_DATA", str(one_pass))
    bench = one_bench
    task_id = internal_rubric_tasks(bench)[0]
    at = open_page(PAGE, task=task_id)
    assert not at.exception
    (earned, _, which), rows = _card_numbers(at)
    assert which == "one pass" and rows == []
    inner = _json_rubric(bench.task(task_id).gpt_eval_json)
    assert earned == pytest.approx(sum(i["earned_points"] for i in inner["rubric_items"]))
    assert any("Only one pass is recorded" in c.value for c in at.caption)
