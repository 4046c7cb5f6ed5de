"""Real browser: open Audit, re-label three tasks, download the labels, upload them in a
fresh browser context, and see the same Agreement numbers against "your labels" (the
metrics CSV of both sessions is byte-identical), and the same numbers from Copy link
opened in a fresh context (the labels travel in `v=`); screenshots of Audit at 1400 and
390 px. A labels file of 12 + 2 unsure reviewed tasks uploaded on Audit: the parity
section's "With your labels" on Agreement shows what `lib.analysis.parity` computes for
the same labels in-process (roles, n used, n unsure, the verdict), and its Copy link
reopens it in a fresh context (and on Your verifier). A queue link opens the viewer with
the audit panel within the first 900 px."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from lib.analysis import parity as P
from lib.analysis.agreement import verifier_title
from lib.uploads import labels as L
from lib.vocab import UV_THRESHOLD
from tests.helpers.browser import (
    copied_link,
    full_page_screenshot,
    no_error_shown,
    shot_path,
    wait_for_run,
)
from tests.helpers.slack import scaled_ms
from ui import fmt
from ui.parity import VERDICT_CELLS, YOUR_TITLE

pytestmark = pytest.mark.browser

OM2W = "fara7b_om2w_browserbase"
LABELS = ("success", "failure", "unsure")


def _relabel(page: Page, index: int, label: str) -> None:
    form = page.get_by_test_id("stForm")
    box = form.get_by_role("combobox", name="Task and dimension", exact=True)
    box.scroll_into_view_if_needed()
    options = page.get_by_role("option")
    for _ in range(10):  # a click during a rerun may not open the list: try again
        box.click()
        try:
            options.nth(index).wait_for(timeout=scaled_ms(5_000))
            break
        except PlaywrightTimeout:  # the list did not open: click again
            page.keyboard.press("Escape")
    options.nth(index).click()
    form.get_by_test_id("stRadio").get_by_text(label, exact=True).click()
    form.get_by_test_id("stTextInput").locator("input").fill(f"note {index}")
    form.get_by_role("button", name="Save my label").click()
    wait_for_run(page)
    expect(page.get_by_text(f"{index + 1} label(s) in this session")).to_be_visible(
        timeout=scaled_ms(30_000)
    )


def _agreement_csv(page: Page, tmp: Path, name: str) -> bytes:
    """The Agreement page of this browser session (the sidebar's link: a page load would
    start a new session), reference "your labels", its metrics CSV."""
    page.get_by_test_id("stSidebar").get_by_role("link", name="Agreement").click()
    page.wait_for_url("**/Agreement*")
    wait_for_run(page)
    no_error_shown(page)
    page.get_by_test_id("stSelectbox").filter(has_text="Human reference").click()
    page.get_by_role("option", name="Your labels (outcome; final label elsewhere)").click()
    wait_for_run(page)
    assert "reference=your_labels" in page.url, page.url
    expect(page.get_by_text("3 of 106 tasks are yours").first).to_be_visible(
        timeout=scaled_ms(60_000)
    )
    with page.expect_download(timeout=scaled_ms(60_000)) as info:
        page.get_by_text("Download the metrics (CSV)").click()
    path = tmp / name
    info.value.save_as(path)
    return path.read_bytes()


@contextmanager
def _copied_link_opened_fresh(page: Page) -> Iterator[tuple[str, Page]]:
    """The sidebar's Copy link on this page, opened in a fresh browser context (no session,
    no upload: what travels is in the link); yields the link and the fresh page."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copied = copied_link(page)
    page.keyboard.press("Escape")
    other = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = other.new_page()
        fresh.set_default_timeout(scaled_ms(30_000))
        fresh.goto(copied)
        wait_for_run(fresh)
        no_error_shown(fresh)
        yield copied, fresh
    finally:
        other.close()


def _copied_link_csv(page: Page, tmp: Path) -> bytes:
    """Copy link on this Agreement page (the labels travel in `v=`), opened in a fresh
    browser context: the same metrics CSV against "your labels"."""
    with _copied_link_opened_fresh(page) as (copied, fresh):
        assert "v=" in copied and "reference=your_labels" in copied, copied
        expect(fresh.get_by_text("3 of 106 tasks are yours").first).to_be_visible(
            timeout=scaled_ms(60_000)
        )
        with fresh.expect_download(timeout=scaled_ms(60_000)) as info:
            fresh.get_by_text("Download the metrics (CSV)").click()
        path = tmp / "linked.csv"
        info.value.save_as(path)
        return path.read_bytes()


