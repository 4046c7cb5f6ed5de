"""Real browser: the trajectory viewer's in-browser stepper (`ui.stepper`).

Deep links (also on a cold server), stepping by button, arrow key, filmstrip and slider
with no server run, the URL following the step, Back, the action layer's click point at
two window sizes, the first screen at 1366x768 and 1400x900, a phone width, corrupt
screenshots, and the hostile-payload corpus inert inside the component. Full-page
screenshots for a human to look at: `shot_path("viewer_*.png")`.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode, urlparse, urlsplit

import pytest
from playwright.sync_api import Page, expect

from lib.table.trajlog import parse_log
from lib.vocab import SCREEN
from tests.helpers.browser import (
    full_page_screenshot,
    no_error_shown,
    planted_listener,
    shot_path,
    streamlit_server,
    wait_for_run,
)
from tests.helpers.hostile_payloads import PLANTED_HOST, payloads
from tests.helpers.slack import scaled_ms
from tests.unit.test_viewer import _replace_row, break_screenshots, rewrite_task_row, special_tasks

if TYPE_CHECKING:
    import pyarrow as pa

pytestmark = pytest.mark.browser

COUNTER = ".stp .counter"
RUNS = """() => {
  window.__runs = 0;
  const app = document.querySelector('[data-testid=stApp]');
  new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') === 'running') window.__runs += 1;
  }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
"""Counts server script runs seen by the browser (the app's run state turning 'running')."""

PLANTED_IN_COMPONENT = """(port) => {
  const host = (u) => { try { return new URL(u, location.href).host; } catch { return ''; } };
  const bad = (u) => !!u
    && (host(u).endsWith('planted.invalid') || host(u) === '127.0.0.1:' + port);
  const roots = [...document.querySelectorAll('*')]
    .filter((e) => e.shadowRoot).map((e) => e.shadowRoot);
  const found = [];
  for (const root of roots) {
    for (const e of root.querySelectorAll('*')) {
      if (['SCRIPT', 'IFRAME', 'STYLE'].includes(e.tagName) && root.querySelector('.stp')) {
        if (e.tagName !== 'STYLE' || e.textContent.includes('planted')) found.push(e.tagName);
      }
      for (const a of e.getAttributeNames()) {
        if (a.startsWith('on') || bad(e.getAttribute(a))) found.push(e.outerHTML.slice(0, 160));
      }
    }
  }
  return {found, roots: roots.length};
}"""


@pytest.fixture(scope="module")
def special(bench) -> dict[str, str]:
    return special_tasks(bench)


def query(page: Page) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}


def open_viewer(page: Page, url: str) -> None:
    page.goto(url)
    wait_for_run(page)
    expect(page.get_by_role("heading", name="Trajectory", exact=True)).to_be_visible()
    expect(page.locator(COUNTER)).to_be_visible()


def at_step(page: Page, step: int) -> None:
    """The counter (1-based, for people) and the URL (0-based `step=`) both say `step`."""
    expect(page.locator(COUNTER)).to_contain_text(re.compile(rf"^Step {step + 1} of \d+$"))
    page.wait_for_function(
        "(s) => new URLSearchParams(location.search).get('step') === s", arg=str(step)
    )


def image_ok(page: Page, step: int) -> bool:
    img = page.locator(f".stp img.shotimg[data-step='{step}']")
    img.wait_for(state="visible")
    page.wait_for_function("(el) => el.complete && el.naturalWidth > 0", arg=img.element_handle())
    return True


def runs(page: Page) -> int:
    return page.evaluate("window.__runs")


def left_click_step(bench, task_id: str) -> tuple[int, tuple[int, int]]:
    """A step of the task with an on-screen left_click, and its coordinate."""
    task = bench.task(task_id)
    for step in parse_log(task.web_surfer_log).steps:
        if step.tool == "left_click" and step.coordinate and step.index < task.n_screenshots_stored:
            x, y = step.coordinate
            if 50 < x < SCREEN[0] - 50 and 50 < y < SCREEN[1] - 50:
                return step.index, step.coordinate
    pytest.skip("no on-screen left_click in this task")


# --------------------------------------------------------------------------- stepping


