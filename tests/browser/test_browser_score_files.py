"""Real browser (issue 41): upload the sample zip of score files, open a task where the
stricter backbone lowered a criterion: the rubric card shows both passes for the uploaded
verifier beside the Universal Verifier's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from lib.uploads.score_sample import NAME, sample_files
from tests.helpers import score_zips as Z
from tests.helpers.browser import full_page_screenshot, no_error_shown, shot_path, wait_for_run

pytestmark = pytest.mark.browser


def _lowered_task(bench) -> tuple[str, int]:
    """A task where the stricter backbone lowered a criterion and gives a failure step."""
    cells = Z.internal_cells(bench.tasks)
    for name, text in sample_files(bench.tasks).items():
        task_id = name.removesuffix(".json")
        inner = json.loads(text)
        new = inner["rubric_items"]
        old = json.loads(json.loads(cells[task_id])["gpt_response_text"])["rubric_items"]
        point = inner["error_taxonomy"].get("first_point_of_failure")
        if (
            point
            and point["first_failure_step"] > 0
            and any(
                a["post_image_earned_points"] < b["post_image_earned_points"]
                for a, b in zip(new, old, strict=True)
            )
        ):
            return task_id, point["first_failure_step"]
    raise AssertionError("the sample lowers no criterion of a task it fails")


def test_upload_the_sample_zip_and_see_both_rubrics(
    app_url: str, page: Page, bench, tmp_path: Path
) -> None:
    from lib.uploads.score_sample import sample_zip

    path = tmp_path / f"{NAME}.zip"
    path.write_bytes(sample_zip(bench.tasks))
    task_id, failure = _lowered_task(bench)
    page.goto(f"{app_url}/Your_verifier")
    wait_for_run(page)
    no_error_shown(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
    success = page.get_by_test_id("stAlertContentSuccess")
    expect(success).to_contain_text("(score files)", timeout=60_000)
    wait_for_run(page)
    no_error_shown(page)
    full_page_screenshot(page, shot_path("score_files_upload.png"))

    page.get_by_test_id("stSidebar").get_by_role("link", name="Trajectory").click()
    wait_for_run(page)
    split = page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first
    split.click()
    page.get_by_role("option", name="internal", exact=False).first.click()
    wait_for_run(page)
    picker = page.get_by_test_id("stMain").get_by_test_id("stSelectbox").first
    picker.click()
    page.keyboard.type(task_id)
    page.get_by_role("option", name=task_id, exact=False).first.click()
    wait_for_run(page)
    no_error_shown(page)
    mine = page.get_by_text(f"{NAME} (yours) rubric:")
    expect(mine).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Universal Verifier rubric:")).to_be_visible()
    expect(page.get_by_text("Stricter backbone: the screenshots do not fully show it").first
           ).to_be_attached()  # fmt: skip
    mine.scroll_into_view_if_needed()
    full_page_screenshot(page, shot_path("score_files_rubric.png"))

    # the failure step: marked on the filmstrip; its button moves the stepper there
    film = page.locator(f".stp .strip button.film[data-step='{failure}'] .failmark")
    expect(film).to_have_text(f"⚑ {NAME} (yours): the agent went wrong here")
    expect(page.locator(".stp .strip .failmark")).to_have_count(1)
    page.locator(f".stp button.failbtn[data-failure-step='{failure}']").click()
    expect(page.locator(f".stp .strip button.film[data-step='{failure}']")).to_have_attribute(
        "aria-current", "step"
    )
    page.wait_for_function(
        "(s) => new URLSearchParams(location.search).get('step') === s", arg=str(failure)
    )
    page.locator(".stp").first.scroll_into_view_if_needed()
    page.screenshot(path=str(shot_path("score_files_failure_step.png")))

    # Inside the verifier: the uploaded verifier is a choice; its sections are drawn
    page.get_by_test_id("stSidebar").get_by_role("link", name="Inside the verifier").click()
    wait_for_run(page)
    chooser = page.get_by_test_id("stMain").get_by_test_id("stSelectbox").first
    chooser.click()
    page.get_by_role("option", name=f"{NAME} (yours)").click()
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_text(f"{NAME} (yours) scores each rubric criterion")).to_be_visible()
    expect(page.get_by_role("heading", name=f"{NAME} (yours)")).to_be_visible()
    full_page_screenshot(page, shot_path("score_files_inside.png"))