def test_relabel_download_upload_same_numbers(app_url: str, page: Page, tmp_path: Path) -> None:
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{app_url}/Audit?split={OM2W}&reason=tie&dimension=outcome")
    wait_for_run(page)
    no_error_shown(page)
    expect(page.get_by_role("heading", name="Audit: the contested human labels")).to_be_visible()
    for i, label in enumerate(LABELS):
        _relabel(page, i, label)
    no_error_shown(page)
    full_page_screenshot(page, shot_path("audit_1400.png"))

    with page.expect_download(timeout=scaled_ms(60_000)) as info:
        page.get_by_text("Download my labels").click()
    labels = tmp_path / "my_labels.csv"
    info.value.save_as(labels)
    rows = labels.read_text().splitlines()
    assert rows[0].replace('"', "") == "task_id,dimension,label,note" and len(rows) == 4
    assert {r.split(",")[2].strip('"') for r in rows[1:]} == set(LABELS)

    first = _agreement_csv(page, tmp_path, "first.csv")
    assert b"Your labels" in first or b"your_labels" in first
    assert _copied_link_csv(page, tmp_path) == first  # Copy link reopens them

    other = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = other.new_page()
        fresh.goto(f"{app_url}/Audit?split={OM2W}")
        wait_for_run(fresh)
        no_error_shown(fresh)
        expect(fresh.get_by_text("0 label(s) in this session")).to_be_visible()
        fresh.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(labels))
        expect(fresh.get_by_text("Read 3 label(s) from the file.")).to_be_visible(
            timeout=scaled_ms(60_000)
        )
        wait_for_run(fresh)
        expect(fresh.get_by_text("3 label(s) in this session")).to_be_visible()
        fresh.set_viewport_size({"width": 390, "height": 900})  # a phone, the same session
        full_page_screenshot(fresh, shot_path("audit_390.png"))
        fresh.set_viewport_size({"width": 1400, "height": 1000})  # the sidebar's links again
        second = _agreement_csv(fresh, tmp_path, "second.csv")
    finally:
        other.close()
    assert second == first


N_GIVEN, N_UNSURE = 12, 2
"""The parity test's labels file: success / failure on 12 reviewed om2w tasks (a verdict
needs `P.MIN_YOUR_TASKS`, 10), unsure on 2 more."""


def _parity_labels(bench, path: Path) -> tuple[Path, pd.DataFrame]:
    """A labels file on the first reviewed om2w tasks (two or more blind reviewers and a
    Universal Verifier label), each the reviewers' blind majority (a tie: success), and
    its rows as the page reads them."""
    reviews = P.blind_reviews(bench.verdicts, "outcome", OM2W)
    per_task = reviews.groupby("task_id")["label"].agg(["size", "mean"])
    uv = P.verifier_labels(bench.verdicts, "uv_outcome_success", "outcome", OM2W).dropna()
    reviewed = per_task[(per_task["size"] >= 2) & per_task.index.isin(uv.index)].sort_index()
    rows = ["task_id,dimension,label,note"]
    for i, (task, mean) in enumerate(reviewed["mean"].head(N_GIVEN + N_UNSURE).items()):
        label = "unsure" if i >= N_GIVEN else "success" if mean >= 0.5 else "failure"
        rows.append(f"{task},outcome,{label},parity {i}")
    path.write_text("\n".join(rows) + "\n")
    tasks = dict(zip(bench.tasks["task_id"], bench.tasks["split"], strict=True))
    got = L.read_labels(path.read_bytes(), path.name, tasks)
    assert got.n_dropped == 0 and len(got.labels) == N_GIVEN + N_UNSURE
    return path, got.labels


def _expected(bench, labels: pd.DataFrame) -> tuple[P.ParityRecord, list[P.ParityRecord]]:
    """In-process: your labels' own record (candidate) and the records with you in the
    panel, on the table the page uses (the dataset's rows plus the "your labels" rows)."""
    table = L.with_your_labels(bench.verdicts, labels)
    mine = [r for r in P.parity_records(table, labels=labels) if r.you is not None]
    candidate = [r for r in mine if r.you.role == P.CANDIDATE]
    panel = [r for r in mine if r.you.role == P.PANEL]
    assert len(candidate) == 1 and panel, mine
    return candidate[0], panel