def test_steps_by_button_key_filmstrip_slider_without_a_server_run(
    page: Page, app_url: str, special
) -> None:
    task_id = special["om2w_normal"]
    open_viewer(page, f"{app_url}/Trajectory?task={task_id}&step=1")
    at_step(page, 1)
    assert image_ok(page, 1)
    page.evaluate(RUNS)

    page.locator(".stp button.nav", has_text="Next").click()
    at_step(page, 2)
    assert image_ok(page, 2)
    page.get_by_role("heading", name="Trajectory", exact=True).click()  # focus off inputs
    page.keyboard.press("ArrowRight")
    at_step(page, 3)
    page.keyboard.press("ArrowLeft")
    at_step(page, 2)
    page.locator(".stp .strip button.film[data-step='0']").click()
    at_step(page, 0)
    expect(page.locator(".stp button.nav", has_text="Previous")).to_be_disabled()
    slider = page.locator(".stp input.slider")
    slider.focus()
    page.keyboard.press("ArrowRight")  # the slider steps by itself, once
    at_step(page, 1)

    # arrows typed into the search box edit the text, they do not step
    page.locator(".st-key-viewer_search input").click()
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(300)
    assert query(page)["step"] == "1"
    assert runs(page) == 0, "a step change ran the server script"

    # the details panel follows the step, and the image has alt text with the action
    alt = page.locator(".stp img.shotimg").get_attribute("alt")
    assert alt and alt.startswith("Step 2 of ") and "action" in alt
    expect(page.locator(".stp .details")).to_contain_text("Action 1:")
    # Back returns to the previous step (0, then 2)
    page.go_back()
    at_step(page, 0)
    page.go_back()
    at_step(page, 2)
    expect(page.locator(".stp .details")).to_contain_text("Action 2:")
    no_error_shown(page)


def test_shared_link_and_reload_open_that_step(page: Page, app_url: str, special) -> None:
    task_id = special["om2w_normal"]
    open_viewer(page, f"{app_url}/Trajectory?task={task_id}&step=3")
    at_step(page, 3)
    assert image_ok(page, 3)
    page.locator(".stp button.nav", has_text="Next").click()
    at_step(page, 4)
    page.reload()
    wait_for_run(page)
    at_step(page, 4)
    assert query(page) == {"task": task_id, "step": "4"}


def test_downloads_accessibility_and_full_size_link(page: Page, app_url: str, special) -> None:
    """Both PNG downloads (plain, and with the action drawn in the browser), the full-size
    link, the announced counter and a visible keyboard focus."""
    import io

    from PIL import Image, ImageChops

    task_id = special["om2w_normal"]
    open_viewer(page, f"{app_url}/Trajectory?task={task_id}&step=1")
    assert image_ok(page, 1)
    with page.expect_download() as plain_dl:
        page.locator(".stp a.link", has_text="Screenshot (PNG)").click()
    with page.expect_download() as drawn_dl:
        page.locator(".stp a.link", has_text="With the action drawn (PNG)").click()
    assert plain_dl.value.suggested_filename == f"{task_id}_step1.png"
    assert drawn_dl.value.suggested_filename == f"{task_id}_step1_action.png"
    plain = Image.open(io.BytesIO(Path(plain_dl.value.path()).read_bytes())).convert("RGB")
    drawn = Image.open(io.BytesIO(Path(drawn_dl.value.path()).read_bytes())).convert("RGB")
    assert plain.size == drawn.size
    changed = ImageChops.difference(plain, drawn).getbbox()
    assert changed is not None  # the action is drawn in, and only in part of the image
    assert (changed[2] - changed[0]) * (changed[3] - changed[1]) < plain.size[0] * plain.size[1]
    full = page.locator(".stp a.link", has_text="Full size")
    assert full.get_attribute("target") == "_blank"
    assert full.get_attribute("href") == page.locator(".stp img.shotimg").get_attribute("src")
    counter = page.locator(COUNTER)
    assert counter.get_attribute("aria-live") == "polite"
    nxt = page.locator(".stp button.nav", has_text="Next")
    nxt.focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")  # keyboard focus back on Next
    outline = nxt.evaluate(
        "(b) => getComputedStyle(b).outlineStyle + ' ' + b.matches(':focus-visible')"
    )
    assert outline == "solid true", outline
    assert all(
        alt and alt.startswith("Step ")
        for alt in page.locator(".stp img").evaluate_all("(imgs) => imgs.map((i) => i.alt)")
    )


def test_a_rerun_keeps_the_browser_step(page: Page, app_url: str, special) -> None:
    """Streamlit keeps its own copy of the query string: a widget rerun after stepping
    must not push the old step back into the URL or the stepper."""
    task_id = special["om2w_normal"]
    open_viewer(page, f"{app_url}/Trajectory?task={task_id}&step=0")
    page.locator(".stp button.nav", has_text="Next").click()
    page.locator(".stp button.nav", has_text="Next").click()
    at_step(page, 2)
    page.get_by_text("Show the informed stage").click()
    wait_for_run(page)
    page.wait_for_function("() => new URLSearchParams(location.search).get('informed') === '1'")
    at_step(page, 2)
    assert query(page)["step"] == "2"


