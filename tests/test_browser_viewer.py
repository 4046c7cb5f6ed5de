"""Real browser: the trajectory viewer's deep links (also on a cold server), stepping with
buttons and arrow keys, reload/back, the action layer, corrupt screenshots, hostile text,
and full-page screenshots for a human to look at (/tmp/viewer_*.png)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from tests.browser import no_error_shown, streamlit_server, wait_for_run
from tests.test_viewer import HOSTILE, make_broken_mirror, special_tasks

pytestmark = pytest.mark.browser

OM2W = "fara7b_om2w_browserbase"
SLIDER = ".st-key-viewer_step input[type=range]"


@pytest.fixture(scope="module")
def special(bench) -> dict[str, str]:
    return special_tasks(bench)


def query(page: Page) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}


def wait_for_step(page: Page, step: int) -> None:
    """The URL says `step` and the slider shows it (the fragment rerun has finished)."""
    page.wait_for_function(
        "(s) => new URLSearchParams(location.search).get('step') === s", arg=str(step)
    )
    wait_for_run(page)
    expect(page.locator(SLIDER)).to_have_value(str(step))


def image_loaded(page: Page, selector: str) -> bool:
    return page.locator(selector).evaluate("(img) => img.complete && img.naturalWidth > 0")


def open_viewer(page: Page, url: str) -> None:
    page.goto(url)
    wait_for_run(page)
    expect(page.get_by_role("heading", name="Trajectory", exact=True)).to_be_visible()


def test_cold_start_deep_link_to_a_step(browser, bench, mirror_dir: Path, tmp_path: Path) -> None:
    """A fresh server whose very first request is a viewer deep link. The server reads a
    mirror copy where this task's screenshots 1 and 2 are corrupt and its texts hostile."""
    task_id = special_tasks(bench)["om2w_normal"]
    broken = make_broken_mirror(mirror_dir, tmp_path / "broken", task_id)
    with streamlit_server({"CUAVB_DATA": str(broken)}) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        open_viewer(page, f"{url}/Trajectory?split={OM2W}&task={task_id}&step=3")
        no_error_shown(page)
        expect(page.get_by_role("combobox", name="Split")).to_have_value(OM2W)
        expect(page.get_by_test_id("stSidebarNavLink")).to_have_count(7)
        assert query(page) == {"split": OM2W, "task": task_id, "step": "3"}
        expect(page.locator(SLIDER)).to_have_value("3")
        expect(page.get_by_text("Step 3 of 0–", exact=False)).to_be_visible()
        assert image_loaded(page, ".st-key-viewer_shot_base img")
        assert image_loaded(page, ".st-key-viewer_shot_layer img")

        # the corrupt screenshot: a placeholder and a message for that step only
        page.locator(".st-key-viewer_prev button").click()
        wait_for_step(page, 2)
        page.locator(".st-key-viewer_prev button").click()
        wait_for_step(page, 1)
        expect(page.get_by_text("Screenshot 1 cannot be decoded", exact=False)).to_be_visible()
        expect(page.locator(".st-key-viewer_shot_base")).to_have_count(0)
        page.locator(".st-key-viewer_prev button").click()
        wait_for_step(page, 0)
        expect(page.get_by_text("cannot be decoded", exact=False)).to_have_count(0)
        assert image_loaded(page, ".st-key-viewer_shot_base img")

        # hostile dataset text is shown as text: no link, no image, no bold, no script
        main = page.get_by_test_id("stMain")
        expect(main.get_by_text(f"Instruction {HOSTILE}", exact=True)).to_be_visible()
        expect(main.get_by_text(f"Thoughts {HOSTILE}", exact=True).first).to_be_visible()
        expect(main.locator("a[href^='javascript']")).to_have_count(0)
        expect(main.locator("img[src='x']")).to_have_count(0)
        expect(main.locator("strong", has_text="bold")).to_have_count(0)
        assert "alert(1)</script>" not in main.inner_html()
        no_error_shown(page)
        context.close()


