"""Real browser: axe-core on every page in both themes, no serious or critical violation.

axe-core is the npm package `axe-core`, pinned (4.14.1) and vendored under
`tests/helpers/vendor/axe-core/` with its licence; the test checks the file's hash, injects it with
`page.add_script_tag` and runs `axe.run` on the whole document after the page has drawn.
Besides no serious or critical violation (the issue-30 criterion: caption grey was 3.8:1),
heading levels must be in order (`heading-order`: sections are h2 under the page's h1).
The Trajectory page is also checked at 390 px, where the viewer's regions scroll.

Both themes on one load: Streamlit follows the system scheme live (a `matchMedia` change
listener; no page reads the theme on the server), so each page is drawn once, audited, the
browser's scheme is switched and the page audited again. The starting scheme alternates
from page to page, so pages are also drawn dark from their first paint. (One load per
scheme cost a server run per page twice: ~50 s per sweep.)
"""

from __future__ import annotations

import hashlib

import pytest
from playwright.sync_api import Browser

from tests.helpers.browser import ROOT, no_error_shown, wait_for_run
from tests.helpers.slack import scaled_ms
from ui.frame import PAGES

pytestmark = pytest.mark.browser

AXE = ROOT / "tests/helpers/vendor/axe-core/axe.min.js"
AXE_VERSION = "4.14.1"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
FAILING = {"serious", "critical"}
ALSO_FAILING = {"heading-order"}

RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return {version: axe.version, violations: result.violations.map((v) => ({
    id: v.id, impact: v.impact,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ': ' + (n.failureSummary || '')),
  }))};
}"""


def test_the_vendored_axe_is_the_pinned_release() -> None:
    assert hashlib.sha256(AXE.read_bytes()).hexdigest() == AXE_SHA256
    assert (AXE.parent / "LICENSE").read_text().startswith("Mozilla Public License")


SCHEMES = ("light", "dark")
BACKGROUND = """() => getComputedStyle(document.querySelector('[data-testid=stApp]'))
  .backgroundColor.match(/\\d+/g).slice(0, 3).reduce((a, b) => a + Number(b), 0) / 3"""
"""The app's background brightness (0-255): above 128 in the light theme, below in the dark."""


def _audit(browser: Browser, url: str, scheme: str, width: int) -> list[str]:
    """The failing violations of one page (its id, impact and first nodes, one a line)."""
    return _audit_schemes(browser, url, (scheme,), width)[scheme]


def _audit_schemes(
    browser: Browser, url: str, schemes: tuple[str, ...], width: int
) -> dict[str, list[str]]:
    """`_audit` in each of `schemes` on one load: the page opens in the first scheme, then
    the browser's scheme is switched (the app re-themes without a server run) and the page
    is audited again once its background says the theme changed."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=schemes[0])
    try:
        page = context.new_page()
        page.set_default_timeout(scaled_ms(120_000))
        page.goto(url)
        wait_for_run(page, timeout=180_000)
        no_error_shown(page)
        page.add_script_tag(path=str(AXE))
        found: dict[str, list[str]] = {}
        for scheme in schemes:
            if scheme != schemes[0]:
                page.emulate_media(color_scheme=scheme)
            dark = "true" if scheme == "dark" else "false"
            page.wait_for_function(f"() => (({BACKGROUND})() < 128) === {dark}")
            page.wait_for_timeout(300)  # let the charts and components take the new theme
            result = page.evaluate(RUN_AXE)
            assert result["version"] == AXE_VERSION
            found[scheme] = [
                f"{v['impact']} {v['id']}: {v['nodes']}"
                for v in result["violations"]
                if v["impact"] in FAILING or v["id"] in ALSO_FAILING
            ]
        return found
    finally:
        context.close()


def test_every_page_has_no_serious_violation_in_either_theme(
    browser: Browser, app_url: str
) -> None:
    problems: dict[str, list[str]] = {}
    targets = [(spec.url_path, 1400) for spec in PAGES] + [("Trajectory", 390)]
    for i, (path, width) in enumerate(targets):
        order = SCHEMES if i % 2 == 0 else SCHEMES[::-1]  # every page drawn first in one
        for scheme, bad in _audit_schemes(browser, f"{app_url}/{path}", order, width).items():
            if bad:
                problems[f"{path} at {width} px, {scheme}"] = bad
    assert not problems, problems


FOCUSED = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  return e ? (e.textContent || '').trim() : '';
}"""


def test_the_viewer_controls_come_early_in_the_tab_order(
    browser: Browser, app_url: str, bench
) -> None:
    """From Streamlit's "Skip to main content" link, the viewer's Next button is the
    sixth Tab stop (search help, search, task, filters, Previous, Next), after the demo
    banner's Details on a synthetic source (the test mirror is one): the page title has
    no anchor link and the task picker no help button in the way."""
    task_id = str(bench.tasks.task_id.iloc[0])
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(scaled_ms(120_000))
        page.goto(f"{app_url}/Trajectory?task={task_id}&step=1")
        wait_for_run(page, timeout=180_000)
        page.keyboard.press("Tab")
        assert page.evaluate(FOCUSED) == "Skip to main content"
        page.keyboard.press("Enter")
        stops = []
        for _ in range(12):
            page.keyboard.press("Tab")
            stops.append(page.evaluate(FOCUSED))
            if stops[-1].startswith("Next"):
                break
        banner = 1 if stops and "Details" in stops[0] else 0
        assert stops[-1].startswith("Next") and len(stops) <= 6 + banner, stops
    finally:
        context.close()
