"""Real browser: a Trajectory filter that excludes the task on screen replaces it with a
matching one (issue 30: the label said "19 of 260 match" while a non-matching task stayed),
and the count is of the chosen split."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from lib.viewer import disagreeing_tasks
from tests.helpers.browser import no_error_shown, wait_for_run

pytestmark = pytest.mark.browser

VERIFIER = "uv_outcome_success"


def test_a_filter_that_excludes_the_task_on_screen_shows_a_matching_one(
    page: Page, app_url: str, bench
) -> None:
    disagreeing = set(disagreeing_tasks(bench.verdicts, VERIFIER))
    tasks = bench.tasks
    split = str(tasks.split.iloc[0])
    in_split = tasks[tasks.split == split]
    task_id = str(in_split[~in_split.task_id.isin(disagreeing)].task_id.iloc[0])
    n_match = int(in_split.task_id.isin(disagreeing).sum())
    page.goto(f"{app_url}/Trajectory?split={split}&task={task_id}&step=2")
    wait_for_run(page)
    expect(page.locator(".stp").first).to_have_attribute("data-task", task_id)
    page.get_by_role("button", name="Filters").click()
    page.get_by_role("combobox", name="Verifier disagrees with the humans").click()
    page.get_by_role("option", name="Universal Verifier, outcome").click()
    wait_for_run(page)
    page.keyboard.press("Escape")  # close the popover
    no_error_shown(page)
    label = f"Task ({n_match} of {len(in_split)} match)"
    expect(page.get_by_text(label, exact=False)).to_be_visible()
    stepper = page.locator(".stp").first
    expect(stepper).not_to_have_attribute("data-task", task_id)
    shown_task = stepper.get_attribute("data-task")
    assert shown_task in disagreeing, shown_task
    page.wait_for_function(
        "(t) => new URLSearchParams(location.search).get('task') === t", arg=shown_task
    )
    query = parse_qs(urlsplit(page.url).query)
    assert query["step"] == ["0"] and query["disagree"] == [VERIFIER]
    expect(page.get_by_text("does not match the new choice; showing")).to_be_visible()
    expect(page.get_by_text("outside the chosen split or filters")).to_have_count(0)
