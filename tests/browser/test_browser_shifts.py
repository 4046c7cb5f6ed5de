"""Real browser: the Shifts page as a deep link draws its charts and links to the viewer."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.helpers.browser import full_page_screenshot, no_error_shown, shot_path, wait_for_run

pytestmark = pytest.mark.browser

OM2W = "fara7b_om2w_browserbase"


def test_shifts_deep_link_charts_and_viewer_links(app_url: str, page: Page) -> None:
    page.goto(f"{app_url}/Shifts?split={OM2W}")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="Shifts: blind → informed")).to_be_visible()
    expect(page.get_by_role("combobox", name="Split")).to_have_value(OM2W)

    charts = page.get_by_test_id("stVegaLiteChart")
    expect(charts).to_have_count(2)
    for chart in charts.all():
        chart.scroll_into_view_if_needed()
        expect(chart.locator("canvas, svg").first).to_be_attached()
        box = chart.bounding_box()
        assert box is not None and box["height"] > 100, box  # drawn, not an empty frame

    # The flipped cases: the grid's accessible table holds each link's URL.
    grid = page.get_by_test_id("stDataFrame").last
    grid.scroll_into_view_if_needed()
    link = grid.locator("td", has_text="Trajectory?").first
    expect(link).to_be_attached()
    href = link.inner_text()
    assert "Trajectory?" in href and "task=" in href and f"split={OM2W}" in href
    full_page_screenshot(page, shot_path("shifts.png"))


def test_dimension_choice_goes_into_the_url(app_url: str, page: Page) -> None:
    page.goto(f"{app_url}/Shifts?split={OM2W}&dimension=process")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="Process labels of all reviewers")).to_be_visible()
    dimension = page.get_by_test_id("stMain").get_by_test_id("stRadio").first
    dimension.get_by_text("Outcome").click()
    wait_for_run(page)
    expect(page.get_by_role("heading", name="Outcome labels of all reviewers")).to_be_visible()
    assert "dimension=" not in page.url  # the default is not written
    dimension.get_by_text("Process").click()
    wait_for_run(page)
    page.wait_for_url("**dimension=process**")
    no_error_shown(page)
