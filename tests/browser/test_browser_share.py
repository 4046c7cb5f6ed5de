"""Real browser: links carry the uploaded verdicts (issue 36).

Any replica: a link printed by `python -m lib.report --link` for a 20-verifier file with
scores opens on a second server started with another, empty `CUAVB_CACHE_DIR`: Your
verifier lists the 20 verifiers, and Agreement (`uploads=20`) shows the report's kappa.

The thread: upload, Agreement, choose the uploaded verifier, click one of its false
positives: the new tab shows that verifier's verdict first with the "False positive of"
line; Copy link from there opens the same view in a fresh context; Agreement -> Slices ->
Agreement through the sidebar keeps the chosen verifier. Timeouts are generous: the
machine these run on is shared and loaded.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.helpers.browser import (
    MENU_LINK,
    copied_link,
    full_page_screenshot,
    no_error_shown,
    shot_path,
    streamlit_server,
    wait_for_run,
)
from tests.helpers.slack import scaled_ms

pytestmark = pytest.mark.browser

LONG = 240_000
RATER = "mine:my_verifier_v1"
YOURS = "my_verifier_v1 (yours)"


def _context(browser: Browser, **kw):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, **kw)
    context.set_default_timeout(scaled_ms(90_000))
    return context


def _open(context, url: str) -> Page:
    page = context.new_page()
    page.goto(url, timeout=scaled_ms(LONG))
    wait_for_run(page, timeout=scaled_ms(LONG))
    no_error_shown(page)
    return page


def _twenty_files(bench, folder: Path) -> list[Path]:
    """20 verifiers (two files of 10, the per-file cap) with outcome, process and a score
    on every task of the mirror."""
    rng = np.random.default_rng(7)
    tasks = bench.tasks
    paths = []
    for f in range(2):
        frames = [
            pd.DataFrame(
                {
                    "verifier": f"judge_{10 * f + v:02d}",
                    "split": tasks["split"].to_numpy(),
                    "task_id": tasks["task_id"].to_numpy(),
                    "outcome": rng.integers(0, 2, len(tasks)),
                    "process": rng.integers(0, 2, len(tasks)),
                    "score": rng.random(len(tasks)).round(4),
                }
            )
            for v in range(10)
        ]
        path = folder / f"twenty_{f}.csv"
        pd.concat(frames).to_csv(path, index=False)
        paths.append(path)
    return paths


def test_a_report_link_opens_twenty_verifiers_on_another_replica(
    browser: Browser, mirror_dir: Path, bench, tmp_path: Path
) -> None:
    from lib import report
    from lib.analysis import agreement
    from lib.metrics import Value
    from lib.vocab import Bootstrap

    files = _twenty_files(bench, tmp_path)
    argv = ["--data", str(mirror_dir)]
    for path in files:
        argv += ["--predictions", str(path)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report.main([*argv, "--link"]) == 0
    query = out.getvalue().strip()
    assert query.startswith("?v=") and len(query) < 32_768
    # the report's kappa of one uploaded verifier (point values do not depend on resamples)
    uploads = report.load_predictions(bench, [str(p) for p in files])
    with_them = report.with_uploads(bench, uploads)
    records = agreement.report_records(with_them, Bootstrap(n_resamples=20))
    rater = "mine:judge_13"
    kappas = {
        r.split: r.estimates["kappa"].value
        for r in records
        if r.verifier == rater
        and r.reference == "final_human_outcome_label"
        and r.dimension == "outcome"
    }
    assert kappas and all(k is not None for k in kappas.values())

    empty = tmp_path / "empty-cache"
    empty.mkdir()
    env = {"CUAVB_DATA": str(mirror_dir), "CUAVB_CACHE_DIR": str(empty)}
    with streamlit_server(env, timeout=240) as other:
        context = _context(browser)
        try:
            page = _open(context, f"{other}/Your_verifier{query}")
            expect(page.get_by_text("(20 loaded now)")).to_be_visible(timeout=scaled_ms(LONG))
            table = page.get_by_test_id("stDataFrame").first  # uploaded_summary
            expect(table).to_contain_text("judge_00", timeout=scaled_ms(LONG))
            page.close()

            page = _open(context, f"{other}/Agreement{query}&uploads=20&verifier={rater}")
            captions = page.get_by_test_id("stCaptionContainer")
            for kappa in kappas.values():
                text = f"kappa {Value(kappa).fmt(2)}"
                expect(captions.filter(has_text=text).first).to_be_attached(timeout=scaled_ms(LONG))
            no_error_shown(page)
            assert page.get_by_text("were not loaded").count() == 0
        finally:
            context.close()
    assert not any(empty.rglob("shared-uploads"))


def _click_first_row(page: Page, grid) -> Page:
    """Click the first row's link cell of a link table; the tab it opens."""
    grid.scroll_into_view_if_needed()
    for _ in range(120):  # the grid fills its accessible table after it is drawn
        if "Trajectory?" in grid.inner_html():
            break
        page.wait_for_timeout(500)
    box = grid.bounding_box()
    assert box is not None
    with page.context.expect_page(timeout=scaled_ms(90_000)) as opened:
        page.mouse.move(box["x"] + 30, box["y"] + 52)
        page.wait_for_timeout(300)
        page.mouse.click(box["x"] + 32, box["y"] + 53)
    tab = opened.value
    tab.wait_for_load_state()
    wait_for_run(tab, timeout=scaled_ms(LONG))
    return tab


