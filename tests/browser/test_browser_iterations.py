"""Real browser: upload the sample history, see the loop at 1400 and 390 px, open an
unstable task in the viewer and find every run's verdict there; Copy link reopens the loop
in a fresh context (the versions and runs travel in `v=`). A link carrying two verifiers
that judge outcome and process: the *Verifier to score* and *Dimension* chosen in the page
travel in Copy link with the numbers that go with them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from lib.analysis import iterations as it
from tests.helpers.browser import (
    copied_link,
    full_page_screenshot,
    no_error_shown,
    shot_path,
    wait_for_run,
)
from tests.helpers.history_link import two_verifier_payload
from tests.helpers.slack import scaled_ms

pytestmark = pytest.mark.browser


CHOICES = {  # label -> the option chosen before Copy link (`ui.params.ITERATIONS`)
    "Reference": "Humans, blind majority",
    "Split of the versions": "internal",
    "From": "3. v3-screenshots",
    "To": "7. v7-outcome-first",
}


def _pick(page: Page, label: str, option: str) -> None:
    """Choose `option` in the select box `label` and wait for the rerun."""
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


def _choose(page: Page) -> dict[str, str]:
    """Set the section's Reference, Split, From and To; returns what the boxes show."""
    for label, option in CHOICES.items():
        _pick(page, label, option)
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


# --- Verifier to score and Dimension through Copy link ------------------------------------
# The sample history judges the outcome only, with one verifier: here a link carries
# `tests.helpers.history_link.two_verifier_history` (two verifiers, outcome and process, two
# versions each), so both choices move.

DISAGREE = re.compile(r"^Tasks where your verifier and the Universal Verifier disagree: \d+")
KAPPAS = re.compile(r"^Kappa of each version against")  # the Iterations chart's caption
FIRST, OTHER = "my_verifier_v1 (yours)", "my_verifier_v2 (yours)"


def _dimension(page: Page) -> Locator:
    label = page.get_by_test_id("stWidgetLabel").get_by_text("Dimension", exact=True)
    return page.get_by_test_id("stRadio").filter(has=label)


def _scored(page: Page) -> tuple[str, str, str, str]:
    """The verifier and dimension shown, and two lines whose numbers follow them."""
    verifier = page.get_by_role("combobox", name="Verifier to score", exact=True)
    checked = _dimension(page).locator("label:has(input:checked)")
    return (
        verifier.input_value(),
        checked.inner_text().strip(),
        page.get_by_text(DISAGREE).inner_text(),
        page.get_by_text(KAPPAS).inner_text(),
    )


def test_verifier_and_dimension_travel_in_copy_link(browser: Browser, app_url: str, bench) -> None:
    context = browser.new_context(
        viewport={"width": 1400, "height": 1000},
        permissions=["clipboard-read", "clipboard-write"],
    )
    try:
        page = context.new_page()
        page.goto(f"{app_url}/Your_verifier?v={two_verifier_payload(bench)}")
        expect(page.get_by_text(KAPPAS)).to_be_visible(timeout=scaled_ms(90_000))
        wait_for_run(page)
        no_error_shown(page)
        first = _scored(page)
        assert first[:2] == (FIRST, "outcome") and "(outcome," in first[3], first
        _pick(page, "Verifier to score", OTHER)
        _dimension(page).get_by_text("process", exact=True).click()
        wait_for_run(page)
        expect(_dimension(page).locator("label:has(input:checked)")).to_have_text(
            "process", timeout=scaled_ms(60_000)
        )
        expect(page.get_by_text(KAPPAS)).to_contain_text("(process,", timeout=scaled_ms(60_000))
        no_error_shown(page)
        chosen = _scored(page)
        assert chosen[:2] == (OTHER, "process"), chosen
        assert chosen[2] != first[2], (first, chosen)  # the numbers follow the choice
        copied = copied_link(page)
        assert "verifier=mine%3Amy_verifier_v2" in copied and "dimension=process" in copied
    finally:
        context.close()

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        again = fresh.new_page()
        again.goto(copied)
        expect(again.get_by_text(KAPPAS)).to_be_visible(timeout=scaled_ms(90_000))
        wait_for_run(again)
        no_error_shown(again)
        assert _scored(again) == chosen, copied
    finally:
        fresh.close()
