"""Every declared control survives a shared link (issue 21): set each URL parameter a page
declares (`ui.params`: the sidebar's and the page's own) to another value through its
widget, copy the URL, open it in a fresh browser context, and find the same widget values
and the same text (every number, caption and table cell the page shows).

The controls are taken from the registry, so a new page or parameter is covered here
without editing this file. Your verifier is walked twice: as a first visitor finds it, and
opened with a `?v=` link carrying an uploaded history, where its Iterations section draws
(`LINKED`). Trajectory's URL state belongs to the viewer (its own tests).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Locator, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers.browser import no_error_shown, wait_for_run
from tests.helpers.history_link import sample_history_payload
from ui import params as PARAMS
from ui.frame import PAGES
from ui.params import PAGE_PARAMS, SIDEBAR, Param

pytestmark = pytest.mark.browser

SKIP = {"pages/4_Trajectory.py"}  # the viewer's own URL state: the last test of this file
HOLD = {"pages/6_Slices.py": ("verifier",)}
"""A second walk of these pages leaves these controls alone: changing Slices' verifier to the
next one (the process verdict) leaves one reference and no other process verifier."""
LINKED = {"pages/5_Your_verifier.py"}
"""A second walk of these pages opens them with a `?v=` link carrying the sample history
(`tests.helpers.history_link`): Your verifier's Iterations section (Reference, Split, From,
To) is drawn only for an uploaded verifier with versions."""
ITERATIONS = {p.name for p in PARAMS.ITERATIONS}
SCORED = {PARAMS.YOUR_VERIFIER.name, PARAMS.YOUR_DIMENSION.name}
UNCHANGEABLE = {
    ("pages/6_Slices.py", (), False): {"dimension", "reference", "vs"},
    ("pages/6_Slices.py", ("verifier",), False): {"dimension"},
    ("pages/5_Your_verifier.py", (), False): ITERATIONS | SCORED,
    ("pages/5_Your_verifier.py", (), True): SCORED,
}
"""Controls a walk cannot move, and why: no verifier of the data judges both dimensions (the
radio is drawn only then); after the verifier change above, see `HOLD`; no upload, so no
Iterations section (the linked walk, `LINKED`, moves them) and no *Verifier to score* /
*Dimension*; the linked walk's sample history is one verifier judging the outcome only, so
those two have a single option (moved in tests/app/test_your_verifier_url.py, and through
Copy link in tests/browser/test_browser_iterations.py, where two uploaded verifiers judge
both dimensions)."""
CASES = (
    [(i, spec, (), False) for i, spec in enumerate(PAGES) if spec.file not in SKIP]
    + [(i, spec, HOLD[spec.file], False) for i, spec in enumerate(PAGES) if spec.file in HOLD]
    + [(i, spec, (), True) for i, spec in enumerate(PAGES) if spec.file in LINKED]
)


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
    when the page does not draw it in this state.

    Tried again when the value did not move: on a loaded machine `wait_for_run` can return
    before the previous change's rerun has started, and that rerun then redraws the widget
    under the click (measured: the dropdown's first click swallowed, the option's click
    lost). A page that resets the value itself still fails: every try comes back unmoved.
    """
    widget = locate(page, param)
    if widget.count() == 0:
        return False
    before = value_of(page, param)
    for _ in range(3):
        if not _move(page, locate(page, param).first, param):
            return False
        wait_for_run(page, timeout=180_000)
        if value_of(page, param) != before:
            break
    return True


def _move(page: Page, widget: Locator, param: Param) -> bool:
    """One attempt at moving the widget to its next value (False: it has no other)."""
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
    return True


def snapshot(page: Page, params: list[Param]) -> tuple[dict[str, str | None], str]:
    values = {p.name: value_of(page, p) for p in params}
    return values, page.get_by_test_id("stMain").inner_text()


def settled(page: Page, params: list[Param], tries: int = 20) -> tuple[dict, str, str]:
    """The widgets' values, the page text and the URL once two looks a second apart agree.

    A slider moved by five key presses commits more than once; on a loaded machine
    `wait_for_run` can return between two of those runs (seen: the widget read 0.81
    while the URL already said 0.83), so one look is not enough.
    """
    last = None
    for _ in range(tries):
        wait_for_run(page, timeout=180_000)
        look = (*snapshot(page, params), page.url)
        if look == last:
            return look
        last = look
        page.wait_for_timeout(1000)
    return last


@pytest.mark.parametrize(
    ("index", "spec", "hold", "linked"),
    CASES,
    ids=[s.url_path + "-".join(("", *h)) + ("-linked" if k else "") for _, s, h, k in CASES],
)
def test_every_declared_control_survives_the_link(
    browser: Browser, app_url: str, bench, index, spec, hold, linked
):
    params = [p for p in (*SIDEBAR, *PAGE_PARAMS[spec.file]) if p.kind != "own"]
    first = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = first.new_page()
    query = f"?v={sample_history_payload(bench)}" if linked else ""
    page.goto(f"{app_url}/{'' if index == 0 else spec.url_path}{query}")
    wait_for_run(page, timeout=180_000)
    changed = []
    for param in params:  # in the order the page draws them
        if param.name in hold:
            continue
        before = value_of(page, param)
        if change(page, param):
            changed.append(param.name)
            assert value_of(page, param) != before, (param.name, before)
    values, text, link = settled(page, params)  # a slider moved last may still be committing
    no_error_shown(page)
    first.close()
    # every declared control was set off its value (the registry, in drawing order)
    unchangeable = UNCHANGEABLE.get((spec.file, hold, linked), set())
    expected = {p.name for p in params} - set(hold) - unchangeable
    assert set(changed) == expected, changed

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000})
    again = fresh.new_page()
    again.goto(link)
    wait_for_run(again, timeout=180_000)
    no_error_shown(again)
    values_again, text_again = snapshot(again, params)
    fresh.close()
    assert values_again == values, link
    assert text_again == text, link


