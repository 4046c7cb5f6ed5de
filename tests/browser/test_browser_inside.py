"""Real browser: the Inside the verifier page as a deep link (a threshold in the URL)
draws both sections and both quadrants, and links a cell's tasks to the viewer."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.helpers.browser import no_error_shown, wait_for_run

pytestmark = pytest.mark.browser


def test_inside_deep_link_quadrants_and_viewer_links(app_url: str, page: Page) -> None:
    page.goto(f"{app_url}/Inside_the_verifier?split=internal&threshold=0.65")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="Inside the verifier")).to_be_visible()
    expect(page.get_by_role("heading", name="What the screenshots bought")).to_be_visible()
    expect(page.get_by_text(re.compile(r"uv_rubric_score ≥ 0\.65"))).to_be_visible()
    charts = page.get_by_test_id("stVegaLiteChart")
    expect(charts).to_have_count(2)
    for chart in charts.all():
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        assert box is not None and box["height"] > 100, box  # drawn, not an empty frame
    cell = page.get_by_test_id("stExpander").first
    cell.scroll_into_view_if_needed()
    cell.get_by_text(re.compile(r"sound process, success \(\d+\)")).click()
    grid = cell.get_by_test_id("stDataFrame")
    grid.scroll_into_view_if_needed()
    link = grid.locator("td", has_text="Trajectory?").first
    expect(link).to_be_attached()
    href = link.inner_text()
    assert href.startswith("Trajectory?split=internal&task=")
    assert "threshold=0.65" in page.url
