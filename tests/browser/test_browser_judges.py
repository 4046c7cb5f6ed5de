"""The Judges page in a real browser: a deep link, the heatmap, a click on a cell, the links."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import full_page_screenshot, no_error_shown, shot_path, wait_for_run

pytestmark = pytest.mark.browser


def test_judges_deep_link_heatmap_click_and_links(app_url: str, page) -> None:
    page.goto(f"{app_url}/Judges?split=fara7b_om2w_browserbase")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="Judges")).to_be_visible()

    heatmap = page.get_by_test_id("stVegaLiteChart").first
    cells = heatmap.locator('path[aria-roledescription="rect mark"]')
    expect(cells.first).to_be_attached()
    assert cells.count() > 50

    # The off-diagonal tasks: the grid's accessible table carries each link cell's URL.
    grid = page.get_by_test_id("stDataFrame").first
    link = grid.locator("td").filter(has_text="Trajectory?").first
    expect(link).to_be_attached()
    href = link.text_content() or ""
    assert href.startswith("Trajectory?") and "task=" in href

    full_page_screenshot(page, shot_path("judges.png"))

    # Click a reviewer-vs-reviewer cell (near its corner, away from the text).
    labels = cells.evaluate_all("els => els.map(e => e.getAttribute('aria-label') || '')")
    pattern = re.compile(r"A: (Judge\d+); B: (Judge\d+);")
    index, match = next((i, m) for i, t in enumerate(labels) if (m := pattern.search(t)))
    a, b = match.groups()
    box = cells.nth(index).bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 3, box["y"] + 3)
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_text(f"A = {a}", exact=False).first).to_be_visible()
    page.wait_for_url(re.compile(rf"a={a}&b={b}|b={b}.*a={a}"))
    expect(page.get_by_role("combobox", name="Rater A (rows)")).to_have_value(re.compile(a))

    # The split of the link reaches the page (the sidebar binds `?split=`).
    expect(page.get_by_role("combobox", name="Split")).to_have_value("fara7b_om2w_browserbase")
    assert "Split: om2w" in page.content()
