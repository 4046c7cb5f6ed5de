"""Real browser: the home page, the sidebar split in the URL, and cold-start deep links."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.helpers.browser import (
    MENU_LINK,
    PAGE_LINKS,
    no_error_shown,
    streamlit_server,
    wait_for_run,
)
from tests.helpers.slack import scaled_ms

pytestmark = pytest.mark.browser


def test_home_page_loads(page: Page, app_url: str) -> None:
    page.goto(app_url)
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="CUAVerifierBench explorer")).to_be_visible()
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("Local mirror")).to_be_visible()
    expect(sidebar.get_by_text("om2w: 106 trajectories, 215 reviews")).to_be_visible()
    expect(page.locator(MENU_LINK).first).to_be_visible()


def test_home_by_name_is_the_home_page(page: Page, app_url: str) -> None:
    """`/Home` (a shared link to the home page) shows it, not a "Page not found" dialog."""
    page.goto(f"{app_url}/Home?split=internal")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="CUAVerifierBench explorer")).to_be_visible()
    expect(page.get_by_role("combobox", name="Split")).to_have_value("internal")
    expect(page.locator(MENU_LINK)).to_have_count(PAGE_LINKS)
    page.locator(MENU_LINK).filter(has_text="Agreement").click()
    wait_for_run(page)
    assert "/Agreement" in page.url
    no_error_shown(page)


def test_split_choice_goes_into_the_url_and_survives_navigation(page: Page, app_url: str) -> None:
    page.goto(app_url)
    wait_for_run(page)
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").click()
    page.get_by_role("option", name="internal").click()
    wait_for_run(page)
    assert "split=internal" in page.url
    page.locator(MENU_LINK).filter(has_text="Agreement").click()
    wait_for_run(page)
    assert "/Agreement" in page.url and "split=internal" in page.url
    expect(page.get_by_role("combobox", name="Split")).to_have_value("internal")
    no_error_shown(page)


def test_cold_start_deep_links(browser, mirror_dir: Path) -> None:
    """A fresh server whose first requests are deep links: no 'Page not found' dialog,
    the shared sidebar is there and the split from the URL is applied."""
    with streamlit_server({"CUAVB_DATA": str(mirror_dir)}) as url:
        for path in ("Home", "Agreement", "Judges", "Shifts"):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(scaled_ms(60_000))
            page.goto(f"{url}/{path}?split=internal")
            wait_for_run(page)
            no_error_shown(page)
            expect(page.get_by_role("combobox", name="Split")).to_have_value("internal")
            expect(page.locator(MENU_LINK)).to_have_count(PAGE_LINKS)
            assert f"/{path}" in page.url
            context.close()
