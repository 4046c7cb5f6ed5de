"""Tests for lib.viewer: task filters, URL resolution, alignment notes, verdict assembly,
text escaping and the image helpers. Also the helpers the page and browser tests share:
`special_tasks` (mirror tasks with odd logs), `make_broken_mirror` (a mirror copy with
a corrupt screenshot and hostile text) and `rewrite_task_row` (edit one task's row)."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from PIL import Image

from lib import viewer
from lib.table import verdicts
from lib.table.trajlog import parse_log
from lib.table.verdicts import OM2W

if TYPE_CHECKING:
    import pyarrow as pa

INTERNAL = "internal"
HOSTILE = (
    "<script>alert(1)</script> [click me](javascript:alert(1)) **bold** "
    ":red[red] $x^2$ <img src=x onerror=alert(1)> https://evil.example/"
)
"""Text that would do something if it were rendered as Markdown or HTML."""


# --------------------------------------------------------------------------- shared helpers


def special_tasks(bench) -> dict[str, str]:
    """One task id per kind of trajectory the viewer must handle, found in the mirror."""
    found: dict[str, str] = {}
    for task in bench.tasks.itertuples():
        parsed = parse_log(task.web_surfer_log)
        n, shots = parsed.n_actions, int(task.n_screenshots_stored)
        kinds = {
            "om2w_normal": task.split == OM2W and shots >= 5 and n + 1 == shots,
            "internal_normal": task.split == INTERNAL and shots >= 4 and n + 1 == shots,
            "log_only": shots == 0 and n >= 3,
            "empty_log": n == 0 and shots > 0,
            "bad_lines": bool(parsed.bad_lines) and shots > 0,
            "more_actions": shots > 0 and n >= shots,
            "more_screenshots": n > 0 and shots > n + 1,
            "no_answer": str(task.final_answer).strip() == "<no_answer>",
        }
        for kind, ok in kinds.items():
            if ok and kind not in found:
                found[kind] = str(task.task_id)
    return found


def _replace_row(table, column: str, row: int, value) -> object:
    import pyarrow as pa

    index = table.schema.get_field_index(column)
    values = table.column(column).to_pylist()
    values[row] = value
    return table.set_column(index, table.schema.field(index), pa.array(values, table[column].type))


def break_screenshots(table, row: int) -> object:
    """`row`'s screenshot 1 becomes bytes that are not an image, screenshot 2 a truncated PNG."""
    shots = table.column("screenshots")[row].as_py()
    shots[1] = {**shots[1], "bytes": b"this is not a PNG"}
    shots[2] = {**shots[2], "bytes": shots[2]["bytes"][: len(shots[2]["bytes"]) // 2]}
    return _replace_row(table, "screenshots", row, shots)


def rewrite_task_row(
    folder: Path, config: str, task_id: str, edit: Callable[[pa.Table, int], pa.Table]
) -> None:
    """In every shard of ``config`` holding ``task_id``, replace the table by
    ``edit(table, row)`` (its first row of that task): the broken and the hostile mirrors
    change one task's row in place the same way."""
    import pyarrow.parquet as pq

    for path in sorted((folder / config).glob("*.parquet")):
        table = pq.read_table(path)
        ids = table.column("task_id").to_pylist()
        if task_id in ids:
            pq.write_table(edit(table, ids.index(task_id)), path)


def make_broken_mirror(src: Path, dst: Path, task_id: str) -> Path:
    """Copy a mirror; give `task_id` a garbage screenshot 1, a truncated screenshot 2 and
    hostile text in its instruction, final answer, first thoughts and a reviewer comment."""
    if (dst / "README.md").exists():
        return dst
    shutil.copytree(src, dst)

    def trajectory(table: pa.Table, row: int) -> pa.Table:
        table = break_screenshots(table, row)
        table = _replace_row(table, "instruction", row, "Instruction " + HOSTILE)
        table = _replace_row(table, "final_answer", row, "Answer " + HOSTILE)
        lines = table.column("web_surfer_log")[row].as_py().split("\n")
        first = json.loads(lines[0])
        first["arguments"]["thoughts"] = "Thoughts " + HOSTILE
        lines[0] = json.dumps(first)
        return _replace_row(table, "web_surfer_log", row, "\n".join(lines))

    def annotation(table: pa.Table, row: int) -> pa.Table:
        return _replace_row(table, "outcome_comment", row, "Comment " + HOSTILE)

    rewrite_task_row(dst, "trajectories", task_id, trajectory)
    rewrite_task_row(dst, "annotations", task_id, annotation)
    return dst


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def catalog(bench) -> pd.DataFrame:
    return viewer.build_catalog(bench.tasks, bench.annotations, bench.verdicts)


@pytest.fixture(scope="module")
def special(bench) -> dict[str, str]:
    return special_tasks(bench)


def png(size: tuple[int, int] = (1440, 900), color=(255, 255, 255)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def step_of(tool: str, **args) -> object:
    line = json.dumps({"action": tool, "url": "", "arguments": {"action": tool, **args}})
    return parse_log(line).steps[0]


# --------------------------------------------------------------------------- text safety


def test_viewer_markdown_values_are_inert_and_missing_values_empty() -> None:
    """`ui.viewer._md` (every dataset value the viewer puts into Markdown) is safe_text.inert
    of the display text: missing values are empty, markup stays literal, length bounded."""
    from ui import safe_text
    from ui import viewer as view

    assert view._md(None) == view._md(float("nan")) == view._md(pd.NA) == ""
    payload = "x` ![i](http://example.invalid/u.png) :material/home: \u202e"
    assert view._md(payload) == safe_text.inert(payload, view.INLINE_MAX)
    assert "](" not in view._md(payload) and "`" not in view._md(payload).replace("\\`", "")
    assert len(view._md("a" * 10_000)) < view.INLINE_MAX + 60


# --------------------------------------------------------------------------- catalog, filters


@pytest.mark.parametrize(
    ("task_id", "family"),
    [
        ("Adidas--11857213", "Adidas"),
        ("alltrails_find_23", "alltrails_find"),
        ("espn_scores_data_19_3", "espn_scores"),
        ("linkedin_jobs_7", "linkedin_jobs"),
        ("oddname", "oddname"),
    ],
)
def test_family_of(task_id: str, family: str) -> None:
    assert viewer.family_of(task_id) == family


def test_catalog_has_one_row_per_task_with_counts(bench, catalog) -> None:
    assert list(catalog.columns) == list(viewer.CATALOG_COLUMNS)
    assert len(catalog) == len(bench.tasks) == 260
    assert catalog["task_id"].is_unique
    row = catalog.iloc[0]
    task = bench.task(row["task_id"])
    parsed = parse_log(task["web_surfer_log"])
    assert row["n_actions"] == parsed.n_actions
    assert row["n_screenshots"] == task["n_screenshots_stored"]
    assert row["n_positions"] == max(parsed.n_actions, row["n_screenshots"], 1)
    reviewers = sorted(bench.annotations.loc[bench.annotations.task_id == row.task_id, "annotator"])
    assert sorted(row["reviewers"].split(", ")) == reviewers
    assert row["label"].startswith(f"{row.task_id} · om2w · ")
    assert catalog["no_answer"].sum() == 4
    assert catalog["aborted"].sum() == 4


def test_no_filter_keeps_everything_and_split_narrows(catalog) -> None:
    assert len(viewer.filter_tasks(catalog, viewer.TaskFilter())) == 260
    internal = viewer.filter_tasks(catalog, viewer.TaskFilter(), [INTERNAL])
    assert set(internal["split"]) == {INTERNAL} and len(internal) == 154
    assert not viewer.TaskFilter().active
    assert viewer.TaskFilter(query="x").active


def test_search_needs_every_word_in_id_or_instruction(catalog) -> None:
    task = catalog.iloc[10]
    word = task["instruction"].split()[-1].strip(".").upper()
    hits = viewer.filter_tasks(catalog, viewer.TaskFilter(query=f"{task.task_id[:6]} {word}"))
    assert task.task_id in set(hits["task_id"])
    for _, hit in hits.iterrows():
        text = (hit.task_id + " " + hit.instruction).lower()
        assert task.task_id[:6].lower() in text and word.lower() in text
    none = viewer.filter_tasks(catalog, viewer.TaskFilter(query="zzqx-no-such-word"))
    assert none.empty


def test_disagreement_filter_matches_a_hand_join(bench, catalog) -> None:
    table = bench.verdicts
    flt = viewer.TaskFilter(disagree_with="uv_outcome_success")
    hits = set(viewer.filter_tasks(catalog, flt, table=table)["task_id"])
    uv = table[table.rater == "uv_outcome_success"].set_index("task_id")["label"]
    human = table[table.rater == "final_human_outcome_label"].set_index("task_id")["label"]
    both = pd.concat([uv, human], axis=1, keys=["uv", "human"]).dropna()
    expected = set(both.index[both["uv"] != both["human"]])
    assert hits == expected and 0 < len(hits) < 260
    # the process verifier is compared with the final process label
    process = viewer.disagreeing_tasks(table, "uv_process")
    ref = table[table.rater == "final_human_process_label"].set_index("task_id")["label"]
    mine = table[table.rater == "uv_process"].set_index("task_id")["label"]
    both = pd.concat([mine, ref], axis=1, keys=["v", "h"]).dropna()
    assert process == set(both.index[both["v"] != both["h"]])
    with pytest.raises(ValueError, match="verdict table"):
        viewer.filter_tasks(catalog, flt)


def test_uploaded_verifier_rows_can_be_filtered_on(bench, catalog) -> None:
    human = bench.verdicts[bench.verdicts.rater == "final_human_outcome_label"].head(3)
    upload = human.assign(rater="mine", kind="verifier", label=(1 - human["label"]))
    table = pd.concat([bench.verdicts, upload], ignore_index=True)
    hits = viewer.filter_tasks(catalog, viewer.TaskFilter(disagree_with="mine"), table=table)
    expected = set(human.dropna(subset=["label"])["task_id"])
    assert set(hits["task_id"]) == expected


def test_reviewer_outcome_family_steps_and_screenshot_filters(bench, catalog) -> None:
    judge = bench.annotations["annotator"].iloc[0]
    hits = viewer.filter_tasks(catalog, viewer.TaskFilter(reviewer=judge))
    reviewed = set(bench.annotations.loc[bench.annotations.annotator == judge, "task_id"])
    assert set(hits["task_id"]) == reviewed

    for choice, test in (("success", 1), ("failure", 0)):
        hits = viewer.filter_tasks(catalog, viewer.TaskFilter(human_outcome=choice))
        assert len(hits) > 0 and (hits["human_outcome"] == test).all()
    missing = viewer.filter_tasks(catalog, viewer.TaskFilter(human_outcome="missing"))
    assert missing["human_outcome"].isna().all()
    sizes = [
        len(viewer.filter_tasks(catalog, viewer.TaskFilter(human_outcome=c)))
        for c in viewer.OUTCOME_CHOICES
    ]
    assert sum(sizes) == 260

    family = catalog["family"].iloc[0]
    hits = viewer.filter_tasks(catalog, viewer.TaskFilter(families=(family,)))
    assert set(hits["family"]) == {family}

    hits = viewer.filter_tasks(catalog, viewer.TaskFilter(min_steps=2, max_steps=3))
    assert hits["n_actions"].between(2, 3).all() and len(hits) > 0

    with_shots = viewer.filter_tasks(catalog, viewer.TaskFilter(screenshots="with"))
    without = viewer.filter_tasks(catalog, viewer.TaskFilter(screenshots="without"))
    assert (with_shots["n_screenshots"] > 0).all() and (without["n_screenshots"] == 0).all()
    assert len(with_shots) + len(without) == 260 and len(without) > 0
    with pytest.raises(ValueError):
        viewer.filter_tasks(catalog, viewer.TaskFilter(screenshots="maybe"))
    with pytest.raises(ValueError):
        viewer.filter_tasks(catalog, viewer.TaskFilter(human_outcome="partial"))


# --------------------------------------------------------------------------- URL -> view


def test_resolve_task_without_a_param_takes_the_first_candidate(catalog) -> None:
    first_internal = catalog[catalog.split == INTERNAL].task_id.iloc[0]
    assert viewer.resolve_task(catalog, None, "all", ["x1"]) == ("x1", [])
    assert viewer.resolve_task(catalog, "", INTERNAL, []) == (first_internal, [])
    assert viewer.resolve_task(catalog.iloc[0:0], "anything") == (None, [])


def test_resolve_task_keeps_a_known_id_across_splits_and_says_so(catalog) -> None:
    om2w_id = catalog[catalog.split == OM2W].task_id.iloc[3]
    assert viewer.resolve_task(catalog, om2w_id, "all") == (om2w_id, [])
    assert viewer.resolve_task(catalog, om2w_id, OM2W) == (om2w_id, [])
    task, notices = viewer.resolve_task(catalog, om2w_id, INTERNAL, ["other"])
    assert task == om2w_id
    assert [n.level for n in notices] == ["info"]
    assert OM2W in notices[0].text and INTERNAL in notices[0].text


def test_resolve_task_maps_an_unknown_id_to_the_closest_with_a_warning(catalog) -> None:
    real = catalog.task_id.iloc[5]
    task, notices = viewer.resolve_task(catalog, real[:-1] + "Z", "all", ["first"])
    assert task == real
    assert notices[0].level == "warning" and "closest" in notices[0].text
    task, notices = viewer.resolve_task(catalog, "<script>nonsense</script>", "all", ["first"])
    assert task == "first" and "first task" in notices[0].text


@pytest.mark.parametrize(
    ("asked", "n", "step", "warned"),
    [
        (None, 5, 0, False),
        ("", 5, 0, False),
        ("3", 5, 3, False),
        (" 4 ", 5, 4, False),
        ("5", 5, 4, True),
        ("99", 5, 4, True),
        ("-2", 5, 0, True),
        ("two", 5, 0, True),
        ("1.5", 5, 0, True),
        ("3", 1, 0, True),
        ("0", 0, 0, False),
    ],
)
def test_resolve_step(asked, n: int, step: int, warned: bool) -> None:
    got, notice = viewer.resolve_step(asked, n)
    assert got == step
    assert (notice is not None) == warned
    if warned:
        assert notice.level == "warning"
        assert "not a number" in notice.text or f"0 to {max(n, 1) - 1}" in notice.text


# --------------------------------------------------------------------------- one trajectory


def test_normal_trajectory_pairs_screenshot_k_with_action_k(bench, special) -> None:
    traj = viewer.load_trajectory(bench.task(special["om2w_normal"]))
    assert traj.n_positions == traj.n_screenshots == traj.parsed.n_actions + 1
    assert traj.notes() == [] or all("line" in n for n in traj.notes())
    for view in traj.views[:-1]:
        assert view.screenshot_index == view.position == view.action.index
    assert traj.views[-1].action is None
    assert traj.view(99) is traj.views[-1] and traj.view(-3) is traj.views[0]
    caption = viewer.step_caption(traj.views[1], traj.n_positions)
    assert caption.startswith(f"Step 2 of {traj.n_positions} · screenshot 1 · action 1")
    assert "page after the last action" in viewer.step_caption(traj.views[-1], traj.n_positions)


def test_log_only_trajectory(bench, special) -> None:
    traj = viewer.load_trajectory(bench.task(special["log_only"]))
    assert traj.log_only and traj.n_screenshots == 0
    assert traj.n_positions == traj.parsed.n_actions
    assert all(v.screenshot_index is None and v.action is not None for v in traj.views)
    assert any("log-only" in n for n in traj.notes())
    assert "no screenshot" in viewer.step_caption(traj.views[0], traj.n_positions)


def test_empty_log_still_steps_through_screenshots(bench, special) -> None:
    traj = viewer.load_trajectory(bench.task(special["empty_log"]))
    assert traj.parsed.is_empty and traj.n_positions == traj.n_screenshots
    assert all(v.action is None for v in traj.views)
    assert any("log is empty" in n for n in traj.notes())


def test_malformed_lines_are_reported(bench, special) -> None:
    traj = viewer.load_trajectory(bench.task(special["bad_lines"]))
    assert any("could not be read" in n for n in traj.notes())


def test_more_actions_than_screenshots(bench, special) -> None:
    traj = viewer.load_trajectory(bench.task(special["more_actions"]))
    assert traj.n_positions == traj.parsed.n_actions
    assert traj.views[-1].screenshot_index is None and traj.views[-1].action is not None
    assert any("only" in n and "screenshots" in n for n in traj.notes())


def test_more_screenshots_than_actions(bench, special) -> None:
    traj = viewer.load_trajectory(bench.task(special["more_screenshots"]))
    assert traj.n_positions == traj.n_screenshots
    assert traj.views[-2].action is None and traj.views[-2].screenshot_index is not None
    assert any("have no action" in n for n in traj.notes())


def test_nothing_at_all_gives_one_empty_position_and_a_declared_count_mismatch() -> None:
    row = pd.Series(
        {"split": INTERNAL, "task_id": "t", "row": 0, "web_surfer_log": "", "n_screenshots": 3}
    )
    row["n_screenshots_stored"] = 0
    traj = viewer.load_trajectory(row)
    assert traj.n_positions == 1 and traj.views[0].action is None
    notes = " ".join(traj.notes())
    assert "nothing to step through" in notes and "says 3, but 0" in notes


@pytest.mark.parametrize(
    ("position", "n", "window"),
    [(0, 30, range(0, 8)), (10, 30, range(6, 14)), (29, 30, range(22, 30)), (2, 3, range(0, 3))],
)
def test_filmstrip_window(position: int, n: int, window: range) -> None:
    assert viewer.filmstrip_window(position, n) == window
    assert position in viewer.filmstrip_window(position, n)


def test_step_fields_show_alias_url_guess_and_problems() -> None:
    parsed = parse_log(
        "\n".join(
            json.dumps(line)
            for line in (
                {"action": "visit_url", "url": "", "arguments": {"action": "visit_url",
                                                                  "url": "https://a.example/"}},
                {"action": "click", "url": "", "arguments": {"action": "click"}},
            )
        )
    )  # fmt: skip
    fields = viewer.step_fields(parsed.steps[1])
    assert fields["tool"] == "left_click (logged as click)"
    assert fields["url"].startswith("https://a.example/") and "guess" in fields["url"]
    assert "missing coordinate" in fields["problems"]
    assert viewer.step_fields(None) == {}


# --------------------------------------------------------------------------- verdicts


def test_om2w_task_verdicts(bench, special) -> None:
    task = bench.task(special["om2w_normal"])
    got = viewer.task_verdicts(bench.verdicts, bench.annotations, task)
    raters = [line.rater for line in got.verifiers]
    assert raters == [
        "uv_outcome_success",
        "uv_process",
        "mm_is_success",
        "verifier_is_success",
        "om2w_judge",
    ]
    assert [line.rater for line in got.references] == [
        "final_human_outcome_label",
        "majority_human_outcome_vote",
        "final_human_process_label",
    ]
    reviews = bench.annotations[bench.annotations.task_id == task.task_id]
    assert sorted(c.annotator for c in got.reviews) == sorted(reviews.annotator)
    assert got.has_informed and all(c.informed is not None for c in got.reviews)
    card = got.reviews[0]
    review = reviews[reviews.annotator == card.annotator].iloc[0]
    assert card.outcome_comment == review.outcome_comment
    assert card.informed.outcome_comment == review.informed_outcome_comment
    assert got.rubric is None and got.gpt.text
    assert got.uv_score == pytest.approx(float(task.uv_rubric_score))
    sign = "≥" if got.uv_score >= 0.8 else "<"
    assert f"{got.uv_score:.2f} {sign} 0.80" in got.uv_score_text()


def test_informed_label_comes_from_the_verdict_table(bench, special) -> None:
    task = bench.task(special["om2w_normal"])
    got = viewer.task_verdicts(bench.verdicts, bench.annotations, task)
    table = bench.verdicts
    for card in got.reviews:
        row = table[(table.task_id == task.task_id) & (table.rater == f"{card.annotator}@informed")]
        outcome = row[row.dimension == "outcome"]["label"].iloc[0]
        assert card.informed.outcome_label == (None if pd.isna(outcome) else int(outcome))


def test_internal_task_has_the_rubric_and_no_informed_stage(bench, special) -> None:
    task = bench.task(special["internal_normal"])
    got = viewer.task_verdicts(bench.verdicts, bench.annotations, task)
    assert not got.has_informed and all(c.informed is None for c in got.reviews)
    assert "om2w_judge" not in [line.rater for line in got.verifiers]
    rubric = got.rubric
    assert rubric is not None and rubric.items
    inner = json.loads(json.loads(task.gpt_eval_json)["gpt_response_text"])
    assert [i.criterion for i in rubric.items] == [i["criterion"] for i in inner["rubric_items"]]
    assert rubric.total_earned == pytest.approx(inner["rubric_total_earned_points"])
    assert sum(i.points for i in rubric.items) == pytest.approx(rubric.total_earned)
    # the total is the screenshot-grounded pass's (the score file's own rule)
    posts = [i["post_image_earned_points"] for i in inner["rubric_items"]]
    assert sum(posts) == pytest.approx(rubric.total_earned)
    assert rubric.outcome_reasoning == inner["outcome_reasoning"]
    frame = rubric.items_frame()
    assert list(frame.columns)[:5] == ["criterion", "earned", "max", "justification", "description"]
    assert rubric.passes == "two" and frame["screenshots"].notna().all()  # the demo: both


def test_uploaded_verifier_and_raw_labels_are_kept(bench, special) -> None:
    task = bench.task(special["internal_normal"])
    upload = pd.DataFrame(
        [
            {"split": INTERNAL, "task_id": task.task_id, "rater": "mine", "kind": "verifier",
             "annotator": None, "stage": None, "dimension": "outcome", "label": 1,
             "score": 0.9, "raw": None},
        ]
    )  # fmt: skip
    annotations = bench.annotations.copy()
    mask = annotations.task_id == task.task_id
    annotations.loc[mask, "human_judgement_outcome"] = " partial "
    # the viewer reads labels from the verdict table only: build it from these reviews
    rebuilt = verdicts.build(bench.tasks, annotations)
    table = pd.concat([rebuilt, upload], ignore_index=True)
    got = viewer.task_verdicts(table, annotations, task)
    assert got.verifiers[-1].rater == "mine" and got.verifiers[-1].text == "success"
    assert got.verifiers[-1].title == "mine, outcome"
    assert got.verifiers[-1].score == 0.9
    assert got.reviews[0].outcome_label is None and got.reviews[0].outcome_raw == "partial"
    # the verdict table is the only source of labels: raw reviews alone change nothing
    unchanged = viewer.task_verdicts(bench.verdicts, annotations, task)
    assert unchanged.reviews[0].outcome_raw is None
    assert unchanged.reviews[0].outcome_label in (0, 1)
    assert viewer.label_text(None, "partial") == "missing (partial)"
    assert viewer.label_text(0, "tie (stored as 0)") == "failure (tie (stored as 0))"


def test_broken_gpt_eval_json_is_reported_not_raised(bench, special) -> None:
    task = bench.task(special["internal_normal"]).copy()
    task["gpt_eval_json"] = '{"score": 1, "gpt_response_text": "{not json"}'
    got = viewer.task_verdicts(bench.verdicts, bench.annotations, task)
    assert got.rubric is None and got.gpt.problem
    task["gpt_eval_json"] = ""
    task["uv_rubric_score"] = float("nan")
    got = viewer.task_verdicts(bench.verdicts, bench.annotations, task)
    assert not got.gpt.evaluated and got.uv_score is None
    assert got.uv_score_text().startswith("missing")


def test_answer_flags(bench, special) -> None:
    task = bench.task(special["no_answer"])
    flags = viewer.answer_flags(task, parse_log(task.web_surfer_log))
    assert any("no answer" in f for f in flags)
    assert any("aborted" in f for f in flags) == bool(task.is_aborted)
    ok = bench.task(special["om2w_normal"])
    assert viewer.answer_flags(ok, parse_log(ok.web_surfer_log)) == []


# --------------------------------------------------------------------------- images


def test_check_png_accepts_a_png_and_rejects_bad_bytes() -> None:
    good = png((1440, 900))
    assert viewer.check_png(good, 0) == viewer.ShotCheck((1440, 900))
    assert "No screenshot" in viewer.check_png(good, None).problem
    assert "empty" in viewer.check_png(b"", 3).problem
    assert "empty" in viewer.check_png(None, 3).problem
    garbage = viewer.check_png(b"this is not a PNG", 4)
    assert garbage.size is None and garbage.problem.startswith("Screenshot 4 cannot be decoded")
    truncated = viewer.check_png(good[: len(good) // 2], 5)
    assert truncated.size is None and "cannot be decoded" in truncated.problem


def test_filmstrip_thumbnails_survive_corrupt_bytes() -> None:
    from lib.data.shots import THUMB_WIDTH, make_thumbs

    thumbs = make_thumbs([png((1440, 900)), b"junk", None, b""])
    assert Image.open(io.BytesIO(thumbs[0])).size == (THUMB_WIDTH, 125)
    assert thumbs[1:] == [None, None, None]  # the stepper draws its own placeholder


# --------------------------------------------------------------------------- the broken mirror


def test_make_broken_mirror_breaks_exactly_one_task(bench, mirror_dir, tmp_path) -> None:
    from lib.data.load import load_bench
    from lib.data.source import resolve

    task_id = special_tasks(bench)["om2w_normal"]
    broken = load_bench(resolve(str(make_broken_mirror(mirror_dir, tmp_path / "m", task_id))))
    task = broken.task(task_id)
    assert task.instruction.endswith(HOSTILE)
    assert viewer.check_png(broken.screenshot_png(task.split, int(task.row), 0), 0).problem is None
    for k in (1, 2):
        assert viewer.check_png(broken.screenshot_png(task.split, int(task.row), k), k).problem
    assert len(broken.tasks) == 260 and len(broken.annotations) == 369


# --------------------------------------------------------------------------- stepper payload


def _traj_of(log_lines: list[dict], shots: int) -> viewer.Trajectory:
    log = "\n".join(json.dumps(line) for line in log_lines)
    task = {"split": OM2W, "task_id": "t1", "row": 3, "n_screenshots_stored": shots}
    return viewer.load_trajectory({**task, "web_surfer_log": log})


def _line(tool: str, **args) -> dict:
    return {"action": tool, "url": "https://a.example/", "arguments": {"action": tool, **args}}


def test_stepper_data_has_every_step_with_its_action_fields() -> None:
    traj = _traj_of(
        [
            _line("left_click", coordinate=[100, 200], thoughts="click it"),
            _line("type", coordinate=[10, 20], text="hello", press_enter=True),
            _line("scroll", pixels=-300),
            _line("key", keys=["Control", "a"]),
            _line("left_click", coordinate=[5000, 20]),
        ],
        shots=6,
    )
    urls = [f"/media/{k}.png" for k in range(6)]
    data = viewer.stepper_data(traj, 9, urls, [None] * 6)
    assert data["task"] == "t1" and data["step"] == 5  # clamped into 0..5
    assert [s["p"] for s in data["steps"]] == list(range(6))
    assert [s["shot"] for s in data["steps"]] == list(range(6))
    click, typed, scroll, key, off, end = data["steps"]
    assert click["xy"] == [100, 200] and click["thoughts"] == "click it" and not click["off"]
    assert click["alt"] == "Step 1 of 6, screenshot 0, action: left_click at (100, 200)"
    assert typed["text"] == "hello" and typed["enter"] is True and typed["xy"] == [10, 20]
    assert scroll["scroll"] == -300 and scroll["xy"] is None
    assert key["keys"] == "Control+a"
    assert off["off"] is True and off["xy"] == [5000, 20]
    assert "index" not in end and "after the agent's last action" in end["note"]
    assert json.loads(click["args"])["coordinate"] == [100, 200]
    assert data["thumbs"] == urls and data["jump"] is None


def test_stepper_data_caps_long_text_and_keeps_markup_as_data() -> None:
    hostile = "<img src=x onerror=alert(1)> [a](javascript:x) " + "T" * 30_000
    traj = _traj_of([_line("left_click", coordinate=[1, 2], thoughts=hostile)], shots=2)
    step = viewer.stepper_data(traj, 0, ["/media/a.png", None], [None, "bad"])["steps"][0]
    assert step["thoughts"].startswith("<img src=x onerror=alert(1)> [a](javascript:x) ")
    assert len(step["thoughts"]) < 20_100 and step["thoughts"].endswith("more characters)")


def test_drag_start_is_read_from_the_arguments() -> None:
    traj = _traj_of(
        [_line("left_click_drag", start_coordinate=[10, 10], coordinate=[300, 400])], shots=1
    )
    step = viewer.stepper_data(traj, 0, ["/m.png"], [None])["steps"][0]
    assert step["from"] == [10, 10] and step["xy"] == [300, 400]


def test_log_only_payload_has_no_screenshots() -> None:
    traj = _traj_of([_line("wait", time=2), _line("terminate", status="success")], shots=0)
    data = viewer.stepper_data(traj, 1, [], [])
    assert data["shots"] == [] and all(s["shot"] is None for s in data["steps"])
    assert data["steps"][1]["status"] == "success"


def test_hub_viewer_href() -> None:
    from lib.viewer import links

    href = links.hub_viewer_href("microsoft/CUAVerifierBench", "fara7b_om2w_browserbase", 12)
    assert href == (
        "https://huggingface.co/datasets/microsoft/CUAVerifierBench/viewer/trajectories/"
        "fara7b_om2w_browserbase?row=12"
    )
    odd = links.hub_viewer_href("a b/c?d", "x/../y", 1)
    assert "a%20b/c%3Fd" in odd and "x%2F..%2Fy" in odd
