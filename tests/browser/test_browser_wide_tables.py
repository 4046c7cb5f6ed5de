"""Real browser at 1400 px: no sideways scroll in the metrics tables of Agreement and
Slices (the main one and the tables of their other columns), Agreement's false positives
and negatives (half a window each), Shifts' per-reviewer and flipped-case tables, and every
table of Home (issue 21: the 16-column Agreement table was about 2,000 px wide, the Slices
table about 1,600 px); the human-parity tables of Agreement and Your verifier and Shifts'
Table 13 (issue 28); the continuous-score tables of Judges (issue 29)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.helpers.browser import no_error_shown, wait_for_run

pytestmark = pytest.mark.browser

OVERFLOW = """(header) => [...document.querySelectorAll('[data-testid=stDataFrame]')]
  .filter(el => !header || [...el.querySelectorAll('[role=columnheader]')]
                             .some(h => h.textContent.trim() === header))
  .map(el => {
    const s = el.querySelector('.dvn-scroller');
    return s ? s.scrollWidth - s.clientWidth : null;
  })"""


EXPAND = (
    "More columns",
    "The numbers per reviewer",
    "Alt-test per held-out reviewer",
    "against the Universal Verifier",  # Judges: each reviewer's continuous scores
)
"""Expanders whose tables are measured too (opened first)."""


def _overflow(page: Page, header: str | None) -> list[int | None]:
    return page.evaluate(OVERFLOW, header)


@pytest.mark.parametrize(
    ("path", "tables"),
    [
        # the main table and the three tables of its other columns (in an expander)
        # + the human-parity table and its per-reviewer alt-test (in an expander)
        # + the agent's corrected success rate per verifier (issue 40);
        # the false positives and false negatives
        ("Agreement?split=all", {"verifier": 7, "instruction": 2}),
        ("?split=all", {None: 4}),  # Home: per split, reviewers, label balance, missing values
        # Slices: the per-slice table and its other columns; long website names and reasons
        ("Slices?slice=site", {"slice": 2}),
        ("Slices?sort=fpr&vs=mm_is_success", {"slice": 3}),  # + the paired table
        # Shifts: flips and agreement per reviewer (in an expander), the flipped cases;
        # Table 13
        ("Shifts?split=all", {"reviewer": 3, "blind → informed [95% CI]": 1}),
        ("Your_verifier", {"verdict": 1}),  # the Universal Verifier's human parity
        ("Inside_the_verifier?split=all", {"quadrant": 1}),  # agreement inside each cell
        # Judges: the continuous process scores, pooled and per reviewer (issue 29)
        ("Judges?split=fara7b_om2w_browserbase", {"B (reference)": 2}),
    ],
)
def test_tables_fit_a_1400_px_window(
    page: Page, app_url: str, path: str, tables: dict[str | None, int]
) -> None:
    """`tables`: how many tables with that column header (None: any) the page draws; a page
    is loaded once for all of its tables."""
    assert page.viewport_size["width"] == 1400
    page.goto(f"{app_url}/{path}")
    wait_for_run(page, timeout=180_000)
    no_error_shown(page)
    for summary in page.locator("[data-testid=stExpander] summary").all():
        if any(title in summary.inner_text() for title in EXPAND):
            summary.click()
    page.wait_for_timeout(1000)  # the grids measure their columns after the first paint
    for header, expected in tables.items():
        widths = _overflow(page, header)
        assert len(widths) == expected, (header, widths)
        assert all(w is not None and w <= 0 for w in widths), (header, widths)
