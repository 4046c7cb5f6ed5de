"""Real browser: a Slices deep link with cluster=site as a fresh server's first request."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import no_error_shown, streamlit_server, wait_for_run
from tests.helpers.slack import scaled_ms

pytestmark = pytest.mark.browser

LINK = (
    "/Slices?split=fara7b_om2w_browserbase&cluster=site&verifier=mm_is_success"
    "&vs=uv_outcome_success&slice=run_end&sort=fnr&min_n=4&value=run_end%3Aaborted"
)


def test_cold_slices_deep_link_with_site_clusters(browser, mirror_dir: Path) -> None:
    """No 'Page not found', the sidebar's bound widgets take the URL, the page draws its
    chart, table and paired section, and the URL still holds the whole view."""
    with streamlit_server({"CUAVB_DATA": str(mirror_dir)}) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(scaled_ms(90_000))
        page.goto(url + LINK)
        wait_for_run(page, timeout=120_000)
        no_error_shown(page)
        expect(page.get_by_role("heading", name="Slices: where does a verifier go wrong?"))
        expect(page.get_by_role("combobox", name="Split")).to_have_value("fara7b_om2w_browserbase")
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_role("radio", name="site")).to_be_checked()
        expect(page.get_by_text("bootstrap over websites/families (").first).to_be_visible()
        expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()
        expect(page.get_by_text("Two verifiers side by side")).to_be_visible()
        for part in ("cluster=site", "verifier=mm_is_success", "slice=run_end", "min_n=4"):
            assert part in page.url, (part, page.url)
        context.close()
