"""Real browser: open Audit, re-label three tasks, download the labels, upload them in a
fresh browser context, and see the same Agreement numbers against "your labels" (the
metrics CSV of both sessions is byte-identical), and the same numbers from Copy link
opened in a fresh context (the labels travel in `v=`); screenshots of Audit at 1400 and
390 px."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers.browser import (
    copied_link,
    full_page_screenshot,
    no_error_shown,
    shot_path,
    wait_for_run,
)
from tests.helpers.slack import scaled_ms

pytestmark = pytest.mark.browser

OM2W = "fara7b_om2w_browserbase"
LABELS = ("success", "failure", "unsure")


def _relabel(page: Page, index: int, label: str) -> None:
    form = page.get_by_test_id("stForm")
    box = form.get_by_role("combobox", name="Task and dimension", exact=True)
    box.scroll_into_view_if_needed()
    options = page.get_by_role("option")
    for _ in range(10):  # a click during a rerun may not open the list: try again
        box.click()
        try:
            options.nth(index).wait_for(timeout=scaled_ms(5_000))
            break
        except PlaywrightTimeout:  # the list did not open: click again
            page.keyboard.press("Escape")
    options.nth(index).click()
    form.get_by_test_id("stRadio").get_by_text(label, exact=True).click()
    form.get_by_test_id("stTextInput").locator("input").fill(f"note {index}")
    form.get_by_role("button", name="Save my label").click()
    wait_for_run(page)
    expect(page.get_by_text(f"{index + 1} label(s) in this session")).to_be_visible(
        timeout=scaled_ms(30_000)
    )


def _agreement_csv(page: Page, tmp: Path, name: str) -> bytes:
    """The Agreement page of this browser session (the sidebar's link: a page load would
    start a new session), reference "your labels", its metrics CSV."""
    page.get_by_test_id("stSidebar").get_by_role("link", name="Agreement").click()
    page.wait_for_url("**/Agreement*")
    wait_for_run(page)
    no_error_shown(page)
    page.get_by_test_id("stSelectbox").filter(has_text="Human reference").click()
    page.get_by_role("option", name="Your labels (outcome; final label elsewhere)").click()
    wait_for_run(page)
    assert "reference=your_labels" in page.url, page.url
    expect(page.get_by_text("3 of 106 tasks are yours").first).to_be_visible(
        timeout=scaled_ms(60_000)
    )
    with page.expect_download(timeout=scaled_ms(60_000)) as info:
        page.get_by_text("Download the metrics (CSV)").click()
    path = tmp / name
    info.value.save_as(path)
    return path.read_bytes()


def _copied_link_csv(page: Page, tmp: Path) -> bytes:
    """Copy link on this Agreement page (the labels travel in `v=`), opened in a fresh
    browser context: the same metrics CSV against "your labels"."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copied = copied_link(page)
    page.keyboard.press("Escape")
    assert "v=" in copied and "reference=your_labels" in copied, copied
    other = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = other.new_page()
        fresh.goto(copied)
        wait_for_run(fresh)
        no_error_shown(fresh)
        expect(fresh.get_by_text("3 of 106 tasks are yours").first).to_be_visible(
            timeout=scaled_ms(60_000)
        )
        with fresh.expect_download(timeout=scaled_ms(60_000)) as info:
            fresh.get_by_text("Download the metrics (CSV)").click()
        path = tmp / "linked.csv"
        info.value.save_as(path)
        return path.read_bytes()
    finally:
        other.close()


def test_relabel_download_upload_same_numbers(app_url: str, page: Page, tmp_path: Path) -> None:
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{app_url}/Audit?split={OM2W}&reason=tie&dimension=outcome")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="Audit: the contested human labels")).to_be_visible()
    for i, label in enumerate(LABELS):
        _relabel(page, i, label)
    no_error_shown(page)
    full_page_screenshot(page, shot_path("audit_1400.png"))

    with page.expect_download(timeout=scaled_ms(60_000)) as info:
        page.get_by_text("Download my labels").click()
    labels = tmp_path / "my_labels.csv"
    info.value.save_as(labels)
    rows = labels.read_text().splitlines()
    assert rows[0].replace('"', "") == "task_id,dimension,label,note" and len(rows) == 4
    assert {r.split(",")[2].strip('"') for r in rows[1:]} == set(LABELS)

    first = _agreement_csv(page, tmp_path, "first.csv")
    assert b"Your labels" in first or b"your_labels" in first
    assert _copied_link_csv(page, tmp_path) == first  # Copy link reopens them

    other = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = other.new_page()
        fresh.goto(f"{app_url}/Audit?split={OM2W}")
        wait_for_run(fresh)
        no_error_shown(fresh)
        expect(fresh.get_by_text("0 label(s) in this session")).to_be_visible()
        fresh.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(labels))
        expect(fresh.get_by_text("Read 3 label(s) from the file.")).to_be_visible(
            timeout=scaled_ms(60_000)
        )
        wait_for_run(fresh)
        expect(fresh.get_by_text("3 label(s) in this session")).to_be_visible()
        fresh.set_viewport_size({"width": 390, "height": 900})  # a phone, the same session
        full_page_screenshot(fresh, shot_path("audit_390.png"))
        fresh.set_viewport_size({"width": 1400, "height": 1000})  # the sidebar's links again
        second = _agreement_csv(fresh, tmp_path, "second.csv")
    finally:
        other.close()
    assert second == first
