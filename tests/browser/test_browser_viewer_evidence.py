"""Real browser: the verifier's evidence in the stepper (issue 29).

On a mirror where one internal task carries the intermediate steps of the verifier's
public example (4 screenshots x 2 criteria, relevance rows [0,0], [9,7], [9,8], [9,8];
`tests.helpers.uv_score_file`) and every internal rubric has both passes: choosing criterion 0
moves the stepper to its most relevant screenshot, 3, with no server run; the URL reads
`step=3` (0-based) and the counter "Step 4" (1-based); the filmstrip marks the
criterion's chosen screenshots; the arrow keys still step; axe finds no serious violation
on that page in either theme. A full-page screenshot for a human: /tmp/viewer_evidence.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_browser_axe import _audit_schemes
from tests.browser.test_browser_viewer import COUNTER, RUNS, at_step, image_ok, open_viewer, runs
from tests.helpers.browser import full_page_screenshot, no_error_shown, streamlit_server
from tests.helpers.uv_score_file import evidence_mirror, two_pass_mirror
from tests.unit.test_viewer import special_tasks

pytestmark = pytest.mark.browser

CRIT = ".stp .crit button.critbtn"


@pytest.fixture(scope="module")
def served(bench, mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    task_id = special_tasks(bench)["internal_normal"]
    base = tmp_path_factory.mktemp("evidence")
    mirror = two_pass_mirror(evidence_mirror(mirror_dir, base / "ev", task_id), base / "m")
    with streamlit_server({"CUAVB_DATA": str(mirror)}) as url:
        yield {"url": url, "task": task_id, "n": int(bench.task(task_id).n_screenshots_stored)}


def test_choosing_a_criterion_jumps_to_its_most_relevant_screenshot(
    page: Page, served: dict
) -> None:
    page.set_default_timeout(60_000)
    open_viewer(page, f"{served['url']}/Trajectory?task={served['task']}&step=0")
    no_error_shown(page)
    at_step(page, 0)
    expect(page.locator(CRIT)).to_have_count(2)
    # before a choice, every chosen screenshot names its criteria (1-based, as shown)
    for k in (1, 2, 3):
        film = page.locator(f".stp .strip button.film[data-step='{k}']")
        expect(film).to_have_class(re.compile(r"\bchosen\b"))
        expect(film.locator(".mark")).to_have_text("★ criteria 1, 2")
    expect(page.locator(".stp .strip button.film[data-step='0'] .mark")).to_have_count(0)
    page.evaluate(RUNS)

    page.locator(f"{CRIT}[data-criterion='0']").click()
    at_step(page, 3)  # step=3 in the URL, "Step 4 of n" on the counter
    expect(page.locator(COUNTER)).to_have_text(f"Step 4 of {served['n']}")
    assert image_ok(page, 3)
    alt = page.locator(".stp img.shotimg[data-step='3']").get_attribute("alt")
    assert "screenshot 3" in alt
    expect(page.locator(f"{CRIT}[data-criterion='0']")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(f"{CRIT}[data-criterion='1']")).to_have_attribute("aria-pressed", "false")
    ranks = {k: f"★ evidence #{r}" for r, k in enumerate((3, 2, 1), start=1)}
    for k, text in ranks.items():
        expect(page.locator(f".stp .strip button.film[data-step='{k}'] .mark")).to_have_text(text)
    expect(page.locator(".stp .crit:not(.fail) .critnote")).to_contain_text(
        "screenshot 3: relevance 9 of 10, chosen #1 of 3"
    )
    # the keyboard still steps (focus is on the criterion's button) and the note follows
    page.keyboard.press("ArrowLeft")
    at_step(page, 2)
    expect(page.locator(".stp .crit:not(.fail) .critnote")).to_contain_text("chosen #2 of 3")
    page.locator(f"{CRIT}[data-criterion='1']").click()
    at_step(page, 3)
    expect(page.locator(".stp .crit:not(.fail) .critnote")).to_contain_text("relevance 8 of 10")
    assert runs(page) == 0, "choosing a criterion ran the server script"

    # Back returns to the step before the jump
    page.go_back()
    at_step(page, 2)
    expect(page.locator("[data-testid=stVegaLiteChart]").first).to_be_visible()
    full_page_screenshot(page, "/tmp/viewer_evidence.png")


@pytest.mark.parametrize(
    ("schemes", "width"),
    [(("light", "dark"), 1400), (("light",), 390)],
    ids=["light+dark-1400", "light-390"],
)
def test_no_serious_axe_violation_on_a_task_with_evidence(
    browser, served: dict, schemes: tuple[str, ...], width: int
) -> None:
    """Both themes at 1400 px on one load (`_audit_schemes` switches the scheme), light at
    390 px."""
    url = f"{served['url']}/Trajectory?task={served['task']}&step=3"
    assert _audit_schemes(browser, url, schemes, width) == {s: [] for s in schemes}
