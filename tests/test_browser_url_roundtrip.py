"""Every declared control survives a shared link (issue 21): set each URL parameter a page
declares (`ui.params`: the sidebar's and the page's own) to another value through its
widget, copy the URL, open it in a fresh browser context, and find the same widget values
and the same text (every number, caption and table cell the page shows).

The controls are taken from the registry, so a new page or parameter is covered here
without editing this file. Trajectory's URL state belongs to the viewer (its own tests).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser import no_error_shown, wait_for_run
from ui.frame import PAGES
from ui.params import PAGE_PARAMS, SIDEBAR, Param

pytestmark = pytest.mark.browser

SKIP = {"pages/4_Trajectory.py"}  # the viewer's URL state is tested in test_browser_viewer.py
CASES = [(i, spec) for i, spec in enumerate(PAGES) if spec.file not in SKIP]


def _labelled(page: Page, test_id: str, label: str) -> Locator:
    label_el = page.get_by_test_id("stWidgetLabel").get_by_text(label, exact=True)
    return page.get_by_test_id(test_id).filter(has=label_el)


def locate(page: Page, param: Param) -> Locator:
    """The element holding the widget's value (a combobox, a radio group, an input)."""
    if param.kind == "select":
        return page.get_by_role("combobox", name=param.label, exact=True)
    if param.kind == "radio":
        return _labelled(page, "stRadio", param.label)
    if param.kind == "number":
        return _labelled(page, "stNumberInput", param.label).locator("input")
    return _labelled(page, "stSlider", param.label).locator("input[type=range]")


def value_of(page: Page, param: Param) -> str | None:
    """What the widget shows, or None when the page does not draw it in this state."""
    widget = locate(page, param)
    if widget.count() == 0:
        return None
    if param.kind == "radio":
        return widget.first.locator("label:has(input:checked)").inner_text()
    return widget.first.input_value()


def change(page: Page, param: Param) -> bool:
    """Move the widget off its current value (the next option, another number); False
    when the page does not draw it in this state."""
    widget = locate(page, param)
    if widget.count() == 0:
        return False
    widget = widget.first
    if param.kind == "select":
        current = widget.input_value()
        options = page.get_by_role("option")
        for _ in range(3):  # a click right after another widget's rerun may be swallowed
            widget.click()
            try:
                options.first.wait_for(timeout=5_000)
                break
            except PlaywrightTimeout:
                page.keyboard.press("Escape")
        texts = [t.strip() for t in options.all_inner_texts()]
        if len(texts) < 2:
            page.keyboard.press("Escape")
            return False
        at = texts.index(current) if current in texts else 0
        options.nth((at + 1) % len(texts)).click()
    elif param.kind == "radio":
        labels = widget.locator("[role=radiogroup] label")
        checked = [labels.nth(i).locator("input").is_checked() for i in range(labels.count())]
        if len(checked) < 2:
            return False
        labels.nth((checked.index(True) + 1) % len(checked)).click()
    elif param.kind == "number":
        widget.fill("3" if widget.input_value() != "3" else "4")
        widget.press("Enter")
        widget.blur()
    else:
        widget.focus()
        for _ in range(5):
            widget.press("ArrowRight")
    wait_for_run(page, timeout=180_000)
    return True


def snapshot(page: Page, params: list[Param]) -> tuple[dict[str, str | None], str]:
    values = {p.name: value_of(page, p) for p in params}
    return values, page.get_by_test_id("stMain").inner_text()


@pytest.mark.parametrize(("index", "spec"), CASES, ids=[s.url_path for _, s in CASES])
def test_every_declared_control_survives_the_link(browser: Browser, app_url: str, index, spec):
    params = [p for p in (*SIDEBAR, *PAGE_PARAMS[spec.file]) if p.kind != "own"]
    first = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = first.new_page()
    page.goto(f"{app_url}/{'' if index == 0 else spec.url_path}")
    wait_for_run(page, timeout=180_000)
    changed = []
    for param in params:  # in the order the page draws them
        before = value_of(page, param)
        if change(page, param):
            changed.append(param.name)
            assert value_of(page, param) != before, (param.name, before)
    no_error_shown(page)
    values, text = snapshot(page, params)
    link = page.url
    first.close()
    # the sidebar's two and at least one control of the page's own (if it declares any)
    assert {"split", "cluster"} <= set(changed), changed
    own = [p.name for p in PAGE_PARAMS[spec.file] if p.kind != "own"]
    assert not own or set(changed) & set(own), changed

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000})
    again = fresh.new_page()
    again.goto(link)
    wait_for_run(again, timeout=180_000)
    no_error_shown(again)
    values_again, text_again = snapshot(again, params)
    fresh.close()
    assert values_again == values, link
    assert text_again == text, link
