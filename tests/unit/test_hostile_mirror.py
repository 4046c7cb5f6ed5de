"""The hostile mirror fixture loads through the app's real loader, payloads intact."""

from __future__ import annotations

from pathlib import Path

import pytest

from lib.vocab import SPLITS
from tests.helpers.hostile_images import huge_png
from tests.helpers.hostile_mirror import (
    BIG_COMMENT,
    BIG_INSTRUCTION,
    HOSTILE_TASK_SUFFIX,
    build_hostile_mirror,
)
from tests.helpers.hostile_payloads import MARK, PLANTED_HOST


@pytest.fixture(scope="module")
def hostile_bench(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    from lib.data.load import load_bench
    from lib.data.source import resolve

    path = build_hostile_mirror(mirror_dir, tmp_path_factory.mktemp("hostile") / "mirror")
    assert (path / "README.md").read_text() == (mirror_dir / "README.md").read_text()
    return load_bench(resolve(str(path)))


def test_every_text_column_of_the_tasks_carries_payloads(hostile_bench) -> None:
    tasks = hostile_bench.tasks
    for column in ("instruction", "final_answer", "init_url", "web_surfer_log", "gpt_eval_json"):
        texts = tasks[column].dropna().astype(str)
        assert texts.str.contains(MARK, regex=False).mean() > 0.5, column
        assert texts.str.contains(PLANTED_HOST, regex=False).any(), column
    assert (tasks["instruction"] == BIG_INSTRUCTION).sum() == len(SPLITS)
    assert tasks["task_id"].str.endswith(HOSTILE_TASK_SUFFIX).sum() == len(SPLITS)


def test_reviewers_comments_and_informed_answers_carry_payloads(hostile_bench) -> None:
    notes = hostile_bench.annotations
    assert notes["annotator"].str.contains(MARK, regex=False).all()
    for column in ("outcome_comment", "informed_process_comment"):
        assert notes[column].str.contains(MARK, regex=False).mean() > 0.5, column
    assert (notes["outcome_comment"] == BIG_COMMENT).sum() == len(SPLITS)
    informed = notes["informed_outcome_agreement"].astype(str)
    assert informed.str.contains(MARK, regex=False).any()
    hostile_tasks = notes["task_id"].str.endswith(HOSTILE_TASK_SUFFIX)
    assert hostile_tasks.any()  # annotations still join to the renamed tasks
    assert set(notes.loc[hostile_tasks, "task_id"]) <= set(hostile_bench.tasks["task_id"])


def test_the_image_cases_are_stored_in_the_first_trajectory(hostile_bench) -> None:
    tasks = hostile_bench.tasks
    first = tasks[tasks["task_id"].str.endswith(HOSTILE_TASK_SUFFIX)].iloc[0]
    png = hostile_bench.screenshot_png(first["split"], int(first["row"]), 0)
    assert png == huge_png()
    tiny = hostile_bench.screenshot_png(first["split"], int(first["row"]), 2)
    assert tiny is not None and tiny.startswith(b"\x89PNG")


def test_reviewer_rows_reach_the_verdict_table(hostile_bench) -> None:
    raters = hostile_bench.verdicts["rater"].astype(str)
    assert raters.str.contains(MARK, regex=False).any()
