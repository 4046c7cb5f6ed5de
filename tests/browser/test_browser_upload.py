"""Real browser: upload the mirror's sample predictions, then find them on the Agreement page."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.helpers.browser import full_page_screenshot, no_error_shown, shot_path, wait_for_run

pytestmark = pytest.mark.browser


def test_upload_flow_and_the_verifier_on_another_page(
    app_url: str, page: Page, mirror_dir: Path
) -> None:
    page.goto(f"{app_url}/Your_verifier")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_text("No verifier uploaded in this session yet")).to_be_visible()

    sample = mirror_dir / "sample_predictions.csv"
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(sample))
    expect(page.get_by_text("Against the Universal Verifier, on the same tasks")).to_be_visible(
        timeout=60_000
    )
    wait_for_run(page)
    no_error_shown(page)
    success = page.get_by_test_id("stAlertContentSuccess")
    expect(success).to_contain_text("520 rows read, 520 used, 0 dropped")
    expect(page.get_by_text("tasks of each split the file labels")).to_be_visible()
    expect(
        page.get_by_text("Tasks where your verifier and the Universal Verifier disagree")
    ).to_be_visible()
    full_page_screenshot(page, shot_path("upload.png"))

    if not (Path(__file__).parents[2] / "pages/1_Agreement.py").exists():
        pytest.skip("the Agreement page is not built yet")
    page.get_by_test_id("stSidebar").get_by_role("link", name="Agreement").click()
    page.wait_for_url("**/Agreement*")
    wait_for_run(page)
    no_error_shown(page)
    # the same browser session: the uploaded verifier is one more rater there
    expect(page.get_by_text("my_verifier_v1").first).to_be_attached(timeout=30_000)

    other = page.context.browser.new_context()  # another user
    try:
        fresh = other.new_page()
        fresh.goto(f"{app_url}/Agreement")
        wait_for_run(fresh)
        no_error_shown(fresh)
        assert "my_verifier_v1" not in fresh.content()
    finally:
        other.close()
