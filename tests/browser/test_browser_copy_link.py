"""Real browser: Copy link gives the view as the browser has it, `step=` included.

The stepper changes `step=` with `history.pushState` and no server run, so the link is
built in the browser at the click (`ui.copy_link`). Locally the copied link opens the
same step in a fresh context; with the Space setting (`SPACE_HOST`) it is the Space's
direct address, which here points at the test server once its origin is swapped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.helpers.browser import copied_link, no_error_shown, streamlit_server, wait_for_run
from tests.helpers.slack import scaled_ms
from tests.unit.test_viewer import special_tasks

pytestmark = pytest.mark.browser

COUNTER = ".stp .counter"
SPACE_HOST = "someone-cuavb-explorer.hf.space"


def _step_in_url(page: Page) -> str | None:
    return page.evaluate("() => new URLSearchParams(location.search).get('step')")


def _copied_at_step_3(browser: Browser, app_url: str, task_id: str) -> str:
    """Open the task at step 1, step twice in the browser, press Copy link; the link."""
    context = browser.new_context(
        viewport={"width": 1400, "height": 900}, permissions=["clipboard-read", "clipboard-write"]
    )
    try:
        page = context.new_page()
        page.set_default_timeout(scaled_ms(60_000))
        page.goto(f"{app_url}/Trajectory?task={task_id}&step=1")
        wait_for_run(page)
        expect(page.locator(COUNTER)).to_be_visible()
        no_error_shown(page)
        for _ in range(2):
            page.locator(".stp button.nav", has_text="Next").click()
        page.wait_for_function("() => new URLSearchParams(location.search).get('step') === '3'")
        copied = copied_link(page)
        shown = page.get_by_test_id("cuavbCopyLinkText").text_content()
        assert copied == shown, (copied, shown)
        return copied
    finally:
        context.close()


def _opens_at_step_3(browser: Browser, link: str, task_id: str) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(scaled_ms(60_000))
        page.goto(link)
        wait_for_run(page)
        expect(page.locator(".stp img.shotimg[data-step='3']")).to_be_visible()
        assert page.locator(".stp input.slider").input_value() == "3"
        assert _step_in_url(page) == "3"
        assert parse_qs(urlsplit(page.url).query)["task"] == [task_id]
    finally:
        context.close()


@pytest.fixture(scope="module")
def task_id(bench) -> str:
    return special_tasks(bench)["om2w_normal"]


def test_copy_link_keeps_the_browser_step(browser: Browser, app_url: str, task_id) -> None:
    link = _copied_at_step_3(browser, app_url, task_id)
    assert link.startswith(f"{app_url}/Trajectory?"), link
    assert parse_qs(urlsplit(link).query) == {"task": [task_id], "step": ["3"]}
    _opens_at_step_3(browser, link, task_id)


@pytest.fixture(scope="module")
def space_url(mirror_dir: Path) -> Iterator[str]:
    env = {"CUAVB_DATA": str(mirror_dir), "SPACE_HOST": SPACE_HOST}
    with streamlit_server(env) as url:
        yield url


def test_copy_link_in_a_space_is_the_direct_address_with_the_step(
    browser: Browser, space_url: str, task_id
) -> None:
    link = _copied_at_step_3(browser, space_url, task_id)
    assert link.startswith(f"https://{SPACE_HOST}/Trajectory?"), link
    parts = urlsplit(link)
    assert parse_qs(parts.query) == {"task": [task_id], "step": ["3"]}
    _opens_at_step_3(browser, f"{space_url}{parts.path}?{parts.query}", task_id)