# --------------------------------------------------------------------------- Trajectory
# The viewer resolves its URL state itself (`ui.viewer`: kind "own" in the registry), so
# its controls are set here one by one: the search, each filter of the popover, the task,
# the informed stage. Every declared parameter but `step` (the in-browser stepper's own,
# tested in test_browser_viewer.py) must end up in the link.

VIEWER = "pages/4_Trajectory.py"
OM2W = "fara7b_om2w_browserbase"
VIEWER_SET = {p.name for p in PAGE_PARAMS[VIEWER]} - {"step", "why", "audit"}  # why: from error
# lists; audit=1 has no control: only the Audit page's links carry it (test_browser_audit.py)


def _pick(page: Page, label: str, nth: int = 1) -> None:
    box = page.get_by_role("combobox", name=label, exact=True).first
    box.click()
    page.get_by_role("option").nth(nth).click()
    wait_for_run(page, timeout=180_000)


def _open_filters(page: Page) -> None:
    """Open the Filters popover unless it is open (a click on its button toggles it)."""
    if not page.get_by_role("combobox", name="Reviewer", exact=True).is_visible():
        page.get_by_role("button", name="Filters").click()
        page.get_by_role("combobox", name="Reviewer", exact=True).wait_for()


def _viewer_state(page: Page) -> tuple[dict[str, str], dict[str, str | None], str]:
    """The link's viewer parameters, what the widgets show, and the page's text."""
    query = {k: v[-1] for k, v in parse_qs(urlsplit(page.url).query).items()}
    widgets: dict[str, str | None] = {
        "q": page.get_by_role("textbox", name="Search").input_value(),
        "task": page.get_by_role("combobox", name=re.compile(r"^Task \(")).input_value(),
        "informed": str(page.get_by_role("switch", name="Show the informed stage").is_checked()),
    }
    _open_filters(page)
    for label in ("Verifier disagrees with the humans", "Reviewer", "Human outcome (final)"):
        widgets[label] = page.get_by_role("combobox", name=label, exact=True).input_value()
    family = _labelled(page, "stMultiSelect", "Site or task family")
    widgets["family"] = family.inner_text()  # the chosen families' chips
    # `.all()` does not wait: the popover's slider and radio may draw after its first box
    slider = page.locator(".st-key-viewer_f_steps input[type=range]")
    slider.first.wait_for()
    widgets["actions"] = ",".join(s.input_value() for s in slider.all())
    shots = page.locator(".st-key-viewer_f_shots [role=radio][aria-checked=true]")
    shots.first.wait_for()
    widgets["shots"] = ",".join(shots.all_inner_texts())
    page.keyboard.press("Escape")
    text = page.get_by_test_id("stMain").inner_text()
    # the note that a filter change replaced the task on screen belongs to that change,
    # not to the view a link reproduces
    text = re.sub(r"(\n+info)?\n+[^\n]*does not match the new choice[^\n]*", "", text)
    return query, widgets, text


def test_every_viewer_control_survives_the_link(browser: Browser, app_url: str) -> None:
    first = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = first.new_page()
    page.goto(f"{app_url}/Trajectory?split={OM2W}")
    wait_for_run(page, timeout=180_000)
    search = page.get_by_role("textbox", name="Search")
    search.fill("the")
    search.press("Enter")
    wait_for_run(page, timeout=180_000)
    task = page.get_by_role("combobox", name=re.compile(r"^Task \("))
    task.click()
    page.get_by_role("option").nth(1).click()
    wait_for_run(page, timeout=180_000)
    _open_filters(page)
    for label in ("Verifier disagrees with the humans", "Reviewer", "Human outcome (final)"):
        _open_filters(page)
        _pick(page, label)
    family = _labelled(page, "stMultiSelect", "Site or task family")
    family.get_by_role("combobox").click()
    options = page.get_by_role("option")
    options.filter(has_not_text=re.compile("select all", re.I)).first.click()  # one family
    wait_for_run(page, timeout=180_000)
    _open_filters(page)
    handle = page.locator(".st-key-viewer_f_steps input[type=range]").first
    handle.focus()
    handle.press("ArrowRight")
    wait_for_run(page, timeout=180_000)
    _open_filters(page)
    page.locator(".st-key-viewer_f_shots").get_by_role("radio", name="with", exact=True).click()
    wait_for_run(page, timeout=180_000)
    page.keyboard.press("Escape")
    page.get_by_text("Show the informed stage").click()
    wait_for_run(page, timeout=180_000)
    no_error_shown(page)
    query, widgets, text = _viewer_state(page)
    link = page.url
    first.close()
    assert set(query) >= VIEWER_SET, (sorted(VIEWER_SET - set(query)), link)

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000})
    again = fresh.new_page()
    again.goto(link)
    wait_for_run(again, timeout=180_000)
    no_error_shown(again)
    query_again, widgets_again, text_again = _viewer_state(again)
    fresh.close()
    assert {k: query_again.get(k) for k in query} == query, link
    assert widgets_again == widgets, link
    assert text_again == text, link
