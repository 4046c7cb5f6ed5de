"""Real browser: a shared verifier link (issue 21). Upload in one context, press *Share
these results*, open the link's `?mine=` in a fresh context on Agreement, Judges, Slices
and Trajectory, and find the uploaded verifier there; a link naming an upload without
`?mine=` says where uploads live and how to get them back."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from playwright.sync_api import Browser, expect

from tests.helpers.browser import no_error_shown, wait_for_run

pytestmark = pytest.mark.browser

RATER = "mine:my_verifier_v1"


def _fresh(browser: Browser, url: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(url)
    wait_for_run(page, timeout=180_000)
    no_error_shown(page)
    return context, page


def test_a_shared_verifier_link_opens_everywhere(
    browser: Browser, app_url: str, mirror_dir: Path
) -> None:
    sample = mirror_dir / "sample_predictions.csv"
    owner, page = _fresh(browser, f"{app_url}/Your_verifier")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(sample))
    page.get_by_text("rows read").first.wait_for(timeout=120_000)
    wait_for_run(page, timeout=180_000)
    page.get_by_role("button", name="Share these results").click()
    page.wait_for_url(re.compile(r"mine=[0-9a-f]{64}"), timeout=60_000)
    wait_for_run(page, timeout=180_000)
    no_error_shown(page)
    digest = parse_qs(urlsplit(page.url).query)["mine"][0]
    expect(page.get_by_test_id("stCode")).to_contain_text(f"mine={digest}")
    owner.close()

    frame = pd.read_csv(sample, dtype=str)
    task = frame.loc[frame["verifier"] == RATER.removeprefix("mine:"), "task_id"].iloc[0]
    mine = f"mine={digest}"
    yours = "my_verifier_v1 (yours)"
    for path, combobox in (
        (f"Agreement?{mine}&verifier={RATER}", "Verifier for the details below"),
        (f"Judges?{mine}&a={RATER}", "Rater A (rows)"),
        (f"Slices?{mine}&verifier={RATER}", "Verifier"),
    ):
        context, fresh = _fresh(browser, f"{app_url}/{path}")
        expect(fresh.get_by_role("combobox", name=combobox, exact=True)).to_have_value(
            re.compile(re.escape(yours))
        )
        assert fresh.get_by_text("The link asks for").count() == 0
        context.close()
    context, fresh = _fresh(browser, f"{app_url}/Trajectory?{mine}&task={task}")
    expect(fresh.get_by_text(yours).first).to_be_attached(timeout=30_000)
    context.close()

    # without ?mine=: the page says where uploads live and how to get them back
    context, fresh = _fresh(browser, f"{app_url}/Slices?verifier={RATER}")
    expect(fresh.get_by_text("live only in the browser session").first).to_be_visible()
    context.close()
    # an unknown (well-formed) hash: said, nothing else changes
    context, fresh = _fresh(browser, f"{app_url}/Agreement?mine={'0' * 64}")
    expect(fresh.get_by_text("not stored on this server any more").first).to_be_visible()
    context.close()
