"""The page error boundary in a real browser: with `client.showErrorDetails=false` (what
Community Cloud forces) a page that raises shows a reference code and no traceback, path
or data value; the traceback goes to the server log under that code. With the local
default ("full") the details are there, so the check can fail."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.apps.raising_app import SECRET
from tests.helpers.browser import ROOT, streamlit_server, wait_for_run
from tests.helpers.slack import scaled_ms

pytestmark = pytest.mark.browser


def _open(browser, url: str):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(scaled_ms(30_000))
    page.goto(url)
    wait_for_run(page)
    return context, page


def test_no_traceback_when_details_are_off(browser) -> None:
    env = {"STREAMLIT_CLIENT_SHOW_ERROR_DETAILS": "false"}
    with streamlit_server(env, script="tests/helpers/apps/raising_app.py") as url:
        context, page = _open(browser, url)
        try:
            alert = page.get_by_test_id("stAlertContentError")
            expect(alert).to_contain_text("Reference for a bug report")
            ref = re.search(r"Reference for a bug report: ([0-9a-f]{8})", alert.inner_text())
            assert ref, alert.inner_text()
            html = page.content()
            for leak in (
                "Traceback",
                "KeyError",
                "secret-cell-value",
                "/srv/private",
                "raising_app",
            ):
                assert leak not in html, leak
            expect(page.get_by_text("Details")).to_have_count(0)
            expect(page.get_by_test_id("stException")).to_have_count(0)
        finally:
            context.close()
        port = url.rsplit(":", 1)[1]
        server_log = (ROOT / ".pytest_cache" / f"streamlit-{port}.log").read_text()
        at = server_log.index(f"[ref {ref.group(1)}]")
        assert "Traceback" in server_log[at:] and SECRET in server_log[at:]


def test_traceback_shown_when_details_are_full(browser) -> None:
    env = {"STREAMLIT_CLIENT_SHOW_ERROR_DETAILS": "full"}
    with streamlit_server(env, script="tests/helpers/apps/raising_app.py") as url:
        context, page = _open(browser, url)
        try:
            expect(page.get_by_test_id("stAlertContentError")).to_contain_text("Reference")
            page.get_by_text("Details").click()
            expect(page.get_by_test_id("stCode")).to_contain_text("Traceback")
            expect(page.get_by_test_id("stCode")).to_contain_text("secret-cell-value")
        finally:
            context.close()