def test_overlay_click_point_within_2px_at_two_window_sizes(
    browser, app_url: str, bench, special
) -> None:
    task_id = special["om2w_normal"]
    step, (x, y) = left_click_step(bench, task_id)
    for width, height in ((1400, 1000), (1000, 700)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.set_default_timeout(scaled_ms(30_000))
        open_viewer(page, f"{app_url}/Trajectory?task={task_id}&step={step}")
        assert image_ok(page, step)
        box = page.locator(f".stp img.shotimg[data-step='{step}']").bounding_box()
        dot = page.locator(".stp svg.layer .marker .dot").bounding_box()
        assert box and dot and box["width"] > 200
        want = (box["x"] + x * box["width"] / SCREEN[0], box["y"] + y * box["height"] / SCREEN[1])
        got = (dot["x"] + dot["width"] / 2, dot["y"] + dot["height"] / 2)
        assert abs(got[0] - want[0]) <= 2 and abs(got[1] - want[1]) <= 2, (width, got, want)
        layer = page.locator(".stp svg.layer").bounding_box()
        assert layer and all(abs(layer[k] - box[k]) < 1.5 for k in ("x", "y", "width", "height"))
        context.close()


@pytest.mark.parametrize("size", [(1366, 768), (1400, 900)])
def test_screenshot_and_controls_on_the_first_screen(browser, app_url: str, special, size) -> None:
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(scaled_ms(30_000))
    open_viewer(page, f"{app_url}/Trajectory?task={special['om2w_normal']}&step=2")
    assert image_ok(page, 2)
    page.wait_for_timeout(300)
    img = page.locator(".stp img.shotimg").bounding_box()
    nxt = page.locator(".stp button.nav", has_text="Next").bounding_box()
    assert img and nxt
    assert img["y"] >= 0 and img["y"] + img["height"] <= height, img
    assert nxt["y"] + nxt["height"] <= height
    # the instruction and the verdicts at a glance are on the first screen too (issue 30)
    summary = page.locator(".st-key-viewer_summary")
    expect(summary).to_contain_text("Instruction:")
    badges = summary.get_by_text(re.compile(r"^(Universal Verifier|Humans), "))
    expect(badges.first).to_be_visible()
    box = summary.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= img["y"], (box, img)
    assert badges.count() >= 2
    expect(page.locator(COUNTER)).to_have_text(re.compile(r"^Step 3 of \d+$"))
    page.screenshot(path=shot_path(f"viewer_first_screen_{width}x{height}.png"))
    for step in (3, 4):  # stepping keeps the screenshot where it is (no page scroll)
        page.locator(".stp button.nav", has_text="Next").click()
        at_step(page, step)
        moved = page.locator(".stp img.shotimg").bounding_box()
        assert moved and abs(moved["y"] - img["y"]) < 1, (moved, img)
    context.close()


def test_phone_width_has_no_horizontal_page_overflow(browser, app_url: str, special) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(scaled_ms(30_000))
    open_viewer(page, f"{app_url}/Trajectory?task={special['om2w_normal']}&step=1")
    assert image_ok(page, 1)
    wide = page.evaluate("document.documentElement.scrollWidth")
    main = page.evaluate("document.querySelector('[data-testid=stMain]').scrollWidth")
    assert wide <= 390 and main <= 390, (wide, main)
    img = page.locator(".stp img.shotimg").bounding_box()
    assert img and img["x"] >= 0 and img["x"] + img["width"] <= 390
    page.screenshot(path=shot_path("viewer_phone.png"), full_page=True)
    context.close()


def test_log_only_task_and_bad_link(page: Page, app_url: str, special) -> None:
    open_viewer(page, f"{app_url}/Trajectory?split=internal&task={special['log_only']}&step=1")
    # the note is shown through inert(), whose word joiners split "log-only"
    expect(page.get_by_text("No screenshots are stored", exact=False).first).to_be_visible()
    expect(page.locator(".stp figure.shot")).to_be_hidden()
    at_step(page, 1)
    expect(page.locator(".stp .details")).to_contain_text("Action 1:")

    real = special["om2w_normal"]
    open_viewer(page, f"{app_url}/Trajectory?task={real[:-1]}Q&step=99")
    expect(page.get_by_text("There is no task", exact=False)).to_be_visible()
    expect(page.get_by_text("Step 99 is out of range", exact=False)).to_be_visible()
    last = page.locator(".stp input.slider").get_attribute("max")
    at_step(page, int(last))
    assert query(page) == {"task": real, "step": last}  # the link now names a valid view
    no_error_shown(page)


def test_screenshots_of_the_page(page: Page, app_url: str, special) -> None:
    """Full-page screenshots to look at: an om2w step, and an internal log-only task."""
    open_viewer(page, f"{app_url}/Trajectory?task={special['om2w_normal']}&step=2")
    assert image_ok(page, 2)
    expect(page.get_by_role("heading", name="Verifiers")).to_be_visible()
    full_page_screenshot(page, shot_path("viewer_om2w.png"))
    open_viewer(page, f"{app_url}/Trajectory?split=internal&task={special['log_only']}&step=1")
    full_page_screenshot(page, shot_path("viewer_internal.png"))
    no_error_shown(page)


# --------------------------------------------------------------------------- cold start, hostile


def make_payload_mirror(src: Path, dst: Path, task_id: str, port: int) -> tuple[Path, int]:
    """Copy a mirror; `task_id` gets non-image bytes as screenshot 1, a truncated PNG as
    screenshot 2, and the hostile-payload corpus in every log line's thoughts, url, typed
    text, tool name and argument keys. Returns the mirror and how many payload lines."""
    shutil.copytree(src, dst)
    corpus = list(payloads(port).values())

    def hostile(table: pa.Table, row: int) -> pa.Table:
        table = break_screenshots(table, row)
        lines = [
            json.loads(line) for line in table.column("web_surfer_log")[row].as_py().split("\n")
        ]
        extra = []
        for i, text in enumerate(corpus):
            line = json.loads(json.dumps(lines[min(i % len(lines), len(lines) - 1)]))
            args = line.setdefault("arguments", {})
            args["thoughts"] = text
            args[text[:40]] = text
            line["url"] = text
            if i % 3 == 0:
                args.update({"action": "type", "text": text, "coordinate": [300, 200]})
            elif i % 3 == 1:
                args["action"] = text
            extra.append(line)
        log = "\n".join(json.dumps(line) for line in lines + extra)
        return _replace_row(table, "web_surfer_log", row, log)

    rewrite_task_row(dst, "trajectories", task_id, hostile)
    return dst, len(corpus)


def test_cold_start_corrupt_shots_and_hostile_payloads_inert(
    browser, bench, mirror_dir: Path, tmp_path: Path
) -> None:
    """A fresh server whose first request is a deep link to a task whose log carries the
    whole payload corpus. Every step is visited through the component: no element or
    request for the planted host or the listener, no event-handler attribute, and each
    payload shows as its own text."""
    task_id = special_tasks(bench)["om2w_normal"]
    with planted_listener() as (port, hits):
        mirror, n_payloads = make_payload_mirror(mirror_dir, tmp_path / "m", task_id, port)
        with streamlit_server({"CUAVB_DATA": str(mirror)}) as url:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(scaled_ms(60_000))
            requests: list[str] = []
            planted = (PLANTED_HOST, f"127.0.0.1:{port}")
            page.on(
                "request",
                lambda r: (
                    requests.append(r.url) if urlsplit(r.url).netloc.endswith(planted) else None
                ),
            )
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            open_viewer(page, f"{url}/Trajectory?{urlencode({'task': task_id, 'step': 3})}")
            at_step(page, 3)
            assert image_ok(page, 3)
            # corrupt screenshots: the step says why, the others still show
            page.locator(".stp .strip button.film[data-step='1']").click()
            expect(page.locator(".stp .missing")).to_contain_text("cannot be decoded")
            page.locator(".stp .strip button.film[data-step='0']").click()
            assert image_ok(page, 0)
            last = int(page.locator(".stp input.slider").get_attribute("max"))
            assert last >= n_payloads
            page.evaluate(RUNS)
            page.get_by_role("heading", name="Trajectory", exact=True).click()
            shown: set[str] = set()
            for step in range(1, last + 1):
                page.keyboard.press("ArrowRight")
                expect(page.locator(COUNTER)).to_contain_text(f"Step {step + 1} of {last + 1}")
                pres = page.locator(".stp .details pre").all_inner_texts()
                shown.update(pres)
            page.wait_for_timeout(500)
            check = page.evaluate(PLANTED_IN_COMPONENT, port)
            assert check["roots"] >= 1 and check["found"] == [], check
            assert requests == [] and hits == [] and dialogs == [], (requests, hits, dialogs)
            assert runs(page) == 0
            # thoughts are shown verbatim (as text): the planted markup is visible text
            corpus = payloads(port)
            for name in ("html_img", "html_script", "image_local", "javascript_url"):
                assert corpus[name] in shown, name
            no_error_shown(page)
            context.close()