def _check_your_labels_part(page: Page, candidate: P.ParityRecord, panel: list) -> None:
    """The "With your labels" subsection shows the in-process records' numbers."""
    heading = page.get_by_role("heading", name=YOUR_TITLE)
    expect(heading).to_be_visible(timeout=scaled_ms(60_000))
    heading.scroll_into_view_if_needed()
    k = candidate.kappa
    assert k.verdict is not None and candidate.you.n_used >= P.MIN_YOUR_TASKS
    bullet = page.get_by_test_id("stMarkdown").filter(
        has_text="Your labels (outcome) vs reviewers:"
    )
    expect(bullet).to_have_count(1)
    expect(bullet).to_contain_text(
        f"Your labels (outcome) vs reviewers: {k.words} ({k.n_tasks} tasks, {k.n_pairs} "
        f"annotator pairs, {k.n_missing_verifier} reviewed tasks you did not label left out)"
    )
    uv = next(r for r in panel if r.verifier == "uv_outcome_success")
    title = verifier_title(uv.verifier, UV_THRESHOLD)
    expect(
        page.get_by_test_id("stMarkdown").filter(has_text=f"{title} vs reviewers + you:")
    ).to_contain_text(f"{title} vs reviewers + you: {uv.kappa.words} ({uv.kappa.n_tasks} tasks")
    used = sorted({r.you.n_used for r in [candidate, *panel]})
    span = f"{used[0]:,}" if len(used) == 1 else f"{used[0]:,}–{used[-1]:,}"
    you = candidate.you
    assert (you.n_labels, you.n_unsure) == (N_GIVEN, N_UNSURE)
    expect(page.get_by_text("success / failure labels of yours").first).to_contain_text(
        f"{you.n_labels:,} success / failure labels of yours, {you.n_unsure:,} unsure "
        f"(left out); used on {span} tasks"
    )
    # the table: your labels' row says its panel ("reviewers") and its verdict's word
    grid = page.get_by_test_id("stDataFrame").filter(has_text="Your labels (outcome)").first
    grid.scroll_into_view_if_needed()
    row = grid.locator("tr").filter(has_text="Your labels (outcome)")
    expect(row).to_have_count(1)
    cells = [c.strip() for c in row.locator("td").all_text_contents()]
    assert "reviewers" in cells and VERDICT_CELLS[k.verdict] in cells, cells
    assert fmt.signed_diff(k.diff.diff, k.diff.ci) in cells, "|".join(cells)  # the CI too
    assert cells[2].startswith(f"{k.diff.a.value:.2f}"), "|".join(cells)
    panel_rows = grid.locator("tr").filter(has_text="reviewers + you")
    expect(panel_rows.first).to_be_attached()
    assert panel_rows.count() == len(panel)


def test_your_labels_parity_shown_and_linked(
    app_url: str, page: Page, bench, tmp_path: Path
) -> None:
    path, labels = _parity_labels(bench, tmp_path / "parity_labels.csv")
    candidate, panel = _expected(bench, labels)
    page.goto(f"{app_url}/Audit?split={OM2W}")
    wait_for_run(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path))
    expect(page.get_by_text(f"Read {N_GIVEN + N_UNSURE} label(s) from the file.")).to_be_visible(
        timeout=scaled_ms(60_000)
    )
    wait_for_run(page)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Agreement").click()
    page.wait_for_url("**/Agreement*")
    wait_for_run(page)
    no_error_shown(page)
    _check_your_labels_part(page, candidate, panel)
    page.get_by_role("heading", name=YOUR_TITLE).scroll_into_view_if_needed()
    page.screenshot(path=str(shot_path("agreement_your_labels_1400.png")))

    with _copied_link_opened_fresh(page) as (copied, fresh):
        assert "v=" in copied and "/Agreement" in copied, copied
        _check_your_labels_part(fresh, candidate, panel)
        # Your verifier, before an upload: the Universal Verifier's records and yours
        fresh.get_by_test_id("stSidebar").get_by_role("link", name="Your verifier").click()
        fresh.wait_for_url("**/Your_verifier*")
        wait_for_run(fresh)
        no_error_shown(fresh)
        uv = [r for r in panel if r.verifier == "uv_outcome_success"]
        _check_your_labels_part(fresh, candidate, uv)


def test_the_viewer_audit_panel_is_above_the_fold(app_url: str, page: Page, bench) -> None:
    """A queue link (`ui.audit.audit_href`) of a tied task at 1400 x 900: the panel (why it
    is contested, then the reviewers' blind and informed rows) starts within the first
    screen, before the stepper; a screenshot of that screen is saved to be looked at."""
    from lib.analysis import audit
    from ui.audit import audit_href
    from ui.safe_text import strip_joiners

    tied = audit.ties(bench.verdicts)
    task = sorted(tied.loc[tied["split"] == OM2W, "task_id"])[0]
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{app_url}/{audit_href(task, OM2W)}")
    wait_for_run(page)
    no_error_shown(page)
    head = page.get_by_text("why this task is contested")
    expect(head).to_be_visible()
    assert audit.REASON_TITLES["tie"] in strip_joiners(head.inner_text())
    # the panel's table: the nearest block around the heading line that holds one
    table = head.locator("xpath=ancestor::div[.//div[@data-testid='stDataFrame']][1]")
    table = table.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible()
    head_box, table_box = head.bounding_box(), table.bounding_box()
    assert head_box is not None and table_box is not None
    assert head_box["y"] + head_box["height"] <= 900, head_box
    assert table_box["y"] + min(table_box["height"], 120) <= 900, table_box  # its first rows
    page.screenshot(path=shot_path("viewer_audit_panel_1400.png"))