def test_buttons_arrow_keys_reload_and_back(page: Page, app_url: str, special) -> None:
    task_id = special["om2w_normal"]
    open_viewer(page, f"{app_url}/Trajectory?task={task_id}&step=1")
    expect(page.locator(SLIDER)).to_have_value("1")

    page.locator(".st-key-viewer_next button").click()
    wait_for_step(page, 2)
    expect(page.get_by_text("Step 2 of 0–", exact=False)).to_be_visible()

    page.get_by_role("heading", name="Trajectory", exact=True).click()  # focus off inputs
    page.keyboard.press("ArrowRight")
    wait_for_step(page, 3)
    page.keyboard.press("ArrowLeft")
    wait_for_step(page, 2)

    # arrows typed into the search box edit the text, they do not step
    page.locator(".st-key-viewer_search input").click()
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(500)
    wait_for_run(page)
    assert query(page)["step"] == "2"

    page.reload()
    wait_for_run(page)
    expect(page.locator(SLIDER)).to_have_value("2")
    assert query(page) == {"task": task_id, "step": "2"}

    page.go_back()  # one history entry per step: back to step 3
    wait_for_step(page, 3)
    page.locator(".st-key-viewer_film_0 button").first.click()
    wait_for_step(page, 0)
    no_error_shown(page)


def test_action_layer_lies_exactly_on_the_screenshot(page: Page, app_url: str, special) -> None:
    open_viewer(page, f"{app_url}/Trajectory?task={special['om2w_normal']}&step=0")
    base = page.locator(".st-key-viewer_shot_base img")
    layer = page.locator(".st-key-viewer_shot_layer img")
    assert image_loaded(page, ".st-key-viewer_shot_base img")
    assert image_loaded(page, ".st-key-viewer_shot_layer img")
    a, b = base.bounding_box(), layer.bounding_box()
    assert a and b and a["width"] > 300
    for key in ("x", "y", "width", "height"):
        assert abs(a[key] - b[key]) < 1, (a, b)
    events = page.locator(".st-key-viewer_shot_layer").evaluate(
        "(el) => getComputedStyle(el).pointerEvents"
    )
    assert events == "none"  # hover and the fullscreen button reach the screenshot


def _full_page(page: Page, path: str) -> None:
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": min(height + 50, 8000)})
    page.wait_for_timeout(500)
    page.screenshot(path=path, full_page=True)


def test_screenshots_of_the_page(page: Page, app_url: str, special) -> None:
    """Full-page screenshots to look at: an om2w step, and an internal log-only task."""
    open_viewer(page, f"{app_url}/Trajectory?task={special['om2w_normal']}&step=2")
    assert image_loaded(page, ".st-key-viewer_shot_base img")
    expect(page.get_by_role("heading", name="Verifiers")).to_be_visible()
    expect(page.get_by_role("heading", name="Humans")).to_be_visible()
    _full_page(page, "/tmp/viewer_om2w.png")

    page.set_viewport_size({"width": 1400, "height": 1000})
    open_viewer(page, f"{app_url}/Trajectory?split=internal&task={special['log_only']}&step=1")
    expect(page.get_by_text("log-only view", exact=False).first).to_be_visible()
    expect(page.locator(".st-key-viewer_shot")).to_have_count(0)
    expect(page.locator(SLIDER)).to_have_value("1")
    _full_page(page, "/tmp/viewer_internal.png")
    for name in ("om2w", "internal"):
        assert Path(f"/tmp/viewer_{name}.png").stat().st_size > 50_000
    no_error_shown(page)


def test_bad_link_shows_a_message_and_the_nearest_view(page: Page, app_url: str, special) -> None:
    real = special["om2w_normal"]
    open_viewer(page, f"{app_url}/Trajectory?task={real[:-1]}Q&step=99")
    expect(page.get_by_text("There is no task", exact=False)).to_be_visible()
    expect(page.get_by_text("Step 99 is out of range", exact=False)).to_be_visible()
    last = page.locator(SLIDER).get_attribute("max")
    expect(page.locator(SLIDER)).to_have_value(last)
    assert query(page) == {"task": real, "step": last}  # the link now names a valid view
    no_error_shown(page)