def _sidebar(page: Page, name: str) -> None:
    page.locator(MENU_LINK).filter(has_text=name).first.click()
    page.wait_for_url(re.compile(rf"/{name}"), timeout=scaled_ms(LONG))
    wait_for_run(page, timeout=scaled_ms(LONG))


def _upload_sample(page: Page, mirror_dir: Path) -> None:
    """The sample predictions uploaded on Your verifier, until the link holds them (`v=`)."""
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(
        str(mirror_dir / "sample_predictions.csv")
    )
    page.get_by_text("rows read").first.wait_for(timeout=scaled_ms(LONG))
    wait_for_run(page, timeout=scaled_ms(LONG))
    page.wait_for_url(re.compile(r"[?&]v=[A-Za-z0-9_-]{100,}"), timeout=scaled_ms(LONG))


def test_the_thread_from_a_false_positive_to_a_copied_link(
    browser: Browser, app_url: str, mirror_dir: Path
) -> None:
    context = _context(browser, permissions=["clipboard-read", "clipboard-write"])
    try:
        page = _open(context, f"{app_url}/Your_verifier")
        _upload_sample(page, mirror_dir)
        page.get_by_role("button", name="Share").first.click()
        expect(page.get_by_text("holds your validated verdicts themselves")).to_be_visible()
        page.keyboard.press("Escape")

        _sidebar(page, "Agreement")
        box = page.get_by_role("combobox", name="Verifier for the details below", exact=True)
        box.click()
        page.get_by_role("option", name=YOURS).click()
        wait_for_run(page, timeout=scaled_ms(LONG))
        expect(box).to_have_value(re.compile(re.escape(YOURS)))
        page.wait_for_url(re.compile(r"verifier=mine"), timeout=scaled_ms(LONG))

        column = page.get_by_test_id("stColumn").filter(has_text="False positives (")
        grid = column.get_by_test_id("stDataFrame").first
        tab = _click_first_row(page, grid)
        assert "why=fp" in tab.url and "v=" in tab.url, tab.url
        line = tab.get_by_text("False positive of my_verifier_v1 (yours)").first
        expect(line).to_be_visible(timeout=scaled_ms(LONG))
        said = line.inner_text().replace("\u2060", "")  # inert's word joiners
        assert "it says success; the humans' final label says failure" in said, said
        # that verifier's verdict comes first among the verdicts at a glance
        summary = tab.locator(".st-key-viewer_summary").inner_text()
        assert summary.index("my_verifier_v1") < summary.index("Universal Verifier"), summary
        no_error_shown(tab)
        full_page_screenshot(tab, shot_path("share_false_positive.png"))

        copied = copied_link(tab)
        assert "why=fp" in copied and "v=" in copied
        tab.close()

        fresh = _context(browser)
        try:
            again = _open(fresh, copied)
            expect(
                again.get_by_text(re.compile(r"False positive of my_verifier_v1 \(yours\)")).first
            ).to_be_visible(timeout=scaled_ms(LONG))
        finally:
            fresh.close()

        _sidebar(page, "Slices")
        _sidebar(page, "Agreement")
        box = page.get_by_role("combobox", name="Verifier for the details below", exact=True)
        expect(box).to_have_value(re.compile(re.escape(YOURS)), timeout=scaled_ms(LONG))
        assert f"verifier={RATER.replace(':', '%3A')}" in page.url or "verifier=mine" in page.url
    finally:
        context.close()


def test_a_sidebar_link_opened_in_a_new_tab_carries_the_uploads(
    browser: Browser, app_url: str, mirror_dir: Path
) -> None:
    """Middle-click on a sidebar page link opens its href in a new tab, a new session:
    the href holds `v=` (and the split), so that tab shows the uploaded verifier."""
    context = _context(browser)
    try:
        page = _open(context, f"{app_url}/Your_verifier?split=internal")
        _upload_sample(page, mirror_dir)
        link = page.locator(MENU_LINK).filter(has_text="Agreement")
        expect(link).to_have_attribute("href", re.compile(r"v=[A-Za-z0-9_-]{100,}"))
        href = link.evaluate("a => a.href")  # resolved against the page, as a new tab does
        assert "/Agreement?" in href and "split=internal" in href, href
        assert page.url.split("v=")[1].split("&")[0] in href
        home = page.locator(MENU_LINK).filter(has_text="Home").evaluate("a => a.href")
        assert "/Home?" in home and "v=" in home, home  # not the page on screen
    finally:
        context.close()

    fresh = _context(browser)  # a new tab of another visitor: nothing in its session
    try:
        tab = _open(fresh, href)
        box = tab.get_by_role("combobox", name="Verifier for the details below", exact=True)
        box.click()
        expect(tab.get_by_role("option", name=YOURS)).to_be_visible(timeout=scaled_ms(LONG))
        tab.keyboard.press("Escape")
        expect(tab.get_by_role("combobox", name="Split")).to_have_value("internal")
        assert tab.get_by_text("were not loaded").count() == 0
        no_error_shown(tab)
    finally:
        fresh.close()
