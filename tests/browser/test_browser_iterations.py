"""Real browser: upload the sample history, see the loop at 1400 and 390 px, open an
unstable task in the viewer and find every run's verdict there; Copy link reopens the loop
in a fresh context (the versions and runs travel in `v=`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from lib.analysis import iterations as it
from tests.helpers.browser import (
    copied_link,
    full_page_screenshot,
    no_error_shown,
    shot_path,
    wait_for_run,
)
from tests.helpers.slack import scaled_ms

pytestmark = pytest.mark.browser


CHOICES = {  # label -> the option chosen before Copy link (`ui.params.ITERATIONS`)
    "Reference": "Humans, blind majority",
    "Split of the versions": "internal",
    "From": "3. v3-screenshots",
    "To": "7. v7-outcome-first",
}


def _choose(page: Page) -> dict[str, str]:
    """Set the section's Reference, Split, From and To; returns what the boxes show."""
    for label, option in CHOICES.items():
        box = page.get_by_role("combobox", name=label, exact=True)
        wanted = page.get_by_role("option", name=option, exact=True)
        for _ in range(5):  # a click right after the previous choice's rerun may be swallowed
            box.scroll_into_view_if_needed()
            box.click()
            try:
                wanted.wait_for(timeout=scaled_ms(5_000))
                break
            except PlaywrightTimeout:
                page.keyboard.press("Escape")
        wanted.click()
        wait_for_run(page)
        expect(box).to_have_value(option, timeout=scaled_ms(60_000))
    return _shown_choices(page)


def _shown_choices(page: Page) -> dict[str, str]:
    return {
        label: page.get_by_role("combobox", name=label, exact=True).input_value()
        for label in CHOICES
    }


def _copy_link_reopens_the_loop(page: Page) -> None:
    """Copy link (the sidebar's) opened in a fresh browser context: the versions and runs
    travel in `v=` and the section's choices in `iter_*=`, so the same loop is drawn there
    with the same Reference, Split, From and To."""
    chosen = _choose(page)
    changes = page.get_by_text(re.compile(r"^On \d+ tasks both versions")).inner_text()
    loop = page.get_by_text(re.compile(r"^10 versions of")).inner_text()  # its noise floor
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copied = copied_link(page)
    page.keyboard.press("Escape")
    assert "v=" in copied, copied
    for name in ("iter_reference", "iter_split", "iter_from", "iter_to"):
        assert f"{name}=" in copied, (name, copied[:300])
    other = page.context.browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        fresh = other.new_page()
        fresh.goto(copied)
        title = fresh.get_by_text("Iterations: versions and repeated runs")
        expect(title).to_be_visible(timeout=scaled_ms(90_000))
        wait_for_run(fresh)
        no_error_shown(fresh)
        expect(fresh.get_by_text(re.compile(r"^10 versions of"))).to_have_text(
            loop, timeout=scaled_ms(60_000)
        )
        assert _shown_choices(fresh) == chosen
        expect(fresh.get_by_text(re.compile(r"^On \d+ tasks both versions"))).to_have_text(changes)
    finally:
        other.close()


@pytest.mark.parametrize("width", [1400, 390])
def test_the_loop_and_an_unstable_task(
    app_url: str, page: Page, bench, tmp_path: Path, width: int
) -> None:
    sample = tmp_path / "sample_history.csv"
    it.sample_history(bench.verdicts).to_csv(sample, index=False)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{app_url}/Your_verifier")
    wait_for_run(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(sample))
    title = page.get_by_text("Iterations: versions and repeated runs")
    expect(title).to_be_visible(timeout=scaled_ms(90_000))
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_text("Noise floor: 0.023")).to_be_visible()
    reasons = page.get_by_test_id("stMarkdownContainer").filter(
        has_text=re.compile(r"^Not committed: v")
    )
    for reason in (it.FPR_ROSE, it.BELOW_FLOOR, it.KAPPA_FELL):
        expect(reasons).to_contain_text(reason)
    chart = page.get_by_test_id("stVegaLiteChart").first
    chart.scroll_into_view_if_needed()
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box is not None and box["width"] <= width and box["height"] > 150
    chart.screenshot(path=str(shot_path(f"iterations_chart_{width}.png")))
    full_page_screenshot(page, shot_path(f"iterations_{width}.png"))
    if width == 1400:
        _copy_link_reopens_the_loop(page)

    link = page.get_by_role("link", name="every version's verdict").first
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_url("**/Trajectory*", timeout=scaled_ms(60_000))
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_text("Your verifiers' versions and runs on this task")).to_be_visible(
        timeout=scaled_ms(60_000)
    )
    expect(page.get_by_text("12 version-run verdict(s)")).to_be_visible()
    expect(page.get_by_text("The humans' final outcome label")).to_be_visible()
    full_page_screenshot(page, shot_path(f"iterations_viewer_{width}.png"))
