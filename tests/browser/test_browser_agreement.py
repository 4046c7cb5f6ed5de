"""The Agreement page in a real browser: charts, table, links, URL state, a screenshot."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.helpers.browser import full_page_screenshot, no_error_shown, shot_path, wait_for_run
from ui.agreement import detail_tables

pytestmark = pytest.mark.browser


def test_agreement_page_renders_and_links_to_the_viewer(app_url: str, page: Page) -> None:
    page.goto(f"{app_url}/Agreement?split=fara7b_om2w_browserbase")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="Agreement with the human reviewers")).to_be_visible()
    charts = page.get_by_test_id("stVegaLiteChart")
    expect(charts.first).to_be_visible()
    assert charts.count() >= 3  # forest, confusion matrices, ROC
    expect(charts.first.locator("canvas, svg").first).to_be_visible()
    frames = page.get_by_test_id("stDataFrame")
    # metrics (main, and the tables of its other columns), human parity (and per reviewer),
    # false positives, false negatives, the corrected success rate (issue 40)
    expect(frames).to_have_count(6 + len(detail_tables()))
    expect(frames.first).to_contain_text("Universal Verifier, outcome")  # the grid's a11y table
    table_html = frames.first.inner_html()
    assert "kappa" in table_html
    assert "both (pooled)" not in table_html  # the split from the link is in force
    assert "split=fara7b_om2w_browserbase" in page.url
    expect(page.get_by_text("Download the metrics (CSV)")).to_be_visible()

    # a disagreement cell links to the trajectory viewer; clicking it opens the task
    false_positives = frames.nth(3 + len(detail_tables()))  # after the two parity tables
    false_positives.scroll_into_view_if_needed()
    link = r"Trajectory\?split=[a-z0-9_]+&amp;task=[^<\"&]+"  # why= follows (issue 36)
    hrefs: list[str] = []
    for _ in range(60):  # the grid fills its accessible table after it is drawn (slow under load)
        hrefs = re.findall(link, false_positives.inner_html())
        if hrefs:
            break
        page.wait_for_timeout(250)
    assert hrefs, "no link to the trajectory viewer in the false-positive list"
    box = false_positives.bounding_box()
    assert box is not None
    with page.context.expect_page() as opened:
        page.mouse.move(box["x"] + 30, box["y"] + 52)
        page.wait_for_timeout(300)
        page.mouse.click(box["x"] + 32, box["y"] + 53)
    viewer = opened.value
    viewer.wait_for_load_state()
    assert "/Trajectory?" in viewer.url and "task=" in viewer.url
    assert hrefs[0].split("task=")[1] in viewer.url
    viewer.close()

    page.mouse.move(5, 5)  # no hover toolbar in the picture
    full_page_screenshot(page, shot_path("agreement.png"))


def test_choices_go_into_the_url(app_url: str, page: Page) -> None:
    page.goto(f"{app_url}/Agreement?threshold=0.6&verifier=uv_process")
    wait_for_run(page)
    no_error_shown(page)
    heading = "Universal Verifier, process (rubric score ≥ 0.6) against Humans, final process"
    expect(page.get_by_role("heading", name=heading)).to_be_visible()
    page.get_by_test_id("stSelectbox").filter(has_text="Human reference").click()
    page.get_by_role("option", name="Humans, blind majority").click()
    wait_for_run(page)
    assert "reference=majority_human_outcome_vote" in page.url, page.url
    assert "threshold=0.60" in page.url and "verifier=uv_process" in page.url, page.url
    page.reload()  # the link alone reproduces the view
    wait_for_run(page)
    expect(page.get_by_role("combobox", name="Human reference for outcome verdicts")).to_have_value(
        "Humans, blind majority"
    )


def test_a_reviewer_of_another_split_is_explained(app_url: str, page: Page) -> None:
    page.goto(f"{app_url}/Agreement?split=internal&reference=Judge3")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_test_id("stAlert")).to_contain_text(
        "The link asks for reference Judge3: that reviewer judged no task in split internal"
    )
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_contain_text("internal")
    table_html = table.inner_html()
    assert "both (pooled)" not in table_html and "internal" in table_html
